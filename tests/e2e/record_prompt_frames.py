#!/usr/bin/env python3
"""Record what the pinned agent CLIs send through their prompt hooks when NO PERSON typed it.

    .venv/bin/python tests/e2e/record_prompt_frames.py --agent claude|codex|gemini --out DIR
        [--case SLUG ...] [--no-tui] [--keep]

For each case (slash commands, bash mode, local commands, compaction, interruptions, hook
feedback, background-task notifications, subagent hand-backs, scheduled wake-ups, ...) the real
pinned CLI (tests/e2e/install_cli.sh) runs in a throwaway home against a scripted fake model API
on 127.0.0.1, with a logging hook on every hook event. The script writes
DIR/<agent>-<version>.jsonl, one JSON object per prompt-hook call (or one with "event": null when
the case fired no prompt hook):

    {"agent", "version", "case", "how", "event", "stdin", "transcript_lines", "other_events"[, "other_transcripts"]}

`stdin` is the hook's stdin as received (parsed, key order kept); `transcript_lines` are the lines
the case's steps appended to that call's own transcript (lines holding the CLI's own system prompt
or built-in texts are dropped or shortened: tests/fixtures/prompt-frames/SOURCES.md);
`other_events` lists every hook event fired meanwhile; `other_transcripts` holds the new lines of
other transcript files (subagents, a new session after /clear). Home paths become /home/user.
With --case, only those cases are re-recorded and merged into an existing output file.

Interactive cases drive the real TUI in a private tmux server (send-keys / capture-pane).
Loopback only: the script re-executes itself under `unshare -n` (a network namespace holding
nothing but `lo`), so neither the CLIs nor anything they start can reach another address; it
refuses to run when that is not possible. Every process it starts is ended by its own id.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from e2e import agents, fake_gemini, fake_openai, fakeapi, fakeserver, harness  # noqa: E402

REDACTED_HOME = "/home/user"
TMUX_SOCKET_NAME = "tmux.sock"


# =============================================================================================
# Network isolation


def ensure_netns(argv: list[str]) -> None:
    """Re-exec under `unshare -n` with only loopback up, unless already done."""
    if os.environ.get("RECORD_FRAMES_NETNS") == "1":
        return
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if not unshare or not ip:
        sys.exit("record_prompt_frames: needs `unshare` and `ip` (util-linux, iproute2) to isolate the network")
    env = dict(os.environ, RECORD_FRAMES_NETNS="1")
    script = 'ip link set lo up && exec "$@"'
    cmd = [unshare, "-n", "sh", "-c", script, "sh", sys.executable, os.path.abspath(__file__), *argv]
    try:
        proc = subprocess.run(cmd, env=env)
    except OSError as e:
        sys.exit(f"record_prompt_frames: unshare failed: {e}")
    sys.exit(proc.returncode)


def assert_isolated() -> None:
    """Only `lo` may be up in this namespace."""
    out = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = [ln.split(":")[1].strip().split("@")[0] for ln in out.splitlines() if ln.strip()]
    if [n for n in names if n != "lo"]:
        sys.exit(f"record_prompt_frames: not isolated, interfaces {names}")


# =============================================================================================
# Small helpers


def wait_until(pred: Callable[[], Any], timeout: float, step: float = 0.25) -> Any:
    """Poll `pred` until it returns something truthy (returned) or `timeout` passes (None)."""
    end = time.time() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.time() > end:
            return None
        time.sleep(step)


def read_jsonl(path: Path) -> list[Any]:
    out: list[Any] = []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for ln in text.splitlines():
        if ln.strip():
            try:
                out.append(json.loads(ln))
            except ValueError:
                out.append({"unparsed": ln})
    return out


def kill_tree(pid: int) -> None:
    harness._kill_tree(pid)


# The logging hook: appends {"t", "event", "stdin"} to hooks.jsonl beside itself, then acts on
# control.json ({Event: {"if": substring of the stdin, "once": bool, "stdout": str|obj,
# "stderr": str, "exit": int}}).
RECORDER_HOOK = r'''#!/usr/bin/env python3
import json, os, sys, time
ev = sys.argv[1] if len(sys.argv) > 1 else "?"
raw = sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
try:
    data = json.loads(raw)
except ValueError:
    data = raw
with open(os.path.join(here, "hooks.jsonl"), "a") as f:
    f.write(json.dumps({"t": time.time(), "event": ev, "stdin": data}) + "\n")
try:
    with open(os.path.join(here, "control.json")) as f:
        control = json.load(f)
except (OSError, ValueError):
    control = {}
rule = control.get(ev)
if rule and rule.get("if", "") in raw:
    flag = os.path.join(here, "done-" + ev)
    if rule.get("once"):
        if os.path.exists(flag):
            sys.exit(0)
        open(flag, "w").close()
    out = rule.get("stdout")
    if out is not None:
        sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
    if rule.get("stderr"):
        sys.stderr.write(rule["stderr"])
    sys.exit(int(rule.get("exit", 0)))
'''


class Redactor:
    """Machine paths -> /home/user; the kernel release -> 6.x."""

    def __init__(self, home: Path) -> None:
        h = str(home)
        self.pairs = [(h, REDACTED_HOME), (h.replace("/", "-"), REDACTED_HOME.replace("/", "-"))]
        # Claude Code names the project folder by replacing every non-alphanumeric with "-".
        self.pairs.append((re.sub(r"[^A-Za-z0-9]", "-", h), REDACTED_HOME.replace("/", "-")))
        rel = platform.release()
        if rel:
            self.pairs.append((rel, "6.x"))

    def text(self, s: str) -> str:
        for a, b in self.pairs:
            s = s.replace(a, b)
        return s

    def obj(self, o: Any) -> Any:
        return json.loads(self.text(json.dumps(o)))


# =============================================================================================
# tmux


class Tmux:
    """A private tmux server (its own socket) for driving TUIs."""

    def __init__(self, root: Path) -> None:
        self.sock = str(root / TMUX_SOCKET_NAME)
        self.started = False

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True, check=check)

    def new(self, name: str, cwd: Path, script: Path, width: int = 200, height: int = 50) -> int:
        self.run("new-session", "-d", "-s", name, "-x", str(width), "-y", str(height), "-c", str(cwd),
                 f"sh {shlex.quote(str(script))}; sleep 3600")
        self.started = True
        self.run("set-option", "-t", name, "remain-on-exit", "on", check=False)
        return int(self.run("display", "-p", "-t", name, "#{pane_pid}").stdout.strip())

    def keys(self, name: str, *keys: str) -> None:
        self.run("send-keys", "-t", name, *keys)

    def literal(self, name: str, text: str) -> None:
        self.run("send-keys", "-t", name, "-l", text)

    def screen(self, name: str) -> str:
        return self.run("capture-pane", "-t", name, "-p", check=False).stdout

    def kill(self, name: str) -> None:
        self.run("kill-session", "-t", name, check=False)

    def close(self) -> None:
        if self.started:
            self.run("kill-server", check=False)


# =============================================================================================
# Recording


@dataclass
class Record:
    case: str
    how: str
    event: str | None
    stdin: Any
    transcript_lines: list[Any]
    other_events: list[str]
    extra: dict[str, Any] = field(default_factory=dict)


class Workspace:
    """One throwaway home: HOME=<root>/home, the project <root>/home/project, the logging hook in
    <root>/home/.hooks/. Tracks hook calls and transcript lines between marks."""

    def __init__(self, root: Path, transcript_globs: list[str]) -> None:
        self.root = root
        self.home = root / "home"
        self.project = self.home / "project"
        self.hooks_dir = self.home / ".hooks"
        self.hooks_dir.mkdir(parents=True, exist_ok=True)
        self.project.mkdir(parents=True, exist_ok=True)
        (self.hooks_dir / "rec.py").write_text(RECORDER_HOOK)
        self.hook_log = self.hooks_dir / "hooks.jsonl"
        self.hook_log.touch()
        self.transcript_globs = transcript_globs
        self.redact = Redactor(self.home)
        env = dict(os.environ, **harness.GIT_IDENTITY_ENV)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=self.project, check=True, env=env)
        (self.project / "README.md").write_text("# demo\n\nBuild with `make`; test with `make test`.\n")
        subprocess.run(["git", "add", "."], cwd=self.project, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=self.project, check=True, env=env)

    @property
    def hook_cmd(self) -> str:
        return f"python3 {self.hooks_dir / 'rec.py'}"

    def control(self, rules: dict[str, Any]) -> None:
        (self.hooks_dir / "control.json").write_text(json.dumps(rules))
        for f in self.hooks_dir.glob("done-*"):
            f.unlink()

    def hooks(self) -> list[dict[str, Any]]:
        return read_jsonl(self.hook_log)

    def transcripts(self) -> dict[Path, int]:
        out = {}
        for g in self.transcript_globs:
            for p in self.home.glob(g):
                if p.is_file():
                    out[p] = len(read_jsonl(p))
        return out

    def mark(self) -> tuple[int, dict[Path, int]]:
        return len(self.hooks()), self.transcripts()

    def since(self, mark: tuple[int, dict[Path, int]]) -> tuple[list[dict[str, Any]], dict[Path, list[Any]]]:
        n, counts = mark
        new_hooks = self.hooks()[n:]
        lines: dict[Path, list[Any]] = {}
        for p in self.transcripts():
            got = read_jsonl(p)[counts.get(p, 0):]
            if got:
                lines[p] = got
        return new_hooks, lines

    def count(self, event: str) -> int:
        return sum(1 for h in self.hooks() if h["event"] == event)

    def wait_event(self, event: str, before: int, timeout: float = 60, n: int = 1) -> bool:
        return bool(wait_until(lambda: self.count(event) >= before + n, timeout))


# =============================================================================================
# Claude Code


CLAUDE_EVENTS = [
    "SessionStart", "SessionEnd", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PostToolUse",
    "PostToolUseFailure", "PostToolBatch", "Notification", "Stop", "StopFailure", "SubagentStart",
    "SubagentStop", "PreCompact", "PostCompact", "PermissionRequest", "PermissionDenied", "TaskCreated",
    "TaskCompleted", "InstructionsLoaded", "CwdChanged", "PreSkillShellCommand",
]
CLAUDE_PROMPT_EVENTS = ("UserPromptSubmit", "UserPromptExpansion")
# Transcript lines holding Claude Code's own system prompt, tool and skill texts: not ours to
# redistribute, and nothing a prompt hook reads.
CLAUDE_DROP_TYPES = {"api-request-shape", "api-request-blob", "api-request"}
CLAUDE_DROP_ATTACHMENTS = {"prompt_snapshot", "skill_listing", "agent_listing_delta", "deferred_tools_delta", "auto_mode"}
COMPACTION_MARK = "Your task is to create a detailed summary of the conversation so far"
FAKE_SUMMARY = ("<analysis>fake analysis</analysis>\n<summary>1. Primary Request and Intent: the user asked "
                "how the project is built (make) and tested (make test).</summary>")


@dataclass
class Rule:
    """A scripted model answer, used once: for the first main request (one declaring tools) whose
    newest user text holds `trigger` and no tool result. kind: "tool" (name, input), "slow"
    (stream a few words, stall `seconds`, then finish), "stall" (answer nothing for `seconds`),
    "reply" (text)."""

    trigger: str
    kind: str
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    text: str = ""
    used: bool = False


class _ClaudeHandler(fakeapi._Handler):
    def _messages(self, rec: Any) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return super()._messages(rec)
        model = body.get("model") or "claude-fake"
        if COMPACTION_MARK in json.dumps(msgs[-1]):
            return self._text(rec, model, body, FAKE_SUMMARY)
        text, has_result = fakeapi._last_user_text(body)
        rule = None
        if body.get("tools") and not has_result:
            with self.server.lock:
                for r in self.server.rules:  # type: ignore[attr-defined]
                    if not r.used and r.trigger in text:
                        r.used = True
                        rule = r
                        break
        if rule is None:
            return self._text(rec, model, body, self.server.reply_text)
        if rule.kind == "tool":
            return self._send_tool_use(rec, model, body, fakeapi.ToolCall(rule.trigger, rule.name, rule.input))
        if rule.kind == "reply":
            return self._text(rec, model, body, rule.text)
        if rule.kind == "stall":
            time.sleep(rule.seconds)
            return self._text(rec, model, body, self.server.reply_text)
        return self._slow(rec, model, body, rule.seconds)

    def _events(self, model: str, body: Any, text: str) -> list[bytes]:
        msg_id = fakeserver.new_id("msg")
        sse = fakeserver.sse
        start = {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": fakeserver.estimate_tokens(body), "output_tokens": 1}}}
        return [
            sse("message_start", start),
            sse("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}}),
            sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": text}}),
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                  "usage": {"output_tokens": max(1, len(text) // 4)}}),
            sse("message_stop", {"type": "message_stop"}),
        ]

    def _text(self, rec: Any, model: str, body: Any, text: str) -> None:
        if not body.get("stream"):
            self._send_json(rec, 200, {
                "id": fakeserver.new_id("msg"), "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": fakeserver.estimate_tokens(body), "output_tokens": 5}})
            return
        self._send(rec, 200, b"".join(self._events(model, body, text)), "text/event-stream; charset=utf-8")

    def _slow(self, rec: Any, model: str, body: Any, seconds: float) -> None:
        """Stream the first words, stall, then the rest (no Content-Length; the connection closes)."""
        events = self._events(model, body, "Let me look at the build files first, ")
        rec.status = 200
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.send_header("request-id", fakeserver.new_id("req"))
            self.end_headers()
            self.wfile.write(b"".join(events[:3]))
            self.wfile.flush()
            time.sleep(seconds)
            self.wfile.write(b"".join(events[3:]))
            self.wfile.flush()
        except OSError:
            pass


class ScriptedClaudeAPI(fakeapi.FakeMessagesAPI):
    handler = _ClaudeHandler
    default_reply = "Fake reply: acknowledged."

    def __init__(self, rules: list[Rule] | None = None) -> None:
        super().__init__()
        self._rules = rules or []

    def start(self):  # type: ignore[no-untyped-def]
        super().start()
        self._started().rules = self._rules  # type: ignore[attr-defined]
        return self


def claude_filter_line(line: Any) -> bool:
    if not isinstance(line, dict):
        return True
    if line.get("type") in CLAUDE_DROP_TYPES:
        return False
    att = line.get("attachment")
    if line.get("type") == "attachment" and isinstance(att, dict) and att.get("type") in CLAUDE_DROP_ATTACHMENTS:
        return False
    return True


class TuiRig:
    """What the three rigs share: a workspace, a fake API, a TUI session in tmux."""

    ws: Workspace
    tmux: Tmux
    api: Any
    session_name: str
    pane_pid: int | None

    def screen(self) -> str:
        return self.tmux.screen(self.session_name)

    def type(self, text: str, enter: bool = True, settle: float = 0.6) -> None:
        self.tmux.literal(self.session_name, text)
        time.sleep(settle)
        if enter:
            self.tmux.keys(self.session_name, "Enter")

    def key(self, *keys: str) -> None:
        self.tmux.keys(self.session_name, *keys)

    def turn(self, text: str, timeout: float = 60, stops: int = 1) -> bool:
        before = self.ws.count("Stop")
        self.type(text)
        ok = self.ws.wait_event("Stop", before, timeout, stops)
        time.sleep(1.0)
        return ok

    def wait_transcript(self, needle: str, timeout: float = 30) -> bool:
        def found() -> bool:
            for p in self.ws.transcripts():
                if needle in p.read_text(errors="replace"):
                    return True
            return False
        return bool(wait_until(found, timeout))

    def tui_stop(self) -> None:
        if self.pane_pid is not None:
            self.tmux.kill(self.session_name)
            kill_tree(self.pane_pid)
            self.pane_pid = None

    def close(self) -> None:
        self.tui_stop()
        self.api.stop()



class ClaudeRig(TuiRig):
    """One Claude Code home + fake API; runs `claude -p` or the TUI in tmux."""

    agent = "claude"

    def __init__(self, root: Path, binary: str, tmux: Tmux, rules: list[Rule] | None = None) -> None:
        # transcript globs are relative to the home
        self.ws = Workspace(root, [".claude/projects/*/*.jsonl", ".claude/projects/*/*/subagents/*.jsonl"])
        self.binary = binary
        self.tmux = tmux
        self.api = ScriptedClaudeAPI(rules).start()
        self.config = self.ws.home / ".claude"
        self.config.mkdir(parents=True, exist_ok=True)
        hooks = {e: [{"hooks": [{"type": "command", "command": f"{self.ws.hook_cmd} {e}"}]}] for e in CLAUDE_EVENTS}
        settings = {"hooks": hooks, "permissions": {"allow": [
            "Bash", "Read", "Write", "Edit", "Agent", "ScheduleWakeup", "CronCreate", "Skill"]}}
        (self.config / "settings.json").write_text(json.dumps(settings, indent=1))
        # Skip the first-run screens of the TUI (theme, API-key approval, folder trust).
        key = harness.DUMMY_API_KEY
        (self.config / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "lastOnboardingVersion": harness.CLAUDE_VERSION, "theme": "dark",
            "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
            "officialMarketplaceAutoInstallAttempted": True,
            "projects": {str(self.ws.project): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
                                               "allowedTools": []}}}, indent=1))
        self.session_name = f"cc{id(self) % 100000}"
        self.pane_pid: int | None = None
        self.session_id: str | None = None

    def env(self) -> dict[str, str]:
        env = harness.claude_env(self.api, self.ws.home, self.config, None)
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", os.defpath)])
        return env

    # -- non-interactive
    def p(self, prompt: str, *args: str, resume: bool = True, timeout: float = 90) -> subprocess.CompletedProcess[str]:
        cmd = [self.binary, "-p", prompt, "--output-format", "json", *args]
        if resume and self.session_id:
            cmd += ["--resume", self.session_id]
        proc = harness._run_tree(cmd, self.ws.project, self.env(), timeout)
        try:
            self.session_id = json.loads(proc.stdout.strip().splitlines()[-1]).get("session_id") or self.session_id
        except (ValueError, IndexError):
            pass
        return proc

    # -- interactive
    def tui_start(self, *args: str) -> None:
        env = self.env()
        env["TERM"] = "xterm-256color"
        script = self.ws.root / "run-claude.sh"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        script.write_text(f"cd {shlex.quote(str(self.ws.project))} && exec env -i {exports} "
                          f"{shlex.quote(self.binary)} --permission-mode default {' '.join(map(shlex.quote, args))}\n")
        before = self.ws.count("SessionStart")
        self.pane_pid = self.tmux.new(self.session_name, self.ws.project, script)
        self.ws.wait_event("SessionStart", before, 60)
        wait_until(lambda: "for shortcuts" in self.screen() or "manual mode" in self.screen(), 30)
        time.sleep(1.0)



def claude_records(rig: ClaudeRig, case: str, how: str, mark: Any) -> list[Record]:
    hooks, lines = rig.ws.since(mark)
    filtered = {p: [x for x in ls if claude_filter_line(x)] for p, ls in lines.items()}
    builtin = any(h["event"] == "UserPromptExpansion" and isinstance(h["stdin"], dict)
                  and h["stdin"].get("command_source") in ("builtin", "bundled") for h in hooks)
    if builtin:
        filtered = {p: [elide_builtin_text(x) for x in ls] for p, ls in filtered.items()}
    return split_records(rig.ws, case, how, hooks, filtered, CLAUDE_PROMPT_EVENTS)


BUILTIN_KEEP = 160


def elide_builtin_text(line: Any) -> Any:
    """A user line carrying the long text of a built-in/bundled command (the expanded /init or
    /review template, a bundled skill's prompt to its subagent): that text is Claude Code's own,
    so only its first characters are kept."""
    if not isinstance(line, dict) or line.get("type") != "user":
        return line
    msg = line.get("message") or {}
    content = msg.get("content")

    def cut(t: str) -> str:
        if len(t) <= 600 or t.lstrip().startswith("<"):
            return t
        return t[:BUILTIN_KEEP] + f"\u2026 [{len(t) - BUILTIN_KEEP} more characters of Claude Code's built-in command text elided by record_prompt_frames.py]"

    if isinstance(content, str):
        content = cut(content)
    elif isinstance(content, list):
        content = [dict(b, text=cut(b["text"])) if isinstance(b, dict) and isinstance(b.get("text"), str) else b for b in content]
    return dict(line, message=dict(msg, content=content))


def split_records(ws: Workspace, case: str, how: str, hooks: list[dict[str, Any]], lines: dict[Path, list[Any]],
                  prompt_events: tuple[str, ...]) -> list[Record]:
    """One Record per prompt-hook call (or one with event None): `transcript_lines` are the new lines
    of that call's own transcript_path (of the case's first session when no prompt hook fired),
    every other transcript file's new lines go to `other_transcripts` {redacted path: lines}."""
    red = ws.redact
    other_events = [h["event"] for h in hooks]
    paths = [h["stdin"].get("transcript_path") for h in hooks if isinstance(h["stdin"], dict) and h["stdin"].get("transcript_path")]

    def build(event: str | None, stdin: Any, own: str | None) -> Record:
        if own is None:
            own = paths[0] if paths else (str(next(iter(lines))) if lines else None)
        mine = [red.obj(x) for p, ls in lines.items() if str(p) == own for x in ls]
        others = {red.text(str(p)): [red.obj(x) for x in ls] for p, ls in lines.items() if str(p) != own}
        extra = {"other_transcripts": others} if others else {}
        return Record(case, how, event, red.obj(stdin) if stdin is not None else None, mine, other_events, extra)

    recs = [build(h["event"], h["stdin"], h["stdin"].get("transcript_path") if isinstance(h["stdin"], dict) else None)
            for h in hooks if h["event"] in prompt_events]
    return recs or [build(None, None, None)]


# ---- Claude cases -----------------------------------------------------------------------------

CC_NOTES_CMD = "---\ndescription: Summarise the notes\nargument-hint: [topic]\n---\nSummarise the notes about $ARGUMENTS in three bullet points.\n"
CC_USER_CMD = "---\ndescription: A user-level command\n---\nCheck the user-level checklist for: $ARGUMENTS\n"
CC_SKILL = "---\nname: deploy-check\ndescription: Check that a deploy is ready\n---\nCheck that the deploy to $ARGUMENTS is ready: run the tests, then report.\n"
CC_PLUGIN_CMD = "---\ndescription: Greet from the plugin\n---\nSay hello from the demo plugin about $ARGUMENTS.\n"


def cc_setup_commands(rig: ClaudeRig) -> Path:
    proj = rig.ws.project
    (proj / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
    (proj / ".claude" / "commands" / "notes.md").write_text(CC_NOTES_CMD)
    (rig.config / "commands").mkdir(parents=True, exist_ok=True)
    (rig.config / "commands" / "usercheck.md").write_text(CC_USER_CMD)
    skill = proj / ".claude" / "skills" / "deploy-check"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text(CC_SKILL)
    plugin = rig.ws.home / "plugins" / "demo-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "demo-plugin", "version": "0.0.1",
                                                                      "description": "demo"}))
    (plugin / "commands").mkdir(exist_ok=True)
    (plugin / "commands" / "hello.md").write_text(CC_PLUGIN_CMD)
    return plugin


@dataclass
class Case:
    slug: str
    how: str
    run: Callable[..., list[Record]]
    tui: bool = False



def tui_cases(cases: list[Any], setup: Callable[[Any], Any], records: Callable[..., list[Any]]) -> Callable[..., Any]:
    """A decorator for the TUI cases of one agent: start the rig's TUI after `setup`, run the
    case's body, keep `records` of it, close the rig whatever happens."""
    def tui(slug: str, how: str, rules: list[Any] | None = None, args: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], None]:
        def deco(body: Callable[[Any], Any]) -> None:
            def run(factory: Callable[..., Any]) -> list[Any]:
                rig = factory(rules)
                try:
                    setup(rig)
                    rig.tui_start(*args)
                    return records(rig, slug, how, body(rig))
                finally:
                    rig.close()
            cases.append(Case(slug, how, run, tui=True))
        return deco
    return tui

def claude_cases() -> list[Case]:
    cases: list[Case] = []

    def add(slug: str, how: str, tui: bool = False) -> Callable[[Callable[..., list[Record]]], Callable[..., list[Record]]]:
        def deco(fn: Callable[..., list[Record]]) -> Callable[..., list[Record]]:
            cases.append(Case(slug, how, fn, tui))
            return fn
        return deco

    # -- claude -p ------------------------------------------------------------------------------
    def p_case(slug: str, prompt: str, *args: str, warmup: bool = False, control: dict[str, Any] | None = None,
               rules: list[Rule] | None = None, plugin: bool = False, note: str = "") -> None:
        how = f"claude -p {shlex.quote(prompt)} --output-format json" + (" --plugin-dir <home>/plugins/demo-plugin" if plugin else "")
        if args:
            how += " " + " ".join(map(shlex.quote, args))
        if warmup:
            how = "claude -p 'how do I build this project?'; then (same session, --resume) " + how
        if note:
            how += f" ({note})"

        def run(rig_factory: Callable[..., ClaudeRig]) -> list[Record]:
            rig = rig_factory(rules)
            try:
                plug = cc_setup_commands(rig)
                extra = list(args) + (["--plugin-dir", str(plug)] if plugin else [])
                if warmup:
                    rig.p("how do I build this project?")
                if control:
                    rig.ws.control(control)
                m = rig.ws.mark()
                rig.p(prompt, *extra)
                time.sleep(0.5)
                return claude_records(rig, slug, how, m)
            finally:
                rig.close()
        cases.append(Case(slug, how, run))

    p_case("p-custom-command-args", "/notes the build system")
    p_case("p-custom-command-noargs", "/notes")
    p_case("p-user-command", "/usercheck release 1.2")
    p_case("p-plugin-command", "/demo-plugin:hello the team", plugin=True)
    p_case("p-skill", "/deploy-check staging")
    p_case("p-builtin-compact", "/compact keep the build notes", warmup=True)
    p_case("p-builtin-init", "/init")
    p_case("p-builtin-review", "/review 42")
    p_case("p-builtin-cost", "/cost", warmup=True)
    p_case("p-builtin-context", "/context", warmup=True)
    p_case("p-bang-ls", "!ls", note="bash mode does not exist in -p: the text is a prompt")
    p_case("p-bg-bash", "BG_BASH_P run the slow build in the background", rules=[Rule(
        "BG_BASH_P", "tool", "Bash", {"command": "sleep 2; echo build-finished", "description": "Run the slow build",
                                      "run_in_background": True})], note="fake model answers with Bash run_in_background")
    p_case("p-subagent-fg", "SUBAGENT_FG explore the repo", rules=[Rule(
        "SUBAGENT_FG", "tool", "Agent", {"description": "Explore the repo", "prompt": "List the files in the repository and report.",
                                         "subagent_type": "general-purpose", "run_in_background": False})],
           note="fake model answers with Agent run_in_background:false")
    p_case("p-subagent-bg", "SUBAGENT_BG explore the repo", rules=[Rule(
        "SUBAGENT_BG", "tool", "Agent", {"description": "Explore the repo", "prompt": "List the files in the repository and report.",
                                         "subagent_type": "general-purpose", "run_in_background": True})],
           note="fake model answers with Agent run_in_background:true")
    p_case("p-stop-hook-block", "what is the test command?", control={"Stop": {"once": True, "stdout": {
        "decision": "block", "reason": "Run the tests before you stop."}}}, note="Stop hook blocks once with a reason")
    p_case("p-ups-hook-block", "BLOCK_ME please", control={"UserPromptSubmit": {"if": "BLOCK_ME", "stdout": {
        "decision": "block", "reason": "Prompts with BLOCK_ME are not allowed."}}}, note="UserPromptSubmit hook blocks")
    p_case("p-ups-hook-context", "what is the test command?", control={"UserPromptSubmit": {"stdout": {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "memrepo recall: tests run with make test"}}}},
           note="UserPromptSubmit hook returns additionalContext")
    p_case("p-pretooluse-deny", "DENY_TOOL run rm", rules=[Rule("DENY_TOOL", "tool", "Bash", {
        "command": "rm -rf build", "description": "Remove the build dir"})], control={"PreToolUse": {"stdout": {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": "Deleting build/ is not allowed here."}}}},
           note="PreToolUse hook denies with a reason")
    p_case("p-sessionstart-context", "what is the test command?", control={"SessionStart": {"stdout": {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memrepo: 2 notes for this project"}}}},
           note="SessionStart hook returns additionalContext")

    # -- TUI ------------------------------------------------------------------------------------
    tui = tui_cases(cases, cc_setup_commands, claude_records)

    def warm(rig: ClaudeRig) -> None:
        rig.turn("how do I build this project?")

    def slash(rig: ClaudeRig, text: str, needle: str, timeout: float = 40, after: float = 2.0) -> None:
        rig.type(text, settle=1.0)
        rig.wait_transcript(needle, timeout)
        time.sleep(after)

    @tui("tui-custom-command-args", "TUI: type `/notes the build system`, Enter")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/notes the build system")
        return m

    @tui("tui-custom-command-noargs", "TUI: type `/notes`, Enter")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/notes")
        return m

    @tui("tui-user-command", "TUI: type `/usercheck release 1.2` (~/.claude/commands/usercheck.md), Enter")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/usercheck release 1.2")
        return m

    @tui("tui-skill", "TUI: type `/deploy-check staging` (.claude/skills/deploy-check/SKILL.md), Enter")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/deploy-check staging")
        return m

    @tui("tui-builtin-compact", "TUI: one prompt, then `/compact`, Enter; then the next typed prompt")
    def _(rig: ClaudeRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        slash(rig, "/compact", "compact_boundary")
        rig.wait_transcript("<local-command-stdout>", 20)
        time.sleep(1)
        rig.turn("and how do I run the tests?")
        return m

    @tui("tui-builtin-compact-args", "TUI: one prompt, then `/compact keep the build notes`, Enter")
    def _(rig: ClaudeRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        slash(rig, "/compact keep the build notes", "compact_boundary")
        rig.wait_transcript("<local-command-stdout>", 20)
        time.sleep(1)
        return m

    @tui("tui-builtin-cost", "TUI: one prompt, then `/cost`, Enter")
    def _(rig: ClaudeRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        slash(rig, "/cost", "<command-name>/", timeout=8)
        rig.key("Escape")
        time.sleep(1)
        return m

    @tui("tui-builtin-context", "TUI: one prompt, then `/context`, Enter")
    def _(rig: ClaudeRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        slash(rig, "/context", "<command-name>/", timeout=8)
        rig.key("Escape")
        time.sleep(1)
        return m

    @tui("tui-builtin-help", "TUI: `/help`, Enter, then Escape to close the dialog")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.type("/help", settle=1.0)
        time.sleep(3)
        rig.key("Escape")
        time.sleep(2)
        return m

    @tui("tui-builtin-clear", "TUI: one prompt, then `/clear`, Enter; then the next typed prompt")
    def _(rig: ClaudeRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        before = rig.ws.count("SessionStart")
        rig.type("/clear", settle=1.0)
        rig.ws.wait_event("SessionStart", before, 20)
        time.sleep(2)
        rig.turn("and how do I run the tests?")
        return m

    @tui("tui-builtin-init", "TUI: `/init`, Enter (a built-in prompt command)")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/init")
        return m

    @tui("tui-builtin-review", "TUI: `/review 42`, Enter (a built-in prompt command)")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/review 42")
        return m

    @tui("tui-bash-mode", "TUI: type `!` (bash mode), then `ls -a`, Enter; then the next typed prompt")
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.type("!", enter=False, settle=0.5)
        before = rig.ws.count("Stop")
        rig.type("ls -a")
        rig.wait_transcript("<bash-stdout>", 20)
        rig.ws.wait_event("Stop", before, 20)
        time.sleep(1.5)
        return m

    @tui("tui-interrupt-streaming", "TUI: a prompt the fake answers slowly (first words, then a 30 s stall); Escape after 4 s; then the next typed prompt",
         rules=[Rule("SLOW_STREAM", "slow", seconds=30)])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.type("SLOW_STREAM explain the build")
        time.sleep(4)
        rig.key("Escape")
        time.sleep(3)
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-interrupt-before-reply", "TUI: a prompt the fake does not answer for 30 s; Escape after 4 s; then the next typed prompt",
         rules=[Rule("STALL_REPLY", "stall", seconds=30)])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.type("STALL_REPLY explain the build")
        time.sleep(4)
        rig.key("Escape")
        time.sleep(2)
        rig.key("C-u")  # the TUI puts the interrupted prompt back into the input box
        time.sleep(0.5)
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-interrupt-tool", "TUI: the fake answers with a Bash call that runs 40 s; Escape after 5 s; then the next typed prompt",
         rules=[Rule("SLOW_TOOL", "tool", "Bash", {"command": "python3 -c 'import time; time.sleep(40)'",
                                                     "description": "Run the long build"})])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.type("SLOW_TOOL run the long build")
        time.sleep(5)
        rig.key("Escape")
        time.sleep(3)
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-bg-bash-notification", "TUI: the fake answers with Bash run_in_background (sleep 3); the CLI later delivers the task notification",
         rules=[Rule("BG_BASH", "tool", "Bash", {"command": "sleep 3; echo build-finished", "description": "Run the slow build",
                                                  "run_in_background": True})])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("BG_BASH run the slow build in the background")
        rig.ws.wait_event("Stop", before, 60, 2)
        time.sleep(1.5)
        return m

    @tui("tui-subagent-bg", "TUI: the fake answers with Agent (run_in_background:true); the subagent's result comes back as a notification",
         rules=[Rule("SUBAGENT_BG", "tool", "Agent", {"description": "Explore the repo", "prompt": "List the files in the repository and report.",
                                                       "subagent_type": "general-purpose", "run_in_background": True})])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("SUBAGENT_BG explore the repo")
        rig.ws.wait_event("Stop", before, 60, 2)
        time.sleep(2)
        return m

    @tui("tui-subagent-fg", "TUI: the fake answers with Agent (run_in_background:false); the subagent's result is a tool_result",
         rules=[Rule("SUBAGENT_FG", "tool", "Agent", {"description": "Explore the repo", "prompt": "List the files in the repository and report.",
                                                       "subagent_type": "general-purpose", "run_in_background": False})])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        rig.turn("SUBAGENT_FG explore the repo")
        time.sleep(2)
        return m

    @tui("tui-stop-hook-block", "TUI: a prompt; the Stop hook blocks once with a reason (decision:block)")
    def _(rig: ClaudeRig) -> Any:
        rig.ws.control({"Stop": {"once": True, "stdout": {"decision": "block", "reason": "Run the tests before you stop."}}})
        m = rig.ws.mark()
        rig.turn("what is the test command?", stops=2)
        return m

    @tui("tui-ups-hook-block", "TUI: a prompt the UserPromptSubmit hook blocks (decision:block); then the next typed prompt")
    def _(rig: ClaudeRig) -> Any:
        rig.ws.control({"UserPromptSubmit": {"if": "BLOCK_ME", "stdout": {"decision": "block",
                                                                         "reason": "Prompts with BLOCK_ME are not allowed."}}})
        m = rig.ws.mark()
        rig.type("BLOCK_ME please")
        time.sleep(3)
        rig.key("C-u")
        rig.turn("what is the test command?")
        return m

    @tui("tui-queued-prompt", "TUI: a prompt the fake answers slowly; a second prompt typed while it runs (queued); both run",
         rules=[Rule("SLOW_QUEUE", "slow", seconds=6)])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("SLOW_QUEUE explain the build")
        time.sleep(2)
        rig.type("also, what is the test command?")
        rig.ws.wait_event("Stop", before, 60, 2)
        time.sleep(1.5)
        return m

    @tui("tui-loop-wakeup", "TUI: `/loop check the build status`; the fake answers with ScheduleWakeup (delaySeconds 60, prompt `/loop check the build status`); the wake-up fires ~60 s later",
         rules=[Rule("check the build status", "tool", "ScheduleWakeup", {
             "delaySeconds": 60, "reason": "Check the build again in a minute", "prompt": "/loop check the build status",
             "noop": False})])
    def _(rig: ClaudeRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("/loop check the build status", settle=1.0)
        rig.ws.wait_event("Stop", before, 30)
        rig.ws.wait_event("Stop", before, 120, 2)
        time.sleep(2)
        return m

    return cases


def record_claude(out: Path, only: list[str] | None, tui: bool, keep: bool) -> list[dict[str, Any]]:
    binary, reason = harness.install("claude")
    if binary is None:
        sys.exit(f"claude unavailable: {reason}")
    version = harness.CLAUDE_VERSION
    root = Path(tempfile.mkdtemp(prefix="frames-claude-"))
    tmux = Tmux(root)
    records: list[dict[str, Any]] = []
    try:
        for n, case in enumerate(claude_cases()):
            if only and case.slug not in only:
                continue
            if case.tui and not tui:
                continue
            case_root = root / f"{n:02d}-{case.slug}"

            def factory(rules: list[Rule] | None, case_root: Path = case_root) -> ClaudeRig:
                return ClaudeRig(case_root, binary, tmux, rules)

            t0 = time.time()
            try:
                recs = case.run(factory)
            except Exception as e:  # keep going; the case is reported as failed
                print(f"[claude] {case.slug}: FAILED {e!r}", file=sys.stderr)
                continue
            for r in recs:
                records.append(to_json("claude", version, r))
            print(f"[claude] {case.slug}: {len(recs)} record(s), events={recs[0].other_events} ({time.time() - t0:.0f}s)",
                  file=sys.stderr)
    finally:
        tmux.close()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}", file=sys.stderr)
    return records


def to_json(agent: str, version: str, r: Record) -> dict[str, Any]:
    d = {"agent": agent, "version": version, "case": r.case, "how": r.how, "event": r.event, "stdin": r.stdin,
         "transcript_lines": r.transcript_lines, "other_events": r.other_events}
    d.update(r.extra)
    return d


# =============================================================================================
# Codex CLI


CODEX_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact",
                "PostCompact", "Stop", "SessionEnd", "SubagentStart", "SubagentStop", "Interrupt"]
_CODEX_MATCHERLESS = frozenset({"UserPromptSubmit", "Stop", "Interrupt"})
_CODEX_SHORT = frozenset({"SessionEnd", "Interrupt"})


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def codex_trusted_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """Codex 0.171.0's hook trust hash (tests/e2e/CODEX-NOTES.md section 3)."""
    import hashlib
    timeout = handler.get("timeout")
    if timeout is None:
        timeout = 1 if event in _CODEX_SHORT else 600
    timeout = max(1, int(timeout))
    if event in _CODEX_SHORT:
        timeout = min(timeout, 3)
    h = {"type": "command", "command": handler["command"], "timeout": timeout, "async": bool(handler.get("async", False))}
    for key in ("statusMessage", "additionalContextLimit"):
        if handler.get(key) is not None:
            h[key] = handler[key]
    identity: dict[str, Any] = {"event_name": _snake(event), "hooks": [h]}
    if matcher is not None and event not in _CODEX_MATCHERLESS:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class _CodexHandler(fake_openai._Handler):
    def _responses(self, rec: Any) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        if "input" not in body:
            return super()._responses(rec)
        text, has_output = fake_openai._newest_user_input(body)
        rule = None
        if body.get("tools") and not has_output:
            with self.server.lock:
                for r in self.server.rules:  # type: ignore[attr-defined]
                    if not r.used and r.trigger in text:
                        r.used = True
                        rule = r
                        break
        if rule is None:
            return super()._responses(rec)
        if rule.kind == "stall":
            time.sleep(rule.seconds)
            return super()._responses(rec)
        if rule.kind == "reply":
            item: dict[str, Any] = {"type": "message", "id": fakeserver.new_id("msg"), "role": "assistant", "status": "completed",
                                    "content": [{"type": "output_text", "text": rule.text, "annotations": []}]}
        elif rule.kind == "tool":
            item = {"type": "function_call", "id": fakeserver.new_id("fc"), "call_id": fakeserver.new_id("call"),
                    "name": rule.name, "arguments": json.dumps(rule.input), "status": "completed"}
            if "." in rule.name:  # a namespaced tool: multi_agent_v1.spawn_agent
                ns, _, name = rule.name.rpartition(".")
                item["namespace"], item["name"] = ns, name
        else:  # slow
            return self._slow(rec, body, rule.seconds)
        response = {"id": fakeserver.new_id("resp"), "object": "response", "created_at": int(time.time()),
                    "model": body.get("model") or fake_openai.DEFAULT_MODEL, "status": "completed", "output": [item],
                    "usage": fake_openai._usage(body, 20)}
        pending = dict(response, status="in_progress", output=[], usage=None)
        events: list[dict[str, Any]] = [{"type": "response.created", "response": pending},
                  {"type": "response.in_progress", "response": pending},
                  {"type": "response.output_item.added", "output_index": 0, "item": item},
                  {"type": "response.output_item.done", "output_index": 0, "item": item},
                  {"type": "response.completed", "response": response}]
        payload = b"".join(fake_openai._sse(dict(e, sequence_number=n)) for n, e in enumerate(events))
        self._send(rec, 200, payload, "text/event-stream; charset=utf-8")

    def _slow(self, rec: Any, body: Any, seconds: float) -> None:
        text = "Let me look at the build files first, "
        item = {"type": "message", "id": fakeserver.new_id("msg"), "role": "assistant", "status": "in_progress",
                "content": [{"type": "output_text", "text": "", "annotations": []}]}
        pending = {"id": fakeserver.new_id("resp"), "object": "response", "created_at": int(time.time()),
                   "model": body.get("model") or fake_openai.DEFAULT_MODEL, "status": "in_progress", "output": []}
        first: list[dict[str, Any]] = [{"type": "response.created", "response": pending}, {"type": "response.in_progress", "response": pending},
                 {"type": "response.output_item.added", "output_index": 0, "item": item},
                 {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
                  "delta": text}]
        done_item = dict(item, status="completed", content=[{"type": "output_text", "text": text + "done.", "annotations": []}])
        rest: list[dict[str, Any]] = [{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": "done."},
                {"type": "response.output_item.done", "output_index": 0, "item": done_item},
                {"type": "response.completed", "response": dict(pending, status="completed", output=[done_item],
                                                                usage=fake_openai._usage(body, 10))}]
        rec.status = 200
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"".join(fake_openai._sse(dict(e, sequence_number=n)) for n, e in enumerate(first)))
            self.wfile.flush()
            time.sleep(seconds)
            self.wfile.write(b"".join(fake_openai._sse(dict(e, sequence_number=n + 4)) for n, e in enumerate(rest)))
            self.wfile.flush()
        except OSError:
            pass


class ScriptedOpenAIAPI(fake_openai.FakeOpenAIAPI):
    handler = _CodexHandler

    def __init__(self, rules: list[Rule] | None = None) -> None:
        super().__init__()
        self._rules = rules or []

    def start(self):  # type: ignore[no-untyped-def]
        super().start()
        self._started().rules = self._rules  # type: ignore[attr-defined]
        return self


# Rollout lines holding Codex's own base instructions / permission and skill texts.
def codex_filter_line(line: Any) -> Any:
    """The line to keep (Codex's own instruction texts elided), or None to drop it."""
    if not isinstance(line, dict):
        return line
    payload = line.get("payload")
    if line.get("type") == "session_meta" and isinstance(payload, dict) and "base_instructions" in payload:
        payload = dict(payload, base_instructions={"text": "[Codex base instructions elided]"})
        return dict(line, payload=payload)
    if line.get("type") == "response_item" and isinstance(payload, dict) and payload.get("role") == "developer":
        kinds = (payload.get("internal_chat_message_metadata_passthrough") or {}).get("content_item_kinds") or []
        if "hooks.additional_context" not in kinds:
            content = [dict(c, text=f"[{len(c.get('text', ''))} characters of Codex's own developer instructions elided]")
                       if isinstance(c, dict) and "text" in c else c for c in payload.get("content") or []]
            return dict(line, payload=dict(payload, content=content))
    return line


class CodexRig(TuiRig):
    agent = "codex"

    def __init__(self, root: Path, binary: str, tmux: Tmux, rules: list[Rule] | None = None) -> None:
        self.ws = Workspace(root, [".codex/sessions/*/*/*/*.jsonl"])
        self.binary = binary
        self.tmux = tmux
        self.api = ScriptedOpenAIAPI(rules).start()
        self.home = agents.codex_home(root, self.api.base_url)
        codex = self.ws.home / ".codex"
        hooks: dict[str, Any] = {}
        state = []
        for e in CODEX_EVENTS:
            h = {"type": "command", "command": f"{self.ws.hook_cmd} {e}", "timeout": 3 if e in _CODEX_SHORT else 30}
            hooks[e] = [{"hooks": [h]}]
            key = f"{codex / 'hooks.json'}:{_snake(e)}:0:0"
            state.append(f'[hooks.state."{key}"]\ntrusted_hash = "{codex_trusted_hash(e, None, h)}"\n')
        (codex / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=1))
        cfg = (codex / "config.toml").read_text()
        cfg += f'\n[projects."{self.ws.project}"]\ntrust_level = "trusted"\n\n' + "\n".join(state)
        (codex / "config.toml").write_text(cfg)
        self.session_name = f"cx{id(self) % 100000}"
        self.max_lines: int | None = None  # keep only the first N new transcript lines
        self.pane_pid: int | None = None
        self.session_id: str | None = None

    def env(self) -> dict[str, str]:
        return agents.codex_env(self.home)

    def exec(self, prompt: str, *args: str, resume: bool = True, sub: str = "exec", timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [self.binary, sub, "--skip-git-repo-check", *args] if sub == "exec" else [self.binary, sub, *args]
        if sub == "exec" and resume and self.session_id:
            cmd += ["resume", self.session_id]
        if prompt:
            cmd.append(prompt)
        proc = harness._run_tree(cmd, self.ws.project, self.env(), timeout)
        for h in self.ws.hooks():
            if isinstance(h["stdin"], dict) and h["stdin"].get("session_id"):
                self.session_id = self.session_id or h["stdin"]["session_id"]
        return proc

    def tui_start(self, *args: str) -> None:
        env = self.env()
        env["TERM"] = "xterm-256color"
        script = self.ws.root / "run-codex.sh"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        script.write_text(f"cd {shlex.quote(str(self.ws.project))} && exec env -i {exports} "
                          f"{shlex.quote(self.binary)} --no-daemon {' '.join(map(shlex.quote, args))}\n")
        self.pane_pid = self.tmux.new(self.session_name, self.ws.project, script)
        wait_until(lambda: "for shortcuts" in self.screen() or "Ask Codex" in self.screen(), 60)
        time.sleep(1.5)



def codex_records(rig: CodexRig, case: str, how: str, mark: Any) -> list[Record]:
    hooks, lines = rig.ws.since(mark)
    filtered = {p: [x for x in (codex_filter_line(y) for y in ls) if x is not None][:rig.max_lines]
                for p, ls in lines.items()}
    return split_records(rig.ws, case, how, hooks, filtered, ("UserPromptSubmit",))


CX_SKILL = "---\nname: notes-skill\ndescription: Summarise the project notes\n---\nSummarise the notes about the topic the user names, in three bullet points.\n"


def codex_cases() -> list[Case]:
    cases: list[Case] = []

    def setup(rig: CodexRig) -> None:
        skill = rig.ws.home / ".codex" / "skills" / "notes-skill"
        skill.mkdir(parents=True, exist_ok=True)
        (skill / "SKILL.md").write_text(CX_SKILL)
        prompts = rig.ws.home / ".codex" / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        (prompts / "notes.md").write_text("---\ndescription: Summarise the notes\n---\nSummarise the notes about $ARGUMENTS in three bullet points.\n")

    def exec_case(slug: str, prompt: str, *args: str, warmup: bool = False, control: dict[str, Any] | None = None,
                  rules: list[Rule] | None = None, sub: str = "exec", note: str = "") -> None:
        how = f"codex {sub} " + ("--skip-git-repo-check " if sub == "exec" else "") + " ".join(map(shlex.quote, args))
        how = how.rstrip() + (" " + shlex.quote(prompt) if prompt else "")
        if warmup:
            how = "codex exec 'how do I build this project?'; then codex exec resume <session> " + how.split(" ", 2)[-1]
        if note:
            how += f" ({note})"

        def run(factory: Callable[..., CodexRig]) -> list[Record]:
            rig = factory(rules)
            try:
                setup(rig)
                if warmup:
                    rig.exec("how do I build this project?")
                if control:
                    rig.ws.control(control)
                m = rig.ws.mark()
                rig.exec(prompt, *args, sub=sub)
                time.sleep(0.5)
                return codex_records(rig, slug, how, m)
            finally:
                rig.close()
        cases.append(Case(slug, how, run))

    exec_case("exec-slash-init", "/init", note="exec has no slash commands: the text is the prompt")
    exec_case("exec-slash-compact", "/compact", warmup=True, note="exec has no slash commands: the text is the prompt")
    exec_case("exec-prompts-custom", "/prompts:notes the build system", note="~/.codex/prompts/notes.md exists")
    exec_case("exec-skill-mention", "$notes-skill the build system", note="~/.codex/skills/notes-skill/SKILL.md exists")
    exec_case("exec-review", "", "--uncommitted", sub="review", note="the non-interactive code review")
    exec_case("exec-review-prompt", "look for missing tests", sub="review", note="custom review instructions")
    exec_case("exec-stop-hook-block", "what is the test command?", control={"Stop": {"once": True, "stdout": {
        "decision": "block", "reason": "Run the tests before you stop."}}}, note="Stop hook blocks once with a reason")
    exec_case("exec-ups-hook-block", "BLOCK_ME please", control={"UserPromptSubmit": {"if": "BLOCK_ME", "stdout": {
        "decision": "block", "reason": "Prompts with BLOCK_ME are not allowed."}}}, note="UserPromptSubmit hook blocks")
    exec_case("exec-pretooluse-deny", "DENY_TOOL run rm", rules=[Rule("DENY_TOOL", "tool", "exec_command", {"cmd": "rm -rf build"})],
              control={"PreToolUse": {"stdout": {"hookSpecificOutput": {
                  "hookEventName": "PreToolUse", "permissionDecision": "deny",
                  "permissionDecisionReason": "Deleting build/ is not allowed here."}}}}, note="PreToolUse hook denies")
    exec_case("exec-subagent", "SUBAGENT explore the repo", rules=[
        Rule("SUBAGENT", "tool", "multi_agent_v1.spawn_agent", {"message": "List the files in the repository and report."})],
        note="fake model answers with multi_agent_v1.spawn_agent")
    exec_case("exec-bg-command", "BG_CMD run the slow build", rules=[
        Rule("BG_CMD", "tool", "exec_command", {"cmd": "sleep 3; echo build-finished", "yield_time_ms": 250})],
        note="fake model answers with exec_command yield_time_ms 250 (a command still running when the call returns)")

    tui = tui_cases(cases, setup, codex_records)

    def warm(rig: CodexRig) -> None:
        rig.turn("how do I build this project?")

    @tui("tui-shell-command", "TUI (codex --no-daemon): type `!ls -a`, Enter")
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("!ls -a")
        rig.wait_transcript("user_shell_command", 20)
        time.sleep(2)
        return m

    @tui("tui-slash-init", "TUI: `/init`, Enter")
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/init")
        return m

    @tui("tui-slash-compact", "TUI: one prompt, then `/compact`, Enter; then the next typed prompt")
    def _(rig: CodexRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        before = rig.ws.count("PostCompact")
        rig.type("/compact", settle=1.0)
        rig.ws.wait_event("PostCompact", before, 40)
        time.sleep(3)
        rig.turn("and how do I run the tests?")
        return m

    @tui("tui-slash-review", "TUI: with an uncommitted file, `/review`, Enter, then `2` (preset: Review uncommitted changes)")
    def _(rig: CodexRig) -> Any:
        (rig.ws.project / "NOTES.md").write_text("uncommitted change\n")
        m = rig.ws.mark()
        before = rig.ws.count("UserPromptSubmit")
        rig.type("/review", settle=1.0)
        time.sleep(2)
        rig.key("2")
        rig.ws.wait_event("UserPromptSubmit", before, 30)
        time.sleep(5)
        return m

    @tui("tui-slash-status", "TUI: one prompt, then `/status`, Enter")
    def _(rig: CodexRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        rig.type("/status", settle=1.0)
        time.sleep(4)
        return m

    @tui("tui-prompts-custom", "TUI: `/prompts:notes the build system` (with ~/.codex/prompts/notes.md), Enter")
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("/prompts:notes the build system", settle=1.0)
        time.sleep(4)
        return m

    @tui("tui-skill-mention", "TUI: `$notes-skill the build system`, Enter (a skill mention)")
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("$notes-skill", enter=False, settle=1.0)
        rig.key("Escape")
        rig.type(" the build system", enter=False, settle=0.5)
        before = rig.ws.count("Stop")
        rig.key("Enter")
        rig.ws.wait_event("Stop", before, 40)
        time.sleep(1)
        return m

    @tui("tui-interrupt-streaming", "TUI: a prompt the fake answers slowly (first words, then a 30 s stall); Escape after 4 s; then the next typed prompt",
         rules=[Rule("SLOW_STREAM", "slow", seconds=30)])
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("SLOW_STREAM explain the build")
        time.sleep(4)
        rig.key("Escape")
        time.sleep(3)
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-interrupt-tool", "TUI: the fake answers with exec_command `sleep 40`; Escape after 5 s; then the next typed prompt",
         rules=[Rule("SLOW_TOOL", "tool", "exec_command", {"cmd": "sleep 40", "yield_time_ms": 30000})])
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("SLOW_TOOL run the long build")
        time.sleep(5)
        rig.key("Escape")
        time.sleep(3)
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-stop-hook-block", "TUI: a prompt; the Stop hook blocks once with a reason")
    def _(rig: CodexRig) -> Any:
        rig.ws.control({"Stop": {"once": True, "stdout": {"decision": "block", "reason": "Run the tests before you stop."}}})
        m = rig.ws.mark()
        rig.turn("what is the test command?", stops=2)
        return m

    @tui("tui-queued-prompt", "TUI: a prompt the fake answers slowly; a second prompt typed and Enter while it runs (queued)",
         rules=[Rule("SLOW_QUEUE", "slow", seconds=6)])
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("SLOW_QUEUE explain the build")
        time.sleep(2)
        rig.type("also, what is the test command?")
        rig.ws.wait_event("Stop", before, 60, 2)
        time.sleep(1.5)
        return m

    @tui("tui-subagent", "TUI: the fake answers with multi_agent_v1.spawn_agent; the subagent's result comes back",
         rules=[Rule("SUBAGENT", "tool", "multi_agent_v1.spawn_agent", {"message": "List the files in the repository and report."})])
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("Stop")
        rig.type("SUBAGENT explore the repo")
        rig.ws.wait_event("Stop", before, 60)
        time.sleep(8)
        return m

    @tui("tui-goal", "TUI: `/goal make the tests pass`, Enter; Codex then starts goal-continuation turns on its own "
         "(with the fake model they loop); Escape after 3 s. transcript_lines are cut to the first 60 lines")
    def _(rig: CodexRig) -> Any:
        m = rig.ws.mark()
        rig.type("/goal make the tests pass", settle=1.0)
        time.sleep(3)
        rig.key("Escape")
        time.sleep(1)
        rig.key("Escape")
        time.sleep(2)
        rig.max_lines = 60
        return m

    return cases


def record_generic(agent: str, version: str, cases: list[Case], rig_class: Any, only: list[str] | None, tui: bool,
                   keep: bool) -> list[dict[str, Any]]:
    binary, reason = harness.install(agent)
    if binary is None:
        sys.exit(f"{agent} unavailable: {reason}")
    root = Path(tempfile.mkdtemp(prefix=f"frames-{agent}-"))
    tmux = Tmux(root)
    records: list[dict[str, Any]] = []
    try:
        for n, case in enumerate(cases):
            if (only and case.slug not in only) or (case.tui and not tui):
                continue
            case_root = root / f"{n:02d}-{case.slug}"

            def factory(rules: list[Rule] | None, case_root: Path = case_root) -> Any:
                return rig_class(case_root, binary, tmux, rules)

            t0 = time.time()
            try:
                recs = case.run(factory)
            except Exception as e:  # keep going; the case is reported as failed
                print(f"[{agent}] {case.slug}: FAILED {e!r}", file=sys.stderr)
                continue
            records.extend(to_json(agent, version, r) for r in recs)
            print(f"[{agent}] {case.slug}: {len(recs)} record(s), events={recs[0].other_events} ({time.time() - t0:.0f}s)",
                  file=sys.stderr)
    finally:
        tmux.close()
        if keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return records


def record_codex(out: Path, only: list[str] | None, tui: bool, keep: bool) -> list[dict[str, Any]]:
    return record_generic("codex", agents.version("codex"), codex_cases(), CodexRig, only, tui, keep)


# =============================================================================================
# Gemini CLI


GEMINI_EVENTS = ["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeToolSelection", "BeforeTool",
                 "AfterTool", "PreCompress", "Notification"]  # BeforeModel/AfterModel carry the whole request: left out


class _GeminiHandler(fake_gemini._Handler):
    def _answer_parts(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        text, has_result = fake_gemini._newest_user(body)
        if not fake_gemini._has_tools(body) and "state_snapshot" in json.dumps(body.get("systemInstruction") or ""):
            return [{"text": "<state_snapshot>\n<overall_goal>the user asked how the project is built (make) and tested (make test)</overall_goal>\n</state_snapshot>"}]
        rule = None
        if fake_gemini._has_tools(body) and not has_result:
            with self.server.lock:
                for r in self.server.rules:  # type: ignore[attr-defined]
                    if not r.used and r.trigger in text:
                        r.used = True
                        rule = r
                        break
        if rule is None:
            return super()._answer_parts(body)
        if rule.kind == "tool":
            return [{"functionCall": {"name": rule.name, "args": rule.input}}]
        if rule.kind in ("stall", "slow"):
            time.sleep(rule.seconds)
            return [{"text": self.server.reply_text}]
        return [{"text": rule.text}]


class ScriptedGeminiAPI(fake_gemini.FakeGeminiAPI):
    handler = _GeminiHandler

    def __init__(self, rules: list[Rule] | None = None) -> None:
        super().__init__()
        self._rules = rules or []

    def start(self):  # type: ignore[no-untyped-def]
        super().start()
        self._started().rules = self._rules  # type: ignore[attr-defined]
        return self


class GeminiRig(TuiRig):
    agent = "gemini"

    def __init__(self, root: Path, binary: str, tmux: Tmux, rules: list[Rule] | None = None) -> None:
        self.ws = Workspace(root, [".gemini/tmp/*/chats/*.jsonl", ".gemini/tmp/*/chats/*.json"])
        self.binary = binary
        self.tmux = tmux
        self.api = ScriptedGeminiAPI(rules).start()
        self.home = agents.gemini_home(root)
        settings_path = self.ws.home / ".gemini" / "settings.json"
        settings = json.loads(settings_path.read_text())
        settings["hooks"] = {e: [{"matcher": "*", "hooks": [{"type": "command", "name": f"rec-{e}",
                                                          "command": f"{self.ws.hook_cmd} {e}", "timeout": 30000}]}]
                             for e in GEMINI_EVENTS}
        settings.setdefault("ui", {})["theme"] = "Default"
        settings_path.write_text(json.dumps(settings, indent=1))
        self.session_name = f"gm{id(self) % 100000}"
        self.pane_pid: int | None = None

    def env(self) -> dict[str, str]:
        return agents.gemini_env(self.home, self.api.base_url)

    def p(self, prompt: str, *args: str, resume: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [self.binary, *args]
        if resume and any(h["event"] == "SessionStart" for h in self.ws.hooks()):
            cmd += ["--resume", "latest"]
        cmd += ["-p", prompt]
        return harness._run_tree(cmd, self.ws.project, self.env(), timeout)

    def tui_start(self, *args: str) -> None:
        env = self.env()
        env["TERM"] = "xterm-256color"
        script = self.ws.root / "run-gemini.sh"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        script.write_text(f"cd {shlex.quote(str(self.ws.project))} && exec env -i {exports} "
                          f"{shlex.quote(self.binary)} {' '.join(map(shlex.quote, args))}\n")
        before = self.ws.count("SessionStart")
        self.pane_pid = self.tmux.new(self.session_name, self.ws.project, script)
        self.ws.wait_event("SessionStart", before, 60)
        wait_until(lambda: "Type your message" in self.screen(), 60)
        time.sleep(1.5)


    def turn(self, text: str, timeout: float = 60, stops: int = 1) -> bool:
        before = self.ws.count("AfterAgent")
        self.type(text)
        ok = self.ws.wait_event("AfterAgent", before, timeout, stops)
        time.sleep(1.0)
        return ok


def gemini_records(rig: GeminiRig, case: str, how: str, mark: Any) -> list[Record]:
    hooks, lines = rig.ws.since(mark)
    return split_records(rig.ws, case, how, hooks, lines, ("BeforeAgent",))


GM_NOTES_CMD = 'description = "Summarise the notes"\nprompt = "Summarise the notes about {{args}} in three bullet points."\n'
GM_NOARGS_CMD = 'description = "Check the release"\nprompt = "Check that the release checklist is complete."\n'
GM_SHELL_CMD = 'description = "Summarise the git status"\nprompt = """Summarise this git status:\n!{git status --short}\n"""\n'


def gemini_cases() -> list[Case]:
    cases: list[Case] = []

    def setup(rig: GeminiRig) -> None:
        cmds = rig.ws.project / ".gemini" / "commands"
        cmds.mkdir(parents=True, exist_ok=True)
        (cmds / "notes.toml").write_text(GM_NOTES_CMD)
        (cmds / "release.toml").write_text(GM_NOARGS_CMD)
        (cmds / "gitstatus.toml").write_text(GM_SHELL_CMD)
        user_cmds = rig.ws.home / ".gemini" / "commands" / "team"
        user_cmds.mkdir(parents=True, exist_ok=True)
        (user_cmds / "standup.toml").write_text('prompt = "Write the stand-up note for: {{args}}"\n')

    def p_case(slug: str, prompt: str, *args: str, warmup: bool = False, control: dict[str, Any] | None = None,
               rules: list[Rule] | None = None, note: str = "") -> None:
        how = "gemini " + " ".join(map(shlex.quote, args)) + (" " if args else "") + f"-p {shlex.quote(prompt)}"
        if warmup:
            how = "gemini -p 'how do I build this project?'; then gemini --resume latest " + how[len("gemini "):]
        if note:
            how += f" ({note})"

        def run(factory: Callable[..., GeminiRig]) -> list[Record]:
            rig = factory(rules)
            try:
                setup(rig)
                if warmup:
                    rig.p("how do I build this project?")
                if control:
                    rig.ws.control(control)
                m = rig.ws.mark()
                rig.p(prompt, *args)
                time.sleep(0.5)
                return gemini_records(rig, slug, how, m)
            finally:
                rig.close()
        cases.append(Case(slug, how, run))

    p_case("p-custom-command-args", "/notes the build system", note=".gemini/commands/notes.toml uses {{args}}")
    p_case("p-custom-command-noargs", "/release", note=".gemini/commands/release.toml, no {{args}}")
    p_case("p-custom-command-appended-args", "/release for 1.2", note="no {{args}} in the template: the CLI appends the typed command")
    p_case("p-custom-command-shell", "/gitstatus", "--yolo", note=".gemini/commands/gitstatus.toml runs !{git status --short}")
    p_case("p-user-command-namespaced", "/team:standup the parser work", note="~/.gemini/commands/team/standup.toml")
    p_case("p-builtin-compress", "/compress", warmup=True)
    p_case("p-builtin-memory-show", "/memory show")
    p_case("p-builtin-init", "/init")
    p_case("p-bang-ls", "!ls")
    p_case("p-at-file", "@README.md what does this say?", note="an @-file reference")
    p_case("p-sessionstart-context", "what is the test command?", control={"SessionStart": {"stdout": {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "memrepo: 2 notes for this project"}}}},
        note="SessionStart hook returns additionalContext")
    p_case("p-beforeagent-context-next-turn", "and what is the lint command?", warmup=True, control={"BeforeAgent": {"stdout": {
        "hookSpecificOutput": {"hookEventName": "BeforeAgent", "additionalContext": "memrepo recall: tests run with make test"}}}},
        note="BeforeAgent returns additionalContext on both turns")
    p_case("p-afteragent-deny", "what is the test command?", control={"AfterAgent": {"once": True, "stdout": {
        "decision": "deny", "reason": "Run the tests before you answer."}}}, note="AfterAgent hook denies once with a reason (a retry)")
    p_case("p-beforeagent-block", "BLOCK_ME please", control={"BeforeAgent": {"if": "BLOCK_ME", "stdout": {
        "decision": "deny", "reason": "Prompts with BLOCK_ME are not allowed."}}}, note="BeforeAgent hook denies")
    p_case("p-beforetool-deny", "DENY_TOOL run rm", "--yolo", rules=[Rule("DENY_TOOL", "tool", fake_gemini.SHELL_TOOL, {
        "command": "rm -rf build", "description": "Remove the build dir"})], control={"BeforeTool": {"stdout": {
            "decision": "deny", "reason": "Deleting build/ is not allowed here."}}}, note="BeforeTool hook denies")
    p_case("p-subagent", "SUBAGENT explore the repo", "--yolo", rules=[Rule("SUBAGENT", "tool", "invoke_agent", {
        "agent_name": "codebase_investigator", "prompt": "List the files in the repository and report."})],
        note="fake model calls invoke_agent (codebase_investigator)")
    p_case("p-bg-shell", "BG_SHELL run the slow build", "--yolo", rules=[Rule("BG_SHELL", "tool", fake_gemini.SHELL_TOOL, {
        "command": "sleep 3; echo build-finished", "description": "Run the slow build", "is_background": True})],
        note="fake model calls run_shell_command with is_background")

    tui = tui_cases(cases, setup, gemini_records)

    def warm(rig: GeminiRig) -> None:
        rig.turn("how do I build this project")

    @tui("tui-custom-command-args", "TUI: type `/notes the build system`, Enter")
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/notes the build system")
        return m

    @tui("tui-shell-mode", "TUI: type `!` (shell mode on), `ls -a`, Enter; Escape (shell mode off); then the next typed prompt")
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        rig.type("!", enter=False, settle=0.8)
        rig.type("ls -a", settle=0.8)
        time.sleep(4)
        rig.key("Escape")
        time.sleep(1)
        rig.turn("and what is the test command")
        return m

    @tui("tui-shell-oneshot", "TUI: type `!ls -a` in one go (the ! toggles shell mode), Enter")
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        rig.type("!ls -a", settle=0.8)
        time.sleep(4)
        return m

    @tui("tui-builtin-compress", "TUI: one prompt, then `/compress`, Enter; then the next typed prompt")
    def _(rig: GeminiRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        rig.type("/compress", settle=1.0)
        time.sleep(6)
        rig.turn("and how do I run the tests")
        return m

    @tui("tui-builtin-stats", "TUI: one prompt, then `/stats`, Enter")
    def _(rig: GeminiRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        rig.type("/stats", settle=1.0)
        time.sleep(3)
        return m

    @tui("tui-builtin-clear", "TUI: one prompt, then `/clear`, Enter; then the next typed prompt")
    def _(rig: GeminiRig) -> Any:
        warm(rig)
        m = rig.ws.mark()
        rig.type("/clear", settle=1.0)
        time.sleep(4)
        rig.turn("and how do I run the tests")
        return m

    @tui("tui-builtin-init", "TUI: `/init`, Enter")
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        rig.turn("/init")
        return m

    @tui("tui-interrupt", "TUI: a prompt the fake does not answer for 30 s; Escape after 4 s; then the next typed prompt",
         rules=[Rule("STALL_REPLY", "stall", seconds=30)])
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        rig.type("STALL_REPLY explain the build")
        time.sleep(4)
        rig.key("Escape")
        time.sleep(3)
        rig.key("C-u")
        rig.turn("ok, just tell me the test command")
        return m

    @tui("tui-queued-prompt", "TUI: a prompt the fake answers after 6 s; a second prompt typed and Enter while it runs",
         rules=[Rule("SLOW_QUEUE", "stall", seconds=6)])
    def _(rig: GeminiRig) -> Any:
        m = rig.ws.mark()
        before = rig.ws.count("AfterAgent")
        rig.type("SLOW_QUEUE explain the build")
        time.sleep(2)
        rig.type("also, what is the test command")
        rig.ws.wait_event("AfterAgent", before, 60, 2)
        time.sleep(1.5)
        return m

    return cases


def record_gemini(out: Path, only: list[str] | None, tui: bool, keep: bool) -> list[dict[str, Any]]:
    return record_generic("gemini", agents.version("gemini"), gemini_cases(), GeminiRig, only, tui, keep)


# =============================================================================================


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", required=True, choices=["claude", "codex", "gemini"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--case", action="append", help="record only these case slugs")
    ap.add_argument("--no-tui", action="store_true", help="skip the tmux-driven cases")
    ap.add_argument("--keep", action="store_true", help="keep the throwaway homes")
    args = ap.parse_args(argv)
    ensure_netns(argv)
    assert_isolated()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tui = not args.no_tui and shutil.which("tmux") is not None
    if args.agent == "claude":
        records, version = record_claude(out, args.case, tui, args.keep), harness.CLAUDE_VERSION
    elif args.agent == "codex":
        records, version = record_codex(out, args.case, tui, args.keep), agents.version("codex")
    else:
        records, version = record_gemini(out, args.case, tui, args.keep), agents.version("gemini")
    path = out / f"{args.agent}-{version}.jsonl"
    if args.case and path.exists():  # merge: replace only the re-recorded cases
        old = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        redone = {r["case"] for r in records} | set(args.case)
        keep = [o for o in old if o["case"] not in redone]
        records = keep + records
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
