"""`python -I -S …/memrepo/claude/entry.py EVENT`: the hook command `memrepo install claude` registers.

Dispatches one Claude Code event to its handler through `hookio.run` (stdlib only at import:
each handler is imported only for its own event).
"""

import sys

if __name__ == "__main__" and not __package__:  # run by path, `python -I -S …/entry.py` (the installed hooks)
    if sys.argv[1:] == ["UserPromptSubmit"]:
        # The prompt hook as the plugin runs it (memrepo/claude/prompt_main.py, from the prompt
        # path's bundle), before anything of memrepo is imported: 1.80x -> 1.67x a bare start at
        # 1,000 memories (issue 44); when that file cannot be run, the way below.
        _body = {"__name__": "memrepo.claude.prompt_main"}
        try:
            _loader = sys.modules["_frozen_importlib_external"].SourceFileLoader(_body["__name__"],
                                                                                 __file__[:-8] + "prompt_main.py")
            exec(_loader.get_code(_body["__name__"]), _body)
        except BaseException:  # noqa: BLE001
            _body.clear()
        _main = _body.get("main")
        if callable(_main):
            _main(__file__.rsplit("/", 3)[0])
    sys.path.insert(0, __file__.rsplit("/", 3)[0])  # the folder holding the memrepo package

from memrepo.claude import hookio  # noqa: E402


def _bundle() -> None:
    """The prompt path from one file when an install wrote it (memrepo/base/bundle.py); else, or
    when it is stale, the import system as ever."""
    try:
        from memrepo.base import bundle

        tools = __file__.rsplit("/", 3)[0]
        bundle.load(bundle.path(tools), tools)
    except BaseException:  # noqa: BLE001
        pass


def main(argv: "list[str] | None" = None) -> int:
    """Run the handler of the event named by the first argument; fails open like every hook."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else ""
    try:
        if name == "UserPromptSubmit":
            _bundle()
            from memrepo.claude import prompt_hook

            return hookio.run(name, prompt_hook.on_prompt)
        if name == "SessionStart":
            from memrepo.claude import session_start

            return hookio.run(name, session_start.on_session_start)
        if name == "Stop":
            from memrepo.claude import stop_hook

            return hookio.run(name, stop_hook.on_stop)
        if name in ("PreCompact", "SessionEnd"):
            from memrepo.worker import jobs

            return hookio.run(name, jobs.on_capture_event)
    except BaseException as exc:  # noqa: BLE001 — fail open even when an import fails
        sys.stderr.write(f"memrepo {name}: {exc}\n")
        return 0
    sys.stderr.write(f"memrepo: unknown hook event {name!r}\n")
    return 0


if __name__ == "__main__":
    hookio.exit_now(main())
