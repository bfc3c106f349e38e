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
        return _no_cache(repo, db_path, prompt, event, agent)
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


NO_CACHE = ("memrepo recalled nothing for this prompt: its cache {db} is missing, so nothing is recalled until "
            "`memrepo index --rebuild` (or the next session) rebuilds it. Tell the user so; this note is not "
            "repeated in this session.")


def _no_cache(repo: str, db_path: str, prompt: str, event: "dict[str, Any]", agent: str) -> str:
    """The cache is gone while the agent runs (removed by hand, a `git clean -x`): recall is silent.

    Its stderr line reaches no one (Claude Code keeps it in a debug log, Codex and Gemini drop it),
    so the decision goes into the recall log and the agent is told once a session (the hook
    builds nothing: the next SessionStart rebuilds the cache, or the command named). Without
    even the index/ folder (the repository itself is gone) there is nowhere to log: the error
    stands, and the next SessionStart makes a repository.
    """
    if not _fast.exists(paths.index_dir(repo)):
        raise FileNotFoundError(f"no index at {db_path}; run `memrepo index --rebuild`")
    session = event.get("session_id") if isinstance(event.get("session_id"), str) else None
    said = session is not None and any(e.get("session") == session and e.get("silent") == "no-cache"
                                       for e in log.read_log(repo, limit=50))
    d = decide.Decision()
    d.silent, d.why = "no-cache", f"no cache at {db_path}"
    try:
        log.log_decision(repo, prompt, d, session, agent)
    except OSError:
        pass
    return "" if said else NO_CACHE.format(db=db_path)
