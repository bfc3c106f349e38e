"""Claude Code Stop hook: judge whether the turn used what recall injected (no model), queue a capture
of this session and start a detached worker; prints nothing.

Standard library only; finds the memrepo package in the plugin's tools/ directory. The model
runs later, in the worker, never on this path.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))

try:
    from memrepo.claude import hookio
    from memrepo.claude import stop_hook
except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
    sys.stderr.write(f"memrepo Stop: cannot load memrepo: {exc}\n")
    raise SystemExit(0)

raise SystemExit(hookio.run("Stop", stop_hook.on_stop))
