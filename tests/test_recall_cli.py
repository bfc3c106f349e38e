"""`memrepo recall`, `recall-log`, `eval` and `demo`: the hook's path from the shell."""

from __future__ import annotations

import json
import os

from click.testing import CliRunner

from helpers import commit_all, write_memory
from memrepo.cli.main import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "recall")


def _store(repo: str) -> str:
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"])
    assert commit_all(repo).returncode == 0
    return repo


def test_recall_json_and_silence(repo: str) -> None:
    _store(repo)
    out = CliRunner().invoke(cli, ["--repo", repo, "recall", "can I deploy to production on friday?", "--json"], catch_exceptions=False)
    hits = json.loads(out.output)
    assert [h["id"] for h in hits] == ["friday-freeze"]
    assert set(hits[0]) == {"id", "score", "title", "class", "labels"}
    out = CliRunner().invoke(cli, ["--repo", repo, "recall", "ok, go ahead", "--json"], catch_exceptions=False)
    assert json.loads(out.output) == []


def test_recall_text_shows_exactly_the_injected_context(repo: str) -> None:
    _store(repo)
    out = CliRunner().invoke(cli, ["--repo", repo, "recall", "can I deploy to production on friday?"], catch_exceptions=False)
    assert out.stdout.startswith("memrepo recalled 1 note from the user's memory repository")
    assert "- (rule) No production deploys on Friday afternoon: After 16:00" in out.stdout


def test_recall_log_lists_hook_decisions(repo: str) -> None:
    from memrepo.recall import decide as recall, log

    _store(repo)
    for prompt in ("can I deploy to production on friday?", "thanks!", "what is the capital of France?"):
        log.log_decision(repo, prompt, recall.decide(repo, prompt))
    out = CliRunner().invoke(cli, ["--repo", repo, "recall-log", "--json"], catch_exceptions=False)
    entries = json.loads(out.output)
    assert [e["silent"] for e in entries] == ["no-match", "conversational", None]
    assert not any("general" in e for e in entries)
    text = CliRunner().invoke(cli, ["--repo", repo, "recall-log"], catch_exceptions=False).output
    assert "friday-freeze (" in text and "silent (conversational)" in text


def _hook(repo: str, prompt: str, session: str, cwd: str) -> None:
    import subprocess
    import sys

    stdin = json.dumps({"session_id": session, "transcript_path": "", "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                        "prompt": prompt})
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=repo)
    subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "user_prompt_submit"], input=stdin.encode(), env=env,
                   capture_output=True, timeout=30, check=True)


def test_recall_log_says_why_and_filters_by_session_project_and_outcome(repo: str, tmp_path: os.PathLike[str]) -> None:
    import subprocess

    _store(repo)
    web = os.path.join(str(tmp_path), "web")
    subprocess.run(["git", "init", "-q", web], check=True)
    _hook(repo, "can I deploy to production on friday?", "aaaa1111-s", web)
    _hook(repo, "is Kestrel on Nomad frozen on friday too?", "aaaa1111-s", web)
    _hook(repo, "what is the capital of France?", "bbbb2222-s", str(tmp_path))

    def run(*args: str) -> str:
        out = CliRunner().invoke(cli, ["--repo", repo, "recall-log", *args], catch_exceptions=False)
        assert out.exit_code == 0
        return out.output

    entries = json.loads(run("--json"))
    assert [(e["session"], e.get("project"), bool(e["injected"])) for e in entries] == [
        ("bbbb2222-s", None, False), ("aaaa1111-s", "web", False), ("aaaa1111-s", "web", True)]
    # Silence says why: the best candidate and what the decision read in it, or that nothing matched.
    assert entries[1]["best"]["id"] == "friday-freeze" and entries[1]["why"].startswith("the evidence says silence: p ")
    assert [c["id"] for c in entries[1]["candidates"]] == ["friday-freeze"] and entries[1]["candidates"][0]["cut"]
    assert entries[0]["why"].startswith("no memory holds any of the prompt's words") and "best" not in entries[0]
    text = run()
    assert "web  session aaaa1111" in text and "  terms: deploy production friday" in text
    assert "silent (no-match): the best candidate friday-freeze (" in text and "): the evidence says silence: p " in text
    explained = run("--explain", "-n", "1", "--session", "aaaa")
    assert "  1. friday-freeze  score " in explained and "— left out: the evidence says silence" in explained
    assert [e["session"] for e in json.loads(run("--session", "bbbb", "--json"))] == ["bbbb2222-s"]
    assert len(json.loads(run("--project", "web", "--json"))) == 2
    assert [bool(e["injected"]) for e in json.loads(run("--silent", "--json"))] == [False, False]
    assert [e["terms"] for e in json.loads(run("--injected", "--json"))] == [["deploy", "production", "friday"]]
    assert [e["session"] for e in json.loads(run("--silent", "-n", "1", "--json"))] == ["bbbb2222-s"]
    empty = CliRunner().invoke(cli, ["--repo", repo, "recall-log", "--session", "zzzz"], catch_exceptions=False)
    assert empty.exit_code == 0 and "no recall decisions match these filters" in empty.stderr


def test_eval_on_the_labeled_test_set() -> None:
    out = CliRunner().invoke(cli, ["eval", os.path.join(DATA, "prompts.jsonl"), "--memory", os.path.join(DATA, "memory"),
                                   "--today", "2026-11-30", "--json"], catch_exceptions=False)
    report = json.loads(out.output)
    s = report["summary"]
    assert s["prompts"] == len(report["results"]) > 60
    assert set(s["per_kind"]) == {"answerable", "context", "update", "conversational", "offtopic"}
    assert s["per_kind"]["conversational"]["silence"] == 1.0
    # A regression guard at the measured level (see docs/measurements.md, Recall quality), not a target.
    assert s["hit@2"] >= 0.78 and s["silence"] >= 0.8
    assert s["latency_ms"]["p50"] > 0


def test_demo_runs_on_the_bundled_examples() -> None:
    out = CliRunner().invoke(cli, ["demo"], catch_exceptions=False)  # the examples shipped in the package
    assert out.exit_code == 0
    assert "> how do I ship a new version of tallybird?" in out.output
    assert "recalls tallybird-deploy-kamal" in out.output
    assert "silent (conversational)" in out.output
    assert " ms" in out.output
    # A silence with a candidate says which one, and what the decision read in it.
    assert "silent (no-match): the best candidate " in out.output and ": the evidence says silence: p " in out.output


def test_recall_explain_says_what_cut_each_candidate(repo: str) -> None:
    _store(repo)
    write_memory(repo, "queue-redis", title="The shop worker queue is Redis", topics=["queue", "redis"],
                 description="Background jobs of the shop API run on a Redis queue.")
    assert commit_all(repo).returncode == 0
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    # Products the store has never heard of, named beside the one it knows: a question about something else.
    out = runner.invoke(cli, ["--repo", repo, "recall", "--explain", "does Valkey evict keys like Redis does, or like Dragonfly?"],
                        catch_exceptions=False)
    assert out.stdout.startswith("(silent: no-match; terms: valkey evict keys redis dragonfly")
    plain = runner.invoke(cli, ["--repo", repo, "recall", "does Valkey evict keys like Redis does, or like Dragonfly?"],
                          catch_exceptions=False)
    assert plain.stdout.splitlines()[1].startswith("(the best candidate queue-redis (") and "the evidence says silence" in plain.stdout
    assert "the best candidate" not in out.stdout  # with --explain the trace says it, candidate by candidate
    assert "1. queue-redis  score" in out.stderr and "holds redis (" in out.stderr
    assert "— left out: the evidence says silence: p " in out.stderr and "     evidence: names " in out.stderr
    out = runner.invoke(cli, ["--repo", repo, "recall", "--explain", "can I deploy to production on friday?"], catch_exceptions=False)
    assert "friday-freeze  score" in out.stderr and "— injected" in out.stderr
    data = json.loads(runner.invoke(cli, ["--repo", repo, "recall", "--explain", "--json", "ok, go ahead"]).stdout)
    assert (data["injected"], data["silent"], data["candidates"]) == ([], "conversational", [])
    data = json.loads(runner.invoke(cli, ["--repo", repo, "recall", "--explain", "--json",
                                          "can I deploy to production on friday?"]).stdout)
    [first] = [c for c in data["candidates"] if c["id"] == "friday-freeze"]
    assert first["cut"] is None and "friday" in first["matched"] and first["p"] >= 0.5 and "lnrel" in first["features"]
