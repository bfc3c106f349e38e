"""Codex CLI hook trust: the `trusted_hash` Codex expects in config.toml for a hook to run.

Codex 0.171 runs a user hook only when `[hooks.state."<key>"] trusted_hash` in the user's
config.toml equals the hash of the hook as configured (else it skips it, silently, in
`codex exec`). `memrepo install codex` writes that entry for its own hooks: the user asked to
install them. Measured against the real CLI (tests/e2e/CODEX-NOTES.md §3, its test vectors in
tests/test_codex_install.py): sha256 over canonical JSON (keys sorted, compact) of
{"event_name": <snake_case>, "matcher": <unless the event ignores matchers>, "hooks": [<the
handler, normalized>]}. If a later Codex hashes differently, its `/hooks` screen asks the user
to review memrepo's hooks instead, and `memrepo doctor` says how.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

MATCHERLESS = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})  # Codex drops their matcher
SHORT = frozenset({"SessionEnd", "Interrupt"})  # timeout defaults to 1 s, clamped to 3 s
DEFAULT_TIMEOUT = 600


def snake(event: str) -> str:
    """`UserPromptSubmit` -> `user_prompt_submit`, the event's label in keys and hashes."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def state_key(hooks_json: str, event: str, group: int, handler: int = 0) -> str:
    """The config.toml state key of one handler of a hooks.json file."""
    return f"{hooks_json}:{snake(event)}:{group}:{handler}"


def trusted_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The hash Codex computes for one command handler (`handler` as written in hooks.json)."""
    timeout = handler.get("timeout")
    timeout = max(1, int(timeout if timeout is not None else (1 if event in SHORT else DEFAULT_TIMEOUT)))
    if event in SHORT:
        timeout = min(timeout, 3)
    normalized: dict[str, Any] = {"type": "command", "command": handler["command"], "timeout": timeout,
                                  "async": bool(handler.get("async", False))}
    for key in ("statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            normalized[key] = handler[key]
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [normalized]}
    if matcher is not None and event not in MATCHERLESS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
