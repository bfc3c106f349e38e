"""`python -m memrepo.worker.sources_refresh REPO [CWD]`: bring each team's and the project's cache
up to date, detached from the SessionStart hook that starts it (issue 41): the prompt hook reads
those caches as they stand and never builds one.

The hook's interpreter may lack memrepo's dependencies (it runs with the standard library only):
the worker then runs itself again on one that has them (`bootstrap.find_python`).
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from memrepo.store import private

    private.restrict()
    repo = argv[0]
    cwd = argv[1] if len(argv) > 1 and argv[1] else None
    import importlib.util

    if importlib.util.find_spec("yaml") is None:  # the refresh parses memory files
        from memrepo import proc
        from memrepo.worker import bootstrap

        python = bootstrap.find_python(repo)
        if python is None or python == sys.executable:
            print("no interpreter with memrepo's dependencies; `memrepo sources --refresh` does the same", file=sys.stderr)
            return 1
        return proc.run(proc.python_main("memrepo.worker.sources_refresh", *argv, python=python), timeout=1800).returncode
    from memrepo.store import sources

    for src, report in sources.refresh_all(repo, cwd):
        print(f"{src.label}: {report.as_dict()}")
    sources.refresh_known(repo)  # the merged caches of other checkouts, left stale by a commit since
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
