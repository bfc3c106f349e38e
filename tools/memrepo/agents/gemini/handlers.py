"""Gemini CLI's hook events, for the hook command `memrepo install gemini` registers (`entry`).

Gemini CLI 0.61 runs it through `bash -c` with the event on stdin and reads JSON from stdout,
the shape Claude Code's hooks print (`hookSpecificOutput.additionalContext`), under its own
event names (tests/e2e/GEMINI-NOTES.md):

- BeforeAgent, after the user submits a prompt: recall. The context becomes a
  `<hook_context>` part after the prompt, in the same user message. A custom command arrives
  expanded; recall reads only its arguments (`commands`).
- SessionStart: refresh the cache when it needs it, note the session. No context: in
  `gemini -p` it is glued to the front of the prompt, and on `--resume` the CLI then drops
  that prompt from the history (§4). What Claude Code gets at session start (the profile) is
  left in `index/gemini-start-<session>.txt` and comes with the session's first prompt instead,
  where it stays in the history.
- AfterAgent, once per prompt, with the reply in `prompt_response`: the usage verdicts, and a
  capture at most every few minutes per session.
- SessionEnd: a capture. (PreCompress fires before every model call, compressing or not: no
  capture from it.)

Stdlib only at import, like every hook; any error is one stderr line and exit 0 (the CLI then
warns and goes on: fail open).
"""

from memrepo.claude import hookio

AGENT = "gemini"
PROMPT = "BeforeAgent"  # the event `entry` loads the prompt path's bundle for
HOOK_TAG_OPEN, HOOK_TAG_CLOSE = "<hook_context>", "</hook_context>"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def own_prompt(prompt: str) -> str:
    """The prompt without what another hook's SessionStart context glued to its front."""
    text = prompt.lstrip()
    while text.startswith(HOOK_TAG_OPEN):
        end = text.find(HOOK_TAG_CLOSE)
        if end < 0:
            break
        text = text[end + len(HOOK_TAG_CLOSE):].lstrip()
    return text


def _start_file(session: object) -> str:
    """Where SessionStart leaves its text for the session's first prompt ("" without a session)."""
    from memrepo.base import paths

    if not isinstance(session, str) or not session:
        return ""
    safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in session[:100])
    return paths.index_dir(paths.memory_repo()) + "/gemini-start-" + safe + ".txt"


def _take_start_text(session: object) -> str:
    """The session-start text left for this session, read once (a stat on every other prompt)."""
    from memrepo.base import _fast

    path = _start_file(session)
    if not path or not _fast.exists(path):
        return ""
    try:
        import os  # once a session: the file is there only for its first prompt

        with open(path, encoding="utf-8") as fh:
            text = fh.read(hookio.MAX_CONTEXT)
        os.remove(path)
    except OSError:
        return ""
    return text.strip()


def _previous_turn(transcript_path: str, prompt: str) -> str:
    from memrepo.agents.gemini import tail  # only for a follow-up that leans on the previous turn (0.5 M instructions)

    return tail.previous_turn(transcript_path, prompt)


def on_before_agent(event: "dict[str, Any]") -> str:
    from memrepo.claude import prompt_hook

    prompt = event.get("prompt")
    if isinstance(prompt, str):
        prompt = own_prompt(prompt)
        from memrepo.agents.gemini import commands
        from memrepo.base import _fast

        cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
        typed = commands.typed_part(prompt, cwd, _fast.getenv("HOME"))  # a custom command's expansion: its arguments
        event = dict(event, prompt=prompt if typed is None else typed)
    start = _take_start_text(event.get("session_id"))
    try:
        recalled = prompt_hook.on_prompt(event, AGENT, _previous_turn)
    except Exception:
        if start:  # the profile still comes; the recall error is reported as every hook's is
            return start
        raise
    return "\n\n".join(t for t in (start, recalled) if t)


def on_session_start(event: "dict[str, Any]") -> str:
    from memrepo.claude import session_start

    text = session_start.on_session_start(event, AGENT)
    path = _start_file(event.get("session_id"))
    if text and path:
        import os

        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return ""


def on_after_agent(event: "dict[str, Any]") -> str:
    from memrepo.claude import stop_hook

    return stop_hook.on_stop(event, AGENT, "prompt_response", "AfterAgent")


def on_session_end(event: "dict[str, Any]") -> str:
    from memrepo.worker import jobs

    _take_start_text(event.get("session_id"))  # a session that ended with no prompt leaves no file behind
    return jobs.on_capture_event(event, "SessionEnd", AGENT, "AfterAgent")


HANDLERS = {PROMPT: on_before_agent, "SessionStart": on_session_start, "AfterAgent": on_after_agent,
            "SessionEnd": on_session_end}


def main(argv: "list[str] | None" = None) -> int:
    """Run the handler of the event named by the first argument; fails open like every hook."""
    return hookio.dispatch(argv, HANDLERS, AGENT)

