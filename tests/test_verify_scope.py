"""Only paths of a configured project root are checked; an absolute path inside one is that
project's path, and one claim in two forms is stored once (issue 16, defect 6)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from helpers import ROOT, commit_all, git, write_file, write_memory
from memrepo.format import notes
from memrepo.passes.verify import scope, verifier as verify
from memrepo.passes.verify.argtypes import ClaimRejected

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")


@pytest.fixture
def roots(repo: str, tmp_path: Any) -> dict[str, str]:
    """Two projects on this machine, `shop` and `blog`, each a git checkout, named in local settings."""
    out = {}
    for name, files in (("shop", ["src/shop/app.py", "src/shop/views/home.py"]), ("blog", ["content/posts/hello.md"])):
        out[name] = os.path.join(str(tmp_path), "src", name)
        for rel in files:
            write_file(out[name], rel, f"# {rel}\n")
        git(out[name], "init", "-q", "-b", "main")
    write_file(repo, "index/local.json", json.dumps({"projects": out}))
    return out


def _claims(repo: str, note_id: str) -> list[Any]:
    return list(notes.read(os.path.join(repo, "memory", f"{note_id}.md")).meta.get("claims") or [])


def test_absolute_paths_inside_a_project_root_are_that_projects_paths(repo: str, roots: dict[str, str]) -> None:
    shop, blog = roots["shop"], roots["blog"]
    # As a memory captured from a Claude Code transcript reads: absolute paths everywhere.
    write_memory(repo, "shop-entry", title="Shop entry point", description="Where the shop starts", project="shop",
                 body=f"The entry point is `{shop}/src/shop/app.py`; its views are in `{shop}/src/shop/views`, "
                      f"and gunicorn loads `{shop}/src/shop/wsgi.py`. Nginx reads "
                      "`/etc/nginx/sites-enabled/shop.conf`.\n")
    write_memory(repo, "blog-posts", title="Blog posts", description="Where posts live", class_="reference",
                 body=f"Posts are markdown files in `{blog}/content/posts/`.\n")
    assert commit_all(repo, "memories").returncode == 0
    report = verify.run(repo, use_model=False, today="2026-11-29")
    by_id = {r.id: r for r in report.results}
    assert [(c["claim"], c["verdict"]) for c in by_id["shop-entry"].claims] == [
        ("path_exists: src/shop/app.py (shop)", "true"), ("path_exists: src/shop/views (shop)", "true"),
        ("path_exists: src/shop/wsgi.py (shop)", "false")]
    assert [r.reason for r in by_id["shop-entry"].refused] == [
        "path '/etc/nginx/sites-enabled/shop.conf' is outside every configured project root (settings `projects`); "
        "not checked"]
    assert (by_id["shop-entry"].status, by_id["shop-entry"].failed()) == (
        "unverified", ["path_exists: src/shop/wsgi.py (shop)"])
    assert _claims(repo, "shop-entry")[0] == {"probe": "path_exists", "args": {"path": "src/shop/app.py"}, "by": "text"}
    # A global memory: the path names its project.
    assert [(c["claim"], c["verdict"]) for c in by_id["blog-posts"].claims] == [
        ("path_exists: content/posts (blog)", "true")]
    assert _claims(repo, "blog-posts") == [
        {"probe": "path_exists", "args": {"path": "content/posts", "project": "blog"}, "by": "text"}]
    assert by_id["blog-posts"].status == "verified"


def test_one_claim_in_three_forms_is_stored_once(repo: str, roots: dict[str, str], tmp_path: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    shop = roots["shop"]
    write_memory(repo, "shop-app", title="Shop app", description="The app module", project="shop",
                 body=f"The app object lives in `src/shop/app.py` (`{shop}/src/shop/app.py` in the session).\n")
    assert commit_all(repo, "memory").returncode == 0
    rules = os.path.join(str(tmp_path), "rules.json")
    with open(rules, "w") as fh:  # an honest model names the project it read in the prompt
        json.dump([{"contains": "Memory id: shop-app\n", "reply": {"claims": [
            {"probe": "path_exists", "args": {"path": "src/shop/app.py", "project": "shop"},
             "quote": "The app object lives in `src/shop/app.py`"}]}}], fh)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    report = verify.run(repo, use_model=True, today="2026-11-29")
    result = report.results[0]
    assert [(c["claim"], c["by"], c["verdict"]) for c in result.claims] == [
        ("path_exists: src/shop/app.py (shop)", "text", "true")]
    assert result.refused == []
    assert _claims(repo, "shop-app") == [{"probe": "path_exists", "args": {"path": "src/shop/app.py"}, "by": "text"}]


@pytest.mark.parametrize("path,expected", [
    ("/x/mono/api/a.py", ("api", "a.py")),  # nested roots: the deepest wins
    ("/x/mono/web/b.py", ("mono", "web/b.py")),
    ("/x/mono", ("mono", ".")),
    ("/x/monorail/a.py", None),  # a prefix of the name is not the folder
    ("/srv/app/x.conf", None),
])
def test_owner(path: str, expected: tuple[str, str] | None) -> None:
    assert scope.owner(path, {"mono": "/x/mono", "api": "/x/mono/api/"}) == expected


@pytest.mark.parametrize("args,reason", [
    ({"path": "/x/mono/../../etc/passwd"}, "path '../../etc/passwd' climbs out with '..'"),
    ({"path": "/x/mono/a.py;id"}, "path has a forbidden character ';'"),
    ({"path": "/srv/app/x.conf"}, "path '/srv/app/x.conf' is outside every configured project root (settings `projects`); "
                                  "not checked"),
])
def test_placed_paths_are_still_validated(args: dict[str, str], reason: str) -> None:
    from memrepo.passes.verify import probes

    with pytest.raises(ClaimRejected) as exc:
        probes.check("path_exists", scope.place("path_exists", args, {"mono": "/x/mono"}))
    assert str(exc.value) == reason
