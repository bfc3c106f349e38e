"""Claude Code UserPromptSubmit hook: recall at most three memories, or say nothing.

Standard library only; finds the memrepo package in the plugin's tools/ directory.
"""
import gc
import sys

# A hook process lives for one prompt: collecting garbage while modules load is wasted work.
gc.disable()

# This file is <plugin>/hooks/user_prompt_submit.py, and __file__ is absolute (Python 3.9+) with either
# separator: no `import os` on the prompt path (see memrepo/base/_fast.py).
tools = __file__[: __file__.rindex("hooks")] + "tools"

try:
    # The prompt path from one file when SessionStart has written it (memrepo/base/bundle.py); else,
    # or when it is stale, the import system as ever. bundle.py itself is run from its compiled code
    # as the import system would, without the search for it and its two packages (~1 M instructions).
    bundle = type(sys)("memrepo.base.bundle")
    bundle.__file__ = tools + "/memrepo/base/bundle.py"
    exec(sys.modules["_frozen_importlib_external"].SourceFileLoader(bundle.__name__, bundle.__file__).get_code(bundle.__name__),
         bundle.__dict__)
    loaded = bundle.load(bundle.path(tools), tools)
except BaseException:  # noqa: BLE001
    loaded = False
if not loaded:
    # Without the bundle the import system finds memrepo in tools/; with it, memrepo's modules come
    # from the bundle and the standard library's extension modules are not looked for in tools/.
    sys.path.insert(0, tools)
try:
    from memrepo.claude import hookio, prompt_hook
except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
    sys.stderr.write(f"memrepo UserPromptSubmit: cannot load memrepo: {exc}\n")
    raise SystemExit(0)

hookio.exit_now(hookio.run("UserPromptSubmit", prompt_hook.on_prompt))
