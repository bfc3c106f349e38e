"""lightos: the prompt path's os calls without `import os` must agree with os and os.path."""

from __future__ import annotations

import os
import posixpath
import subprocess
import sys

import pytest

from memrepo.recall import _fast as lightos

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PATHS = ["/", "//", "///", "/a/b", "/a/b/", "a", "a/b/../c", "../x", "./x/./y", "/a/../../b", "a/..", "..", ".",
         "", "/a//b///c", "//a/b", "~", "~/notes", "a/b/", "/tmp/x/../../..", "../../a/../b", "x/ä/ü.md"]


@pytest.mark.parametrize("path", PATHS)
def test_path_functions_match_posixpath(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    assert lightos.abspath(path) == posixpath.abspath(path)
    assert lightos.dirname(path) == posixpath.dirname(path)
    assert lightos.basename(path) == posixpath.basename(path)
    assert lightos.expanduser(path) == posixpath.expanduser(path)
    for other in ("b", "/b", "", "c/d"):
        assert lightos.join(path, other) == posixpath.join(path, other)
    assert lightos.join(path, "x", "y") == posixpath.join(path, "x", "y")


def test_expanduser_edge_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/")
    assert lightos.expanduser("~/x") == posixpath.expanduser("~/x")
    monkeypatch.setenv("HOME", "/home/trailing/")
    assert lightos.expanduser("~/x") == posixpath.expanduser("~/x")
    assert lightos.expanduser("~root/x") == posixpath.expanduser("~root/x")


def test_exists(tmp_path: pytest.TempPathFactory) -> None:
    assert lightos.exists(str(tmp_path)) and not lightos.exists(str(tmp_path) + "/missing")
    assert not lightos.exists("bad\0path")


def test_getenv_follows_os_environ_once_os_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_LIGHTOS_PROBE", "set-in-process")
    assert lightos.getenv("MEMREPO_LIGHTOS_PROBE") == "set-in-process"
    monkeypatch.delenv("MEMREPO_LIGHTOS_PROBE")
    assert lightos.getenv("MEMREPO_LIGHTOS_PROBE", "dflt") == "dflt"


def test_getenv_without_os_reads_the_start_environment() -> None:
    # As the hook runs it: -I -S, so nothing has imported os; non-UTF-8 bytes survive as surrogates.
    code = ("import sys; sys.path.insert(0, 'tools'); from memrepo.recall import _fast as lightos; "
            "assert 'os' not in sys.modules; v = lightos.getenv('MEMREPO_LIGHTOS_PROBE'); "
            "print(repr(v), lightos.getenv('MEMREPO_LIGHTOS_ABSENT', 'dflt'), 'os' in sys.modules)")
    env = {**{k: v for k, v in os.environ.items() if k != "MEMREPO_LIGHTOS_ABSENT"}, "MEMREPO_LIGHTOS_PROBE": "caf\u00e9"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["'café'", "dflt", "False"]
    envb = {**{k.encode(): v.encode() for k, v in os.environ.items()}, b"MEMREPO_LIGHTOS_PROBE": b"raw\xff"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, env=envb, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == repr(os.fsdecode(b"raw\xff"))
