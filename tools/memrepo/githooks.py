"""Entry point kept for git hook shims written by memrepo 0.1 (`python -m memrepo.githooks HOOK`).

`memrepo init` now writes shims that run `memrepo.store.githooks`.
"""

from memrepo.store.githooks import main

if __name__ == "__main__":
    raise SystemExit(main())
