"""Claude Code's hook contract (stdlib only): JSON in on stdin, JSON out on stdout, fail open.

The contract only: which handler answers which event is `memrepo.claude.handlers` (and the
plugin's hooks/*.py scripts).

A hook that hits any error writes one line to stderr and exits 0 with no output, so the
user's prompt is never blocked or delayed by memrepo.
"""

import sys

from memrepo.base import _fast
from memrepo.recall import fence

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Callable, Mapping, NoReturn

MAX_STDIN = 8 * 1024 * 1024
# Claude Code replaces a value over 10,000 characters by a 2,000-character preview.
MAX_CONTEXT = 9000
# Set by model.call for the model command of an offline pass (see there).
PASS_ENV = "MEMREPO_PASS"


def read_event() -> "dict[str, Any]":
    """The hook's stdin as a JSON object; raises ValueError on anything else."""
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise ValueError(f"stdin is over {MAX_STDIN} bytes")
    event = _fast.loads(data.decode("utf-8", "replace") or "{}")
    if not isinstance(event, dict):
        raise ValueError("stdin is not a JSON object")
    return event


def emit_context(event_name: str, text: str) -> None:
    """Print `hookSpecificOutput.additionalContext` (capped at a line, fence closed), or nothing for empty text."""
    if not text:
        return
    text = fence.cap(text, MAX_CONTEXT)
    out = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}}
    sys.stdout.write(_fast.dumps(out))
    sys.stdout.flush()


def run(name: str, handler: "Callable[[dict[str, Any]], str | None]") -> int:
    """Read the event, call handler, print its context; on any error, one stderr line and exit 0."""
    if _fast.getenv(PASS_ENV):
        # The default model command is `claude -p`, a Claude Code session with these same hooks.
        # Inside memrepo's own model call they stay out: no memories recalled into a capture
        # prompt, and no capture of the capture session (which would call the model again, forever).
        return 0
    try:
        _fast.umask(0o077)  # logs, job files and the workers a hook starts are this user's alone
        event = read_event()
        text = handler(event)
        if text:
            emit_context(str(event.get("hook_event_name") or name), text)
    except BaseException as exc:  # noqa: BLE001 — fail open, whatever happened (even KeyboardInterrupt)
        msg = str(exc).splitlines()[0][:200] if str(exc) else ""
        try:
            sys.stderr.write(f"memrepo {name}: {type(exc).__name__}: {msg}\n")
        except BaseException:  # noqa: BLE001
            pass
    return 0


def dispatch(argv: "list[str] | None", handlers: "Mapping[str, Callable[[dict[str, Any]], str | None]]", agent: str) -> int:
    """Run the handler of the event named by the first argument (an agent's `entry.main`); an
    event with no handler is one stderr line and exit 0, like every failure."""
    args = sys.argv[1:] if argv is None else argv
    name = args[0] if args else ""
    handler = handlers.get(name)
    if handler is None:
        sys.stderr.write(f"memrepo ({agent}): unknown hook event {name!r}\n")
        return 0
    return run(name, handler)


def exit_now(code: int) -> "NoReturn":
    """End a hook process at once: flush what it printed, then skip the interpreter's teardown.

    A hook process lives for one event. Tearing down the interpreter (freeing every module,
    a last garbage collection) is ~14% of a recall hook's instructions and buys nothing: the
    hooks close their files and the index connection themselves. Only for hook entry points,
    never in a process that goes on (tests, the CLI).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 — a closed pipe: nothing more to say
            pass
    _fast._exit(code)
