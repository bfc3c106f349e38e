"""Commands of the verify area: `memrepo verify`."""

from __future__ import annotations

from typing import Any

import click

from memrepo.cli.common import CHECK_MODEL, _fail_friendly, _json, _memory_id, _model_calls_judged, _repo
from memrepo.cli.term import echo
from memrepo.errors import MemrepoError


@click.command("verify")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--no-model", is_flag=True, help="Only the rule-based extractor (backticked paths, URLs, branches, owner/repo#N).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_context
@_fail_friendly
def verify(ctx: click.Context, ids: tuple[str, ...], no_model: bool, as_json: bool) -> None:
    """Check the claims memories make and stamp them verified, unverified or unchecked.

    Claims run through a fixed set of probes with validated arguments; changed stamps are
    one commit (Memrepo-Action: verify), undone with `memrepo undo RUN`.

    \b
    Example:
      memrepo verify --no-model
      memrepo verify deploy-freeze api-base-url --json
    """
    from memrepo.cli.progress import Reporter
    from memrepo.passes.verify import verifier

    from memrepo.passes import model

    shown = Reporter()
    model.Tally.reset()
    report = verifier.run(_repo(ctx), [_memory_id(ctx, i) for i in ids] or None, use_model=not no_model, progress=shown)
    shown.close()
    if as_json:
        _json(report.as_dict())
        return _stopped(report)
    for r in report.results:
        if r.skipped:
            echo(f"skip {r.id}: {r.skipped}")
        elif r.changed or r.status == "unverified":
            failed = r.failed()
            echo(f"{r.status or 'none':<10} {r.id}" + (f"  ({'; '.join(failed)})" if failed else ""))
    for note in report.model_notes:
        echo(note, err=True)
    c = report.counts()
    echo(f"{c['memories']} memories, {c['extracted']} claims: {c['verified']} verified, {c['unverified']} unverified, "
         f"{c['unknown']} unknown, {c['refused']} refused")
    if report.url_probes:
        echo(url_probes_line(report.url_probes))
    echo(f"committed {report.commit[:12]} (run {report.run_id})" if report.commit else "no stamp changed; nothing committed")
    _stopped(report)


def _stopped(report: Any) -> None:
    """Fail the command when the model command failed: the memories after it were not checked (exit 0 said they were)."""
    _model_calls_judged("verify")
    if report.model_failed:
        left = len([r for r in report.results if r.skipped.startswith("left as it was: the model command failed")])
        raise MemrepoError(f"verify: the model command failed, so {left} "
                           + ("memory was left as it was" if left == 1 else "memories were left as they were"),
                           hint=CHECK_MODEL.replace("; ", ", then run `memrepo verify` again; "))


def url_probes_line(f: dict[str, Any]) -> str:
    """The URL probes of a run beside their budget: what the sweep's and verify's summaries say."""
    line = (f"URL probes: {f['urls']} URL{'s' * (f['urls'] != 1)} on {f['hosts']} host{'s' * (f['hosts'] != 1)}, "
            f"{f['answered']} answered, in {f['spent_s']:.1f} s of a {f['budget_s']:g} s budget")
    if f.get("not_made"):
        line += (f"; {f['not_made']} not checked in time ({f['claims_not_checked']} claims left without a verdict; "
                 "raise `url_probe_budget` to check them)")
    return line


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    group.add_command(verify)
