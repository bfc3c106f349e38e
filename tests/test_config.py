"""Settings: memrepo.json (shared) under index/local.json (this machine), and project roots."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from memrepo.store import config
from memrepo.errors import MemrepoError


def write(repo: str, rel: str, data: object) -> None:
    with open(os.path.join(repo, rel), "w", encoding="utf-8") as fh:
        json.dump(data, fh)


def test_local_settings_override_shared_ones_one_level_deep(repo: str) -> None:
    write(repo, "memrepo.json", {"profile_bound": 9, "curate": {"max_pairs": 5, "other": 1}})
    write(repo, "index/local.json", {"profile_bound": 12, "curate": {"max_pairs": 50}})
    assert config.load(repo) == {"profile_bound": 12, "curate": {"max_pairs": 50, "other": 1}}


def test_project_roots_come_from_this_machine_only(repo: str) -> None:
    """Issue 38: a pushed `{"shop": "~"}` pointed the verifier's path probes at the home directory."""
    write(repo, "memrepo.json", {"projects": {"shop": "~", "blog": "/srv/blog"}, "model_timeout": 1, "sync": {"auto": True},
                                 "profile_bound": 9})
    assert config.project_roots(config.load(repo)) == {}
    assert config.get(repo, "model_timeout") is None
    assert config.committed_local_only(repo) == ["model_timeout", "projects", "sync"]  # doctor names each
    write(repo, "index/local.json", {"projects": {"shop": {"root": "~/src/shop"}}})
    assert config.project_roots(config.load(repo)) == {"shop": os.path.expanduser("~/src/shop")}


def test_settings_that_name_a_command_come_from_this_machine_only(repo: str) -> None:
    write(repo, "memrepo.json", {"model_cmd": "touch /tmp/x", "providers": {"v": {"secret_present": ["sh", "{name}"]}},
                                 "profile_bound": 9})
    assert config.load(repo) == {"profile_bound": 9}
    assert (config.local_only(repo, "model_cmd"), config.committed_local_only(repo)) == (None, ["model_cmd", "providers"])
    write(repo, "index/local.json", {"model_cmd": "mine"})
    assert (config.local_only(repo, "model_cmd"), config.load(repo)["model_cmd"]) == ("mine", "mine")


def test_a_committed_local_file_counts_as_shared(repo: str) -> None:
    write(repo, "index/local.json", {"model_cmd": "pulled", "sync": {"auto": True}})
    assert subprocess.run(["git", "add", "-f", "index/local.json"], cwd=repo).returncode == 0
    assert (config.local(repo), config.local_only(repo, "model_cmd"), config.local_is_tracked(repo)) == ({}, None, True)


@pytest.mark.parametrize("content, message", [("{nope", "is not valid JSON"), ("[1, 2]", "must hold a JSON object")])
def test_broken_settings_name_the_file_and_the_fix(repo: str, content: str, message: str) -> None:
    with open(os.path.join(repo, "memrepo.json"), "w", encoding="utf-8") as fh:
        fh.write(content)
    with pytest.raises(MemrepoError, match=message) as err:
        config.load(repo)
    assert err.value.hint


def test_project_roots_ignore_malformed_entries() -> None:
    assert config.project_roots({"projects": {"a": 3, "b": {"root": ""}, "c": {"path": "/x"}, "d": "/d"}}) == {"d": "/d"}
    assert config.project_roots({"projects": ["not", "a", "mapping"]}) == {}


def test_shareable_paths_never_carry_this_machines_layout(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch) -> None:
    home = os.path.join(str(tmp_path), "home", "ann")
    monkeypatch.setenv("HOME", home)
    roots = {"shop": os.path.join(home, "src", "shop"), "shop-api": os.path.join(home, "src", "shop", "api")}
    assert config.shareable_path(os.path.join(home, "src", "shop", "app.py"), roots) == "shop:app.py"
    assert config.shareable_path(os.path.join(home, "src", "shop", "api", "x.py"), roots) == "shop-api:x.py"  # deepest
    assert config.shareable_path(os.path.join(home, ".claude", "skills", "a", "SKILL.md"), roots) == "~/.claude/skills/a/SKILL.md"
    assert config.shareable_path(os.path.join(str(tmp_path), "elsewhere", "f.md"), roots) is None
    assert config.shareable_path(os.path.join(home, "src", "shopping", "f.md"), roots) == "~/src/shopping/f.md"  # not shop's


def test_whether_local_json_is_tracked_is_asked_of_git_once_per_change_of_its_index(
        repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: a verify over 10,000 memories asked `git ls-files` twice per memory (~57 s).
    The answer is kept until git's index file changes, and a commit that tracks the file is seen."""
    from memrepo.vcs import gitcmd

    os.makedirs(os.path.join(repo, "index"), exist_ok=True)
    with open(os.path.join(repo, config.LOCAL), "w", encoding="utf-8") as fh:
        json.dump({"sync": {"auto": True}}, fh)
    asked = []
    real = gitcmd.run_git

    def counting(*args: str, **kwargs: object) -> tuple[int, bytes, bytes]:
        if args and args[0] == "ls-files":
            asked.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcmd, "run_git", counting)
    for _ in range(50):
        assert config.local(repo) == {"sync": {"auto": True}}
    assert len(asked) == 1
    subprocess.run(["git", "add", "-f", config.LOCAL], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", "a teammate commits their local settings"], cwd=repo,
                   check=True)
    assert config.local(repo) == {}  # tracked now: it came with a pull like any shared file
    assert len(asked) == 2
