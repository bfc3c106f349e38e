"""base._fast: the prompt path's os, JSON and sqlite calls without `os`, `json` or functools must agree with them."""

from __future__ import annotations

import json
import os
import posixpath
import random
import subprocess
import sys

import pytest

from memrepo.base import _fast as lightos

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
    code = ("import sys; sys.path.insert(0, 'tools'); from memrepo.base import _fast as lightos; "
            "assert 'os' not in sys.modules; v = lightos.getenv('MEMREPO_LIGHTOS_PROBE'); "
            "print(repr(v), lightos.getenv('MEMREPO_LIGHTOS_ABSENT', 'dflt'), 'os' in sys.modules)")
    env = {**{k: v for k, v in os.environ.items() if k != "MEMREPO_LIGHTOS_ABSENT"}, "MEMREPO_LIGHTOS_PROBE": "caf\u00e9"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["'café'", "dflt", "False"]
    envb = {**{k.encode(): v.encode() for k, v in os.environ.items()}, b"MEMREPO_LIGHTOS_PROBE": b"raw\xff"}
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, env=envb, capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == repr(os.fsdecode(b"raw\xff"))


VALUES = [{}, [], "", "ä — \u2028 \"q\" \\ \x00", 0, -1.5, 1e300, True, False, None,
          {"a": [1, {"b": None}], "ü": "x"}, [[[]]], 12345678901234567890]


@pytest.mark.parametrize("value", VALUES)
def test_json_round_trips_and_agrees_with_json(value: object) -> None:
    text = lightos.dumps(value)
    assert json.loads(text) == value and lightos.loads(text) == value
    assert lightos.loads(json.dumps(value)) == value


@pytest.mark.parametrize("text", ["", " ", "{", "[1,]", "{} {}", "nul", "'x'", "[1] x"])
def test_json_rejects_what_is_not_one_value(text: str) -> None:
    with pytest.raises(ValueError):
        lightos.loads(text)


def test_json_writes_non_finite_numbers_as_null_and_refuses_other_types() -> None:
    assert lightos.dumps([float("nan"), float("inf")]) == "[null, null]"
    with pytest.raises(TypeError):
        lightos.dumps({1, 2})


def test_json_from_the_c_encoder_is_the_text_the_python_writer_writes() -> None:
    """dumps writes through `_json`'s C encoder (issue 44): byte for byte what `_emit`, the
    writer it replaced, writes for JSON data, non-finite numbers (null) included."""
    rnd = random.Random(44)
    chars = ["a", "é", "\u2028", '"', "\\", "\x00", "\x1f", "\n", "\t", "😀", "\ud800", " ", "/", "\x7f"]
    numbers = [0, -1, 2**70, 7, 0.0, -0.0, 1.5, 1e-7, 1e16, 1e300, 0.1 + 0.2, float("nan"), float("inf"), -float("inf")]

    def value(depth: int = 0) -> object:
        kind = rnd.randrange(8 if depth < 4 else 5)
        if kind == 0:
            return "".join(rnd.choice(chars) for _ in range(rnd.randrange(6)))
        if kind == 1:
            return rnd.choice(numbers + [round(rnd.random() * 100, 4), rnd.randrange(-1000, 1000)])
        if kind in (2, 3, 4):
            return (True, False, None)[kind - 2]
        if kind == 5:
            return [value(depth + 1) for _ in range(rnd.randrange(4))]
        if kind == 6:
            return tuple(value(depth + 1) for _ in range(rnd.randrange(3)))
        return {"".join(rnd.choice(chars) for _ in range(rnd.randrange(4))): value(depth + 1) for _ in range(rnd.randrange(4))}

    for _ in range(5000):
        v = value()
        parts: list[str] = []
        lightos._emit(v, parts)
        assert lightos.dumps(v) == "".join(parts), v


def test_sqlite_loads_without_functools_and_leaves_no_stand_in() -> None:
    code = ("import sys; sys.path.insert(0, 'tools'); from memrepo.base import _fast; s = _fast.load_sqlite(); "
            "db = s.connect(':memory:'); print(db.execute('select 1 + 1').fetchone()[0], "
            "'functools' in sys.modules, 'json' in sys.modules, 'os' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "False", "False", "False"]
