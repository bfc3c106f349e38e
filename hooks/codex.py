"""Codex CLI hooks of the memrepo plugin (`.codex-plugin/plugin.json`): `hooks/run codex EVENT`.

Standard library only; finds the memrepo package in the plugin's tools/ directory, as the
Claude Code hooks beside it do. The event table is `memrepo.agents.codex.handlers`; a prompt takes
the prompt path from its bundle (`memrepo.base.bundle`) before anything loads, as
`user_prompt_submit.py` does.
"""
import gc
import sys

gc.disable()  # a hook process lives for one event

if sys.platform == "win32":  # pragma: no cover
    import os

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
else:
    sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/tools")

try:
    if sys.argv[1:2] == ["UserPromptSubmit"]:
        from memrepo.base import bundle

        bundle.use()
    from memrepo.agents.codex import handlers
    from memrepo.claude import hookio
except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
    sys.stderr.write(f"memrepo (codex): cannot load memrepo: {exc}\n")
    raise SystemExit(0)

hookio.exit_now(handlers.main(sys.argv[1:]))
