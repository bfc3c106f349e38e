"""UserPromptSubmit (stdlib only: runs before every prompt): Claude Code's event → recall → context.

The agent-neutral work is `memrepo.recall`; this module reads the event's fields, which Codex
CLI's UserPromptSubmit and Gemini CLI's BeforeAgent share with Claude Code's (`prompt`,
`session_id`, `transcript_path`, `cwd`): their adapters call `on_prompt` with their own name and
their own reader of the previous turn.
"""

from memrepo.base import _fast, paths
from memrepo.recall import decide, log

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable


def _previous_turn(transcript_path: str, prompt: str) -> str:
    from memrepo.recall import transcript_tail  # only for a follow-up that leans on the previous turn

    return transcript_tail.previous_turn(transcript_path, prompt)


def _scheduled(transcript_path: str) -> bool:
    from memrepo.recall import transcript_tail  # only for a `/loop` line

    return transcript_tail.scheduled(transcript_path)


def on_prompt(event: "dict[str, Any]", agent: str = "", previous_turn: "Callable[[str, str], str] | None" = None) -> str:
    """UserPromptSubmit: the context to inject, or "" for silence. Never touches git or builds an index.

    `agent` is written to the recall log ("" for Claude Code); `previous_turn(transcript_path,
    prompt)` reads the turn before this prompt from the agent's transcript (Claude Code's by
    default). Claude Code's transcript also tells a typed `/loop` line from its scheduled
    wake-ups; another agent's `/loop` line stays silent.
    """
    prompt = event.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("no prompt in the event")
    repo = paths.memory_repo()
    db_path = paths.index_db(repo)
    if not _fast.exists(db_path):
        raise FileNotFoundError(f"no index at {db_path}; run `memrepo index --rebuild`")
    tpath = event.get("transcript_path")
    tail = previous_turn or _previous_turn
    previous = (lambda: tail(tpath, prompt)) if isinstance(tpath, str) and tpath else ""
    scheduled = (lambda: _scheduled(tpath)) if previous_turn is None and isinstance(tpath, str) and tpath else None
    cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
    if isinstance(event.get("agent_id"), str) and event.get("agent_type"):
        # Codex CLI sends a subagent's delegated task through the same hook: the parent agent
        # wrote it, not a person (tests/fixtures/prompt-frames, issue 36).
        d = decide.Decision()
        d.silent, d.why = "not-typed", "no person typed it: a subagent's task"
    else:
        d = decide.decide(repo, prompt, cwd=cwd, previous=previous, scheduled=scheduled)
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
    try:
        log.log_decision(repo, prompt, d, session, agent)
    except OSError:
        pass
    return decide.format_context(d.hits)
