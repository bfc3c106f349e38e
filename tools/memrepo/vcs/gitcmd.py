"""One way to run the git CLI: every git process memrepo starts goes through `run_git`."""

from __future__ import annotations

import os

from memrepo import proc

# A commit runs the repository's hooks (post-commit reindexes), a push talks to a remote: long
# enough for both, short enough that a git waiting on a credential prompt cannot hang a worker.
TIMEOUT = 600.0


def no_git_env() -> dict[str, str]:
    """The environment without the GIT_* variables a hook inherits, for touching another repository."""
    keep = ("GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in keep}


def run_git(*args: str, cwd: str, input: bytes | None = None, env: dict[str, str] | None = None,
            timeout: float = TIMEOUT) -> tuple[int, bytes, bytes]:
    """Run `git args` in cwd and return (returncode, stdout, stderr); never raises for a git failure.

    The environment is inherited by default: inside a git hook GIT_INDEX_FILE names the index
    being committed (a temporary one for `git commit -a` or partial commits). A git that runs
    out of time or output is killed and reported as a failure (nonzero code, the reason on stderr).
    """
    try:
        res = proc.run(("git",) + args, cwd=cwd, input=input, env=env, timeout=timeout)
    except OSError as exc:
        return 127, b"", f"cannot run git: {exc}".encode()
    if res.timed_out or res.truncated:
        why = f"git {args[0] if args else ''} {'timed out' if res.timed_out else 'printed too much'}; killed"
        return res.returncode or -9, res.stdout, res.stderr + why.encode()
    return res.returncode, res.stdout, res.stderr



def start_git(*args: str, cwd: str, log_path: str) -> int:
    """Start `git args` in cwd detached (a new session, output appended to `log_path`), in the
    environment of `no_git_env`; returns its pid and never waits for it (`proc.spawn_detached`)."""
    return proc.spawn_detached(("git",) + args, log_path=log_path, env=no_git_env(), cwd=cwd)

INDEX_BUSY_WAIT = 10.0  # seconds a write waits for another git's index.lock (an editor's `git status`, say)


def index_busy(err: bytes) -> bool:
    """Whether git refused because another git holds the index lock (not a failure of our own)."""
    return b"index.lock" in err and b"File exists" in err


def run_git_writing(*args: str, cwd: str, input: bytes | None = None, env: dict[str, str] | None = None,
                    wait: float | None = None) -> tuple[int, bytes, bytes]:
    """`run_git` for a command that writes the index (add, rm --cached, commit): while another
    git holds `index.lock` — a person's `git status`, an editor polling the repository — git
    refuses at once, before anything is written or any hook runs; wait for it and try again, up
    to `wait` seconds (INDEX_BUSY_WAIT). A lock still there after that is reported as git reported it (a dead
    git's lock is `memrepo doctor`'s to clear)."""
    import time

    deadline = time.monotonic() + (INDEX_BUSY_WAIT if wait is None else wait)
    pause = 0.02
    while True:
        rc, out, err = run_git(*args, cwd=cwd, input=input, env=env)
        left = deadline - time.monotonic()
        if rc == 0 or not index_busy(err) or left <= 0:
            return rc, out, err
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.5)


def head(cwd: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT) -> str | None:
    """The commit HEAD names, or None in a repository without commits."""
    rc, out, _ = run_git("rev-parse", "--verify", "-q", "HEAD", cwd=cwd, env=env, timeout=timeout)
    return out.decode().strip() if rc == 0 else None


def common_dir(cwd: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT) -> str | None:
    """The directory every worktree of cwd's repository shares (the main checkout's `.git`), absolute.

    Where git keeps what is not per worktree: config, hooks, refs and memrepo's own records.
    """
    rc, out, _ = run_git("rev-parse", "--git-common-dir", cwd=cwd, env=env, timeout=timeout)
    path = out.decode("utf-8", "surrogateescape").strip() if rc == 0 else ""
    return os.path.normpath(os.path.join(cwd, path)) if path else None


# Where a repository keeps a file (`git rev-parse --git-path NAME`, the common directory) does not
# change while memrepo runs: each answer is asked once per process, and the names a writer needs
# are asked together, so a one-file `add` starts one git for them instead of eleven (issue 44).
# The key holds the GIT_* variables that move those places; "hooks" follows core.hooksPath, which
# a command may change, and is asked every time.
COMMON_DIR = "--git-common-dir"  # the common git directory, asked for like a name
_PLACE_ENV = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_WORK_TREE")
_places: dict[tuple[str, tuple[str | None, ...]], dict[str, str]] = {}
_together: list[str] = [COMMON_DIR]


def ask_together(*names: str) -> None:
    """Have `names` asked with the first `git_paths` question for a repository (a module's own files)."""
    _together.extend(n for n in names if n not in _together)


def git_paths(cwd: str, *names: str, env: dict[str, str] | None = None) -> list[str] | None:
    """Each name's place (`git rev-parse --git-path NAME`, or COMMON_DIR), absolute; None when
    cwd is in no repository (nothing is remembered then)."""
    where = os.environ if env is None else env
    key = (os.path.abspath(cwd), tuple(where.get(k) for k in _PLACE_ENV))
    known = _places.get(key, {})
    missing = [n for n in names if n not in known]
    if missing:
        asked = missing + [n for n in _together if n not in known and n not in missing]
        args = [a for n in asked for a in ((n,) if n == COMMON_DIR else ("--git-path", n))]
        rc, out, _ = run_git("rev-parse", *args, cwd=cwd, env=env)
        found = out.decode("utf-8", "surrogateescape").splitlines()
        if rc != 0 or len(found) != len(asked):
            return None
        answers = {n: os.path.join(cwd, p) for n, p in zip(asked, found)}
        hooks = answers.pop("hooks", None)
        known = _places.setdefault(key, {})
        known.update(answers)
        if hooks is not None:
            return [hooks if n == "hooks" else known[n] for n in names]
    return [known[n] for n in names]


def split_z(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
