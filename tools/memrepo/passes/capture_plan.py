"""Where a capture's candidates go: new memories, duplicates dropped, supersessions, and the commits.

Candidates are deduplicated against the store (FTS neighbours + the curator's verdict behind
the four guards), enriched with aliases, and committed: the new memories in one commit
(`Memrepo-Action: capture`), each supersede/retire in its own, or all of it as one proposal
on `memrepo/review/<run>` when `capture_review` is set.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any

from memrepo.format import catalogue, notes, validate
from memrepo.format.notes import Note
from memrepo.passes import model
from memrepo.passes.curate import curator as curate, guards, review
from memrepo.base import paths
from memrepo.recall import query, search
from memrepo.store import lifecycle, memories as store
from memrepo.vcs.commit import commit_files

PASS = "capture"


class CaptureReport:
    """What one capture did."""

    def __init__(self, run_id: str, session: str, transcript_path: str) -> None:
        self.run_id = run_id
        self.session = session
        self.transcript = transcript_path
        self.turns = 0
        self.model_calls = 0
        self.added: list[str] = []
        self.refuted: list[dict[str, Any]] = []
        self.superseded: list[dict[str, Any]] = []
        self.review: list[dict[str, Any]] = []  # contradictions a guard held back: proposals, as the curator makes
        self.held: list[dict[str, Any]] = []  # candidates like a memory a person forgot: proposals, never recalled
        self.left_alone: list[dict[str, Any]] = []  # a verdict about a neighbour that called for nothing, and why
        self.dropped: list[dict[str, Any]] = []
        self.commits: list[str] = []
        self.heard = model.Heard()  # what each commit's `Memrepo-Model` says
        self.review_branch: str | None = None
        self.last_line = 0
        self.more = False  # stopped at its budget of model calls: the rest of the transcript waits
        # What the worker should log about this capture (the pass itself writes no worker log).
        self.log: list[str] = []

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "heard"}


def session_memories(repo: str, session: str) -> list[Note]:
    """Active memories an earlier capture of `session` wrote."""
    try:
        with contextlib.closing(store.fresh_db(repo)) as db:
            ids = [r[0] for r in db.execute("SELECT id FROM memories WHERE session = ? AND status = 'active' ORDER BY id", (session,))]
    except sqlite3.Error:
        return []
    return [notes.read(paths.note_path(repo, i)) for i in ids if os.path.exists(paths.note_path(repo, i))]


def neighbours(repo: str, note: Note, skip: set[str], limit: int = 2, status: str = "active") -> list[Note]:
    """The memories of `status` FTS finds nearest to a candidate's title and description."""
    terms = query.subject_terms(f"{note.get('title', '')} {note.get('description', '')}", 12)
    if not terms:
        return []
    sql = (f"SELECT m.id FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ? AND m.status = '{status}'"
           " ORDER BY bm25(fts) LIMIT ?")
    try:
        with contextlib.closing(search.connect(paths.index_db(repo))) as db:
            ids = [r[0] for r in db.execute(sql, (" OR ".join(search.quote(t) for t in terms), 3 * limit + len(skip)))]
    except sqlite3.Error:
        return []
    found = [notes.read(paths.note_path(repo, i)) for i in ids if i not in skip and os.path.exists(paths.note_path(repo, i))]
    # Another project's memory can never be superseded by this one, nor this one by it (issue 16).
    return [old for old in found if not guards.never_applies(note, old)][:limit]


def _same_title(a: Note, b: Note) -> bool:
    return " ".join(str(a.get("title", "")).lower().split()) == " ".join(str(b.get("title", "")).lower().split())


class Plan:
    """The files one capture writes: new memories, and memories it supersedes or retires."""

    def __init__(self, repo: str, run_id: str, session: str) -> None:
        self.repo = repo
        self.run_id = run_id
        self.session = session
        self.new: list[Note] = []
        self.changes: list[tuple[Note, dict[str, Any]]] = []  # (new text of an old memory, its commit's trailers)
        self.taken: set[str] = set()
        self.tensions: list[tuple[str, str, dict[str, Any], list[str]]] = []  # (loser id, winner id, verdict, guards failed)
        self.held: list[tuple[Note, Note, str]] = []  # (candidate, the forgotten memory it is like, why)

    def add(self, note: Note, report: CaptureReport, keep: bool = True) -> None:
        """Give the candidate a free id and, if it is a valid memory, keep it (`keep`) among the new ones."""
        base = store.short_slug(str(note.get("title", "")))
        seed = notes.serialize(Note({k: v for k, v in note.meta.items() if k != "id"}, note.body))
        note_id = store.unique_id(self.repo, base, seed, self.taken)
        meta = {**note.meta, "id": note_id}
        note.meta = {k: meta[k] for k in notes.ordered_keys(meta)}
        problems, _ = validate.check_text(notes.serialize(note), f"{paths.MEMORY_DIR}/{note_id}.md", catalogue.find_secrets)
        if problems:
            report.dropped.append({"title": note.get("title"), "reason": f"not a valid memory: {problems[0]}"})
            return
        self.taken.add(note_id)
        if keep:
            self.new.append(note)

    def hold(self, note: Note, forgotten: Note, why: str, report: CaptureReport) -> None:
        """Send the candidate to review instead of recall: it is like `forgotten`, which a person retired."""
        self.add(note, report, keep=False)
        if note.id in self.taken:
            self.held.append((note, forgotten, why))

    def change(self, old: Note, reason: str, winner: Note | None, **extra: Any) -> None:
        meta = dict(old.meta)
        if winner is not None:
            meta.update(status="superseded", superseded_by=winner.id)
        else:
            meta["status"] = "retired"
        action = "supersede" if winner is not None else "retire"
        trailers = {"Action": action, "Run": self.run_id, "Id": old.id, "Session": self.session, **extra, "Reason": reason}
        if winner is not None:
            trailers["Winner"] = winner.id
        self.changes.append((Note({k: meta[k] for k in notes.ordered_keys(meta)}, old.body, old.path), trailers))

    def refute(self, old: Note, replacement: Note | None, reason: str) -> None:
        """A memory captured earlier in the session that this part refuted: never left live."""
        live = replacement is not None and replacement in self.new
        self.change(old, reason, replacement if live else None, Refuted="yes")


def person_retired(plan: Plan, note: Note, report: CaptureReport) -> tuple[str, Note | None, str]:
    """("drop" or "review", the memory a person retired that the candidate is like, why), or ("", None, "").

    What a person forgot (`memrepo retire`/`forget`) must not come back because a later session
    said it again, in the same words or in others. The same title drops the candidate. A
    candidate the model calls a duplicate or a refinement of it goes to review, not into recall:
    only a person undoes a person's decision. So does one it could not be checked against,
    because the model did not answer (issue 37). A candidate that contradicts it is a new memory.
    """
    for old in neighbours(plan.repo, note, set(), status="retired"):
        reason = old.get(lifecycle.RETIRED_BY_PERSON)
        if not reason:
            continue  # retired by a pass, not by a person: a new capture may say it again
        if _same_title(note, old):
            return "drop", old, f"a person retired {old.id} ({reason})"
        probe = Note(dict(note.meta, id="candidate"), note.body)
        report.model_calls += 1
        verdict = model.ask_json(plan.repo, PASS, curate.prompt(probe, old), curate.verdict_schema(probe.id, old.id))
        if verdict is None:
            return "review", old, (f"not checked against {old.id}, which a person retired ({reason}): "
                                   "the model gave no valid verdict")
        if verdict["relation"] in ("duplicates", "refines"):
            return "review", old, (f"the model calls it {verdict['relation']} of {old.id}, which a person retired "
                                   f"({reason}): {' '.join(verdict['reason'].split())}")
    return "", None, ""


def place(plan: Plan, note: Note, report: CaptureReport, skip: set[str]) -> None:
    """Add a candidate unless the store already holds it; let it supersede what it replaces (guarded)."""
    action, forgotten, why = person_retired(plan, note, report)
    if action == "drop":
        report.dropped.append({"title": note.get("title"), "reason": why})
        return
    if forgotten is not None:
        plan.hold(note, forgotten, why, report)
        return
    for old in neighbours(plan.repo, note, skip):
        if _same_title(note, old) and note.get("class") == old.get("class"):
            report.dropped.append({"title": note.get("title"), "reason": f"duplicate of {old.id} (same title)"})
            return
        probe = Note(dict(note.meta, id="candidate"), note.body)
        report.model_calls += 1
        verdict = model.ask_json(plan.repo, PASS, curate.prompt(probe, old), curate.verdict_schema(probe.id, old.id))
        if verdict is None or verdict["relation"] == "unrelated" or verdict["winner"] == "none":
            continue
        old_wins = verdict["winner"] == old.id
        winner, loser = (old, probe) if old_wins else (probe, old)
        failed = guards.failures(verdict, winner, loser)
        if old_wins and verdict["relation"] == "duplicates" and not failed:
            report.dropped.append({"title": note.get("title"), "reason": f"duplicate of {old.id}: {verdict['reason']}"})
            return
        why_not = guards.no_tension(verdict, winner, loser) if old_wins or failed else ""
        if why_not:
            # No tension worth a person's time (the curator would leave it alone too): say so.
            report.left_alone.append({"title": note.get("title"), "other": old.id, "relation": verdict["relation"],
                                      "reason": why_not})
            continue
        plan.add(note, report)
        if note not in plan.new:
            return
        if not old_wins and not failed:
            plan.change(old, " ".join(verdict["reason"].split()), note, Confidence=f"{verdict['confidence']:.2f}")
            report.superseded.append({"id": old.id, "by": note.id, "reason": verdict["reason"]})
        else:
            # Two active memories that disagree, one of them new: a person decides (issue 16).
            pair = (note.id, old.id) if old_wins else (old.id, note.id)
            plan.tensions.append((*pair, verdict, failed or [f"the older {old.id} wins over a new capture"]))
        return
    plan.add(note, report)


def _enrich(plan: Plan, report: CaptureReport) -> None:
    from memrepo.passes import enrich

    try:
        found = enrich.aliases_for(plan.repo, plan.new)
    except model.ModelError as exc:
        report.dropped.append({"reason": f"enrichment skipped, the sweep will retry: {exc}"})
        return
    report.model_calls += (len(plan.new) + enrich.BATCH - 1) // enrich.BATCH
    plan.new = [enrich.apply(n, found[n.id]) if found.get(n.id) else n for n in plan.new]


def _texts(plan: Plan) -> dict[str, str]:
    out = {f"{paths.MEMORY_DIR}/{n.id}.md": notes.serialize(n) for n in plan.new}
    out.update({f"{paths.MEMORY_DIR}/{n.id}.md": notes.serialize(n) for n, _ in plan.changes})
    return out


def commit(plan: Plan, report: CaptureReport, review_branch: bool = False) -> None:
    """Write and commit the plan: the captures in one commit, each supersede/retire in its own;
    each candidate like a forgotten memory as a proposal of its own."""
    _propose_held(plan, report)
    if not plan.new and not plan.changes:
        return
    if plan.new:
        _enrich(plan, report)
    subject = f"capture: {len(plan.new)} memor{'y' if len(plan.new) == 1 else 'ies'} from session {plan.session[:12]}"
    trailers = {"Action": "capture", "Run": plan.run_id, "Session": plan.session, "Count": len(plan.new)}
    if review_branch:
        body = "\n".join(f"- {t['Action']} {t['Id']}: {t['Reason']}" for _, t in plan.changes)
        report.commits.append(review.propose(plan.repo, plan.run_id, _texts(plan), subject + " (proposed)",
                                             {**trailers, "Model": report.heard.trailer()}, body))
        report.review_branch = review.branch_name(plan.run_id)
        report.added += [n.id for n in plan.new]
        _propose_tensions(plan, report)
        return
    if plan.new:
        _commit_files(plan.repo, plan.new, subject, trailers, report)
        report.added += [n.id for n in plan.new]
    for note, extra in plan.changes:
        _commit_files(plan.repo, [note], f"capture: {extra['Action']} {note.id}", extra, report)
        if extra.get("Refuted"):
            report.refuted.append({"id": note.id, "action": extra["Action"], "by": extra.get("Winner"), "reason": extra["Reason"]})
    _propose_tensions(plan, report)


def _propose_held(plan: Plan, report: CaptureReport) -> None:
    """Each candidate like a memory a person forgot becomes a proposal that adds it, on `memrepo/review/<run>`."""
    for note, forgotten, why in plan.held:
        trailers = {"Action": "capture", "Run": plan.run_id, "Session": plan.session, "Count": 1, "Id": note.id,
                    "Resembles": forgotten.id, "Review": why, "Model": report.heard.trailer()}
        body = (f"A person retired {forgotten.id} ({forgotten.get(lifecycle.RETIRED_BY_PERSON)}). This capture is "
                "like it, so it waits for a person instead of going into recall.")
        sha = review.propose(plan.repo, plan.run_id, {f"{paths.MEMORY_DIR}/{note.id}.md": notes.serialize(note)},
                             f"capture (proposed): add {note.id}, like forgotten {forgotten.id}", trailers, body)
        report.held.append({"id": note.id, "title": note.get("title"), "resembles": forgotten.id, "reason": why,
                            "commit": sha})
        report.review_branch = review.branch_name(plan.run_id)


def _propose_tensions(plan: Plan, report: CaptureReport) -> None:
    """Each contradiction a guard held back becomes a proposal on `memrepo/review/<run>`."""
    from memrepo.passes.curate import tidy

    new = {n.id: n for n in plan.new}
    for loser_id, winner_id, verdict, failed in plan.tensions:
        loser = new.get(loser_id) or notes.read(paths.note_path(plan.repo, loser_id))
        trailers = {"Action": "supersede", "Confidence": f"{verdict['confidence']:.2f}",
                    "Reason": " ".join(verdict["reason"].split()), "Id": loser_id, "Winner": winner_id,
                    "Relation": verdict["relation"], "Scope": verdict.get("scope", ""), "Session": plan.session,
                    "Review": "; ".join(failed), "Model": report.heard.trailer()}
        body = "The capture did not apply this on its own:\n" + "\n".join(f"- {f}" for f in failed)
        sha = review.propose(plan.repo, plan.run_id, {f"{paths.MEMORY_DIR}/{loser_id}.md": notes.serialize(tidy.superseded(loser, winner_id))},
                             f"capture (proposed): supersede {loser_id} by {winner_id}", trailers, body)
        report.review.append({"id": loser_id, "by": winner_id, "relation": verdict["relation"],
                              "guards_failed": failed, "commit": sha})
        report.review_branch = review.branch_name(plan.run_id)

def _commit_files(repo: str, batch: list[Note], subject: str, trailers: dict[str, Any], report: CaptureReport) -> None:
    files = {f"{paths.MEMORY_DIR}/{n.id}.md": notes.serialize(n) for n in batch}
    report.commits.append(commit_files(repo, files, subject, {**trailers, "Model": report.heard.trailer()}))
