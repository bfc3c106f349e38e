"""`memrepo serve`'s buttons for every source (issue 41, part 6): a real server on 127.0.0.1 over
real repositories (the fixtures of test_sources.py: a personal repository, a team clone of a
bare remote, a code repository with `.memrepo/memory/`), driven with urllib as a browser would.

On a team's or the project's memory page, "Propose to forget" does what `memrepo forget ID`
does there (a branch on the team's remote; the file retired in the code repository to commit);
on one of yours, "Share to …" does what `memrepo share ID --to TEAM|project` does. Each action
is a POST guarded as serve's other buttons are; each error names its fix.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from typing import Any, Iterator

import pytest

from helpers import git, memory_text, commit_all, write_file
from memrepo.store import sources
from test_serve import Client, _serve
from test_sources import _dirs, code, me, team  # noqa: F401  (fixtures)


@pytest.fixture
def browser(me: str, code: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """A server started in the code repository (so its project is the project memory)."""
    monkeypatch.chdir(code)
    yield from _serve(me)


def _form(page: str, action: str) -> dict[str, str]:
    """The hidden fields of the form posting to `action` on `page` (as a browser would send them)."""
    found = re.search(rf'<form class="inline" method="post" action="{re.escape(action)}">(.*?)</form>', page)
    assert found, f"no form for {action}"
    return {k: v.replace("&amp;", "&") for k, v in re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', found.group(1))}


def _press(client: Client, page_path: str, action: str, **extra: str) -> tuple[int, dict[str, str], str]:
    """Press the button posting to `action` (with `extra` fields, e.g. `to`, `reason`) on `page_path`."""
    page = client.get(page_path)
    forms = re.findall(rf'<form class="inline" method="post" action="{re.escape(action)}">.*?</form>', page)
    chosen = next((f for f in forms if all(f'value="{v}"' in f for k, v in extra.items() if k != "reason")), None)
    assert chosen, (action, extra, page[:2000])
    fields = {k: v.replace("&amp;", "&") for k, v in re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', chosen)}
    return client.request("POST", action, form={**fields, **extra})


def _done(client: Client, headers: dict[str, str]) -> str:
    """The notice the page shows after an action's redirect."""
    return client.get(headers["location"])


def test_forget_of_a_team_memory_is_a_branch_on_the_team_s_remote(browser: Client, team: tuple[str, str]) -> None:
    bare, _ = team
    page = browser.get("/m/team-tabs")
    assert "Propose to forget" in page and "source: team acme" in page
    status, headers, _ = _press(browser, "/m/team-tabs", "/m/forget", reason="we use spaces now")
    assert status == 303 and headers["location"].startswith("/m/team-tabs?done="), (status, headers)
    shown = _done(browser, headers)
    assert "proposed retiring team-tabs to team acme as memrepo/forget/team-tabs" in shown
    assert "git merge FETCH_HEAD" in shown  # no forge: the way to merge it is named
    proposed = git(bare, "show", "memrepo/forget/team-tabs:memory/team-tabs.md").stdout
    assert "status: retired" in proposed and "we use spaces now" in proposed
    assert "status: retired" not in git(bare, "show", "main:memory/team-tabs.md").stdout


def test_forget_of_a_project_memory_retires_the_file_to_commit_with_the_code(browser: Client, code: str) -> None:
    assert "Propose to forget" in browser.get("/m/shop-checkout-flag")
    status, headers, _ = _press(browser, "/m/shop-checkout-flag", "/m/forget")
    assert status == 303
    shown = _done(browser, headers)
    assert f"git -C {code} commit .memrepo/memory/shop-checkout-flag.md" in shown
    text = open(os.path.join(code, ".memrepo", "memory", "shop-checkout-flag.md")).read()
    assert "status: retired" in text and "forgotten at the user's request" in text
    assert git(code, "status", "--porcelain").stdout.strip() == "M .memrepo/memory/shop-checkout-flag.md"
    assert "Propose to forget" not in browser.get("/m/shop-checkout-flag")  # retired: nothing left to forget


def test_share_of_a_personal_memory_to_the_team_is_a_branch_there(browser: Client, team: tuple[str, str]) -> None:
    bare, _ = team
    page = browser.get("/m/my-spaces")
    assert "Share to team acme" in page and "Share to project shop" in page
    status, headers, _ = _press(browser, "/m/my-spaces", "/m/share", to="acme")
    assert status == 303
    assert "proposed my-spaces to team acme as memrepo/share/my-spaces" in _done(browser, headers)
    assert git(bare, "cat-file", "-e", "memrepo/share/my-spaces:memory/my-spaces.md", check=False).returncode == 0
    assert git(bare, "cat-file", "-e", "main:memory/my-spaces.md", check=False).returncode != 0


def test_share_of_a_personal_memory_to_the_project_writes_the_file_to_commit(browser: Client, me: str, code: str) -> None:
    status, headers, _ = _press(browser, "/m/my-spaces", "/m/share", to="project")
    assert status == 303
    shown = _done(browser, headers)
    assert "proposed my-spaces to project shop" in shown and f"git -C {code} add .memrepo/memory/my-spaces.md" in shown
    assert open(os.path.join(code, ".memrepo", "memory", "my-spaces.md")).read() == \
        open(os.path.join(me, "memory", "my-spaces.md")).read()
    assert git(code, "status", "--porcelain").stdout.strip() == "?? .memrepo/memory/my-spaces.md"


def test_a_team_clone_without_a_remote_is_an_error_that_names_the_fix(browser: Client, me: str) -> None:
    clone = sources.teams(me)["acme"]["path"]
    git(clone, "remote", "remove", "origin")
    status, _, page = _press(browser, "/m/team-tabs", "/m/forget")
    assert status == 409 and "has no remote or no branch" in page and "memrepo doctor" in page


def test_a_team_remote_that_refuses_the_push_is_an_error_that_names_the_fix(browser: Client, me: str, tmp_path: Any) -> None:
    """A member who may only read the team's remote (here: pushes go to a path that is no repository)."""
    clone = sources.teams(me)["acme"]["path"]
    git(clone, "remote", "set-url", "--push", "origin", str(tmp_path / "no-such-remote.git"))
    status, _, page = _press(browser, "/m/my-spaces", "/m/share", to="acme")
    assert status == 409 and "git push failed" in page and "push" in page.split("git push failed", 1)[1]
    assert "may push" in page  # the hint: who may push, and what to do otherwise


def test_without_gh_the_branch_is_pushed_and_the_page_says_how_to_open_the_pull_request(
        me: str, code: str, team: tuple[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    bare, _ = team
    monkeypatch.chdir(code)
    empty = tmp_path / "bin"
    empty.mkdir()
    os.symlink(git_path(), empty / "git")
    monkeypatch.setenv("PATH", str(empty))
    for browser in _serve(me, forge="github.com/acme/memory"):
        status, headers, _ = _press(browser, "/m/team-tabs", "/m/forget")
        assert status == 303
        shown = _done(browser, headers)
        assert "`gh` is not installed" in shown and "apt install gh" in shown
        assert "https://github.com/acme/memory/compare/main...memrepo/forget/team-tabs" in shown
    assert git(bare, "cat-file", "-e", "memrepo/forget/team-tabs:memory/team-tabs.md", check=False).returncode == 0


def git_path() -> str:
    import shutil

    found = shutil.which("git")
    assert found
    return found


def test_an_unknown_team_is_refused_with_the_fix(browser: Client) -> None:
    fields = _form(browser.get("/m/my-spaces"), "/m/share")
    status, _, page = browser.request("POST", "/m/share", form={**fields, "to": "umbrella"})
    assert status == 409 and "no team named" in page and "memrepo team list" in page


def test_the_buttons_are_guarded_as_serve_s_others(me: str, code: str, team: tuple[str, str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """POST only, with the session's token, from this server's own origin; an id that is no memory's
    is refused; a read-only server shows no button and takes no action."""
    bare, _ = team
    monkeypatch.chdir(code)
    for browser in _serve(me):
        fields = _form(browser.get("/m/team-tabs"), "/m/forget")
        assert browser.request("POST", "/m/forget", form={**fields, "token": "x"})[0] == 403
        assert browser.request("POST", "/m/forget", form=fields, headers={"Origin": "http://127.0.0.1:1"})[0] == 403
        assert browser.request("GET", "/m/forget?" + urllib.parse.urlencode(fields))[0] == 404
        status, _, page = browser.request("POST", "/m/forget", form={**fields, "id": "../../memory/team-tabs"})
        assert status == 400 and "not a memory id" in page
        assert git(bare, "branch", "--list", "memrepo/*").stdout == ""
    for browser in _serve(me, read_only=True):
        for path in ("/m/team-tabs", "/m/shop-checkout-flag", "/m/my-spaces"):
            page = browser.get(path)
            assert "<form" not in page.replace('<form method="get"', ""), path
        token = browser.app.gate.csrf(browser.cookie.split("=", 1)[1])
        status, _, _ = browser.request("POST", "/m/share", form={"id": "my-spaces", "to": "acme", "token": token})
        assert status == 403
    assert git(bare, "branch", "--list", "memrepo/*").stdout == ""


def test_a_team_memory_cannot_bring_a_button_of_its_own(me: str, code: str, team: tuple[str, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A team memory whose text is a form posting to /m/forget shows as text: the page holds only
    serve's own forms, and the text's values appear escaped."""
    _, alice = team
    evil = ('<form method="post" action="/m/forget"><input name="id" value="team-kafka-retention">'
            '<button>"Click"</button></form><script>alert(1)</script>')
    write_file(alice, "memory/team-evil.md", memory_text(
        "team-evil", title="Team <b>evil</b> note", description="A description with <i>markup</i> in it.",
        topics=["evil"], body=evil))
    assert commit_all(alice, "evil").returncode == 0
    git(alice, "push", "-q", "origin", "HEAD:main")
    from memrepo.store import sync

    sync.sync(sources.teams(me)["acme"]["path"])
    monkeypatch.chdir(code)
    for browser in _serve(me):
        page = browser.get("/m/team-evil")
        assert "source: team acme" in page
        assert page.count("<form") == 1 and 'action="/m/forget"' in page  # serve's own button, once
        assert "<script>" not in page and "<b>evil</b>" not in page and "&lt;form method=&quot;post&quot;" in page


def test_a_team_memory_whose_front_matter_is_broken_shows_its_problem(browser: Client, me: str,
                                                                       team: tuple[str, str]) -> None:
    clone = sources.teams(me)["acme"]["path"]
    path = os.path.join(clone, "memory", "team-tabs.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read().replace("title: ", "title: [unclosed ", 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    status, _, page = browser.request("GET", "/m/team-tabs")  # was: 500, "ParseError: front matter is not valid YAML"
    assert status == 200 and "memory/team-tabs.md:3: front matter is not valid YAML" in page
    assert "it is team acme&#x27;s memory: ask there for the fix" in page and "title: [unclosed Indent" in page


def test_a_forged_forget_of_one_of_yours_says_it_is_yours(browser: Client, me: str, team: tuple[str, str]) -> None:
    fields = _form(browser.get("/m/team-tabs"), "/m/forget")
    status, _, page = browser.request("POST", "/m/forget", form={**fields, "id": "my-spaces", "source": ""})
    assert status == 409 and "my-spaces is one of your own memories" in page  # was: "no memory ... in any source"
    assert "memrepo retire my-spaces" in page
    status, _, page = browser.request("POST", "/m/forget", form={**fields, "id": "no-such-memory"})
    assert status == 409 and "no memory with id &#x27;no-such-memory&#x27; in team acme" in page


def test_forget_by_its_button_opens_a_pull_request_through_the_real_gh(
        me: str, code: str, team: tuple[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """The forge's side: the real `gh` against the fake GitHub of the review tests (skipped
    without gh or openssl, as test_e2e_share_pr.py is); pressed twice, one pull request."""
    from test_e2e_review_pr import NEEDS, FakeGitHub

    if NEEDS:
        pytest.skip(f"needs {', '.join(NEEDS)} (Debian: apt install gh openssl)")
    bare, _ = team
    monkeypatch.chdir(code)
    certs = tmp_path / "certs"
    certs.mkdir()
    with FakeGitHub(bare, str(certs)) as hub:
        for key, value in {"GH_CONFIG_DIR": str(tmp_path / "gh-config"), "GH_ENTERPRISE_TOKEN": hub.token,
                           "SSL_CERT_FILE": hub.cert}.items():
            monkeypatch.setenv(key, value)
        for browser in _serve(me, forge=f"{hub.host}/{hub.owner}/{hub.repo}"):
            status, headers, _ = _press(browser, "/m/team-tabs", "/m/forget", reason="we use <b>spaces</b> now")
            assert status == 303
            assert "memrepo/forget/team-tabs: https://" in _done(browser, headers)
            assert _press(browser, "/m/team-tabs", "/m/forget")[0] == 303
        created = hub.calls("POST", "/pulls")
        assert [r.status for r in created] == [201]
        sent = created[0].body
        assert sent["head"] == "memrepo/forget/team-tabs" and sent["base"] == "main" and "<b>" not in sent["body"]
