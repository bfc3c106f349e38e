"""Review branches: proposals made without touching the working tree, listed, shown, accepted, rejected, pushed."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.passes.curate import curator as curate, review
from memrepo.store import index
from memrepo.format import notes
from memrepo.recall import decide as recall
from memrepo.cli.main import cli
from memrepo.errors import MemrepoError
from test_curate import fake, ids, snapshot, store  # noqa: F401  (fixture)


def tensions(repo: str, fake, *names: str) -> curate.CurateReport:  # noqa: F811
    store(repo, *names)
    fake(*names)
    report = curate.run(repo)
    assert len(report.review) == len(names)
    return report


def run_cli(repo: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_proposals_leave_working_tree_index_and_branch_alone(repo: str, fake) -> None:  # noqa: F811
    store(repo, "p13")
    write_memory(repo, "draft", body="Uncommitted draft.\n")
    git(repo, "add", "memory/draft.md")
    fake("p13")
    before_head, before = head(repo), snapshot(repo)
    status = git(repo, "status", "--porcelain").stdout
    report = curate.run(repo)
    assert (head(repo), snapshot(repo), git(repo, "status", "--porcelain").stdout) == (before_head, before, status)
    assert status == "A  memory/draft.md\n"
    (p,) = review.proposals(repo)
    assert (p["id"], p["run"], p["state"]) == (p["commit"][:7], report.run_id, "open")
    assert p["subject"] == "curator (proposed): supersede p13-no-force-push by p13-cloud-sessions"
    assert p["trailers"]["Review"] == "class: reference cannot supersede rule"
    assert git(repo, "rev-parse", f"{p['commit']}^").stdout.strip() == before_head


def id_of(repo: str, loser: str) -> str:
    return next(p["id"] for p in review.proposals(repo) if p["trailers"]["Id"] == loser)


def test_list_and_show(repo: str, fake) -> None:  # noqa: F811
    run = tensions(repo, fake, "p13", "p15").run_id
    code, out = run_cli(repo, "review")
    assert code == 0
    lines = out.splitlines()
    assert sorted(line[:7] for line in lines[:2]) == sorted(p["commit"][:7] for p in review.proposals(repo))
    assert {line[7:] for line in lines[:2]} == {
        f"  {run}  curator (proposed): supersede p13-no-force-push by p13-cloud-sessions  [0.86] class: reference cannot supersede rule",
        f"  {run}  curator (proposed): supersede p15-migrations-in-tx by p15-migration-42  [0.80] class: event cannot supersede rule"}
    assert lines[2] == "2 open proposals"
    pid = id_of(repo, "p15-migrations-in-tx")
    code, out = run_cli(repo, "review", "show", pid, "--diff")
    assert code == 0
    assert "+status: superseded\n+superseded_by: p15-migration-42\n" in out
    assert "Memrepo-Review: class: event cannot supersede rule" in out
    # The default view: the two memories side by side, the verdict, the guard, the commands.
    code, out = run_cli(repo, "review", "show", pid)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"proposal {pid} (run {run}): curator (proposed): supersede p15-migrations-in-tx by p15-migration-42"
    assert lines[1].startswith("verdict: ") and "supersede p15-migrations-in-tx by p15-migration-42, confidence 0.80" in lines[1]
    assert "held back by: class: event cannot supersede rule" in out
    head_row = next(line for line in lines if "(would be superseded)" in line)
    assert head_row.startswith("p15-migrations-in-tx (would be superseded)") and " | p15-migration-42 (would win)" in head_row
    assert any(" | id: p15-migration-42" in line and line.startswith("id: p15-migrations-in-tx") for line in lines)
    assert f"accept: memrepo review accept {pid}" in out
    code, out = run_cli(repo, "review", "show", "abcdef0")
    assert code == 1 and "no proposal abcdef0 (there are 2 open)" in out and "hint: `memrepo review` lists" in out
    code, out = run_cli(repo, "review", "show", "3")
    assert code == 1 and "'3' is not a proposal id" in out and "numbers would shift" in out


def test_accept_brings_the_commit_onto_the_current_branch(repo: str, fake) -> None:  # noqa: F811
    report = tensions(repo, fake, "p13")
    loser, winner = ids("p13")
    proposal = review.proposals(repo)[0]["commit"]
    code, out = run_cli(repo, "review", "accept", proposal[:7])
    assert code == 0 and out == f"Accepted proposal {proposal[:7]} as {head(repo)[:12]}\n"
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"curator: supersede {loser} by {winner}"
    trailer_text = git(repo, "log", "-1", "--format=%(trailers:unfold,only)").stdout
    assert f"Memrepo-Proposal: {proposal}\n" in trailer_text and f"Memrepo-Proposed-In: {report.run_id}\n" in trailer_text
    assert "Memrepo-Action: supersede\n" in trailer_text and "-review\n" in trailer_text
    assert notes.read(os.path.join(repo, "memory", f"{loser}.md")).get("superseded_by") == winner
    assert git(repo, "status", "--porcelain").stdout == ""
    assert review.proposals(repo) == []
    # post-commit reindexed: recall's candidates carry the label (whatever its decision says)
    why: list = []  # type: ignore[type-arg]
    recall.decide(repo, "may I git push --force to main", explain=why)
    assert ("p13-no-force-push", [f"superseded by {winner}"]) in [(h.id, h.labels()) for h, _ in why if h is not None]


def test_reject_records_the_decision_and_the_pair_is_not_proposed_again(repo: str, fake) -> None:  # noqa: F811
    tensions(repo, fake, "p13", "p15")
    before = snapshot(repo)
    tree = git(repo, "rev-parse", "HEAD^{tree}").stdout
    n = id_of(repo, "p13-no-force-push")
    code, out = run_cli(repo, "review", "reject", n, "--reason", "the rule holds everywhere")
    assert code == 0 and out.startswith(f"Rejected proposal {n} (")
    assert (snapshot(repo), git(repo, "rev-parse", "HEAD^{tree}").stdout) == (before, tree)
    assert git(repo, "status", "--porcelain").stdout == ""
    assert index.status(repo)["commit"] == head(repo)
    trailer_text = git(repo, "log", "-1", "--format=%(trailers:unfold,only)").stdout
    assert "Memrepo-Action: reject\n" in trailer_text and "Memrepo-Reason: the rule holds everywhere\n" in trailer_text
    assert [p["subject"] for p in review.proposals(repo)] == [
        "curator (proposed): supersede p15-migrations-in-tx by p15-migration-42"]
    assert sorted(p["state"] for p in review.proposals(repo, include_closed=True)) == ["open", "reject"]
    again = curate.run(repo)
    assert (again.review, again.applied) == ([], [])
    asked = [set(d["ids"]) for d in again.skipped]
    assert set(ids("p13")) not in asked and set(ids("p15")) not in asked


def test_accept_refuses_when_the_memory_changed_since(repo: str, fake) -> None:  # noqa: F811
    tensions(repo, fake, "p13")
    loser, _ = ids("p13")
    path = os.path.join(repo, "memory", f"{loser}.md")
    note = notes.read(path)
    note.meta["status"] = "retired"
    notes.write(note, path)
    assert commit_all(repo, "retire by hand").returncode == 0
    before_head, before = head(repo), snapshot(repo)
    pid = review.proposals(repo)[0]["id"]
    with pytest.raises(MemrepoError, match=f"proposal {pid} no longer applies"):
        review.accept(repo, pid)
    assert (head(repo), snapshot(repo), git(repo, "status", "--porcelain").stdout) == (before_head, before, "")


def test_push_to_a_remote(repo: str, fake, tmp_path) -> None:  # noqa: F811
    report = tensions(repo, fake, "p13")
    code, out = run_cli(repo, "review", "push")
    assert code == 1 and "no git remote named 'origin'" in out and "git remote add origin URL" in out
    bare = str(tmp_path / "remote.git")
    git(str(tmp_path), "init", "-q", "--bare", bare)
    git(repo, "remote", "add", "origin", bare)
    code, out = run_cli(repo, "review", "push")
    branch = review.branch_name(report.run_id)
    (p,) = review.proposals(repo)
    assert code == 0
    assert out.splitlines()[:2] == [f"pushed {branch} to origin (1 open)",
                                    f"proposal {p['id']}: no pull request: origin has no branch main yet: "
                                    "run `memrepo sync` first, then push again"]
    assert git(bare, "rev-parse", branch).stdout == git(repo, "rev-parse", branch).stdout


def test_accept_whose_commit_is_refused_changes_nothing(repo: str, fake, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from memrepo.vcs import gitcmd

    tensions(repo, fake, "p13")
    before_head, before = head(repo), snapshot(repo)
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs):
        if args and args[0] == "commit":
            return 1, b"", b"memory/x.md: refused by a pre-commit hook"
        return real(*args, **kwargs)

    pid = review.proposals(repo)[0]["id"]
    monkeypatch.setattr(gitcmd, "run_git", run_git)
    with pytest.raises(MemrepoError, match="refused by a pre-commit hook"):
        review.accept(repo, pid)
    monkeypatch.undo()
    assert (head(repo), snapshot(repo), git(repo, "status", "--porcelain").stdout) == (before_head, before, "")
    assert not os.path.exists(os.path.join(repo, ".git", "CHERRY_PICK_HEAD"))
    assert len(review.proposals(repo)) == 1


def test_proposal_ids_stay_the_same_across_decisions(repo: str, fake) -> None:  # noqa: F811
    """Numbers shifted after each decision (`accept 3` took what was listed as #4); ids never do."""
    tensions(repo, fake, "p13", "p14", "p15")
    listed = {p["trailers"]["Id"]: p["id"] for p in review.proposals(repo)}
    first = review.proposals(repo)[0]
    assert run_cli(repo, "review", "reject", first["id"])[0] == 0
    after = {p["trailers"]["Id"]: p["id"] for p in review.proposals(repo)}
    assert after == {k: v for k, v in listed.items() if k != first["trailers"]["Id"]}
    target = next(k for k in after if k != first["trailers"]["Id"])
    code, out = run_cli(repo, "review", "accept", after[target])
    assert code == 0, out
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith(f"curator: supersede {target} by ")
    code, out = run_cli(repo, "review", "accept", first["id"])
    assert code == 1 and f"proposal {first['id']} is closed already (reject)" in out


def test_reject_all_of_a_run_is_one_run_that_undo_reopens(repo: str, fake) -> None:  # noqa: F811
    report = tensions(repo, fake, "p13", "p15")
    code, out = run_cli(repo, "review", "reject", "--run", report.run_id, "--reason", "not now")
    assert code == 0 and out.count("Rejected proposal ") == 2
    assert review.proposals(repo) == []
    decision = git(repo, "log", "-1", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.strip()
    assert git(repo, "log", "-2", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.split() == [decision] * 2
    assert run_cli(repo, "undo", decision)[0] == 0
    assert len(review.proposals(repo)) == 2  # the rejections undone: open again
    assert run_cli(repo, "review", "reject", "--all")[0] == 0 and review.proposals(repo) == []
    code, out = run_cli(repo, "review", "reject", "--run", report.run_id)
    assert code == 1 and "has no open proposals" in out
    code, out = run_cli(repo, "review", "reject")
    assert code == 2 and "give one proposal ID, or --all, or --run RUN" in out


def test_a_reject_and_its_undo_are_commits_the_cache_has_seen(repo: str, fake) -> None:  # noqa: F811
    """Issue 40: the reject and the undo of a run that only decided proposals were made with
    plumbing, no post-commit hook ran, and the cache looked stale until a caller reindexed (the
    web page's Undo did not). Both are now `commit.record`: an ordinary commit with its hooks."""
    from memrepo.store import index
    from memrepo.vcs import runs

    tensions(repo, fake, "p13")
    staged = os.path.join(repo, "notes.txt")
    write_file(repo, "notes.txt", "a person's staged change\n")
    git(repo, "add", "notes.txt")
    [proposal] = review.proposals(repo)
    sha = review.reject(repo, proposal["id"], "not now")
    assert index.status(repo)["commit"] == sha == head(repo)
    assert git(repo, "show", "--name-only", "--format=", sha).stdout == ""  # it changes no file
    decision = git(repo, "log", "-1", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.strip()
    [undone] = runs.undo(repo, decision)
    assert index.status(repo)["commit"] == undone == head(repo)
    assert git(repo, "diff", "--cached", "--name-only").stdout == "notes.txt\n" and os.path.exists(staged)


def test_undoing_the_run_that_proposed_closes_its_proposals(repo: str, fake) -> None:  # noqa: F811
    report = tensions(repo, fake, "p13")
    assert run_cli(repo, "undo", report.run_id)[0] == 0
    assert review.proposals(repo) == []
    assert [p["state"] for p in review.proposals(repo, include_closed=True)] == ["undone"]


def _teammate_proposal(repo: str, loser: str, winner: str) -> str:
    """A branch pushed by a teammate: its message is a curator proposal to supersede `loser`, its
    commit also deletes two memories and edits the committed settings."""
    run = "2026-12-05T09-00-00-curate"
    git(repo, "checkout", "-q", "-b", f"memrepo/review/{run}")
    path = os.path.join(repo, "memory", f"{loser}.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace("\n---\n", f"\nstatus: superseded\nsuperseded_by: {winner}\n---\n", 1))
    others = sorted(f for f in os.listdir(os.path.join(repo, "memory")) if f.endswith(".md") and f[:-3] not in (loser, winner))[:2]
    for name in others:
        os.remove(os.path.join(repo, "memory", name))
    with open(os.path.join(repo, "memrepo.json"), "w", encoding="utf-8") as fh:
        fh.write('{"recall": {"max_hits": 0}}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", f"curator (proposed): supersede {loser} by {winner}\n\n"
        f"Memrepo-Action: supersede\nMemrepo-Id: {loser}\nMemrepo-Winner: {winner}\nMemrepo-Run: {run}\n"
        "Memrepo-Confidence: 0.90\nMemrepo-Review: class: reference cannot supersede rule\n")
    git(repo, "checkout", "-q", "main")
    return others[0][:-3], others[1][:-3]


def test_accept_refuses_a_proposal_that_holds_more_than_it_names(repo: str) -> None:
    """Issue 37: `show` displayed the two named memories and `accept` applied the whole commit,
    deletions and settings included — around `sync`'s refusal to take deletions."""
    write_memory(repo, "old-rule", title="Deploy on Fridays", description="Friday deploys are fine")
    write_memory(repo, "new-rule", title="No Friday deploys", description="Friday deploys are frozen")
    for name in ("keep-a", "keep-b"):
        write_memory(repo, name, title=f"Memory {name}", description="Kept")
    assert commit_all(repo, "memories").returncode == 0
    gone = _teammate_proposal(repo, "old-rule", "new-rule")
    before, tree = snapshot(repo), git(repo, "rev-parse", "HEAD").stdout
    (p,) = review.proposals(repo)
    code, out = run_cli(repo, "review", "show", p["id"])
    assert code == 0
    assert "changes: D memory/keep-a.md, D memory/keep-b.md, M memory/old-rule.md, A memrepo.json" in out
    assert (f"WARNING: this proposal also deletes memory/{gone[0]}.md; deletes memory/{gone[1]}.md; adds "
            "memrepo.json — beyond the memories it names; `review accept` refuses it") in out
    code, out = run_cli(repo, "review", "accept", p["id"])
    assert code == 1
    assert (f"proposal {p['id']} holds more than it names: it also deletes memory/{gone[0]}.md; deletes "
            f"memory/{gone[1]}.md; adds memrepo.json; nothing was applied") in out
    assert f"hint: see it whole with `memrepo review show {p['id']} --diff`" in out
    assert (snapshot(repo), git(repo, "rev-parse", "HEAD").stdout) == (before, tree)
    assert git(repo, "status", "--porcelain").stdout == ""
    assert [q["id"] for q in review.proposals(repo)] == [p["id"]]  # still open: a person rejects it


def test_a_capture_proposal_may_add_what_it_counts_and_change_what_it_lists(repo: str) -> None:
    write_memory(repo, "old-rule", title="Deploy on Fridays", description="Friday deploys are fine")
    assert commit_all(repo, "memories").returncode == 0
    old = notes.read(os.path.join(repo, "memory", "old-rule.md"))
    new_text = ("---\nid: {i}\ntitle: Captured {i}\ndescription: A captured memory {i}\nclass: fact\nsource: user\n"
                "created: '2026-12-05'\n---\nCaptured.\n")
    superseded = notes.serialize(notes.Note({**old.meta, "status": "superseded", "superseded_by": "cap-a"}, old.body, old.path))
    files = {"memory/cap-a.md": new_text.format(i="cap-a"), "memory/cap-b.md": new_text.format(i="cap-b"),
             "memory/old-rule.md": superseded}
    run = "2026-12-05T09-00-00-capture"
    trailers = {"Action": "capture", "Session": "s1", "Count": 2}
    sha = review.propose(repo, run, files, "capture: 2 memories from session s1 (proposed)", trailers,
                         "- supersede old-rule: Fridays are frozen now")
    p = next(q for q in review.proposals(repo) if q["commit"] == sha)
    assert review.beyond(repo, {**p, "body": git(repo, "show", "-s", "--format=%B", sha).stdout}) == []
    code, out = run_cli(repo, "review", "accept", p["id"])
    assert code == 0, out
    assert os.path.exists(os.path.join(repo, "memory", "cap-b.md"))
    more = review.propose(repo, "2026-12-05T09-10-00-capture", {f"memory/{i}.md": new_text.format(i=i) for i in ("cap-c", "cap-d", "cap-e")},
                          "capture: 2 memories from session s2 (proposed)", {**trailers, "Session": "s2"}, "")
    q = next(q for q in review.proposals(repo) if q["commit"] == more)
    assert review.beyond(repo, {**q, "body": ""}) == ["adds memory/cap-e.md"]  # three added, two counted


@pytest.mark.parametrize("count", ["²", "9" * 5000])
def test_a_capture_proposal_whose_count_is_not_a_number_adds_nothing_unasked(repo: str, count: str) -> None:
    """Issue 38: `Count: ²` is a digit to str.isdigit and a ValueError to int(); a 5,000-digit one
    is past int()'s limit. Either is a teammate's text: the proposal is refused, not a crash."""
    write_memory(repo, "keep-a", title="Memory keep-a", description="Kept")
    assert commit_all(repo, "memories").returncode == 0
    run = "2026-12-05T09-00-00-capture"
    git(repo, "checkout", "-q", "-b", f"memrepo/review/{run}")
    write_memory(repo, "sneaked-in", title="A memory nobody named", description="Added under a Count")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "capture (proposed): 1 memory\n\n"
        f"Memrepo-Action: capture\nMemrepo-Run: {run}\nMemrepo-Count: {count}\n")
    git(repo, "checkout", "-q", "main")
    (p,) = review.proposals(repo)
    assert review.beyond(repo, p) == ["adds memory/sneaked-in.md"]
