"""What a memory claims: typed probe calls found in its text, by rule or by a model.

Two extractors fill the same shape, `{"probe": name, "args": {...}}`, and neither can say
anything the registry in `probes` does not define: the deterministic one (here) reads
backticked paths, URLs, branch names and `owner/repo#123`; the model one (`modelclaims`) may
only fill arguments for the registered probes. A pull request's state is a mood: only "merged"
is a claim, and a sentence saying a PR is open or closed is refused here with the reason.

The text rules (`memrepo.format.mentions`, which the cache's citations share) read words, not
meaning, so each mention is weighed against its sentence first (`format.mention_context`: a
plan, a negation, another machine's path or a web route is refused with the reason), and the model, shown the rule claims by index, may mark one as not a claim. Every
candidate is then placed in a configured project (`scope`: an absolute path inside a root is
that project's, one outside every root is refused) and goes through `probes.check`; one claim
in two forms is kept once.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from memrepo.format import mention_context, mentions, notes
from memrepo.passes.verify import probes, scope
from memrepo.passes.verify.argtypes import NotHere
from memrepo.passes.verify.modelclaims import ANSWER_SCHEMA, from_model, prompt, veto
from memrepo.passes.verify.shapes import Candidate, Refusal, label, mood_reason

__all__ = ["ANSWER_SCHEMA", "Candidate", "Extraction", "Refusal", "extract", "from_model", "from_text", "label",
           "mood_reason", "prompt", "stored", "to_meta", "validate", "veto"]

_MOOD = re.compile(r"\b(open|opened|opening|closed|closing|draft|pending|awaiting|waiting|in review|under review|"
                   r"needs review|approved|unmerged|not (?:yet )?merged|blocked|abandoned|reverted)\b", re.I)
_MERGED = re.compile(r"\b(merged|landed)\b", re.I)
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)|\n")

Span = tuple[int, int]


class Mention(NamedTuple):
    """A candidate the text rules found, where it stands in the text, and what it names
    (path, dir — a path without an extension —, branch, url or pr)."""

    candidate: Candidate
    span: Span
    kind: str


class Extraction(NamedTuple):
    calls: list[tuple[probes.Call, str]]
    refused: list[Refusal]
    model_note: str
    not_claims: list[str]  # labels of the rule claims the model marked as not claims


# -- deterministic ---------------------------------------------------------------------

def _paths(text: str, taken: set[Span], roots: dict[str, str]) -> list[Mention]:
    # An absolute path without an extension is an endpoint (`/hooks/stripe`), not a file, unless
    # it lies in a configured project.
    return [Mention(Candidate("path_exists", {"path": m.value}, "text"), m.span, m.kind)
            for m in mentions.paths(text, taken, lambda path: scope.owner(path, roots) is not None)]


def _branches(text: str) -> tuple[list[Mention], set[Span]]:
    found, taken = mentions.branches(text)
    return [Mention(Candidate("git_branch_exists", {"branch": m.value}, "text"), m.span, m.kind) for m in found], taken


def _urls(text: str) -> list[Mention]:
    return [Mention(Candidate("url_alive", {"url": m.value}, "text"), m.span, m.kind) for m in mentions.urls(text)]


def _pull_requests(text: str) -> tuple[list[Mention], list[Refusal]]:
    """`owner/repo#N` claims merged, refused when its clause gives another state, else no claim."""
    found, refused = [], []
    refs = list(mentions.PR.finditer(text))
    for i, m in enumerate(refs):
        start = max([refs[i - 1].end() if i else 0] + [e.end() for e in _SENTENCE_END.finditer(text, 0, m.start())])
        stop = refs[i + 1].start() if i + 1 < len(refs) else len(text)
        end = _SENTENCE_END.search(text, m.end(), stop)
        clause = text[start:end.start() if end else stop]
        ref = f"{m.group(1)}#{m.group(2)}"
        mood = _MOOD.search(clause)
        if mood:
            refused.append(Refusal(f"pull request {ref} is {mood.group(1).lower()}", mood_reason(mood.group(1)), "text"))
        elif _MERGED.search(clause):
            found.append(Mention(Candidate("pr_merged", {"repo": m.group(1), "number": int(m.group(2))}, "text"),
                                 m.span(), "pr"))
    return found, refused


def from_text(note: notes.Note, roots: dict[str, str] | None = None) -> tuple[list[Candidate], list[Refusal]]:
    """Claims found by rule in the title, description and body (fenced code is left out); a
    mention its sentence does not claim as a present fact is refused with the reason."""
    # A blank line between title, description and body: each is its own clause for `context`.
    text = mentions.note_text(note.get("title", ""), note.get("description", ""), note.body)
    prs, refused = _pull_requests(text)
    branches, taken = _branches(text)
    found_all = branches + _paths(text, taken, roots or {}) + _urls(text) + prs
    reader = mention_context.Reader(text, [m.span for m in found_all] + [t.span() for t in mentions.TICKED.finditer(text)])
    found = []
    for m in found_all:
        why = mention_context.judge(reader, m.span, m.kind)
        if why:
            refused.append(Refusal(label(m.candidate), why, "text"))
        else:
            found.append(m.candidate)
    return found, refused


# -- together --------------------------------------------------------------------------

def stored(note: notes.Note, keep_model: bool) -> list[Candidate]:
    """Claims already in the memory: hand-written ones always, the model's when it does not run again."""
    out = []
    for item in note.get("claims") or []:
        if not isinstance(item, dict):
            out.append(Candidate(str(item)[:40], {}, "user"))
            continue
        by = item.get("by", "user")
        if by == "user" or (by == "model" and keep_model):
            args = item.get("args")
            # A malformed stored claim is kept as written and refused by validation like any other.
            out.append(Candidate(str(item.get("probe")), args if isinstance(args, dict) else {"": args},
                                 "user" if by == "user" else "model"))
    return out


def validate(candidates: list[Candidate], providers: dict[str, Any], roots: dict[str, str] | None = None,
             project: str | None = None) -> tuple[list[tuple[probes.Call, str]], list[Refusal]]:
    """Each candidate placed in a configured project (`scope`) and checked against the registry;
    the same claim in two forms is kept once (the first source wins)."""
    roots = roots or {}
    calls: list[tuple[probes.Call, str]] = []
    refused, seen = [], set()
    for c in candidates:
        try:
            call = scope.canonical(probes.check(c.probe, scope.place(c.probe, c.args, roots), providers),
                                   roots, project)
        except probes.ClaimRejected as exc:
            refused.append(Refusal(label(c), str(exc), c.by, isinstance(exc, NotHere)))
            continue
        key = (call.probe, json.dumps(call.args, sort_keys=True))
        if key not in seen:
            seen.add(key)
            calls.append((call, c.by))
    return calls, refused


def vetoed_before(note: notes.Note) -> list[str]:
    """The labels of the rule claims a model marked as not claims in an earlier run
    (`verification.not_claims`)."""
    ver = note.get("verification")
    labels = ver.get("not_claims") if isinstance(ver, dict) else None
    return [x for x in labels if isinstance(x, str)] if isinstance(labels, list) else []


def _keep_vetoes(found: list[Candidate], labels: list[str]) -> tuple[list[Candidate], list[Refusal]]:
    """A model's earlier veto holds while no model answers: the text rules alone are no evidence
    that the mention is a claim after all (issue 37)."""
    gone = set(labels)
    return ([c for c in found if label(c) not in gone],
            [Refusal(label(c), "a model said in an earlier run that it is not a claim", c.by) for c in found
             if label(c) in gone])


def extract(repo: str, note: notes.Note, providers: dict[str, Any], use_model: bool,
            roots: dict[str, str] | None = None) -> Extraction:
    """Every claim of a memory, validated; raises model.ModelError when the model command fails.
    `roots` are the configured project roots (`config.project_roots`)."""
    project = note.get("project") if isinstance(note.get("project"), str) else None
    found, refused = from_text(note, roots)
    model_note, not_claims = "", vetoed_before(note)
    if use_model:
        answer = from_model(repo, note, providers, found)
        if not answer.note:  # an answer was heard: its vetoes replace the earlier ones
            not_claims = [label(c) for i, c in enumerate(found) if i in answer.vetoes]
        found, vetoed = veto(found, answer.vetoes)
        found, refused, model_note = found + answer.found, refused + vetoed + answer.refused, answer.note
    if not use_model or model_note:
        found, kept = _keep_vetoes(found, not_claims)
        refused += kept
    # A dropped answer is no evidence that the model's earlier claims went away: keep them.
    keep_model = not use_model or bool(model_note)
    calls, rejected = validate(stored(note, keep_model) + found, providers, roots, project)
    unique = {(r.claim, r.reason): r for r in reversed(refused + rejected)}  # the first source wins
    return Extraction(calls, list(reversed(unique.values())), model_note, not_claims)


def _hand_written(item: Any) -> bool:
    return not isinstance(item, dict) or item.get("by", "user") == "user"


def to_meta(calls: list[tuple[probes.Call, str]], note: notes.Note, complete: bool = True) -> list[Any]:
    """The `claims:` value: hand-written claims exactly as the person wrote them (even ones this
    machine refuses: a provider may be configured elsewhere), then the extracted ones with their source.

    Not `complete` (some claim could not be checked on this machine), the extracted claims stored
    before are kept beside this run's: one this machine cannot place is still another's claim."""
    kept = [item for item in note.get("claims") or [] if _hand_written(item)]
    found = [{"probe": call.probe, "args": dict(call.args), "by": by} for call, by in calls if by != "user"]
    if not complete:
        found += [item for item in note.get("claims") or [] if not _hand_written(item) and item not in found
                  and {**item, "by": "text"} not in found and {**item, "by": "model"} not in found]
    return kept + found
