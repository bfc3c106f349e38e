"""The curator across sources (issue 41, part 4): your memories against each team's and the
project's, judged by the same model question as the curator's, and never applied.

A pair is related as the curator's pairs are (a shared topic, or two shared entities; a pair no
verdict could move is not asked about). A verdict that shows a real tension (`guards.no_tension`)
becomes a proposal for a person, wherever the memory that would give way lives:

- yours gives way: a proposal on your review branch (`memrepo review`) retiring it, with the
  other memory's source and id in the reason — `memrepo review accept` applies it, as any;
- a team's gives way: a branch and a pull request on the team's remote retiring it
  (`share.forget`), for the team to merge or close;
- the project's gives way: reported only, with the command that would propose it
  (`memrepo forget ID` from the code repository), since a pass never edits a code repository.

Either way both sources are named, and nothing changes in any source until a person says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memrepo.format.notes import Note
from memrepo.passes import model
from memrepo.passes.curate import curator, guards, review, tidy
from memrepo.base import paths
from memrepo.recall import sources as rs
from memrepo.store import lifecycle, sources
from memrepo.vcs import runs

PASS = "curate"
MAX_PAIRS = 20


@dataclass
class AcrossReport:
    run_id: str
    dry_run: bool
    model_calls: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "dry_run": self.dry_run, "model_calls": self.model_calls,
                "conflicts": self.conflicts, "skipped": self.skipped}


def _active(root: str) -> dict[str, Note]:
    return {i: n for i, n in curator._load(root).items() if tidy.is_active(n)}


def _related(a: Note, b: Note) -> float:
    """How strongly two memories share a subject (an entity 2, a topic 1); 0 when not enough."""
    topics, entities = guards.shared_subject(a, b)
    if not topics and len(entities) < 2:
        return 0.0
    return len(topics) + 2.0 * len(entities)


def pairs(mine: dict[str, Note], theirs: dict[str, Note], limit: int) -> list[tuple[Note, Note]]:
    """The related (yours, theirs) pairs, strongest first, at most `limit`."""
    found = []
    for a in mine.values():
        for b in theirs.values():
            score = _related(a, b) if a.id != b.id else 0.0
            if score and not guards.never_applies(a, b):
                found.append((-score, a.id, b.id, a, b))
    return [(a, b) for *_, a, b in sorted(found, key=lambda t: t[:3])[:limit]]


def run(repo: str, cwd: str | None = None, dry_run: bool = False, limit: int = MAX_PAIRS,
        forge_name: str | None = None) -> AcrossReport:
    """Judge your memories against every other source's; propose what gives way, apply nothing."""
    report = AcrossReport(runs.fresh_run_id(repo, "curate-sources"), dry_run)
    mine = _active(repo)
    for src in sources.others(repo, cwd):
        for a, b in pairs(mine, _active(src.root), limit - report.model_calls):
            report.model_calls += 1
            try:
                verdict = model.ask_json(repo, PASS, curator.prompt(a, b), curator.verdict_schema(a.id, b.id))
            except model.ModelError as exc:
                report.skipped.append({"ids": [a.id, f"{src.label}: {b.id}"], "reason": f"model pass stopped: {exc}"})
                return report
            _judge(report, repo, src, a, b, verdict, forge_name)
    return report


def _judge(report: AcrossReport, repo: str, src: rs.Source, mine: Note, theirs: Note, verdict: dict[str, Any] | None,
           forge_name: str | None) -> None:
    ids = [mine.id, f"{src.label}: {theirs.id}"]
    if verdict is None:
        report.skipped.append({"ids": ids, "reason": f"invalid model answer, dropped (logged to index/{model.REJECTS})"})
        return
    if verdict["relation"] in curator.STANDS or verdict["winner"] == "none":
        report.skipped.append({"ids": ids, "reason": f"relation {verdict['relation']}: both stand"})
        return
    winner, loser = (mine, theirs) if verdict["winner"] == mine.id else (theirs, mine)
    why_not = guards.no_tension(verdict, winner, loser)
    if why_not:
        report.skipped.append({"ids": ids, "reason": why_not})
        return
    yours = loser is mine
    where = f"{rs.PERSONAL}" if not yours else src.label
    reason = (f"{verdict['relation']} {where}'s {winner.id} (curator across sources, confidence "
              f"{verdict['confidence']:.2f}): {' '.join(verdict['reason'].split())}")
    conflict = {"personal": mine.id, "source": src.label, "other": theirs.id, "relation": verdict["relation"],
                "winner": f"{rs.PERSONAL}: {winner.id}" if not yours else f"{src.label}: {winner.id}",
                "confidence": verdict["confidence"], "reason": verdict["reason"]}
    report.conflicts.append(conflict)
    if report.dry_run:
        conflict["proposal"] = "dry run: none"
    elif yours:
        rel = f"{paths.MEMORY_DIR}/{mine.id}.md"
        with open(paths.note_path(repo, mine.id), encoding="utf-8") as fh:
            text = lifecycle.retired_text(fh.read(), mine.id, reason)
        sha = review.propose(repo, report.run_id, {rel: text}, f"curator (proposed): retire {mine.id} for {src.label}'s {theirs.id}",
                             {"Action": "retire", "Id": mine.id, "Confidence": f"{verdict['confidence']:.2f}",
                              "Reason": reason, "Review": f"across sources: {src.label}"},
                             "A memory of another source contradicts this one; the curator never applies that on its own.")
        conflict["proposal"] = f"memrepo review show {sha[:7]}"
    elif src.kind == rs.TEAM:
        from memrepo.passes import share

        done = share.forget(repo, theirs.id, None, reason, forge_name)
        conflict["proposal"] = done.url or done.path or "; ".join(done.manual)
    else:
        conflict["proposal"] = f"from the code repository: memrepo forget {theirs.id} --reason \"{reason[:80]}\""
