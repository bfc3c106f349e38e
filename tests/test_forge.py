"""The forge behind a remote, the pull request text, and a squash-merged proposal read as decided."""

from __future__ import annotations

import pytest

from helpers import commit_all, git
from memrepo.passes.curate import forge, prbody, review
from test_curate import fake, store  # noqa: F401  (fixture)


@pytest.mark.parametrize("url, slug", [
    ("git@github.com:acme/memory.git", "github.com/acme/memory"),
    ("https://github.com/acme/memory", "github.com/acme/memory"),
    ("https://github.com/acme/memory.git/", "github.com/acme/memory"),
    ("ssh://git@ghe.example.com/platform/team-memory.git", "ghe.example.com/platform/team-memory"),
    ("https://ghe.example.com:8443/platform/memory", "ghe.example.com:8443/platform/memory"),
    ("https://user@GitHub.com/acme/memory", "github.com/acme/memory"),
])
def test_a_forge_remote_names_its_repository(url: str, slug: str) -> None:
    found = forge.from_url(url)
    assert found is not None and found.slug == slug


@pytest.mark.parametrize("url", ["/srv/git/memory.git", "file:///srv/git/memory.git", "../memory.git", "C:/repos/memory",
                                 "https://github.com/acme", "https://github.com/acme/memory/tree/main", "git@github.com:a/../b",
                                 "https://github.com:notaport/acme/memory", "https://github.com/../memory"])
def test_a_remote_that_is_not_a_forge_repository_names_none(url: str) -> None:
    assert forge.from_url(url) is None


def test_the_setting_and_the_flag_come_before_the_url() -> None:
    assert forge.resolve("/srv/memory.git", "ghe.example.com/a/b")[0] == forge.Forge("ghe.example.com", "a", "b")
    assert forge.resolve("git@github.com:x/y.git", "ghe.example.com/a/b", "h.example/c/d")[0] == forge.Forge("h.example", "c", "d")
    found, why = forge.resolve("git@github.com:x/y.git", "not a forge")
    assert found is None and "not HOST/OWNER/REPO" in why
    found, why = forge.resolve("/srv/memory.git", None)
    assert found is None and "--forge HOST/OWNER/REPO" in why


def test_paginated_answers_are_read_page_by_page() -> None:
    assert forge._decode_pages('[{"number": 1}]\n[{"number": 2}][]') == [[{"number": 1}], [{"number": 2}], []]


def test_untrusted_text_is_one_escaped_line() -> None:
    assert prbody.inline("a | b\n\n# c") == "a \\| b # c"
    assert prbody.inline("![i](https://x/p.png) @team <b>") == "!\\[i\\](https&#58;//x/p.png) &#64;team &lt;b&gt;"
    assert prbody.inline("x" * 400).endswith("…") and len(prbody.inline("x" * 400)) == prbody.FIELD_MAX
    assert prbody.code("p13-no-force-push") == "`p13-no-force-push`"
    assert prbody.code("a`b") == "a\\`b"


def test_a_proposal_squashed_into_the_branch_reads_as_merged(repo: str, fake) -> None:  # noqa: F811
    store(repo, "p13")
    fake("p13")
    from memrepo.passes.curate import curator

    curator.run(repo)
    (p,) = review.proposals(repo)
    # the forge squashed the pull request: the same change, in a new commit without the trailers
    with open(f"{repo}/memory/p13-no-force-push.md", "w") as fh:
        fh.write(git(repo, "show", f"{p['commit']}:memory/p13-no-force-push.md").stdout)
    assert commit_all(repo, "Squashed: supersede p13-no-force-push (#1)").returncode == 0
    assert review.proposals(repo) == []
    (closed,) = review.proposals(repo, include_closed=True)
    assert (closed["id"], closed["state"]) == (p["id"], "merged")
