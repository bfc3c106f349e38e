"""Claude Code SessionStart hook: returns at once; refreshes a missing or stale cache in the background.

Standard library only; finds the memrepo package in the plugin's tools/ directory.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

try:
    from memrepo.claude import hookio, session_start
except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
    sys.stderr.write(f"memrepo SessionStart: cannot load memrepo: {exc}\n")
    raise SystemExit(0)

raise SystemExit(hookio.run("SessionStart", session_start.on_session_start))
