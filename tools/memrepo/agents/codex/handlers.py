"""Codex CLI's hook events, for the hook command `memrepo install codex` registers (`entry`).

Codex CLI 0.171 runs it through `bash -c` with the event on stdin. Its hooks speak Claude
Code's contract (the same stdin fields, `hookSpecificOutput.additionalContext` out, shown to
the model as a developer message; tests/e2e/CODEX-NOTES.md), so each event goes to the handler
Claude Code's hook uses, with the agent named:

- UserPromptSubmit: recall (the previous turn read from Codex's rollout);
- SessionStart: refresh the cache when needed, note the session, the profile as context;
- Stop (`last_assistant_message`): the usage verdicts, a capture at most every few minutes;
- PreCompact, SessionEnd: a capture.

Nothing but that one JSON object is printed (Codex drops the output of a hook that prints an
unknown key), and the exit code is always 0: exit 2 would block the prompt.
"""

from memrepo.claude import hookio

AGENT = "codex"
PROMPT = "UserPromptSubmit"  # the event `entry` loads the prompt path's bundle for

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _previous_turn(transcript_path: str, prompt: str) -> str:
    from memrepo.agents.codex import tail  # only for a follow-up that leans on the previous turn (0.5 M instructions)

    return tail.previous_turn(transcript_path, prompt)


def on_prompt(event: "dict[str, Any]") -> str:
    from memrepo.claude import prompt_hook

    return prompt_hook.on_prompt(event, AGENT, _previous_turn)


def on_session_start(event: "dict[str, Any]") -> str:
    from memrepo.claude import session_start

    return session_start.on_session_start(event, AGENT)


def on_stop(event: "dict[str, Any]") -> str:
    from memrepo.claude import stop_hook

    return stop_hook.on_stop(event, AGENT)


def on_capture(event: "dict[str, Any]") -> str:
    from memrepo.worker import jobs

    return jobs.on_capture_event(event, "", AGENT)


HANDLERS = {PROMPT: on_prompt, "SessionStart": on_session_start, "Stop": on_stop,
            "PreCompact": on_capture, "SessionEnd": on_capture}


def main(argv: "list[str] | None" = None) -> int:
    """Run the handler of the event named by the first argument; fails open like every hook."""
    return hookio.dispatch(argv, HANDLERS, AGENT)

