"""The recall log (stdlib only: the prompt path): one JSON line per decision in
index/recall-log.jsonl (0600), so recall quality can be measured on real prompts. Local only;
the prompt itself is hashed, its `<private>` spans never reach it, and a prompt that may hold
a secret (`secretish`) is logged without its terms.
"""

import time

from memrepo.base import _fast, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memrepo.recall.decide import Decision

MAX_LOG_BYTES = 5 * 1024 * 1024


def text_hash(text: str) -> str:
    """A short sha256 of a text: what the local logs keep instead of the text."""
    return _fast.sha256_hex(text.encode("utf-8", "surrogatepass"))[:16]


def log_decision(repo: str, prompt: str, d: "Decision", session: str | None = None, agent: str = "") -> None:
    """Append one JSON line per decision to index/recall-log.jsonl (local only; the prompt is hashed).

    `agent` names the client whose hook decided ("codex", "gemini"); Claude Code's lines carry none.
    """
    path = paths.recall_log(repo)
    entry: "dict[str, Any]" = {
        "t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "prompt_sha": text_hash(prompt),
        # Words near something the redactor would redact are not written down (issue 15): the
        # entry keeps how many terms there were, not what they were.
        "terms": [] if d.withhold else list(d.terms),
        "context_terms": [] if d.withhold else list(d.context_terms),
        "injected": [{"id": h.id, "score": round(h.score, 4), **({"source": h.source} if h.source else {})}
                     for h in d.hits],
        "silent": d.silent,
        "ms": round(d.ms, 2),
    }
    if d.pasted_terms and not d.withhold:
        entry["pasted_terms"] = list(d.pasted_terms)
    if d.trace:
        entry["candidates"] = [_candidate(h, cut) for h, cut in d.trace if h is not None]
    if d.withhold:
        entry["withheld"] = len(d.terms) + len(d.context_terms) + len(d.pasted_terms)
    if d.project:
        entry["project"] = d.project
    if d.why:  # why it stayed silent: the floor the best candidate failed, or why nothing was judged
        entry["why"] = d.why
    if d.best is not None:
        entry["best"] = {"id": d.best.id, "score": round(d.best.score, 4)}
    if session:
        entry["session"] = session
    if agent:
        entry["agent"] = agent
    _append(path, entry)


def _candidate(h: "Any", cut: "str | None") -> "dict[str, Any]":
    """A candidate as the log keeps it: its id and score, p_inject when it was judged, and what cut it."""
    out: "dict[str, Any]" = {"id": h.id, "score": round(h.score, 4)}
    if h.source:
        out["source"] = h.source
    if h.features:
        out["p"] = round(h.p, 3)
    if cut:
        out["cut"] = cut
    return out


def _append(path: str, entry: "dict[str, Any]") -> None:
    try:
        if _fast.stat(path).st_size > MAX_LOG_BYTES:
            _fast.replace(path, path + ".1")
    except OSError:
        pass
    line = (_fast.dumps(entry) + "\n").encode("utf-8", "surrogatepass")
    fd = _fast.open_fd(path, _fast.O_WRONLY | _fast.O_APPEND | _fast.O_CREAT, 0o600)
    try:
        _fast.write(fd, line)
    finally:
        _fast.close(fd)


def log_session_start(repo: str, session: str, transcript: str, source: str, agent: str = "") -> None:
    """One line per SessionStart (local, 0600): a session that started, had prompts in its
    transcript and no recall decision is a prompt hook that does not fire (`memrepo doctor`)."""
    entry = {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "session": session,
             "transcript": transcript, "source": source}
    if agent:
        entry["agent"] = agent
    _append(paths.session_starts(repo), entry)


def read_log(repo: str, limit: int = 20) -> "list[dict[str, Any]]":
    """The newest `limit` decisions, newest first."""
    try:
        with open(paths.recall_log(repo), encoding="utf-8") as fh:
            lines = fh.readlines()[-limit:]
    except FileNotFoundError:
        return []
    out = []
    for line in reversed(lines):
        try:
            out.append(_fast.loads(line))
        except ValueError:
            continue
    return out


def read_all(repo: str) -> "list[dict[str, Any]]":
    """Every decision on this machine, oldest first (the rotated file, then the current one)."""
    return read_jsonl(paths.recall_log(repo))


def read_jsonl(base: str) -> "list[dict[str, Any]]":
    """The objects of a local log, oldest first: `base`.1 (rotated), then `base`; bad lines skipped."""
    out: "list[dict[str, Any]]" = []
    for name in (base + ".1", base):
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                out += parse_lines(fh.readlines())
        except OSError:
            continue
    return out


def parse_lines(lines: "list[str]") -> "list[dict[str, Any]]":
    """The JSON objects among a log's lines (blank, damaged and non-object lines skipped)."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = _fast.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out
