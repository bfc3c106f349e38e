"""Team and project memory through the real Claude Code CLI (issue 41), end to end: the memrepo
plugin loaded with --plugin-dir, a fake Messages API on 127.0.0.1 (tests/e2e/harness.py, as
tests/test_e2e_claude.py runs it), and the machine of tests/test_sources.py: a personal
repository with a rule, a team joined from a bare remote, a code repository with `.memrepo/`.
What the model's request holds is asserted: a team memory and a project memory for prompts that
need them, each with its source, and the personal rule above the team note it contradicts."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e.harness import claude_bin, context_text, fake_api, hook_context_text, result_json, run_claude  # noqa: E402,F401
from test_sources import GRAFANA, _dirs, _fill, alice_pushes, code, me, run, team  # noqa: E402,F401  (fixtures)

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parent.parent


def _ask(prompt: str, me: str, cwd: str, claude_bin: str, fake_api) -> str:  # noqa: F811
    env = {"MEMREPO_DIR": me, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "MEMREPO_PYTHON": sys.executable}
    proc, reqs = run_claude(prompt, plugin_dir=REPO_ROOT, cwd=Path(cwd), env_extra=env, fake_api=fake_api,
                            claude_bin=claude_bin)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    text = context_text(reqs)
    assert text and hook_context_text(reqs, "UserPromptSubmit") in text
    return hook_context_text(reqs, "UserPromptSubmit")


def test_team_and_project_memory_reach_the_model(me: str, code: str, claude_bin: str, fake_api) -> None:  # noqa: F811
    seen = _ask("how long do our kafka topics keep retention of events?", me, code, claude_bin, fake_api)
    assert "team-kafka-retention" in seen and "source: team acme" in seen
    seen = _ask("how do I see the redesigned checkout page, which feature flag?", me, code, claude_bin, fake_api)
    assert "shop-checkout-flag" in seen and "source: project shop" in seen


def test_a_personal_rule_reaches_the_model_above_a_team_note(me: str, code: str, claude_bin: str, fake_api) -> None:  # noqa: F811
    # Memories on other subjects, and the merged cache refreshed: recall over all sources is recall
    # over one store, where a word half of a tiny store holds weighs nothing (test_sources's
    # test_in_a_union_of_two_tiny_stores_a_word_both_hold_weighs_nothing)
    _fill(me)
    run("sources", "--cwd", code, "--refresh", repo=me)
    seen = _ask("should I indent python with tabs or spaces?", me, code, claude_bin, fake_api)
    assert "my-spaces" in seen and "team-tabs" in seen
    assert seen.index("my-spaces") < seen.index("team-tabs")


def test_a_teammates_push_reaches_the_model_after_sync(me: str, team: tuple[str, str], code: str, claude_bin: str,  # noqa: F811
                                                       fake_api) -> None:
    """Another team member pushes a memory; `memrepo sync` on this machine, and the next prompt's
    request holds it, with no other step (the merged cache brought up to date by the sync)."""
    assert "team-grafana" not in _ask(GRAFANA, me, code, claude_bin, fake_api)
    alice_pushes(team[1])
    run("sync", repo=me)
    seen = _ask(GRAFANA, me, code, claude_bin, fake_api)
    assert "team-grafana" in seen and "source: team acme" in seen
