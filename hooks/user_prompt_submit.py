"""Claude Code UserPromptSubmit hook: recall at most three memories, or say nothing.

Standard library only. Python compiles the script it is started on every time, so this one only
runs memrepo/claude/prompt_main.py, in the plugin's tools/ directory, from its compiled code
(by the import system's own loader, without its search; __file__ is absolute, either separator).
"""
import sys

try:
    code = sys.modules["_frozen_importlib_external"].SourceFileLoader(
        "__main__", __file__[: __file__.rindex("hooks")] + "tools/memrepo/claude/prompt_main.py").get_code("__main__")
except BaseException:  # noqa: BLE001 — fail open: one line on stderr, exit 0
    code = "import sys; sys.stderr.write('memrepo UserPromptSubmit: cannot load memrepo/claude/prompt_main.py\\n')"
exec(code)
