"""The daily sweep (one run id, idempotent), `memrepo stats`, and the sweep SessionStart queues."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_memory
from memrepo.passes import model as model_runner
from memrepo.worker import jobs, sweep
from memrepo.vcs import runs
from memrepo.cli.main import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "capture")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, tmp_path: str) -> str:
    rules = json.load(open(os.path.join(DATA, "refute-rules.json")))
    rules[-1]["reply"]["memories"].append({"id": "deploy-checklist", "aliases": ["what to do before releasing"]})
    path = os.path.join(str(tmp_path), "rules.json")
    json.dump(rules, open(path, "w"))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", path)
    return path


def queued_capture(repo: str, tmp_path: str, session: str = "s-sweep") -> None:
    path = os.path.join(str(tmp_path), f"{session}.jsonl")
    shutil.copy(os.path.join(DATA, "refute-part1.jsonl"), path)
    jobs.enqueue(repo, {"kind": "capture", "session": session, "transcript": path, "cwd": ""})


def test_sweep_is_one_run_and_idempotent(repo: str, model: str, tmp_path: str) -> None:
    write_memory(repo, "deploy-checklist", title="Deploy checklist", class_="reference", topics=["deploy"],
                 description="Steps before every production deploy.")
    assert commit_all(repo, "m").returncode == 0
    queued_capture(repo, tmp_path)
    start = head(repo)
    report = sweep.run(repo)
    assert report["errors"] == [] and len(report["captures"]) == 1
    assert report["captures"][0]["added"] == ["staging-502s-come-nginx-proxy-timeout", "run-make-check-before-pushing-staging"]
    assert report["enrich"]["enriched"] == {"deploy-checklist": ["what to do before releasing"]}
    assert "curate" in report and "verify" in report
    made = git(repo, "rev-list", f"{start}..HEAD").stdout.split()
    assert len(made) >= 2
    assert {e["trailers"]["Run"] for e in runs.log(repo) if e["commit"] in made} == {report["run_id"]}
    assert report["run_id"].endswith("-sweep")
    assert jobs.counts(repo) == {"queued": 0, "running": 0, "failed": 0}
    assert jobs.last_sweep(repo)["run_id"] == report["run_id"]
    after = head(repo)
    again = sweep.run(repo)
    assert head(repo) == after and again["captures"] == [] and again["enrich"]["asked"] == []


def test_stats(repo: str, model: str, tmp_path: str) -> None:
    queued_capture(repo, tmp_path)
    sweep.run(repo)
    data = sweep.stats(repo)
    assert (data["memories"], data["by_class"], data["by_status"]) == (2, {"fact": 1, "rule": 1}, {"active": 2})
    assert data["captured_sessions"] == 1 and data["jobs"] == {"queued": 0, "running": 0, "failed": 0}
    assert data["model"]["capture"]["calls"] == 1 and data["model"]["enrich"]["calls"] == 1
    assert data["model"]["capture"]["input_tokens"] > 0
    out = CliRunner().invoke(cli, ["--repo", repo, "stats"], catch_exceptions=False).output.splitlines()
    assert out[0] == "memories: 2  active=2"
    assert out[1] == "by class: fact=1  rule=1"
    assert out[2].startswith("last sweep: ") and out[2].endswith(f"({data['last_sweep']['run_id']})")
    assert out[3] == "jobs: 0 queued, 0 running, 0 failed; sessions captured: 1"
    assert any(line.startswith("model capture: 1 calls (0 failed), ") for line in out)


def test_sweep_command_and_no_model(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", "false")
    queued_capture(repo, tmp_path)
    result = CliRunner().invoke(cli, ["--repo", repo, "sweep", "--no-model"], catch_exceptions=False)
    assert result.exit_code == 0 and ": 0 capture job(s), 0 memories enriched" in result.output
    assert jobs.counts(repo)["queued"] == 1  # left for a sweep that may use the model


def test_a_model_failure_leaves_the_capture_queued(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", "false")
    queued_capture(repo, tmp_path)
    report = sweep.run(repo)
    assert report["captures"] == [] and jobs.counts(repo)["queued"] == 1
    job = json.load(open(os.path.join(jobs.jobs_dir(repo), "capture-s-sweep.json")))
    assert job["attempts"] == 1 and job["last_error"].startswith("ModelError: the model command exited 1")


def test_sweep_due(repo: str) -> None:
    now = time.time()
    assert jobs.sweep_due(repo, now)  # never swept
    os.makedirs(jobs.jobs_dir(repo), exist_ok=True)
    with open(os.path.join(repo, "index", "sweep.json"), "w") as fh:
        json.dump({"run_id": "r", "finished": now - 3600}, fh)
    assert not jobs.sweep_due(repo, now)
    with open(os.path.join(repo, "index", "sweep.json"), "w") as fh:
        json.dump({"run_id": "r", "finished": now - 25 * 3600}, fh)
    assert jobs.sweep_due(repo, now)
    open(os.path.join(jobs.jobs_dir(repo), ".sweep-requested"), "w").close()  # requested a moment ago
    assert not jobs.sweep_due(repo, now)
    assert jobs.sweep_due(repo, now + jobs.SWEEP_REQUEST_COOLDOWN + 1)


def test_session_start_queues_a_detached_sweep_once_a_day(repo: str, model: str) -> None:
    env = dict(os.environ, MEMREPO_DIR=repo, MEMREPO_PYTHON=sys.executable)
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s"}).encode()
    assert jobs.sweep_due(repo)
    proc = subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "session_start"], input=payload, capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0 and proc.stderr == b""
    deadline = time.time() + 90
    while time.time() < deadline and not (jobs.last_sweep(repo) and jobs.counts(repo)["queued"] == 0):
        time.sleep(0.2)
    last = jobs.last_sweep(repo)
    assert last and last["run_id"].endswith("-sweep") and last["errors"] == []
    assert not jobs.sweep_due(repo)
    assert jobs.sweep_due(repo, now=last["finished"] + 24 * 3600 + 1)
    subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "session_start"], input=payload, capture_output=True, env=env, timeout=30)
    assert not os.path.exists(os.path.join(jobs.jobs_dir(repo), "sweep.json"))


def _cli(repo: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=300)


def test_a_sweep_whose_every_model_call_failed_exits_1_and_says_why(repo: str) -> None:
    """Issue 16: `MEMREPO_MODEL_CMD=/bin/false memrepo sweep` exited 0 with a normal summary."""
    write_memory(repo, "plain", title="Plain memory about widgets", topics=["widgets"])
    assert commit_all(repo, "m").returncode == 0
    swept = _cli(repo, "sweep", MEMREPO_MODEL_CMD="/bin/false")
    assert swept.returncode == 1
    assert "Error: every model call failed (2): the model command exited 1: nothing on stderr" in swept.stderr
    # one line per pass, so a person sees which pass never got an answer
    assert "  enrich: 1 model call, 1 failed (last: the model command exited 1: nothing on stderr)" in swept.stdout
    assert "  verify: 1 model call, 1 failed" in swept.stdout
    stats = _cli(repo, "stats")
    assert stats.returncode == 0 and "model enrich: 1 calls (1 failed)" in stats.stdout
    assert "failed model call: " in stats.stdout and " enrich: exit 1" in stats.stdout
    checked = _cli(repo, "doctor")
    assert "warn model calls: the last 2 model calls failed" in checked.stdout and checked.returncode == 0


def test_an_is_error_envelope_is_a_failed_call_in_the_ledger(repo: str) -> None:
    envelope = json.dumps({"type": "result", "subtype": "error", "is_error": True, "result": "API overloaded"})
    write_memory(repo, "plain", title="Plain memory about widgets", topics=["widgets"])
    assert commit_all(repo, "m").returncode == 0
    swept = _cli(repo, "sweep", MEMREPO_MODEL_CMD=f"echo {shlex.quote(envelope)}")
    assert swept.returncode == 1 and "the model command reported an error: API overloaded" in swept.stderr
    with open(os.path.join(repo, "index", model_runner.LEDGER), encoding="utf-8") as fh:
        entries = [json.loads(line) for line in fh]
    assert [(e["pass"], e["ok"], e["error"]) for e in entries] == [("enrich", False, "is_error"), ("verify", False, "is_error")]


def test_a_corrupt_ledger_line_costs_only_itself(repo: str) -> None:
    with open(os.path.join(repo, "index", model_runner.LEDGER), "w", encoding="utf-8") as fh:
        fh.write('{"pass": "capture", "ok": true, "ms": 5}\n{"pass": "cap\n[[[\n')
    stats = _cli(repo, "stats")
    assert stats.returncode == 0 and "model capture: 1 calls (0 failed)" in stats.stdout
