"""Verdicts move only with evidence (issue 37, part 2).

A machine with the project's checkout stamps its memories; a laptop that has neither the
checkout nor a model sweeps the synced repository. "Could not check here" is not a verdict:
the laptop changes no stamp, and a third machine that can check one project of two moves only
that project's part. Real git, a bare remote, `memrepo sweep --no-model` through the CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from click.testing import CliRunner

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.format import files, notes
from memrepo.passes.verify import verifier
from memrepo.store import repoinit, sync

FILLER = 120  # memories beside the named ones, half with a claim that holds, half with one that fails


def stamps(repo: str) -> dict[str, Any]:
    out = {}
    for name in files.memory_files(os.path.join(repo, "memory")):
        meta = notes.read(os.path.join(repo, "memory", name)).meta
        out[name[:-3]] = (meta.get("verification"), meta.get("claims"))
    return out


def checkout(tmp_path: Any, name: str, files: list[str]) -> str:
    root = str(tmp_path / "src" / name)
    for rel in files:
        write_file(root, rel, f"# {rel}\n")
    git(root, "init", "-q", "-b", "main")
    return root


def projects(repo: str, roots: dict[str, str]) -> None:
    write_file(repo, "index/local.json", json.dumps({"projects": roots}))


def team(tmp_path: Any) -> tuple[str, str, dict[str, str]]:
    """(bare remote, machine a with both checkouts, their roots), a's stamps pushed."""
    bare = str(tmp_path / "team.git")
    git(str(tmp_path), "init", "-q", "--bare", "-b", "main", bare)
    roots = {"shop": checkout(tmp_path, "shop", ["src/shop/app.py"]),
             "blog": checkout(tmp_path, "blog", ["content/index.md"])}
    a = str(tmp_path / "a")
    repoinit.init(a)
    git(a, "remote", "add", "origin", bare)
    projects(a, roots)
    write_memory(a, "entry", title="Shop entry point", project="shop", body="The shop starts in `src/shop/app.py`.\n")
    write_memory(a, "settings", title="Shop settings", project="shop",
                 body="Settings live in `src/shop/settings.py`; the app is `src/shop/app.py`.\n")
    shop = roots["shop"]
    write_memory(a, "absolute", title="Where the shop runs", project="shop",
                 body=f"As the transcript said: `{shop}/src/shop/app.py` is the entry point.\n")
    write_memory(a, "two-projects", title="Drafts and settings", class_="reference",
                 body=f"Shop settings in `{shop}/src/shop/settings.py`, drafts in `{roots['blog']}/content/drafts.md`.\n")
    for n in range(FILLER):
        rel = "src/shop/app.py" if n % 2 else f"src/shop/old_{n}.py"
        write_memory(a, f"filler-{n:03d}", title=f"Shop module {n}", project="shop", body=f"Module {n} is `{rel}`.\n")
    assert commit_all(a, "memories").returncode == 0
    report = verifier.run(a, use_model=False, today="2026-12-01")
    assert report.commit
    sync.sync(a)
    return bare, a, roots


def test_a_sweep_without_model_or_checkout_changes_no_stamp_another_machine_made(tmp_path: Any) -> None:
    bare, a, _ = team(tmp_path)
    made = stamps(a)
    assert made["settings"][0]["status"] == "unverified" and made["entry"][0]["status"] == "verified"
    assert made["absolute"][0]["status"] == "verified"
    assert made["two-projects"][0]["failed"] == ["path_exists: src/shop/settings.py (shop)",
                                                 "path_exists: content/drafts.md (blog)"]
    laptop = str(tmp_path / "laptop")
    git(str(tmp_path), "clone", "-q", bare, laptop)
    repoinit.init(laptop)
    before = head(laptop)
    result = CliRunner().invoke(cli, ["--repo", laptop, "sweep", "--no-model"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert head(laptop) == before, git(laptop, "log", "--format=%s", f"{before}..HEAD").stdout
    assert stamps(laptop) == made
    # And the verifier alone, asked for every memory by name, says why it left them.
    report = verifier.run(laptop, use_model=False, today="2026-12-05")
    assert report.commit is None and not any(r.changed for r in report.results)
    sync.sync(laptop)
    sync.sync(a)
    assert stamps(a) == made


def test_a_machine_that_checks_one_project_moves_only_that_projects_part(tmp_path: Any) -> None:
    bare, a, roots = team(tmp_path)
    third = str(tmp_path / "third")
    git(str(tmp_path), "clone", "-q", bare, third)
    repoinit.init(third)
    write_file(roots["shop"], "src/shop/settings.py", "DEBUG = False\n")  # the missing file is back
    projects(third, {"shop": roots["shop"]})  # this machine has the shop's checkout, not the blog's
    report = verifier.run(third, use_model=False, today="2026-12-05")
    assert report.commit
    after = stamps(third)
    assert after["settings"][0]["status"] == "verified"  # all its claims were checked here
    # The blog's failure was recorded elsewhere and could not be checked here: it stands.
    assert after["two-projects"][0]["status"] == "unverified"
    assert after["two-projects"][0]["failed"] == ["path_exists: content/drafts.md (blog)"]
    claimed = [c["args"] for c in after["two-projects"][1]]
    assert {"path": "content/drafts.md", "project": "blog"} in claimed
    body = git(third, "log", "-1", "--format=%B").stdout
    assert "two-projects: unverified -> unverified" in body and "settings: unverified -> verified" in body


def test_a_machine_that_can_check_everything_still_clears_a_claim_the_memory_no_longer_makes(tmp_path: Any) -> None:
    _, a, _ = team(tmp_path)
    path = os.path.join(a, "memory", "settings.md")
    note = notes.read(path)
    note.body = "The app is `src/shop/app.py`.\n"
    write_file(a, "memory/settings.md", notes.serialize(note))
    assert commit_all(a, "settings moved into the app").returncode == 0
    verifier.run(a, use_model=False, today="2026-12-05")
    ver = stamps(a)["settings"][0]
    assert ver["status"] == "verified" and "failed" not in ver


def test_nothing_checked_here_on_a_memory_never_stamped_is_unchecked(tmp_path: Any, repo: str) -> None:
    write_memory(repo, "elsewhere", title="Shop entry point", project="shop", body="The shop starts in `src/shop/app.py`.\n")
    assert commit_all(repo, "one").returncode == 0
    verifier.run(repo, use_model=False, today="2026-12-05")
    assert stamps(repo)["elsewhere"][0]["status"] == "unchecked"


def test_the_laptops_sweep_adds_no_restamp_commit_to_the_shared_history(tmp_path: Any) -> None:
    """The repro of the issue: the laptop committed "verify: restamp N memories" turning verdicts into `unchecked`."""
    bare, a, _ = team(tmp_path)
    laptop = str(tmp_path / "laptop")
    subprocess.run(["git", "clone", "-q", bare, laptop], check=True)
    repoinit.init(laptop)
    CliRunner().invoke(cli, ["--repo", laptop, "sweep", "--no-model"], catch_exceptions=False)
    subjects = git(laptop, "log", "--format=%s").stdout
    assert "verify: restamp" in subjects  # a's own run, synced
    assert subjects.count("verify: restamp") == 1
