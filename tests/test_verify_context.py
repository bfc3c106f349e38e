"""The text rules read a mention's sentence: a negation, a plan, another machine's path or a web
route is not a claim that a file exists here (issue 16, defect 6)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from helpers import commit_all, git, write_file, write_memory
from memrepo.format import notes
from memrepo.passes.verify import verifier as verify

FILES = ["billing/invoices.py", "billing/notify.py", "shop/admin/jobs.py", "docs/billing.md.example"]

NEGATED = ("`billing/tasks.py` no longer exists; invoices are built by `billing/invoices.py` now.\n"
           "The old `billing/cron.py` was removed in the spring, and there is no `billing/legacy/` folder any more.\n"
           "`billing/mail.py` was renamed to `billing/notify.py`.\n")
PLANNED = ("Refund emails will go in `billing/refund_mail.py` (to be written next sprint).\n"
           "We plan to add `billing/credit_notes.py` too. TODO: write `docs/billing.md`.\n"
           "Invoices themselves are built in `billing/invoices.py`.\n")
ELSEWHERE = ("Production settings: on each app server the file is `shared/config/settings.yml` "
             "(ssh deploy@web1 and `cat shared/config/settings.yml`).\n"
             "Stuck jobs are listed on the `ops/jobs` page of the admin, served by `shop/admin/jobs.py`.\n")


@pytest.fixture
def shop(repo: str, tmp_path: Any) -> str:
    """The project `shop` as a git checkout, and three memories about it."""
    project = os.path.join(str(tmp_path), "shop")
    for rel in FILES:
        write_file(project, rel, f"# {rel}\n")
    git(project, "init", "-q", "-b", "main")
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": project}}))
    for note_id, body in (("billing-negated", NEGATED), ("billing-planned", PLANNED), ("ops-elsewhere", ELSEWHERE)):
        write_memory(repo, note_id, title=note_id, description=f"What {note_id} says", project="shop", body=body)
    assert commit_all(repo, "memories").returncode == 0
    return repo


def _outcome(report: verify.VerifyReport, note_id: str) -> tuple[Any, ...]:
    result = next(r for r in report.results if r.id == note_id)
    return (result.status, [(c["claim"], c["verdict"]) for c in result.claims],
            [(json.loads(r.claim.split(" ", 1)[1])["path"], r.reason) for r in result.refused])


def _negated(cue: str) -> str:
    return f"negated: the text says it does not exist now ({cue!r}); no probe checks absence"


def test_a_path_the_text_says_is_gone_is_refused_not_stamped_missing(shop: str) -> None:
    report = verify.run(shop, ["billing-negated"], use_model=False, today="2026-11-29")
    assert _outcome(report, "billing-negated") == (
        "verified",
        [("path_exists: billing/invoices.py (shop)", "true"), ("path_exists: billing/notify.py (shop)", "true")],
        [("billing/tasks.py", _negated("no longer exists")), ("billing/cron.py", _negated("was removed")),
         ("billing/legacy/", _negated("there is no")), ("billing/mail.py", _negated("was renamed"))])
    with open(os.path.join(shop, "index", verify.REFUSED_LOG)) as fh:
        logged = [json.loads(line) for line in fh]
    assert [(e["id"], e["reason"], e["by"]) for e in logged][:2] == [
        ("billing-negated", _negated("no longer exists"), "text"), ("billing-negated", _negated("was removed"), "text")]


def test_a_planned_file_is_refused_as_a_plan(shop: str) -> None:
    report = verify.run(shop, ["billing-planned"], use_model=False, today="2026-11-29")
    assert _outcome(report, "billing-planned") == (
        "verified", [("path_exists: billing/invoices.py (shop)", "true")],
        [("billing/refund_mail.py", "a plan, not a claim about now ('to be written')"),
         ("billing/credit_notes.py", "a plan, not a claim about now ('plan to add')"),
         ("docs/billing.md", "a plan, not a claim about now ('TODO')")])
    meta = notes.read(os.path.join(shop, "memory", "billing-planned.md")).meta
    assert meta["claims"] == [{"probe": "path_exists", "args": {"path": "billing/invoices.py"}, "by": "text"}]


def test_a_server_path_and_a_web_route_are_not_checked_as_local_files(shop: str) -> None:
    report = verify.run(shop, ["ops-elsewhere"], use_model=False, today="2026-11-29")
    elsewhere = "runs elsewhere: a path on another machine ({!r}), not this project's file"
    assert _outcome(report, "ops-elsewhere") == (
        "verified", [("path_exists: shop/admin/jobs.py (shop)", "true")],
        [("shared/config/settings.yml", elsewhere.format("on each app server")),
         ("ops/jobs", "a web route, not a file ('page')")])
