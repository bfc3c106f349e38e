"""The model extractor: a model fills arguments for the registered probes, and may say a rule
claim is not a claim.

The prompt lists the registry, the rules, the claims the text rules found (by index) and the
memory; the answer (`model.ask_json`, checked against ANSWER_SCHEMA, dropped and logged when
invalid) holds `claims` and, optionally, `not_claims`: `[{"index": 0, "reason": "..."}]`, the
rule claims the model reads as no claim about the world now (an example, a hypothetical, a
plan). An index that names no rule claim is ignored; a vetoed claim is refused with the model's
reason. A pull request state other than merged (`pr_state`) is refused as a mood.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from memrepo.format import notes
from memrepo.passes import model
from memrepo.passes.verify import probes
from memrepo.passes.verify.shapes import Candidate, Refusal, label, mood_reason

PASS = "verify"
MAX_MODEL_CLAIMS = 20
MAX_NOT_CLAIMS = 50

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["claims"], "additionalProperties": False,
    "properties": {
        "claims": {"type": "array", "maxItems": MAX_MODEL_CLAIMS, "items": {
            "type": "object", "required": ["probe", "args"], "additionalProperties": False,
            "properties": {"probe": {"type": "string", "maxLength": 64},
                           "args": {"type": "object"},
                           "quote": {"type": "string", "maxLength": 400}}}},
        "not_claims": {"type": "array", "maxItems": MAX_NOT_CLAIMS, "items": {
            "type": "object", "required": ["index", "reason"], "additionalProperties": False,
            "properties": {"index": {"type": "integer", "minimum": 0, "maximum": 10_000},
                           "reason": {"type": "string", "minLength": 1, "maxLength": 200}}}}},
}


def _rule_lines(rule_claims: list[Candidate]) -> list[str]:
    if not rule_claims:
        return []
    return ["Claims the text rules found in this memory, by index (they read words, not meaning):",
            *(f"  {i}: {label(c)}" for i, c in enumerate(rule_claims)),
            "You need not repeat them in claims. When one is not a claim the memory makes about the world now "
            "(an example or a pattern, a plan, something that no longer exists, a path on another machine, "
            "a web route), list it in not_claims with its index and a short reason."]


def prompt(note: notes.Note, providers: dict[str, Any], rule_claims: list[Candidate] | None = None) -> str:
    """The extraction prompt: the registry, the rules, the claims the text rules found, the memory."""
    lines = ["You read one memory of a coding agent and list the checkable claims it makes about the world.",
             "You may only use these probes, with exactly these arguments (? = optional):"]
    for p in probes.REGISTRY.values():
        params = [*p.required, *(f"{k}?" for k in p.optional)]
        lines.append(f"- {p.name}({', '.join(params)}): {p.doc}")
    lines += [
        "- pr_state(repo, number, state): a sentence about a pull request's state other than merged "
        "(open, closed, draft, in review); list it, it will be refused.",
        f"Configured providers: {', '.join(sorted(providers)) or 'none (so no secret_present or instance_exists)'}.",
        "Rules: claims are facts the memory states as true now, not plans, hypotheses or negations "
        "(a file that no longer exists is not a path_exists claim). A path in a command run on another "
        "machine, or a web route, is not a file of the project. Paths are relative to the project root "
        "(an absolute path inside it may be written as it is). number is an integer. Never write a "
        "command; only fill arguments.",
        *_rule_lines(rule_claims or []),
        'Answer with JSON only: {"claims": [{"probe": "...", "args": {...}, "quote": "the words that claim it"}], '
        '"not_claims": [{"index": 0, "reason": "why it is not a claim"}]}; '
        'empty lists when there is nothing to say.',
        "", f"Memory id: {note.id}", f"Project: {note.get('project') or '(global)'}",
        f"Title: {note.get('title', '')}", f"Description: {note.get('description', '')}", "", note.body.strip(),
    ]
    return "\n".join(lines)


class ModelAnswer(NamedTuple):
    """What the model said of one memory: its claims, their refusals, the rule claims it says are
    not claims (index: reason), and a note when its answer was dropped."""

    found: list[Candidate]
    refused: list[Refusal]
    vetoes: dict[int, str]
    note: str = ""


def _vetoes(items: list[dict[str, Any]], count: int) -> dict[int, str]:
    """index -> reason for the rule claims the model marks as not claims; unknown indexes are
    ignored, the first reason for an index wins, and the reason is kept to one printable line."""
    out: dict[int, str] = {}
    for item in items:
        reason = " ".join("".join(ch if ch.isprintable() else " " for ch in item["reason"]).split())
        if item["index"] < count and reason:
            out.setdefault(item["index"], reason)
    return out


def from_model(repo: str, note: notes.Note, providers: dict[str, Any],
               rule_claims: list[Candidate] | None = None) -> ModelAnswer:
    """The model's answer for one memory, shown the claims the text rules found."""
    rule_claims = rule_claims or []
    answer = model.ask_json(repo, PASS, prompt(note, providers, rule_claims), ANSWER_SCHEMA)
    if answer is None:
        return ModelAnswer([], [], {}, "the model's answer was invalid (logged to index/model-rejects.jsonl)")
    found, refused = [], []
    for item in answer["claims"]:
        probe, args = item["probe"], item["args"]
        if probe == "pr_state":
            state = str(args.get("state", "")).strip().lower()
            if state != "merged":
                refused.append(Refusal(f"pull request {args.get('repo')}#{args.get('number')} is {state[:40]}",
                                       mood_reason(state[:40] or "unstated"), "model"))
                continue
            probe, args = "pr_merged", {k: v for k, v in args.items() if k != "state"}
        found.append(Candidate(probe, args, "model"))
    return ModelAnswer(found, refused, _vetoes(answer.get("not_claims", []), len(rule_claims)))


def veto(rule_claims: list[Candidate], vetoes: dict[int, str]) -> tuple[list[Candidate], list[Refusal]]:
    """The rule claims the model did not mark as not claims, and a refusal for each it did."""
    kept = [c for i, c in enumerate(rule_claims) if i not in vetoes]
    refused = [Refusal(label(c), f"the model says it is not a claim: {vetoes[i]}", c.by)
               for i, c in enumerate(rule_claims) if i in vetoes]
    return kept, refused
