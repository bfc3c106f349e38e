"""Claude Code's hook events, for the hook command `memrepo install claude` registers (`entry`)
and `memrepo-hook claude`.

Dispatches one Claude Code event to its handler through `hookio.run` (stdlib only at import:
each handler is imported only for its own event).
"""

import sys

from memrepo.claude import hookio


def main(argv: "list[str] | None" = None) -> int:
    """Run the handler of the event named by the first argument; fails open like every hook."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else ""
    try:
        if name == "UserPromptSubmit":
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

