"""Entry point kept for Claude Code settings written by memrepo 0.1 (`python -I -m memrepo.hookio EVENT`).

`memrepo install claude` now registers `memrepo.claude.entry` and replaces these entries.
"""

from memrepo.claude.handlers import main
from memrepo.claude.hookio import exit_now

if __name__ == "__main__":
    exit_now(main())
