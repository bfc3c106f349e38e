"""The Claude Code plugin's UserPromptSubmit hook process (stdlib only).

Run by hooks/user_prompt_submit.py from this file's compiled code, in that script's globals:
Python compiles the script it is started on every time, and this hook's ~40 lines cost ~1 M
instructions a prompt to compile (issue 44), where reading them compiled costs ~0.2 M. Importing
this module runs nothing.

The prompt path comes from one file when SessionStart has written it (memrepo/base/bundle.py);
else, or when it is stale, memrepo is imported as ever.
"""

import gc
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


def main(tools: str) -> "NoReturn":
    """Recall for the event on stdin with the memrepo package in `tools`, print, and leave (fails open)."""
    gc.disable()  # a hook process lives for one prompt: collecting garbage while modules load is wasted work
    try:
        # bundle.py is run from its compiled code as the import system would run it, without the
        # search for it and its two packages (~1 M instructions).
        bundle = type(sys)("memrepo.base.bundle")
        bundle.__file__ = tools + "/memrepo/base/bundle.py"
        loader = sys.modules["_frozen_importlib_external"].SourceFileLoader(bundle.__name__, bundle.__file__)
        exec(loader.get_code(bundle.__name__), bundle.__dict__)
        loaded = bundle.load(bundle.path(tools), tools)
    except BaseException:  # noqa: BLE001
        loaded = False
    if not loaded:
        # Without the bundle the import system finds memrepo in tools/; with it, memrepo's modules
        # come from the bundle and the standard library's extension modules are not looked for there.
        sys.path.insert(0, tools)
    try:
        from memrepo.claude import hookio, prompt_hook
    except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
        sys.stderr.write(f"memrepo UserPromptSubmit: cannot load memrepo: {exc}\n")
        raise SystemExit(0) from None
    hookio.exit_now(hookio.run("UserPromptSubmit", prompt_hook.on_prompt))


if __name__ == "__main__":  # hooks/user_prompt_submit.py: <plugin>/hooks/…, the package in <plugin>/tools
    main(__file__[: __file__.rindex("hooks")] + "tools")
