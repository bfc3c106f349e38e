"""`python -m memrepo.worker.merged_refresh REPO`: bring the merged caches of the personal
repository REPO up to date, detached from the commit that left them stale (issue 41, part 2).

A commit to the personal repository (`memrepo add`, a capture, a person's `git commit`) changes
its cache, and with it every merged cache this machine keeps (each holds the personal source): the
prompt hook would read the three caches until the next refresh. The post-commit hook starts this
worker (`store.githooks`) instead of refreshing in the commit: an incremental refresh copies only
the changed rows but still costs ~30 ms of CPU and a synced write at 10,000 memories a source,
which no add should wait for. A refresh that finds them current does nothing.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from memrepo.store import private

    private.restrict()
    from memrepo.store import sources

    sources.refresh_known(argv[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
