"""The shapes claims take before validation: a candidate, a refusal with its reason, their labels."""

from __future__ import annotations

import json
from typing import Any, NamedTuple


class Candidate(NamedTuple):
    """A claim before validation; `by` is text, model or user (hand-written in `claims:`)."""

    probe: str
    args: dict[str, Any]
    by: str


class Refusal(NamedTuple):
    """A candidate that is not checked: its label, why, and who proposed it."""

    claim: str
    reason: str
    by: str
    elsewhere: bool = False  # well formed, but not checkable on this machine (`argtypes.NotHere`)


def label(c: Candidate) -> str:
    """A short, safe rendering of a candidate for logs (it may be hostile text)."""
    raw = json.dumps(c.args, ensure_ascii=True, sort_keys=True, default=str) if isinstance(c.args, dict) else repr(c.args)
    return f"{str(c.probe)[:40]} {raw[:200]}"


def mood_reason(state: str) -> str:
    return (f"a pull request's state {state.lower()!r} is a mood, not a fact: "
            "only 'merged' is accepted as a claim")
