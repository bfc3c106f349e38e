"""Stop: judge whether this turn used what recall injected, then queue the session's capture.

The judgement (`memrepo.recall.usage`) reads the event's `last_assistant_message` (the
transcript may lag, CLAUDE-CODE.md) and the local logs, with no model; it never keeps the
capture from being queued, and it prints nothing. The profile's lines, always in context, are
judged by the reply too (`memrepo.passes.profile` counts their uses): a Stop hook's output could block stopping.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def on_stop(event: "dict[str, Any]", agent: str = "", reply_key: str = "last_assistant_message", turn_end: str = "Stop") -> str:
    """The turn's end: the usage verdicts, then the capture job. Codex CLI's Stop and Gemini CLI's
    AfterAgent come here too, with their name, the field holding the reply and the event's name."""
    from memrepo.passes import profile
    from memrepo.base import paths
    from memrepo.recall import usage
    from memrepo.worker import jobs

    reply, session = event.get(reply_key), event.get("session_id")
    if isinstance(reply, str) and isinstance(session, str):
        try:
            repo = paths.memory_repo()
            usage.judge_stop(repo, session, reply, [e.text for e in profile.read(repo)])
        except Exception as exc:  # noqa: BLE001 — a judgement that fails costs a verdict, never the capture
            sys.stderr.write(f"memrepo Stop: usage not recorded: {exc}\n")
    return jobs.on_capture_event(event, turn_end, agent, turn_end)
