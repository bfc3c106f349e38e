"""One way to run the git CLI (stdlib only; used by git hooks, where GitPython is too slow)."""

from __future__ import annotations

import os
import subprocess


def no_git_env() -> dict[str, str]:
    """The environment without the GIT_* variables a hook inherits, for touching another repository."""
    keep = ("GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in keep}


def run_git(*args: str, cwd: str, input: bytes | None = None, env: dict[str, str] | None = None) -> tuple[int, bytes, bytes]:
    """Run `git args` in cwd and return (returncode, stdout, stderr); never raises for a git failure.

    The environment is inherited by default: inside a git hook GIT_INDEX_FILE names the index
    being committed (a temporary one for `git commit -a` or partial commits).
    """
    proc = subprocess.run(
        ("git",) + args, cwd=cwd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=env,
    )
    return proc.returncode, proc.stdout, proc.stderr


def head(cwd: str) -> str | None:
    """The commit HEAD names, or None in a repository without commits."""
    rc, out, _ = run_git("rev-parse", "--verify", "-q", "HEAD", cwd=cwd)
    return out.decode().strip() if rc == 0 else None


def split_z(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
