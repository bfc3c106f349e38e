"""Plain helpers shared by the tests: canonical memory files and real git commands."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from typing import Any

from memrepo.format import notes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}

DEFAULTS: dict[str, Any] = {
    "class_": "fact",
    "source": "user",
    "created": "2026-01-15",
}


def cli_cache_dir(environ: Mapping[str, str]) -> str:
    """Where the end-to-end tests keep the agent CLIs, from the real environment `environ`:
    `MEMREPO_TEST_CACHE`, else `$XDG_CACHE_HOME/memrepo-tests`, else `~/.cache/memrepo-tests`
    (the rule tests/e2e/install_cli.sh applies when run by hand). An absolute path."""
    explicit = environ.get("MEMREPO_TEST_CACHE", "")
    if explicit:
        return os.path.abspath(explicit)
    base = environ.get("XDG_CACHE_HOME", "") or os.path.join(environ.get("HOME", "") or os.path.expanduser("~"),
                                                             ".cache")
    return os.path.abspath(os.path.join(base, "memrepo-tests"))


def memory_text(id: str, **fields: Any) -> str:
    """The canonical text of a valid memory `id`; keyword fields override the defaults.

    `class_` (or `class` through `**{"class": ...}`) sets the class; `body` sets the body.
    A field given as None is left out.
    """
    values: dict[str, Any] = dict(DEFAULTS)
    values["title"] = f"Title of {id}"
    values["description"] = f"What {id} says, in one line."
    values["body"] = f"The body of {id}.\n"
    if "class" in fields:
        fields["class_"] = fields.pop("class")
    values.update(fields)
    return notes.serialize(notes.new_note(id=id, **values))


def write_file(repo: str, rel: str, text: str | bytes) -> str:
    """Write `text` (exact bytes, no newline translation) at `repo/rel`; returns the path."""
    path = os.path.join(repo, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def write_memory(repo: str, id: str, **fields: Any) -> str:
    """Write `memory/<id>.md` with memory_text(id, **fields); returns its path."""
    return write_file(repo, f"memory/{id}.md", memory_text(id, **fields))


def git(repo: str, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the git CLI in `repo` with text output."""
    return subprocess.run(("git",) + args, cwd=repo, check=check, text=True, input=input,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def commit_all(repo: str, msg: str = "test commit", *extra: str) -> subprocess.CompletedProcess[str]:
    """`git add -A` then `git commit -m msg` (hooks run); not checked, so rejections can be asserted."""
    git(repo, "add", "-A")
    return git(repo, "commit", "-q", "-m", msg, *extra, check=False)


def head(repo: str) -> str:
    """The sha HEAD names."""
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def build_template(tmp_path_factory: Any, setup: Any = None, identity: Mapping[str, str] | None = None) -> str:
    """A memory repository made once per test module or session (init and commits run real hooks, ~1 s).

    Built under its own HOME and git identity (`identity`, GIT_* variables; a "Template" one by
    default), outside the per-test isolation; `setup(path)` adds memories. Tests copy it with
    `copy_template` (stat times kept, so the cache stays fresh). Nothing in it names its own path
    (the hook shims ask git where they run), so a copy is a repository of its own.
    """
    import pytest

    from memrepo.store import repoinit

    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("GIT_")] + ["MEMREPO_DIR"]:
            mp.delenv(key, raising=False)
        mp.setenv("HOME", str(tmp_path_factory.mktemp("template-home")))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for role in ("AUTHOR", "COMMITTER"):
            mp.setenv(f"GIT_{role}_NAME", "Template")
            mp.setenv(f"GIT_{role}_EMAIL", "template@example.com")
        for key, value in (identity or {}).items():
            mp.setenv(key, value)
        path = str(tmp_path_factory.mktemp("template") / "mem")
        repoinit.init(path)
        if setup is not None:
            setup(path)
    return path


def copy_template(template: str, tmp_path: Any) -> str:
    """A private copy of a template repository for one test."""
    import shutil

    path = os.path.join(str(tmp_path), "mem")
    shutil.copytree(template, path, symlinks=True)
    return path
