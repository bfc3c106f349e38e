"""Claude Code UserPromptSubmit hook: recall at most three memories, or say nothing.

Standard library only; finds the memrepo package in the plugin's tools/ directory.
"""
import gc
import sys

# A hook process lives for one prompt: collecting garbage while modules load is wasted work.
gc.disable()

if sys.platform == "win32":  # pragma: no cover
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
else:
    # __file__ is absolute (Python 3.9+); no `import os` on the prompt path (see memrepo/base/_fast.py).
    sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/tools")

try:
    # The prompt path from one file when SessionStart has written it (memrepo/base/bundle.py); else,
    # or when it is stale, the import system as ever.
    from memrepo.base import bundle

    bundle.use()
except BaseException:  # noqa: BLE001
    pass
try:
    from memrepo.claude import hookio, prompt_hook
except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
    sys.stderr.write(f"memrepo UserPromptSubmit: cannot load memrepo: {exc}\n")
    raise SystemExit(0)

hookio.exit_now(hookio.run("UserPromptSubmit", prompt_hook.on_prompt))
