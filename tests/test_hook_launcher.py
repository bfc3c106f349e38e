"""hooks/run, the launcher of every Claude Code hook: which interpreter it starts, and how.

Each candidate interpreter here is a stand-in script that records how it was started, so a
test sees exactly what the launcher exec'd: a plugin venv's python before one on PATH, a
version-manager shim never, MEMREPO_PYTHON first, `-I -S` and the hook's script always.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from helpers import ROOT

RUN = os.path.join(ROOT, "hooks", "run")


def fake_python(path: Path, label: str) -> Path:
    """An executable `python` that writes its label and arguments to $RECORD and exits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nprintf "%s\\n" {label} "$@" > "$RECORD"\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def launch(tmp_path: Path, path: list[Path], hooks: str = RUN, cwd: str | None = None, **env: str) -> list[str]:
    """Run the launcher for `user_prompt_submit` with only `path` on PATH; what the chosen interpreter got."""
    record = tmp_path / "record"
    record.unlink(missing_ok=True)
    sh = shutil.which("sh")
    assert sh
    full = {"PATH": os.pathsep.join(str(p) for p in path), "RECORD": str(record), "HOME": str(tmp_path), **env}
    proc = subprocess.run([sh, hooks, "user_prompt_submit"], input=b"{}", capture_output=True, env=full, cwd=cwd,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    return record.read_text(encoding="utf-8").splitlines() if record.exists() else []


def test_python3_on_path_runs_the_hook_isolated_and_without_site(tmp_path: Path) -> None:
    fake_python(tmp_path / "bin" / "python3", "path")
    got = launch(tmp_path, [tmp_path / "empty", tmp_path / "bin"])
    assert got == ["path", "-I", "-S", os.path.join(ROOT, "hooks", "user_prompt_submit.py")]


def test_a_version_manager_shim_is_skipped_for_the_next_python(tmp_path: Path) -> None:
    fake_python(tmp_path / ".pyenv" / "shims" / "python3", "shim")
    fake_python(tmp_path / "bin" / "python3", "real")
    assert launch(tmp_path, [tmp_path / ".pyenv" / "shims", tmp_path / "bin"])[0] == "real"


def test_the_plugin_venv_python_comes_before_path(tmp_path: Path) -> None:
    data = tmp_path / "plugin-data"
    fake_python(data / "venv-0.1.0" / "bin" / "python", "venv")
    fake_python(tmp_path / "bin" / "python3", "path")
    assert launch(tmp_path, [tmp_path / "bin"], CLAUDE_PLUGIN_DATA=str(data))[0] == "venv"


def test_memrepo_python_comes_first_by_path_or_by_name(tmp_path: Path) -> None:
    data = tmp_path / "plugin-data"
    fake_python(data / "venv-0.1.0" / "bin" / "python", "venv")
    chosen = fake_python(tmp_path / "opt" / "python3.12", "chosen")
    assert launch(tmp_path, [tmp_path / "opt"], CLAUDE_PLUGIN_DATA=str(data), MEMREPO_PYTHON=str(chosen))[0] == "chosen"
    # a bare name is looked up on PATH
    assert launch(tmp_path, [tmp_path / "opt"], CLAUDE_PLUGIN_DATA=str(data), MEMREPO_PYTHON="python3.12")[0] == "chosen"


def test_a_candidate_that_is_missing_or_not_executable_is_passed_over(tmp_path: Path) -> None:
    plain = tmp_path / "opt" / "python3"
    plain.parent.mkdir()
    plain.write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")  # not executable
    fake_python(tmp_path / "bin" / "python3", "real")
    got = launch(tmp_path, [tmp_path / "opt", tmp_path / "bin"], MEMREPO_PYTHON=str(tmp_path / "nowhere" / "python"))
    assert got[0] == "real"


def test_a_path_entry_with_glob_characters_is_taken_literally(tmp_path: Path) -> None:
    # unquoted, "[x]bin" would match the folder xbin instead of naming itself
    fake_python(tmp_path / "[x]bin" / "python3", "literal")
    fake_python(tmp_path / "xbin" / "python3", "globbed")
    assert launch(tmp_path, [tmp_path / "[x]bin", tmp_path / "xbin"])[0] == "literal"


def test_started_from_its_own_folder_the_launcher_finds_the_hook_script(tmp_path: Path) -> None:
    fake_python(tmp_path / "bin" / "python3", "path")
    got = launch(tmp_path, [tmp_path / "bin"], hooks="run", cwd=os.path.join(ROOT, "hooks"))
    assert got[1:] == ["-I", "-S", "./user_prompt_submit.py"]
