"""The console script's exit codes: 0 ok, 1 a problem with the fix named, 2 usage, 3 a bug with a log."""

from __future__ import annotations

import os
import subprocess
import sys

from memrepo.recall import paths


def memrepo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", *args], capture_output=True, text=True, timeout=60)


def test_exit_codes(repo: str, tmp_path: str) -> None:
    assert memrepo("--repo", repo, "doctor").returncode == 0
    missing = memrepo("--repo", str(tmp_path / "nowhere"), "doctor")
    assert missing.returncode == 1 and "fix: memrepo init" in missing.stdout
    assert memrepo("--repo", str(tmp_path / "nowhere"), "list").returncode == 1
    assert memrepo("no-such-command").returncode == 2


def test_unexpected_error_exits_3_with_a_log(repo: str) -> None:
    # The index path is a directory: sqlite cannot open it, which no library check anticipates.
    os.makedirs(paths.index_db(repo) + ".tmp-x", exist_ok=True)
    os.remove(os.path.join(repo, "index", "memrepo.sqlite3"))
    os.makedirs(paths.index_db(repo))
    proc = memrepo("--repo", repo, "index", "--rebuild")
    assert proc.returncode == 3
    assert "memrepo: unexpected" in proc.stderr and "Traceback" not in proc.stderr
    log = proc.stderr.split("The traceback is in ")[1].split(";")[0]
    assert "Traceback" in open(log, encoding="utf-8").read()
