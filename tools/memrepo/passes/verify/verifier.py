"""The verifier pass: extract each memory's claims, run their probes, stamp the outcome, commit.

A memory's `verification:` is `unverified` (with the claims that failed) when any probe
proved a claim false, `verified` when none failed and at least one held, and `unchecked`
when nothing could be decided. Stamps change only when the outcome changes, in one commit
per run (`Memrepo-Action: verify`, `Memrepo-Run: <run id>`), so `memrepo undo RUN` reverts a
whole run. A later run that finds the claims true again clears the stamp.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import time
from typing import Any, NamedTuple

from memrepo.progress import Progress, silent
from memrepo.passes.verify import claims, fetch, probes, urls
from memrepo.store import config, memories as store
from memrepo.vcs import status
from memrepo.vcs.commit import commit_if_unchanged, refuse_in_progress
from memrepo.passes import model
from memrepo.format import files, notes, spec, validate
from memrepo.base import paths

REFUSED_LOG = "verify-refused.jsonl"


class MemoryResult:
    """One memory's outcome: its claims with their verdicts and the stamp it ends with."""

    def __init__(self, note_id: str) -> None:
        self.id = note_id
        self.status: str | None = None
        self.previous: str | None = None
        self.claims: list[dict[str, Any]] = []
        self.refused: list[claims.Refusal] = []
        self.changed = False
        self.skipped = ""
        self.model_note = ""

    def failed(self) -> list[str]:
        return [c["claim"] for c in self.claims if c["verdict"] == probes.Verdict.FALSE.value]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "status": self.status, "previous": self.previous, "changed": self.changed,
                "skipped": self.skipped, "model_note": self.model_note, "claims": self.claims,
                "refused": [{"claim": r.claim, "reason": r.reason, "by": r.by} for r in self.refused]}


class VerifyReport:
    """What a run did: per-memory results, the figures and the commit (None when nothing changed)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.commit: str | None = None
        self.results: list[MemoryResult] = []
        self.model_notes: list[str] = []
        self.model_failed = ""  # the model command's failure, when the run was asked to hear it
        self.use_model = True
        self.url_probes: dict[str, Any] = {}  # urls.UrlProbes.figures(): the budget and what it covered

    def counts(self) -> dict[str, int]:
        verdicts = [c["verdict"] for r in self.results for c in r.claims]
        refused = sum(len(r.refused) for r in self.results)
        out = {"memories": len([r for r in self.results if not r.skipped]), "extracted": len(verdicts) + refused,
               "verified": verdicts.count("true"), "unverified": verdicts.count("false"),
               "unknown": verdicts.count("unknown"), "refused": refused,
               "changed": len([r for r in self.results if r.changed]),
               "model_dropped": len([r for r in self.results if r.model_note])}
        for stamp in spec.VERIFICATION_STATUSES:
            out[f"stamped_{stamp}"] = len([r for r in self.results if r.status == stamp])
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.run_id, "commit": self.commit, "counts": self.counts(), "model_notes": self.model_notes,
                "url_probes": self.url_probes, "memories": [r.as_dict() for r in self.results]}


def new_run_id(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(now)) + "-verify"


def _targets(repo: str, ids: list[str] | None) -> list[str]:
    if ids:
        for note_id in ids:
            store.read_text(repo, note_id)  # NoteNotFound with the hint
        return list(dict.fromkeys(ids))
    return [f[:-3] for f in files.memory_files(paths.memory_dir(repo))]


def stamp(outcomes: list[tuple[probes.Call, probes.Outcome]], project: str | None, old: Any,
          today: str, complete: bool = True) -> dict[str, Any] | None:
    """The `verification:` value for these outcomes; None for a memory that never had claims.

    Only what this machine decided moves the stamp (issue 37). A claim it could not check (a
    project checkout, a provider or a network it lacks: an `unknown` outcome, or a claim refused
    as not checkable here) is no verdict: the stamp another machine made stands when nothing was
    decided here, and a failure recorded there is kept unless this machine found that claim true.
    `complete` says that every claim of the memory was checkable here; only then does a recorded
    failure of a claim the memory no longer makes go away.
    """
    old = old if isinstance(old, dict) else None
    if not outcomes and old is None:
        return None
    decided = {probes.describe(call, project): out.verdict for call, out in outcomes
               if out.verdict is not probes.Verdict.UNKNOWN}
    if not decided and old is not None and old.get("status") in ("verified", "unverified"):
        return old  # nothing checked here: another machine's verdict is not this machine's to undo
    failed = [claim for claim, verdict in decided.items() if verdict is probes.Verdict.FALSE]
    recorded = old.get("failed") if old is not None and isinstance(old.get("failed"), list) else []
    if not complete:
        failed += [f for f in recorded if isinstance(f, str) and f not in decided and f not in failed]
    held = probes.Verdict.TRUE in decided.values()
    status = "unverified" if failed else "verified" if held else "unchecked"
    ver: dict[str, Any] = {"status": status, "checked": today}
    if failed:
        ver["failed"] = failed
    return ver


NOT_RUN = probes.Outcome(probes.Verdict.UNKNOWN, "not checked by this pass")


def _same(old: Any, new: Any) -> bool:
    def key(v: Any) -> Any:
        return (v.get("status"), v.get("failed"), v.get("not_claims")) if isinstance(v, dict) else v
    return bool(key(old) == key(new))


def _with_vetoes(ver: dict[str, Any] | None, not_claims: list[str], today: str) -> dict[str, Any] | None:
    """The stamp carrying the model's vetoes, so that a later run without a model keeps them."""
    if not not_claims:
        return {k: v for k, v in ver.items() if k != "not_claims"} if ver else ver
    return {**(ver or {"status": "unchecked", "checked": today}), "not_claims": not_claims}


class Checks(NamedTuple):
    """What every memory of a run is checked against, read once per run (issue 44): this machine's
    providers, project roots and allowed hosts, and the run's URL probes (None: one at a time)."""

    providers: dict[str, Any]
    projects: dict[str, str]
    allow_hosts: tuple[str, ...]
    urls: urls.UrlProbes | None = None


def checks(repo: str, settings: dict[str, Any], concurrent_urls: bool = False) -> Checks:
    """A run's `Checks`; with `concurrent_urls`, URL probes side by side within `url_probe_budget`."""
    _providers = config.local_only(repo, "providers")  # templates become argv: this machine's only
    providers: dict[str, Any] = _providers if isinstance(_providers, dict) else {}
    allow = config.local_only(repo, fetch.ALLOW_KEY)  # widening where probes reach: this machine only
    allow_hosts = tuple(h for h in allow if isinstance(h, str)) if isinstance(allow, list) else ()
    prober = None
    if concurrent_urls:
        # probes._fetch is looked up at each call: every request still goes through it
        prober = urls.UrlProbes(lambda url, timeout, resolver: probes._fetch(url, timeout, allow_hosts, resolver),
                                urls.budget(settings), probes.URL_TIMEOUT)
    return Checks(providers, config.project_roots(settings), allow_hosts, prober)


def extract(repo: str, note: notes.Note, setup: Checks, use_model: bool) -> claims.Extraction:
    """The memory's claims (model.ModelError when the model command fails)."""
    return claims.extract(repo, note, setup.providers, use_model, setup.projects)


def check_note(repo: str, note: notes.Note, settings: dict[str, Any], use_model: bool, today: str,
               result: MemoryResult, only: frozenset[str] | None = None, setup: Checks | None = None) -> bool:
    """Extract, probe and restamp one note in memory; True when its front matter changed.

    `only` names the probes to run (curate's dead-path step runs `path_exists` alone); a claim of
    another probe is not checked, which counts as no verdict (`stamp` keeps what it knew). A
    caller checking many notes passes one `setup` (`checks`) for all of them."""
    setup = setup or checks(repo, settings)
    return settle(note, extract(repo, note, setup, use_model), setup, today, result, only)


def settle(note: notes.Note, extraction: claims.Extraction, setup: Checks, today: str, result: MemoryResult,
           only: frozenset[str] | None = None) -> bool:
    """Probe the extracted claims and restamp the note in memory; True when its front matter changed.

    A URL probe not made within the run's budget is no verdict; a memory nothing was decided for
    while such a probe waited stays exactly as it was (issue 44)."""
    project = note.get("project") if isinstance(note.get("project"), str) else None
    ctx = probes.Context(setup.projects, setup.providers, project, setup.allow_hosts, setup.urls)
    outcomes = [(call, probes.run(call, ctx) if only is None or call.probe in only else NOT_RUN)
                for call, _ in extraction.calls]
    result.refused, result.model_note = extraction.refused, extraction.model_note
    result.claims = [{"claim": probes.describe(call, project), "probe": call.probe, "by": by,
                      "verdict": out.verdict.value, "detail": out.detail}
                     for (call, by), (_, out) in zip(extraction.calls, outcomes)]
    old_ver = note.get("verification")
    result.previous = old_ver.get("status") if isinstance(old_ver, dict) else None
    decided = any(out.verdict is not probes.Verdict.UNKNOWN for _, out in outcomes)
    if not decided and any(out.detail == probes.NOT_MADE for _, out in outcomes):
        result.status = result.previous
        return False
    complete = all(out.verdict is not probes.Verdict.UNKNOWN for _, out in outcomes) \
        and not any(r.elsewhere for r in extraction.refused)
    new_ver = _with_vetoes(stamp(outcomes, project, old_ver, today, complete), extraction.not_claims, today)
    result.status = new_ver["status"] if new_ver else None
    new_claims = claims.to_meta(extraction.calls, note, complete)
    if _same(old_ver, new_ver) and (note.get("claims") or []) == new_claims:
        return False
    meta = {k: v for k, v in note.meta.items() if k not in ("verification", "claims")}
    if new_ver:
        meta["verification"] = new_ver
    if new_claims:
        meta["claims"] = new_claims
    note.meta = {k: meta[k] for k in notes.ordered_keys(meta)}
    return True


def _log_refusals(repo: str, report: VerifyReport) -> None:
    entries = [{"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "run": report.run_id, "id": r.id,
                "claim": f.claim, "reason": f.reason, "by": f.by} for r in report.results for f in r.refused]
    if entries:
        os.makedirs(paths.index_dir(repo), exist_ok=True)
        with open(os.path.join(paths.index_dir(repo), REFUSED_LOG), "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)


def run(repo: str, ids: list[str] | None = None, *, use_model: bool = True, run_id: str | None = None,
        today: str | None = None, progress: Progress = silent) -> VerifyReport:
    """Verify the named memories (default: every active one) and commit the changed stamps.

    Every memory's claims are read first, then the URL probes of all of them start side by side
    (`urls`) while the memories are checked one by one."""
    store.require_repo(repo)
    if use_model:
        model.require_enabled(repo)
    refuse_in_progress(repo)  # before any model call or probe: the stamps would be refused after them (h31)
    settings = config.load(repo)
    setup = checks(repo, settings, concurrent_urls=True)
    report = VerifyReport(run_id or new_run_id())
    report.use_model = use_model
    today = today or _dt.date.today().isoformat()
    read: dict[str, str] = {}
    pending = _extract_all(repo, ids, setup, use_model, report, read, progress)
    changed = {}
    for done, (note, result, extraction) in enumerate(pending):
        progress("verify: memories checked", done, len(pending))
        touched = settle(note, extraction, setup, today, result)
        if result.model_note:
            result.skipped = f"left as it was: {result.model_note}"
            continue
        if touched:
            result.changed = True
            changed[f"{paths.MEMORY_DIR}/{note.id}.md"] = notes.serialize(note)
    progress("verify: memories checked", len(pending), len(pending))
    if setup.urls is not None and setup.urls.figures()["urls"]:
        not_checked = sum(c["detail"] == probes.NOT_MADE for r in report.results for c in r.claims)
        report.url_probes = {**setup.urls.figures(), "claims_not_checked": not_checked}
    _log_refusals(repo, report)
    if changed:
        trailers: dict[str, Any] = {"Action": "verify", "Run": report.run_id, "Model": _model_trailer(report)}

        def subject(kept: list[str]) -> str:
            _left_alone(report, set(changed) - set(kept))
            trailers["Memories"] = len(kept)
            return _subject(report)

        sha, stale = commit_if_unchanged(repo, changed, read, subject, trailers, body=lambda: _body(report))
        _left_alone(report, set(stale))
        report.commit = sha or None
    return report


def _extract_all(repo: str, ids: list[str] | None, setup: Checks, use_model: bool, report: VerifyReport,
                 read: dict[str, str], progress: Progress) -> list[tuple[notes.Note, MemoryResult, claims.Extraction]]:
    """Each target memory's claims, in order (the skipped ones only in `report`); fills `read`."""
    dirty = status.dirty_paths(repo, paths.MEMORY_DIR) or set()
    targets = list(_targets(repo, ids))
    pending = []
    for done, note_id in enumerate(targets):
        progress("verify: claims read", done, len(targets))
        rel = f"{paths.MEMORY_DIR}/{note_id}.md"
        result = MemoryResult(note_id)
        report.results.append(result)
        note, result.skipped = _readable(repo, note_id, rel, dirty, explicit=bool(ids))
        if result.skipped or note is None:
            continue
        if report.model_failed:
            # The run was asked to hear the model and it failed: no stamp moves on text rules alone.
            result.skipped = f"left as it was: the model command failed ({report.model_failed})"
            continue
        read[rel] = note.text or ""
        try:
            extraction = extract(repo, note, setup, use_model)
        except model.ModelError as exc:
            # One failing model command would fail every memory alike: stop asking it, and move
            # no stamp without it (issue 37: a timeout once committed a text-only `verified`).
            report.model_failed = str(exc)
            report.model_notes.append(f"model not heard from {note_id} on: {exc}; those memories were left as they were")
            result.skipped = f"left as it was: the model command failed ({exc})"
            continue
        if setup.urls is not None:  # the requests start while the other memories are read
            setup.urls.submit([call.args["url"] for call, _ in extraction.calls if call.probe == "url_alive"])
        pending.append((note, result, extraction))
    progress("verify: claims read", len(targets), len(targets))
    return pending


def _model_trailer(report: VerifyReport) -> str:
    """Which model step ran for this commit's memories: `Memrepo-Model` (issue 37)."""
    if not report.use_model:
        return "not run (--no-model): text rules and stored claims only"
    unheard = len([r for r in report.results if r.skipped.startswith("left as it was:")])
    heard = len([r for r in report.results if not r.skipped])
    return f"verify heard for {heard} memor{'y' if heard == 1 else 'ies'}" + (
        f", not heard for {unheard} (left as they were)" if unheard else "")


def _left_alone(report: VerifyReport, rels: set[str]) -> None:
    """A person's commit landed while the probes ran: their version stands, this stamp waits."""
    for result in report.results:
        if result.changed and f"{paths.MEMORY_DIR}/{result.id}.md" in rels:
            result.changed, result.skipped = False, "changed while it was checked; left as it is"


def _readable(repo: str, note_id: str, rel: str, dirty: set[str], explicit: bool) -> tuple[notes.Note | None, str]:
    """(the note, parsed once, "") when the memory is to be checked, else (None, why not)."""
    if rel in dirty:
        return None, "has uncommitted changes; commit them, then verify"
    path = paths.note_path(repo, note_id)
    try:
        note = notes.read(path)  # keeps its text: what the commit must find unchanged
    except (notes.ParseError, UnicodeDecodeError, OSError) as exc:
        return None, f"unreadable ({exc}); run `memrepo doctor`"
    why = validate.unusable(note, rel)  # `class: [rule]` that came with a merge: reported, not checked
    if why:
        return None, f"invalid ({why}); run `memrepo doctor`"
    status = note.get("status") or "active"
    if status != "active" and not explicit:
        return None, f"{status}; name it to verify it anyway"
    return note, ""


def _subject(report: VerifyReport) -> str:
    # The stamps this commit writes, not every memory's: "restamp 2 memories (6 unverified)" was read
    # as six memories newly unverified (h31).
    changed = [r.status for r in report.results if r.changed]
    return (f"verify: restamp {len(changed)} memor{'y' if len(changed) == 1 else 'ies'} "
            f"({changed.count('unverified')} unverified, {changed.count('verified')} verified)")


def _body(report: VerifyReport) -> str:
    lines = []
    for r in report.results:
        if r.changed:
            failed = r.failed()
            lines.append(f"{r.id}: {r.previous or 'none'} -> {r.status or 'none'}" + (f" ({'; '.join(failed)})" if failed else ""))
    return "\n".join(lines)
