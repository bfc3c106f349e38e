"""The capture pass: the new part of a session's transcript → memories the session established.

Runs in the detached worker (never on a hook's path). For one transcript it reads the turns
after the last captured line of that session (`index/capture-state.json`), puts them to the
model (pass "capture") with the memories captured earlier in the same session, and keeps only
what the answer evidences: every evidence turn id must be one of the turns it was given.
`capture_plan` places the candidates against the store and commits them (`source: capture`,
`session: <id>`). A memory the session later refuted is superseded by its replacement or
retired. This module reads the transcript, asks the model and keeps what is evidenced.
"""

from __future__ import annotations

import calendar
import json
import os
import time
from typing import Any, Iterator

from memrepo.errors import MemrepoError
from memrepo.format import catalogue, notes, spec, transcript
from memrepo.passes import model
from memrepo.passes.capture_plan import PASS, CaptureReport, Plan, commit, place, session_memories
from memrepo.base import paths
from memrepo.store import config, memories as store
from memrepo.vcs import runs
from memrepo.format.notes import Note

STATE = "capture-state.json"
MAX_CHUNK_CHARS = 60000
MAX_TOOL_RESULT = 600
SKIPPED_KINDS = ("command", "compact_boundary", "compact_summary", "title")

_LIST = {"type": "array", "maxItems": 8, "items": {"type": "string", "minLength": 1, "maxLength": 60}}
_EVIDENCE = {"type": "array", "minItems": 1, "maxItems": 12, "items": {"type": "string", "minLength": 2, "maxLength": 20}}
MEMORY_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["class", "title", "description", "topics", "entities", "tech", "body", "evidence", "scope"],
    "properties": {
        "class": {"type": "string", "enum": list(spec.CLASSES)},
        "title": {"type": "string", "minLength": 3, "maxLength": spec.MAX_TITLE},
        "description": {"type": "string", "minLength": 3, "maxLength": spec.MAX_DESCRIPTION},
        "topics": _LIST, "entities": _LIST, "tech": _LIST,
        "body": {"type": "string", "maxLength": 4000},
        "evidence": _EVIDENCE,
        "scope": {"type": "string", "enum": ["project", "global"]},
    },
}
REFUTED_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["id", "reason", "evidence", "replacement"],
    "properties": {"id": {"type": "string", "minLength": 1, "maxLength": spec.MAX_ID},
                   "reason": {"type": "string", "minLength": 3, "maxLength": 300},
                   "evidence": _EVIDENCE,
                   "replacement": {"type": ["integer", "null"], "minimum": 0}},
}
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["memories", "refuted"],
          "properties": {"memories": {"type": "array", "maxItems": 10, "items": MEMORY_SCHEMA},
                         "refuted": {"type": "array", "maxItems": 10, "items": REFUTED_SCHEMA}}}

PROMPT = """You write long-term memories for a coding agent from part of one of its sessions.
Write down what this session ESTABLISHED: decisions that were taken, rules or preferences the
user stated, facts that were confirmed (by a command's output, a test, or the user). Do NOT
write hypotheses, guesses, plans that were not carried out, or anything later shown wrong.
Never copy a secret (a password, API key, token, private key or connection string with a
password) into a memory: write where it is kept instead ("the staging password is in 1Password").
Most session parts establish nothing worth keeping: then answer with empty lists.

Each memory: class (rule | preference | fact | project | event | reference), title (one line),
description (one line a person would recognise), topics (lowercase subject words), entities
(named services, repos, products, people), tech (technologies named), body (a few sentences,
markdown), evidence (ids of the turns below that show it, like "t12"), scope ("project" if it
only holds in this project, else "global").

Memories captured earlier in this session (their ids are in brackets). If the turns below show
one of them was wrong, list it under "refuted" with the reason, the evidence turn ids, and
"replacement": the index in your "memories" list of the memory that corrects it, or null.
{earlier}

Session turns (new since the last capture):
{turns}

Answer with only this JSON object and nothing else:
{{"memories": [{{"class": "...", "title": "...", "description": "...", "topics": [], "entities": [], "tech": [], "body": "...", "evidence": ["t1"], "scope": "global"}}], "refuted": [{{"id": "...", "reason": "...", "evidence": ["t2"], "replacement": 0}}]}}
"""


# -- state: how far each session has been captured ------------------------------------------

def _state_path(repo: str) -> str:
    return os.path.join(paths.index_dir(repo), STATE)


def load_state(repo: str) -> dict[str, Any]:
    try:
        with open(_state_path(repo), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(repo: str, session: str, path: str, line: int) -> None:
    state = load_state(repo)
    state[session] = {"line": line, "uuid": transcript.uuid_at(path, line), "transcript": path, "at": time.time()}
    tmp = f"{_state_path(repo)}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=1)
    os.replace(tmp, _state_path(repo))


def start_line(repo: str, session: str, path: str, log: list[str] | None = None) -> int:
    """The line after which this session's transcript is new; 0 when the file no longer matches."""
    entry = load_state(repo).get(session) or {}
    line = int(entry.get("line", 0))
    if line and transcript.uuid_at(path, line) != entry.get("uuid"):
        if log is not None:
            log.append(f"{path}: line {line} is not the one last captured; reading it again from the start")
        return 0
    return line


# -- the model's question ------------------------------------------------------------------

def render(turn: transcript.Turn) -> str:
    """One turn as the model sees it, prefixed by its evidence id."""
    tid = f"t{turn.line}"
    if turn.role == "tool":
        text = turn.text if len(turn.text) <= MAX_TOOL_RESULT else turn.text[:MAX_TOOL_RESULT] + "…"
        return f"[{tid}] tool result{' (error)' if turn.is_error else ''}: {text}"
    calls = "; ".join(f"{t.name} {t.command or ' '.join(t.paths) or t.description}".strip() for t in turn.tools)
    return f"[{tid}] {turn.role}: {turn.text}" + (f"\n  (tools: {calls})" if calls else "")


def chunks(turns: Iterator[transcript.Turn], limit: int = MAX_CHUNK_CHARS) -> Iterator[list[transcript.Turn]]:
    """Turns grouped so that each group's rendering stays under `limit` characters."""
    group: list[transcript.Turn] = []
    size = 0
    for turn in turns:
        if turn.kind in SKIPPED_KINDS or turn.is_sidechain:
            continue
        n = len(render(turn))
        if group and size + n > limit:
            yield group
            group, size = [], 0
        group.append(turn)
        size += n
    if group:
        yield group


def build_prompt(group: list[transcript.Turn], earlier: list[Note]) -> str:
    lines = [f"- [{n.id}] ({n.get('class')}) {n.get('title')}: {n.get('description')}" for n in earlier]
    return PROMPT.format(earlier="\n".join(lines) or "(none)", turns="\n".join(render(t) for t in group))


def _clean_list(values: list[str], lower: bool = False) -> list[str]:
    out: list[str] = []
    for v in values:
        v = " ".join(catalogue.redact(v).split())
        v = v.lower() if lower else v
        if v and v not in out:
            out.append(v)
    return out


def established(item: dict[str, Any], group: list[transcript.Turn]) -> str | None:
    """The day (local time) of the latest turn an item cites: when the session established it.

    A capture runs hours or days after the turns it reads (a throttled Stop, a sweep, an import
    of old sessions); dating the memory on the capture day would make old facts look new.
    """
    by_id = {f"t{t.line}": t for t in group}
    stamps = sorted(by_id[e].timestamp for e in item["evidence"] if e in by_id and by_id[e].timestamp)
    if not stamps:
        return None
    try:
        moment = calendar.timegm(time.strptime(stamps[-1][:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None
    return time.strftime("%Y-%m-%d", time.localtime(moment))


def to_note(item: dict[str, Any], session: str, project: str | None, created: str | None = None) -> Note:
    """A candidate memory from one validated answer item (no id yet), dated `created` (default today)."""
    return notes.new_note(created=created,
        title=" ".join(catalogue.redact(item["title"]).split()), description=" ".join(catalogue.redact(item["description"]).split()),
        class_=item["class"], source="capture", topics=_clean_list(item["topics"], lower=True),
        entities=_clean_list(item["entities"]), tech=_clean_list(item["tech"]),
        project=project if item["scope"] == "project" else None, session=session,
        body=catalogue.redact(item["body"]).strip() + "\n")


def evidenced(answer: dict[str, Any], group: list[transcript.Turn], earlier: list[Note], report: CaptureReport) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The answer's memories and refutations whose every evidence id is a turn it was given."""
    ids = {f"t{t.line}" for t in group}
    known = {n.id for n in earlier}
    memories = []
    for item in answer["memories"]:
        missing = [e for e in item["evidence"] if e not in ids]
        if missing:
            report.dropped.append({"title": item["title"], "reason": f"evidence not in the transcript part: {missing}"})
            item = None
        memories.append(item)
    refuted = []
    for item in answer["refuted"]:
        if item["id"] not in known:
            report.dropped.append({"refuted": item["id"], "reason": "not a memory captured earlier in this session"})
        elif any(e not in ids for e in item["evidence"]):
            report.dropped.append({"refuted": item["id"], "reason": "evidence not in the transcript part"})
        elif item["replacement"] is not None and item["replacement"] >= len(memories):
            # an answer at odds with itself: the memory it says corrects this one is not in it
            report.dropped.append({"refuted": item["id"], "reason": f"replacement {item['replacement']} is not among the"
                                                                     f" answer's {len(memories)} memories"})
        else:
            refuted.append(item)
    return memories, refuted


# -- one capture ---------------------------------------------------------------------------

class Pending(MemrepoError):
    """The model's answer for part of a transcript was invalid: those turns stay unread, to be asked again."""


def capture(repo: str, path: str, session: str | None = None, cwd: str = "", run_id: str | None = None,
            max_parts: int | None = None) -> CaptureReport:
    """Capture the new part of the transcript at `path`; call with the worker lock held.

    `max_parts`: read at most that many parts (one model call each), then stop with `more` set;
    the mark stays after the last part read, so the next capture goes on from there."""
    store.require_repo(repo)
    if not os.path.isfile(path):
        raise MemrepoError(f"no transcript at {path}", hint="pass the path of a session's .jsonl file (Claude Code, Codex CLI or Gemini CLI)")
    session = session or os.path.splitext(os.path.basename(path))[0]
    report = CaptureReport(run_id or runs.fresh_run_id(repo, PASS), session, path)
    begin = start_line(repo, session, path, report.log)
    end = transcript.count_lines(path)
    project = project_of(repo, cwd)
    last = begin
    for n, group in enumerate(chunks(transcript.read(path, start_line=begin)), start=1):
        if max_parts is not None and n > max_parts:
            report.more = True
            report.last_line = last
            return report
        report.turns += len(group)
        project = project or project_of(repo, group[0].cwd)
        if not _capture_group(repo, group, session, project, report):
            # Not read: the mark stays before these turns, and the job counts a failed attempt
            # (retried a bounded number of times), instead of losing what the user said (issue 16).
            raise Pending(f"the model's answer for lines {group[0].line}-{group[-1].last_line} of {path} was invalid "
                          f"(logged to index/{model.REJECTS}); those turns stay pending",
                          hint="the next sweep tries again; `memrepo stats` shows jobs that gave up")
        last = group[-1].last_line
        _save_state(repo, session, path, last)
    # The file may have grown while it was read: never move the mark back.
    report.last_line = max(end, last)
    if report.last_line > last:
        _save_state(repo, session, path, report.last_line)
    return report


def project_of(repo: str, cwd: str) -> str | None:
    """The project a session ran in: its checkout's identity while the folder exists; after it
    is gone (a deleted worktree, a session captured on another machine), the configured project
    whose root holds it, else the folder's name, which recall matches like a checkout of that
    name. Never global just because the directory went away."""
    if not cwd:
        return None
    if os.path.isdir(cwd):
        return paths.project_of(cwd)
    roots = config.project_roots(config.load(repo))
    here = os.path.normpath(cwd)
    for name, root in sorted(roots.items(), key=lambda kv: -len(kv[1])):
        root = os.path.normpath(root)
        if here == root or here.startswith(root.rstrip(os.sep) + os.sep):
            return paths.project_of(root) if os.path.isdir(root) else name
    return os.path.basename(here.rstrip(os.sep)) or None


def _renumber(refuted: list[dict[str, Any]], gone: list[int]) -> None:
    """Point each refutation's `replacement` at its memory once the invalid ones are left out."""
    for item in refuted:
        i = item["replacement"]
        if i is not None:
            item["replacement"] = None if i in gone else i - sum(1 for g in gone if g < i)


def _capture_group(repo: str, group: list[transcript.Turn], session: str, project: str | None, report: CaptureReport) -> bool:
    """Capture one group of turns; False when the model's answer was rejected (nothing written)."""
    if not any(t.role in ("user", "assistant") and t.text for t in group):
        return True
    earlier = session_memories(repo, session)
    report.model_calls += 1
    left_out: dict[str, list[tuple[int, Any]]] = {}
    answer = model.ask_json(repo, PASS, build_prompt(group, earlier), SCHEMA, dropped=left_out)
    if answer is None:
        report.dropped.append({"reason": f"invalid model answer (logged to index/{model.REJECTS})"})
        return False
    for key, gone in left_out.items():
        report.dropped += [{"reason": f"{key} item {i} of the answer is invalid (logged to index/{model.REJECTS})"} for i, _ in gone]
    _renumber(answer["refuted"], [i for i, _ in left_out.get("memories", [])])
    items, refuted = evidenced(answer, group, earlier, report)
    candidates = [to_note(item, session, project, established(item, group)) if item else None for item in items]
    plan = Plan(repo, report.run_id, session)
    refuted_ids = {item["id"] for item in refuted}
    for note in candidates:
        if note is not None:
            place(plan, note, report, refuted_ids)
    by_id = {n.id: n for n in earlier}
    for item in refuted:
        i = item["replacement"]
        plan.refute(by_id[item["id"]], candidates[i] if i is not None and i < len(candidates) else None,
                    " ".join(item["reason"].split()))
    commit(plan, report, review_branch=bool(config.get(repo, "capture_review", False)))
    return True
