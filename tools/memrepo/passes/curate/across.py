"""The curator across sources (issue 41, part 4): your memories against each team's and the
projects', judged by the same model question as the curator's, and never applied.

A pair is related as the curator's pairs are (a shared topic, or two shared entities; a pair no
verdict could move is not asked about). A verdict that shows a real tension (`guards.no_tension`)
becomes a proposal for a person, wherever the memory that would give way lives. In the daily
sweep (`local`) every one is a proposal on your review branch, naming both sources, and nothing
leaves this machine:

- yours gives way: a commit retiring it (`memrepo review accept` applies it, as any);
- a team's or a project's gives way: an empty commit naming both; `review accept` then proposes
  the retirement there (`share.forget`: a branch and pull request on the team's remote, or the
  file retired in the checkout for its owner to commit), `review reject` keeps both.

Run by hand (`memrepo curate --sources`), a team's memory that gives way goes to the team's
remote at once (`share.forget`) and a project's is reported with the command that proposes it.
Either way both sources are named, and nothing changes in any source until a person says so.

A pair is asked about once: a verdict that leaves both standing is remembered with the two
memories' fingerprints (`verdicts`), and a pair with a proposal, open or decided, is never
proposed again (`conflicts.seen`). A model that fails, times out or answers out of schema is a
failure in the report (`failed`), never a change.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any

from memrepo.format.notes import Note
from memrepo.passes import model
from memrepo.passes.curate import acrossview, conflicts, curator, guards, review, tidy, verdicts
from memrepo.base import paths
from memrepo.recall import sources as rs
from memrepo.store import checkouts, config, lifecycle
from memrepo.vcs import runs, status

PASS = "curate-sources"
MAX_PAIRS = 20
MAX_POSTING = 50  # a topic or entity on more memories than this relates nothing (as `pairs._subject_links`)


@dataclass
class AcrossReport:
    run_id: str
    dry_run: bool
    model_calls: int = 0
    remembered: int = 0  # pairs not asked: a verdict that still holds, or a proposal already made
    waiting: int = 0  # related pairs not asked this run (no model, or beyond the run's limit)
    sources: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    not_run: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dry_run": self.dry_run, "model_calls": self.model_calls,
                "remembered": self.remembered, "waiting": self.waiting, "sources": self.sources,
                "conflicts": self.conflicts, "skipped": self.skipped, "failed": self.failed, "not_run": self.not_run}


def _active(root: str) -> dict[str, Note]:
    return {i: n for i, n in curator._load(root).items() if tidy.is_active(n)}


def _related(a: Note, b: Note) -> float:
    """How strongly two memories share a subject (an entity 2, a topic 1); 0 when not enough."""
    topics, entities = guards.shared_subject(a, b)
    if not topics and len(entities) < 2:
        return 0.0
    return len(topics) + 2.0 * len(entities)


def _subjects(note: Note) -> set[str]:
    tech = guards.words(note, "tech")
    return {f"t:{w}" for w in guards.words(note, "topics") - tech} | {f"e:{w}" for w in guards.subject_entities(note) - tech}


def pairs(mine: dict[str, Note], theirs: dict[str, Note], limit: int | None = None) -> list[tuple[Note, Note]]:
    """The related (yours, theirs) pairs, strongest first (at most `limit`). Only memories that
    share a topic or an entity are compared, so two stores of 10,000 are not 10^8 comparisons."""
    posting: dict[str, list[Note]] = {}
    for b in theirs.values():
        for word in _subjects(b):
            posting.setdefault(word, []).append(b)
    found = []
    for a in mine.values():
        near = {b.id: b for w in _subjects(a) if len(posting.get(w, ())) <= MAX_POSTING for b in posting.get(w, ())}
        for b in near.values():
            score = _related(a, b) if a.id != b.id else 0.0
            if score and not guards.never_applies(a, b):
                found.append((-score, a.id, b.id, a, b))
    return [(a, b) for *_, a, b in sorted(found, key=lambda t: t[:3])[:limit]]


def _max_pairs(repo: str) -> int:
    section = config.load(repo).get("curate")
    return int(section.get("max_pairs", MAX_PAIRS)) if isinstance(section, dict) else MAX_PAIRS


def run(repo: str, cwd: str | None = None, dry_run: bool = False, limit: int | None = None,
        forge_name: str | None = None, *, run_id: str | None = None, use_model: bool = True,
        local: bool = False) -> AcrossReport:
    """Judge your memories against every other source's; propose what gives way, apply nothing.

    `local` (the sweep): every conflict is a proposal on your review branch, nothing is pushed to
    a team or written into a checkout. Without `use_model` nothing is asked: the report says how
    many related pairs wait for a model (`waiting`)."""
    report = AcrossReport(run_id or runs.fresh_run_id(repo, PASS), dry_run)
    if not use_model:
        report.not_run = "no model (--no-model): the related pairs wait for the next sweep with one"
    others = list(checkouts.compared(repo, cwd))
    if not others:  # a machine with no team and no project memory reads none of its own memories here
        return report
    dirty = status.dirty_ids(repo, paths.MEMORY_DIR)
    mine = {i: n for i, n in _active(repo).items() if i not in dirty}
    skip = conflicts.seen(repo)
    limit = _max_pairs(repo) if limit is None else limit
    heard = model.Heard(use_model)
    standing: list[tuple[str, Note, str, Note, dict[str, Any]]] = []
    try:
        for src in others:
            report.sources.append(src.label)
            theirs = _active(src.root)
            held = verdicts.standing(repo, {**_keyed(rs.PERSONAL, mine), **_keyed(src.label, theirs)})
            for a, b in pairs(mine, theirs):
                pair = frozenset((acrossview.key(rs.PERSONAL, a.id), acrossview.key(src.label, b.id)))
                if pair in skip or pair in held:
                    report.remembered += 1
                elif not use_model or report.model_calls >= limit:
                    report.waiting += 1
                elif not _ask(report, repo, src, a, b, heard, standing, local, forge_name):
                    return report
    finally:
        if not dry_run:
            verdicts.remember_keyed(repo, standing, _dt.date.today().isoformat())
    return report


def _keyed(label: str, notes: dict[str, Note]) -> dict[str, Note]:
    return {acrossview.key(label, i): n for i, n in notes.items()}


def _ask(report: AcrossReport, repo: str, src: rs.Source, a: Note, b: Note, heard: model.Heard,
         standing: list[tuple[str, Note, str, Note, dict[str, Any]]], local: bool, forge_name: str | None) -> bool:
    """Put one pair to the model and judge the answer; False when the model failed (the pass stops)."""
    report.model_calls += 1
    ids = [f"{rs.PERSONAL}: {a.id}", f"{src.label}: {b.id}"]
    try:
        verdict = model.ask_json(repo, PASS, curator.prompt(a, b), curator.verdict_schema(a.id, b.id))
    except model.ModelError as exc:
        report.failed.append({"ids": ids, "reason": f"model failed, pass stopped: {exc}"})
        return False
    if verdict is None:
        report.failed.append({"ids": ids, "reason": f"invalid model answer, dropped (logged to index/{model.REJECTS})"})
        return True
    why = _no_conflict(verdict, a, b)
    if why:
        report.skipped.append({"ids": ids, "reason": why})
        standing.append((acrossview.key(rs.PERSONAL, a.id), a, acrossview.key(src.label, b.id), b, verdict))
        return True
    _conflict(report, repo, src, a, b, verdict, heard, local, forge_name)
    return True


def _no_conflict(verdict: dict[str, Any], mine: Note, theirs: Note) -> str:
    """Why a verdict leaves both memories standing (the curator's own tests), or ""."""
    if verdict["relation"] in curator.STANDS or verdict["winner"] == "none":
        return f"relation {verdict['relation']}: both stand"
    winner, loser = (mine, theirs) if verdict["winner"] == mine.id else (theirs, mine)
    return guards.no_tension(verdict, winner, loser)


def _conflict(report: AcrossReport, repo: str, src: rs.Source, mine: Note, theirs: Note, verdict: dict[str, Any],
              heard: model.Heard, local: bool, forge_name: str | None) -> None:
    yours = verdict["winner"] != mine.id  # your memory gives way
    winner, loser = (theirs, mine) if yours else (mine, theirs)
    win_label, lose_label = (src.label, rs.PERSONAL) if yours else (rs.PERSONAL, src.label)
    reason = (f"{verdict['relation']} {win_label}'s {winner.id} (curator across sources, confidence "
              f"{verdict['confidence']:.2f}): {' '.join(verdict['reason'].split())}")
    conflict = {"personal": mine.id, "source": src.label, "other": theirs.id, "relation": verdict["relation"],
                "winner": f"{win_label}: {winner.id}", "confidence": verdict["confidence"], "reason": verdict["reason"]}
    report.conflicts.append(conflict)
    trailers = {"Action": "retire" if yours else "forget", "Id": loser.id, "Source": lose_label, "Winner": winner.id,
                "Winner-Source": win_label, "Relation": verdict["relation"], "Confidence": f"{verdict['confidence']:.2f}",
                "Scope": verdict["scope"], "Reason": reason, "Review": f"across sources: {rs.PERSONAL} and {src.label}",
                "Model": heard.trailer()}
    held = ["across sources, nothing is applied without a person"] + guards.failures(verdict, winner, loser)
    body = "A memory of another source contradicts one of yours:\n" + "\n".join(f"- {h}" for h in held)
    if report.dry_run:
        conflict["proposal"] = "dry run: none"
    elif yours:
        with open(paths.note_path(repo, mine.id), encoding="utf-8") as fh:
            text = lifecycle.retired_text(fh.read(), mine.id, reason)
        sha = review.propose(repo, report.run_id, {f"{paths.MEMORY_DIR}/{mine.id}.md": text},
                             f"curator (proposed): retire {mine.id} for {src.label}'s {theirs.id}", trailers, body)
        conflict["proposal"] = f"memrepo review show {sha[:review.ID_LEN]}"
    elif local:
        body += f"\n\nAccepting it proposes retiring {theirs.id} there ({conflicts.where(src)}); rejecting keeps both."
        sha = review.propose(repo, report.run_id, {}, f"curator (proposed): {src.label} retires {theirs.id} for "
                             f"your {mine.id}", trailers, body)
        conflict["proposal"] = f"memrepo review show {sha[:review.ID_LEN]}"
    elif src.kind == rs.TEAM:
        from memrepo.passes import share

        done = share.forget(repo, theirs.id, None, reason, forge_name, only=src.label)
        conflict["proposal"] = done.url or done.path or "; ".join(done.manual)
    else:
        conflict["proposal"] = f"from the code repository: memrepo forget {theirs.id} --reason \"{reason[:80]}\""
