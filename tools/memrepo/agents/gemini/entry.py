"""`python -I -m memrepo.agents.gemini.entry EVENT`: the hook command `memrepo install gemini` registers.

Gemini CLI 0.61 runs it through `bash -c` with the event on stdin and reads JSON from stdout,
the shape Claude Code's hooks print (`hookSpecificOutput.additionalContext`), under its own
event names (tests/e2e/GEMINI-NOTES.md):

- BeforeAgent, after the user submits a prompt: recall. The context becomes a
  `<hook_context>` part after the prompt, in the same user message.
- SessionStart: refresh the cache when it needs it, note the session. No context: in
  `gemini -p` it is glued to the front of the prompt, and on `--resume` the CLI then drops
  that prompt from the history (§4).
- AfterAgent, once per prompt, with the reply in `prompt_response`: the usage verdicts, and a
  capture at most every few minutes per session.
- SessionEnd: a capture. (PreCompress fires before every model call, compressing or not: no
  capture from it.)

Stdlib only at import, like every hook; any error is one stderr line and exit 0 (the CLI then
warns and goes on: fail open).
"""

import sys

from memrepo.claude import hookio

AGENT = "gemini"
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


def on_before_agent(event: "dict[str, Any]") -> str:
    from memrepo.agents.gemini import tail
    from memrepo.claude import prompt_hook

    prompt = event.get("prompt")
    if isinstance(prompt, str):
        event = dict(event, prompt=own_prompt(prompt))
    return prompt_hook.on_prompt(event, AGENT, tail.previous_turn)


def on_session_start(event: "dict[str, Any]") -> str:
    from memrepo.claude import session_start

    session_start.on_session_start(event, AGENT)
    return ""


def on_after_agent(event: "dict[str, Any]") -> str:
    from memrepo.claude import stop_hook

    return stop_hook.on_stop(event, AGENT, "prompt_response", "AfterAgent")


def on_session_end(event: "dict[str, Any]") -> str:
    from memrepo.worker import jobs

    return jobs.on_capture_event(event, "SessionEnd", AGENT, "AfterAgent")


HANDLERS = {"BeforeAgent": on_before_agent, "SessionStart": on_session_start, "AfterAgent": on_after_agent,
            "SessionEnd": on_session_end}


def main(argv: "list[str] | None" = None) -> int:
    """Run the handler of the event named by the first argument; fails open like every hook."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else ""
    handler = HANDLERS.get(name)
    if handler is None:
        sys.stderr.write(f"memrepo (gemini): unknown hook event {name!r}\n")
        return 0
    return hookio.run(name, handler)


if __name__ == "__main__":
    hookio.exit_now(main())
