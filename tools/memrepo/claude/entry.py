"""`python -I -S …/memrepo/claude/entry.py EVENT`: the hook command `memrepo install claude` registers.

Kept this small: a script run by path is compiled on every run, a module (`handlers`) once.
A prompt runs as the plugin's prompt hook does (`prompt_main`, from the prompt path's bundle,
before anything of memrepo is imported: 1.80x -> 1.67x a bare start at 1,000 memories, issue 44);
when that file cannot be run, it takes the bundle (`memrepo.base.bundle`) and the handlers.
"""

import gc
import sys

if __name__ == "__main__":
    gc.disable()  # the process lives for one event, as the plugin's hooks do
    if not __package__:  # run by path (the installed hooks): the folder holding the memrepo package
        if sys.argv[1:] == ["UserPromptSubmit"]:
            _body = {"__name__": "memrepo.claude.prompt_main"}
            try:
                _loader = sys.modules["_frozen_importlib_external"].SourceFileLoader(
                    _body["__name__"], __file__[:-8] + "prompt_main.py")
                exec(_loader.get_code(_body["__name__"]), _body)
            except BaseException:  # noqa: BLE001
                _body.clear()
            _main = _body.get("main")
            if callable(_main):
                _main(__file__.rsplit("/", 3)[0])  # never returns
        sys.path.insert(0, __file__.rsplit("/", 3)[0])
    try:
        if sys.argv[1:2] == ["UserPromptSubmit"]:
            from memrepo.base import bundle

            bundle.use()
        from memrepo.claude import handlers, hookio
    except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
        sys.stderr.write(f"memrepo: cannot load memrepo: {exc}\n")
        raise SystemExit(0) from None
    hookio.exit_now(handlers.main())
