"""The console script's exit codes: 0 ok, 1 a problem with the fix named, 2 usage, 3 a bug with a log."""

from __future__ import annotations

import subprocess
import sys


def memrepo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", *args], capture_output=True, text=True, timeout=60)


def test_exit_codes(repo: str, tmp_path: str) -> None:
    assert memrepo("--repo", repo, "doctor").returncode == 0
    missing = memrepo("--repo", str(tmp_path / "nowhere"), "doctor")
    assert missing.returncode == 1 and "fix: memrepo init" in missing.stdout
    assert memrepo("--repo", str(tmp_path / "nowhere"), "list").returncode == 1
    assert memrepo("no-such-command").returncode == 2


def test_unexpected_error_exits_3_with_a_log(repo: str) -> None:
    # A bug no library check anticipates (a full disk or a folder in the database's place are
    # anticipated now: they exit 1 with the fix), planted in the process that runs the command.
    planted = ("import sys\nfrom memrepo.store import index\n"
               "def broken(*args, **kwargs):\n    raise ZeroDivisionError('a bug')\n"
               "index.rebuild = broken\nfrom memrepo.cli.main import main\nsys.exit(main())\n")
    proc = subprocess.run([sys.executable, "-c", planted, "--repo", repo, "index", "--rebuild"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 3
    assert "memrepo: unexpected" in proc.stderr and "Traceback" not in proc.stderr
    log = proc.stderr.split("The traceback is in ")[1].split(";")[0]
    assert "Traceback" in open(log, encoding="utf-8").read()


def test_what_a_command_leaves_alive_is_not_collected_at_exit(repo: str) -> None:
    # The interpreter's last collections walked every object the imports made, a sixth of a
    # waiting `add`'s own instructions (issue 44): main() freezes them, and exit leaves them be.
    seen = ("import atexit, gc, sys\natexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            "from memrepo.cli.main import main\nsys.exit(main())\n")
    proc = subprocess.run([sys.executable, "-c", seen, "--repo", repo, "list"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "frozen True"
