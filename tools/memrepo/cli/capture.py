"""Commands of the capture area: capture, enrich, sweep, stats (the detached worker is `python -m memrepo.worker.jobs`)."""

from __future__ import annotations

import os
import time
from typing import Any

import click

from memrepo.cli.common import CHECK_MODEL, _fail_friendly, _json, _memory_id, _model_calls_judged, _repo
from memrepo.cli.term import echo
from memrepo.cli.verify import url_probes_line
from memrepo.errors import MemrepoError


@click.command()
@click.argument("transcript_path", metavar="TRANSCRIPT", type=click.Path(exists=True, dir_okay=False))
@click.option("--session", help="Session id (default: the transcript's file name).")
@click.option("--json", "as_json", is_flag=True, help="Print the capture report as JSON.")
@click.pass_context
@_fail_friendly
def capture(ctx: click.Context, transcript_path: str, session: str | None, as_json: bool) -> None:
    """Capture memories from the new part of a session TRANSCRIPT (.jsonl), as the hooks do.

    Reads Claude Code's transcripts, Codex CLI's rollouts and Gemini CLI's session files (told
    apart by their first line).

    \b
    Example:
      memrepo capture ~/.claude/projects/-home-me-app/9f9ec6e8.jsonl
      memrepo capture ~/.codex/sessions/2026/12/02/rollout-2026-12-02T09-14-01-<id>.jsonl
    """
    from memrepo.passes import model
    from memrepo.store import memories as store
    from memrepo.worker import capture_job

    model.Tally.reset()
    report = capture_job.capture_locked(store.require_repo(_repo(ctx)), transcript_path, session)
    if as_json:
        _json(report.as_dict())
        return _model_calls_judged("capture")
    echo(f"run {report.run_id}: {report.turns} new turns, {report.model_calls} model calls")
    for note_id in report.added:
        echo(f"  added {note_id}")
    for r in report.refuted:
        echo(f"  {r['action']} {r['id']}" + (f" by {r['by']}" if r.get("by") else "") + f": {r['reason']}")
    for s in report.superseded:
        echo(f"  superseded {s['id']} by {s['by']}")
    for r in report.review:
        echo(f"  sent to review: supersede {r['id']} by {r['by']} ({r['relation']}; {'; '.join(r['guards_failed'])})")
    for r in report.held:
        echo(f"  sent to review, not recalled: {r['id']}: {r['reason']}")
    for r in report.left_alone:
        echo(f"  kept beside {r['other']} ({r['relation']}): {r['reason']}")
    for d in report.dropped:
        echo(f"  dropped {d.get('title') or d.get('refuted') or ''}: {d['reason']}".replace("  dropped :", "  dropped:"))
    if report.review_branch:
        echo(f"proposals on {report.review_branch}: `memrepo review` lists them")
    _model_calls_judged("capture")  # a verdict call that failed was counted in the trailer alone


@click.command()
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def enrich(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Ask the model for aliases (words people would type) for memories; default: every un-enriched one.

    Aliases that only repeat a memory's own words are dropped. One commit per run.

    \b
    Example:
      memrepo enrich deploy-freeze
    """
    from memrepo.passes import enrich as en

    from memrepo.cli.progress import Reporter

    from memrepo.passes import model

    shown = Reporter()
    model.Tally.reset()
    report = en.run(_repo(ctx), [_memory_id(ctx, i) for i in ids] or None, progress=shown)
    shown.close()
    if as_json:
        _json(report)
    else:
        for note_id, aliases in report["enriched"].items():
            echo(f"{note_id}: {', '.join(aliases)}")
        unanswered = report.get("pending", []) + report.get("gave_up", [])
        unchanged = [i for i in report["asked"] if i not in report["enriched"] and i not in unanswered]
        if unchanged:
            echo(f"no new aliases for: {', '.join(unchanged)}")
        if report.get("unknown_ids"):
            echo(f"the model answered for ids it was not asked about, ignored: {', '.join(report['unknown_ids'])}")
        if report.get("pending"):
            echo(f"not answered, asked again next run: {', '.join(report['pending'])}")
        if report.get("gave_up"):
            # Third unanswered ask: not asked again by a sweep, which said "no new aliases" as if answered.
            echo(f"not answered {en.MAX_ATTEMPTS} times, not asked again until its text changes "
                 f"(`memrepo enrich ID` asks now): {', '.join(report['gave_up'])}")
        if report.get("skipped_dirty"):
            echo(f"left alone, uncommitted edits (commit them, then enrich): {', '.join(report['skipped_dirty'])}")
        if not report["asked"] and not report.get("skipped_dirty"):
            echo("nothing to enrich")
    _model_calls_judged("enrich")


@click.command()
@click.option("--no-model", is_flag=True, help="Skip every model call (captures and enrichment wait for the next sweep).")
@click.option("--retry-failed", is_flag=True, help="First queue again the background jobs that gave up (`memrepo doctor` lists them).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def sweep(ctx: click.Context, no_model: bool, retry_failed: bool, as_json: bool) -> None:
    """Run pending captures, enrichment, the curator and the verifier as one run (idempotent).

    The curator also compares your memory with each team's and the projects' this machine
    knows: each conflict becomes a proposal for `memrepo review` naming both sources, and
    nothing is applied to any source.

    \b
    Example (cron, daily at 04:00):
      0 4 * * * memrepo sweep >> ~/.memrepo/index/sweep.log 2>&1
    """
    from memrepo.worker import jobs, sweep as sw

    if retry_failed:
        again = jobs.retry_failed(_repo(ctx))
        echo(f"queued {len(again)} failed job{'s' * (len(again) != 1)} again", err=True)
    from memrepo.cli.progress import Reporter

    shown = Reporter()
    report = sw.run(_repo(ctx), use_model=not no_model, progress=shown, cwd=os.getcwd())
    shown.close()
    if as_json:
        _json(report)
    elif report.get("skipped"):
        echo(f"run {report['run_id']}: skipped: {report['skipped']}")
        return None
    else:
        echo(f"run {report['run_id']}: {len(report['captures'])} capture job(s), "
             f"{len((report.get('enrich') or {}).get('enriched', {}))} memories enriched"
             + (f", curator applied {len(report['curate']['applied'])}" if report.get("curate") else "")
             + (f", verifier changed {len(report['verify']['changed'])}" if report.get("verify") else ""))
        if report.get("across"):
            _across_lines(report["across"])
        probes = (report.get("verify") or {}).get("url_probes")
        if probes:
            echo(f"  verify: {url_probes_line(probes)}")
        for name, row in (report.get("model_calls") or {}).items():
            calls = row["ok"] + row["failed"]
            failed = f", {row['failed']} failed (last: {row['last_error'][:160]})" if row["failed"] else ""
            echo(f"  {name}: {calls} model call{'s' * (calls != 1)}{failed}")
        for err in report["errors"]:
            echo(f"  error: {err}", err=True)
    if report.get("model_failed") or report.get("errors"):
        # A sweep whose model never answered is not a quiet day: say so, and exit 1 (issue 16).
        raise MemrepoError(report.get("model_failed") or f"{len(report['errors'])} step(s) of the sweep failed",
                           hint=CHECK_MODEL)


def _across_lines(done: dict[str, Any]) -> None:
    """The sweep's curator across sources: what it proposed for review, what failed, what waits."""
    compared = ", ".join(done["sources"]) or "no team joined and no project known"
    if done["not_run"]:
        echo(f"  across sources ({compared}): not run: {done['not_run']}; {done['waiting']} related pair(s) wait")
        return
    n = len(done["conflicts"])
    echo(f"  across sources ({compared}): {n} conflict{'s' * (n != 1)} proposed for review, "
         f"{len(done['failed'])} failed, {done['remembered']} not asked again, {done['waiting']} waiting"
         + (" (`memrepo review`)" if n else ""))
    for f in done["failed"]:
        echo(f"    failed: {' / '.join(f['ids'])}: {f['reason']}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def stats(ctx: click.Context, as_json: bool) -> None:
    """Counts per class and status, the last sweep, queued jobs, model calls and tokens per pass, and
    how many of recall's injections of the last 30 days the replies used.

    \b
    Example:
      memrepo stats
    """
    from memrepo.worker import sweep as sw

    data = sw.stats(_repo(ctx))
    if as_json:
        return _json(data)
    echo(f"memories: {data['memories']}  " + "  ".join(f"{k}={v}" for k, v in data["by_status"].items()))
    echo("by class: " + ("  ".join(f"{k}={v}" for k, v in data["by_class"].items()) or "-"))
    for skipped in data["not_indexed"]:
        echo(f"not indexed: {skipped['path']}: {skipped['problem']}")
    last = data["last_sweep"]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last["finished"])) if last else "never"
    echo(f"last sweep: {when}" + (f" ({last['run_id']})" if last else ""))
    echo(f"jobs: {data['jobs']['queued']} queued, {data['jobs']['running']} running, {data['jobs']['failed']} failed;"
         f" sessions captured: {data['captured_sessions']}")
    for name, row in data["model"].items():
        echo(f"model {name}: {row['calls']} calls ({row['failed']} failed), " + _tokens(row))
    for failure in data["model_failures"]:
        echo(f"failed model call: {failure['t']} {failure['pass']}: {failure['error']}")
    rec = data["recall"]
    if rec["judged"]:
        echo(f"recall, last {rec['days']} days: {rec['used']} of {rec['judged']} judged injections used "
             f"(precision {rec['precision']:.0%}); {rec['injections'] - rec['judged']} not judged yet")
    else:
        echo(f"recall, last {rec['days']} days: {rec['injections']} injections, none judged yet "
             "(the Stop hook judges each turn's)")
    if rec["never_used"]:
        echo("injected often, never used (candidates for review: `memrepo show <id>`): "
             + ", ".join(f"{m['id']} ({m['injected']}x)" for m in rec["never_used"][:10]))


def _tokens(row: dict[str, int]) -> str:
    """Reported usage as the command gave it; characters / 4 only where it gave none, and said so."""
    parts = []
    if row["reported_calls"]:
        cached = row["cache_read_input_tokens"] + row["cache_creation_input_tokens"]
        parts.append(f"{row['input_tokens']:,} in" + (f" (+{cached:,} cache)" if cached else "")
                     + f" / {row['output_tokens']:,} out tokens, as the command reported for {row['reported_calls']} "
                     f"call{'s' * (row['reported_calls'] != 1)}")
    if row["estimated_calls"]:
        parts.append(f"≈{row['est_input_tokens']:,} in / ≈{row['est_output_tokens']:,} out tokens estimated "
                     f"(characters / 4) for {row['estimated_calls']} call{'s' * (row['estimated_calls'] != 1)} "
                     "whose command reports no usage")
    return "; ".join(parts) or "no tokens recorded"


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    for command in (capture, enrich, sweep, stats):
        group.add_command(command)
