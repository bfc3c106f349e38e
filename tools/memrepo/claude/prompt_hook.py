"""UserPromptSubmit (stdlib only: runs before every prompt): Claude Code's event → recall → context.

The agent-neutral work is `memrepo.recall`; this module reads Claude Code's event fields.
"""

from memrepo.recall import _fast, decide, log, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _previous_turn(transcript_path: str, prompt: str) -> str:
    from memrepo.recall import transcript_tail  # only for a follow-up that leans on the previous turn

    return transcript_tail.previous_turn(transcript_path, prompt)


def on_prompt(event: "dict[str, Any]") -> str:
    """UserPromptSubmit: the context to inject, or "" for silence. Never touches git or builds an index."""
    prompt = event.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("no prompt in the event")
    repo = paths.memory_repo()
    db_path = paths.index_db(repo)
    if not _fast.exists(db_path):
        raise FileNotFoundError(f"no index at {db_path}; run `memrepo index --rebuild`")
    tpath = event.get("transcript_path")
    previous = (lambda: _previous_turn(tpath, prompt)) if isinstance(tpath, str) and tpath else ""
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    d = decide.decide(repo, prompt, cwd=cwd, previous=previous)
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
    try:
        log.log_decision(repo, prompt, d, session)
    except OSError:
        pass
    return decide.format_context(d.hits)
