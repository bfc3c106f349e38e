"""The curator: a deterministic pass and a guarded model pass over the memories of a repository.

Commits go through `git commit`, so the pre-commit hook validates them and post-commit reindexes
them. The deterministic pass (broken chains, duplicates, cited paths that no longer exist)
commits ONCE per run: one commit with a `Memrepo-Decision` trailer per decision (runs.py), so
`memrepo log --runs` lists each, `memrepo undo RUN` reverts them all, and a decision a person
undid is not made again. 2,500 dead-path stamps were 2,500 commits and half an hour (issue 22);
these decisions are mechanical, certain (confidence 1.00) and cheap to make again, so nothing
is gained by undoing one alone. A file changed since the pass read it is left out with the
reason; the rest still commit.

A supersession the model proposes stays one commit per decision (`Memrepo-Action`, `-Run`,
`-Confidence`, `-Reason`, `-Id`, `-Winner` trailers): each is a judgement with its own confidence
and reason, the one a person most often disagrees with, and `git revert <sha>` must take back
that judgement without the others of its run. A run judges at most `max_pairs` (20) pairs, so
these commits stay few. It is applied only when the four guards hold (guards.py); a real
tension that fails one becomes a proposal on `memrepo/review/<run>` (review.py); everything else
is left alone, with the reason in the report. Nothing is ever deleted: a memory is superseded
or stamped, never removed.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

from memrepo.progress import Progress, silent
from memrepo.store import config, index, memories as store
from memrepo.vcs import gitcmd, runs, status
from memrepo.vcs.commit import commit_if_unchanged, refuse_in_progress
from memrepo.passes.curate import disuse, guards, pairs, review, tidy, verdicts
from memrepo.passes import model
from memrepo.format import files, notes, validate
from memrepo.base import paths
from memrepo.errors import GitError, MemrepoError
from memrepo.format.notes import Note

PASS = "curate"
MAX_PAIRS = 20
MAX_BODY = 1500
RELATIONS = ("contradicts", "duplicates", "refines", "related", "unrelated")
STANDS = ("related", "unrelated")  # relations under which both memories stand, whatever the winner says


class CurateReport:
    """What one run did: decisions applied, sent to review, and left alone (each with its reason)."""

    def __init__(self, run_id: str, dry_run: bool) -> None:
        self.run_id = run_id
        self.dry_run = dry_run
        self.applied: list[dict[str, Any]] = []
        self.review: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []
        self.model_calls = 0
        self.remembered = 0  # pairs not asked: their verdict of an earlier run still holds

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dry_run": self.dry_run, "model_calls": self.model_calls,
                "remembered": self.remembered, "applied": self.applied, "review": self.review, "skipped": self.skipped}


def verdict_schema(a: str, b: str) -> dict[str, Any]:
    """The only answer accepted for the pair (a, b): a winner that is one of them, or "none"."""
    return {"type": "object", "additionalProperties": False,
            "required": ["relation", "winner", "confidence", "scope", "reason"],
            "properties": {"relation": {"type": "string", "enum": list(RELATIONS)},
                           "winner": {"type": "string", "enum": [a, b, "none"]},
                           "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                           "scope": {"type": "string", "enum": ["full", "partial"]},
                           "reason": {"type": "string", "minLength": 1, "maxLength": 300}}}


def _describe(note: Note) -> str:
    keys = ("id", "class", "project", "created", "updated", "title", "description", "topics", "entities", "tech")
    head = {k: note.get(k) for k in keys if note.get(k) is not None}
    body = note.body if len(note.body) <= MAX_BODY else note.body[:MAX_BODY] + "…"
    return json.dumps(head, ensure_ascii=False) + "\nbody:\n" + body.strip()


def prompt(a: Note, b: Note) -> str:
    """The question put to the model about one pair."""
    return f"""You curate a memory store of notes an agent relies on. Two notes follow. Decide how they relate.

relation: "contradicts" (they cannot both hold now), "duplicates" (they say the same thing),
"refines" (one states the other more completely or more recently), "related" (about the same
subject and both hold: a rule and its exception, two facts about one system), or "unrelated".
winner: the id of the note that should remain in force if one replaces the other, else "none".
scope: "full" only if the winner covers EVERYTHING the other note claims; if it covers part of it,
or you are unsure, say "partial".
confidence: a number from 0 to 1. reason: one sentence.
A note that points to or lists another note does not replace it. A rule the user gave is not
replaced by a note about something else. Two products sharing a technology are not the same subject.

Note A:
{_describe(a)}

Note B:
{_describe(b)}

Answer with only this JSON object and nothing else:
{{"relation": "...", "winner": "{a.id}" | "{b.id}" | "none", "confidence": 0.0, "scope": "full" | "partial", "reason": "..."}}
"""


def _load(repo: str, report: CurateReport | None = None) -> dict[str, Note]:
    """The memories a pass may change; a file it can't use is skipped (and reported in `report`)."""
    found = {}
    mdir = paths.memory_dir(repo)
    for name in files.memory_files(mdir):
        rel = f"{paths.MEMORY_DIR}/{name}"
        try:
            note = notes.read(os.path.join(mdir, name))
            why = validate.unusable(note, rel)
        except (UnicodeDecodeError, notes.ParseError, OSError) as exc:
            why = f"unreadable: {exc}"
        if why:
            if report is not None:
                report.skipped.append({"kind": "invalid", "ids": [name[:-3]], "reason": f"{rel}: {why} (see `memrepo doctor`)"})
            continue
        found[note.id] = note
    return found


class _Run:
    """The state of one run: the memories as they now stand, what the files held when read, the report."""

    def __init__(self, repo: str, report: CurateReport) -> None:
        self.repo = repo
        self.report = report
        self.memories = _load(repo, report)
        self.loaded = dict(self.memories)
        self.read = {i: notes.original(n) for i, n in self.memories.items()}
        self.dirty = status.dirty_ids(repo, paths.MEMORY_DIR)
        self.standing: list[tuple[Note, Note, dict[str, Any]]] = []  # pairs judged to leave both standing
        self.heard = model.Heard()  # the model calls so far, for each commit's `Memrepo-Model`

    def commit(self, note: Note, subject: str, trailers: dict[str, Any], decision: dict[str, Any]) -> bool:
        """Write and commit one memory (unless dry run); False when git refused (then nothing changed)."""
        rel = _rel(note.id)
        if not self.report.dry_run:
            text = notes.serialize(note)
            try:
                sha, stale = commit_if_unchanged(self.repo, {rel: text}, {rel: self.read.get(note.id)}, subject, trailers)
            except GitError as exc:
                self.report.skipped.append({**decision, "reason": f"git refused the commit: {exc}"})
                return False
            if stale:
                self.report.skipped.append({**decision, "reason": f"{rel} changed since the curator read it; left as it is"})
                return False
            decision["commit"] = sha
            self.read[note.id] = text
        self.memories[note.id] = note
        self.report.applied.append(decision)
        return True

    def commit_all(self, pending: list[tuple[tidy.Change, dict[str, Any]]]) -> None:
        """Commit the deterministic decisions (already in `memories`) in one commit, leaving out stale files."""
        if not pending or self.report.dry_run:
            self.report.applied.extend(d for _, d in pending)
            return
        touched = list(dict.fromkeys(c.note.id for c, _ in pending))
        files = {_rel(i): notes.serialize(self.memories[i]) for i in touched}

        def kept(rels: list[str]) -> list[tidy.Change]:
            return [c for c, _ in pending if _rel(c.note.id) in rels]

        try:
            sha, stale = commit_if_unchanged(self.repo, files, {_rel(i): self.read.get(i) for i in touched},
                                             lambda rels: _batch_subject(kept(rels)),
                                             lambda rels: _batch_trailers(kept(rels), self.report.run_id))
        except GitError as exc:
            sha, stale, refused = "", sorted(files), f"git refused the commit: {exc}"
        else:
            refused = ""
        for change, decision in pending:
            rel = _rel(change.note.id)
            if rel in stale:
                self.memories[change.note.id] = self.loaded[change.note.id]
                why = refused or f"{rel} changed since the curator read it; left as it is"
                self.report.skipped.append({**decision, "reason": why})
                continue
            decision["commit"] = sha
            self.read[change.note.id] = files[rel]
            self.report.applied.append(decision)


def _rel(note_id: str) -> str:
    return f"{paths.MEMORY_DIR}/{note_id}.md"


_KINDS = {"chain": "chain repair", "duplicate": "duplicate", "dead-path": "dead path"}


def _batch_subject(changes: list[tidy.Change]) -> str:
    if len(changes) == 1:
        return changes[0].subject
    counts: dict[str, int] = {}
    for c in changes:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    parts = [f"{n} {_KINDS.get(k, k)}{'s' * (n != 1)}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return f"curator: {len(changes)} decisions ({', '.join(parts)})"


def _batch_trailers(changes: list[tidy.Change], run_id: str) -> dict[str, Any]:
    lines = [runs.decision_line(c.action, c.note.id, c.reason, c.extra.get("Winner")) for c in changes]
    return {"Action": "tidy", "Run": run_id, "Confidence": "1.00",
            "Reason": "deterministic pass: one Memrepo-Decision per memory", "Model": "not asked (deterministic step)",
            "Decisions": len(lines),
            runs.DECISION: lines}


def _deterministic(run: _Run, settings: dict[str, Any]) -> None:
    chain_changes, left = tidy.chains(run.memories)
    for nid, why in left:
        run.report.skipped.append({"kind": "chain", "ids": [nid], "reason": why})
    undone = runs.undone_decisions(run.repo)
    pending: list[tuple[tidy.Change, dict[str, Any]]] = []
    # Each finder sees the decisions before it (a duplicate superseded here is no dead path to stamp).
    for finder in (lambda: chain_changes, lambda: tidy.duplicates(run.memories),
                   lambda: tidy.dead_paths(run.repo, run.memories, settings, _dt.date.today().isoformat())):
        for change in finder():
            decision = {"kind": change.kind, "action": change.action, "ids": [change.note.id, *change.extra.values()],
                        "confidence": 1.0, "reason": change.reason}
            if change.note.id in run.dirty:
                run.report.skipped.append({**decision, "reason": "uncommitted changes in the file; left to its author"})
                continue
            by = undone.get((change.action, change.note.id, str(change.extra.get("Winner", ""))))
            if by:
                run.report.skipped.append({**decision, "reason": f"undone by run {by}; not applied again"})
                continue
            run.memories[change.note.id] = change.note
            pending.append((change, decision))
    run.commit_all(pending)


def _disuse(run: _Run, settings: dict[str, Any]) -> None:
    """Memories unused for `retire_unused_days`, each proposed for retirement on the review
    branch with its evidence (`disuse`, issue 43); never retired without a person."""
    asked = review.pairs_seen(run.repo)
    today = _dt.date.today().isoformat()
    for note, evidence in disuse.idle(run.repo, run.memories, settings):
        decision = {"kind": "disuse", "action": "retire", "ids": [note.id], "confidence": 1.0,
                    "reason": disuse.evidence_line(evidence)}
        if note.id in run.dirty or frozenset((note.id, "")) in asked:
            continue  # its author is editing it, or a person has it open or said no already
        if not run.report.dry_run:
            trailers = {"Action": "retire", "Run": run.report.run_id, "Confidence": "1.00", "Id": note.id,
                        "Reason": decision["reason"], "Model": "not asked (deterministic step)",
                        "Review": f"unused for {evidence['idle_days']} days: a person decides"}
            body = ("Not used while recall watched it; never retired without a person.\n"
                    + "\n".join(f"- {k}: {v}" for k, v in evidence.items()))
            decision["commit"] = review.propose(
                run.repo, run.report.run_id,
                {f"{paths.MEMORY_DIR}/{note.id}.md": notes.serialize(disuse.retired(note, evidence, today))},
                f"curator (proposed): retire {note.id}, unused for {evidence['idle_days']} days", trailers, body)
            decision["branch"] = review.branch_name(run.report.run_id)
        run.report.review.append(decision)


def _ask(run: _Run, a: Note, b: Note) -> dict[str, Any] | None:
    run.report.model_calls += 1
    return model.ask_json(run.repo, PASS, prompt(a, b), verdict_schema(a.id, b.id))  # type: ignore[no-any-return]


def _judge(run: _Run, a: Note, b: Note, verdict: dict[str, Any] | None) -> None:
    base = {"kind": "model", "ids": [a.id, b.id]}
    if verdict is None:
        run.report.skipped.append({**base, "reason": f"invalid model answer, dropped (logged to index/{model.REJECTS})"})
        return
    base.update(relation=verdict["relation"], confidence=verdict["confidence"], scope=verdict["scope"], model_reason=verdict["reason"])
    if verdict["relation"] in STANDS or verdict["winner"] == "none":
        run.report.skipped.append({**base, "reason": f"relation {verdict['relation']}, winner {verdict['winner']}: both stand"})
        run.standing.append((a, b, verdict))
        return
    winner, loser = (a, b) if verdict["winner"] == a.id else (b, a)
    base.update(action="supersede", winner=winner.id, loser=loser.id)
    failed = guards.failures(verdict, winner, loser)
    trailers = {"Action": "supersede", "Run": run.report.run_id, "Confidence": f"{verdict['confidence']:.2f}",
                "Reason": " ".join(verdict["reason"].split()), "Id": loser.id, "Winner": winner.id, "Relation": verdict["relation"],
                "Scope": verdict["scope"], "Model": run.heard.trailer()}
    if not failed:
        run.commit(tidy.superseded(loser, winner.id), f"curator: supersede {loser.id} by {winner.id}", trailers, base)
        return
    base["guards_failed"] = failed
    why_not = guards.no_tension(verdict, winner, loser)
    if why_not:
        run.report.skipped.append({**base, "reason": why_not})
        run.standing.append((a, b, verdict))
        return
    _propose(run, loser, winner, trailers, base, failed)


def _propose(run: _Run, loser: Note, winner: Note, trailers: dict[str, Any], decision: dict[str, Any], failed: list[str]) -> None:
    decision["reason"] = "failed guard: " + "; ".join(failed)
    if not run.report.dry_run:
        text = notes.serialize(tidy.superseded(loser, winner.id))
        body = "The curator did not apply this on its own:\n" + "\n".join(f"- {f}" for f in failed)
        decision["commit"] = review.propose(run.repo, run.report.run_id, {f"{paths.MEMORY_DIR}/{loser.id}.md": text},
                                            f"curator (proposed): supersede {loser.id} by {winner.id}",
                                            {**trailers, "Review": "; ".join(failed)}, body)
        decision["branch"] = review.branch_name(run.report.run_id)
    run.report.review.append(decision)


def _model_pass(run: _Run, settings: dict[str, Any], progress: Progress = silent) -> None:
    _section = settings.get("curate")
    section: dict[str, Any] = _section if isinstance(_section, dict) else {}
    limit = int(section.get("max_pairs", MAX_PAIRS))
    active = {i: n for i, n in run.memories.items() if tidy.is_active(n) and i not in run.dirty}
    remembered = verdicts.standing(run.repo, active)
    found = list(pairs.candidates(run.repo, active, limit, review.pairs_seen(run.repo) | remembered))
    run.report.remembered = len(remembered)
    try:
        _judge_pairs(run, found, progress)
    finally:
        if not run.report.dry_run:
            verdicts.remember(run.repo, run.standing, _dt.date.today().isoformat())


def _judge_pairs(run: _Run, found: list[tuple[str, str]], progress: Progress) -> None:
    for done, (a_id, b_id) in enumerate(found):
        progress("curate: pairs judged", done, len(found))
        a, b = run.memories[a_id], run.memories[b_id]
        if not (tidy.is_active(a) and tidy.is_active(b)):
            continue  # one of them was superseded earlier in this run
        try:
            verdict = _ask(run, a, b)
        except model.ModelError as exc:
            run.report.skipped.append({"kind": "model", "ids": [a_id, b_id], "reason": f"model pass stopped: {exc}"})
            return
        _judge(run, a, b, verdict)
    progress("curate: pairs judged", len(found), len(found))


def run(repo: str, *, dry_run: bool = False, use_model: bool = True, run_id: str | None = None,
        progress: Progress = silent) -> CurateReport:
    """Run the deterministic pass, then (unless `use_model` is False) the guarded model pass.

    With `dry_run` nothing is written: no commit, no review branch (the model is still asked).
    """
    store.require_repo(repo)
    if gitcmd.head(repo) is None:
        raise MemrepoError("the memory repository has no commits yet", hint=f"run `memrepo init {repo}`")
    if use_model:
        model.require_enabled(repo)
    if not dry_run:
        refuse_in_progress(repo)  # before any model call: its writes would be refused after them (h31)
    report = CurateReport(run_id or runs.fresh_run_id(repo, PASS), dry_run)
    index.update(repo)
    settings = config.load(repo)
    state = _Run(repo, report)
    _deterministic(state, settings)
    _disuse(state, settings)
    if use_model:
        _model_pass(state, settings, progress)
    return report
