"""Validation of memory files: every problem of a file at once, as `path:line: problem — fix`."""

from __future__ import annotations

import math
import os
import re
from typing import Any, Callable, Iterable

from memrepo.format import notes, redact, spec
from memrepo.recall import fence


# Memory text is injected into prompts inside memrepo's fences (memrepo.recall.fence, issue 15).
ONE_LINE_FIX = "write it as plain text on one line, without control characters or `<memrepo-` tags"


class Problem:
    __slots__ = ("path", "line", "problem", "fix")

    def __init__(self, path: str, line: int, problem: str, fix: str) -> None:
        self.path, self.line, self.problem, self.fix = path, line, problem, fix

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.problem} — {self.fix}"

    def __repr__(self) -> str:
        return f"Problem({str(self)!r})"


def _key_lines(head_text: str) -> tuple[dict[str, int], list[tuple[str, int]]]:
    """Line of each top-level key, and the (key, line) of every repeat (YAML would keep only the last)."""
    found: dict[str, int] = {}
    repeats: list[tuple[str, int]] = []
    for i, line in enumerate(head_text.split("\n"), start=2):
        m = notes.KEY_RE.match(line)
        if m and m.group(1) in found:
            repeats.append((m.group(1), i))
        elif m:
            found[m.group(1)] = i
    return found, repeats


def _is_date(value: Any, allow_time: bool) -> bool:
    """An ISO date (or date and time) that is on the calendar: `2026-11-31` is not."""
    if not isinstance(value, str):
        return False
    if not (notes.DATE_RE.match(value) or (allow_time and notes.DATETIME_RE.match(value))):
        return False
    import datetime

    try:
        datetime.date(int(value[0:4]), int(value[5:7]), int(value[8:10]))
    except ValueError:
        return False
    return not notes.DATETIME_RE.match(value) or (int(value[11:13]) < 24 and int(value[14:16]) < 60)


def _not_words(value: Any) -> str:
    """Which part of a list key's value is not a word or phrase, for the person fixing it."""
    if not isinstance(value, list):
        return f"it is {_kind(value)}"
    for n, item in enumerate(value, start=1):
        if not isinstance(item, str):
            return f"item {n} is {_kind(item)}"
        if not item.strip():
            return f"item {n} is empty"
    return "it is not"


def _kind(value: Any) -> str:
    names = {str: "one text", int: "a number", float: "a number", bool: "true/false", dict: "a mapping",
             list: "a list", type(None): "empty"}
    return names.get(type(value), type(value).__name__)


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def check_text(text: str, path: str, find_secrets: Callable[[str], list[tuple[int, str, str]]] = redact.find_secrets
               ) -> tuple[list[Problem], notes.Note | None]:
    """Validate one file's text; returns every problem and the parsed note (None if unparsable).

    `find_secrets` is the stdlib catalogue by default (the git hooks, doctor); what writes a
    memory (add, import, capture) passes `catalogue.find_secrets`, which adds detect-secrets'."""
    problems: list[Problem] = []

    def add(line: int, problem: str, fix: str) -> None:
        problems.append(Problem(path, line, problem, fix))

    stem = os.path.splitext(os.path.basename(path))[0]
    fmt = notes.FIX_FMT.format(path=path)
    marker = conflict_line(text)
    if marker:  # YAML would call it a quoting problem; it is a merge nobody finished
        add(marker, "holds git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`): a merge was left unfinished",
            f"keep one version of each conflicting part and delete the marker lines (or take a side with "
            f"`git checkout --ours -- {path}` / `--theirs`), then `git add {path}` and commit")
        return problems, None
    if "\r\n" in text:
        add(1, "line endings are CRLF", fmt)
    if text.startswith("\ufeff"):
        add(1, "file starts with a byte order mark", fmt)
    if not text.endswith("\n") or text.endswith("\n\n"):
        add(max(1, text.count("\n")), "file must end with exactly one newline", fmt)
    if not _body_far_over_limit(text):
        for lineno, kind, preview in find_secrets(text):
            add(lineno, f"looks like a secret ({kind}: {preview})",
                f"remove it and keep secrets in a secrets manager, or add `{redact.ALLOW_MARKER}` to the line if it is not one")
    try:
        head, body, fence_line = notes.split(text)
        note = notes.parse(text, path)
    except notes.ParseError as exc:
        add(exc.line, str(exc), exc.fix)
        problems.sort(key=lambda p: p.line)
        return problems, None
    lines, repeats = _key_lines(head)
    for key, line in repeats:
        add(line, f"key `{key}` appears twice (also on line {lines[key]})", "keep one of them")
    problems.extend(_check_meta(note.meta, lines, path, stem))
    size = len(body.encode("utf-8"))
    if size > spec.MAX_BODY_BYTES:
        add(fence_line + 1, f"body is {size} bytes, over the {spec.MAX_BODY_BYTES}-byte limit",
            "split it into several memories or link to a file")
    problems.sort(key=lambda p: p.line)
    return problems, note


SCAN_MAX_BODY_BYTES = 4 * spec.MAX_BODY_BYTES  # a body past this is refused for its size alone


def _body_far_over_limit(text: str) -> bool:
    """Whether the body of a file's text is over SCAN_MAX_BODY_BYTES (False when it has no front
    matter): such a file is refused for its size, and scanning its megabytes for secrets took
    seconds (1.5 s a megabyte), so they are not scanned; a body nearer the limit is, so that one
    round names every problem."""
    if len(text) <= SCAN_MAX_BODY_BYTES // 4:  # no body this short can be over it, whatever its characters
        return False
    try:
        _, body, _ = notes.split(text)
    except notes.ParseError:
        return False
    return len(body.encode("utf-8", "surrogatepass")) > SCAN_MAX_BODY_BYTES


def conflict_line(text: str) -> int:
    """The 1-based line where git's conflict markers begin in `text`, or 0. Both an opening
    `<<<<<<<` and a closing `>>>>>>>` line are needed: a lone `=======` is a Markdown heading rule."""
    if "<<<<<<<" not in text or ">>>>>>>" not in text:
        return 0
    lines = text.split("\n")
    opening = next((n for n, line in enumerate(lines, start=1) if line.startswith("<<<<<<<")), 0)
    closing = any(line.startswith(">>>>>>>") for line in lines[opening:]) if opening else False
    return opening if closing else 0


def unusable(note: notes.Note, path: str) -> str:
    """Why a parsed memory can't be used by a pass (`class: [rule]` that arrived by merge), or "".

    Passes skip such a file and report it; unknown keys (a newer memrepo's) don't count."""
    stem = os.path.splitext(os.path.basename(path))[0]
    found = [p for p in _check_meta(note.meta, {}, path, stem) if not p.problem.startswith("unknown key")]
    return found[0].problem if found else ""


def _check_meta(meta: dict[str, Any], lines: dict[str, int], path: str, stem: str) -> list[Problem]:
    out: list[Problem] = []

    def add(key: str, problem: str, fix: str) -> None:
        out.append(Problem(path, lines.get(key, 1), problem, fix))

    for key in spec.REQUIRED_KEYS:
        if key not in meta or meta[key] in (None, ""):
            add(key, f"missing required key `{key}`", f"add `{key}:` to the front matter")
    for key in meta:
        if key not in spec.KEY_ORDER:
            add(key, f"unknown key `{key}`", f"remove it or use one of: {', '.join(spec.KEY_ORDER)}")
    _check_scalars(meta, add, stem)
    _check_lists_and_status(meta, add)
    return out


def _check_scalars(meta: dict[str, Any], add: Any, stem: str) -> None:
    mid = meta.get("id")
    if mid not in (None, ""):
        if not notes.is_id(mid):
            add("id", f"id {mid!r} is not kebab-case [a-z0-9-] of at most {spec.MAX_ID} characters",
                "use lowercase letters, digits and single hyphens")
        elif mid != stem:
            add("id", f"id `{mid}` is not the file name `{stem}.md`", f"rename the file to `{mid}.md` or set `id: {stem}`")
    for key, limit in (("title", spec.MAX_TITLE), ("description", spec.MAX_DESCRIPTION)):
        value = meta.get(key)
        if value in (None, ""):
            continue
        if not isinstance(value, str):
            add(key, f"`{key}` must be text, not {type(value).__name__}", "quote the value with single quotes")
        elif "\n" in value.strip():
            add(key, f"`{key}` must be one line", "join the lines")
        elif fence.problem(value.strip()):
            add(key, f"`{key}` {fence.problem(value.strip())}", ONE_LINE_FIX)
        elif len(value) > limit:
            add(key, f"`{key}` is {len(value)} characters, over {limit}", "shorten it; details go in the body")
    for key, allowed in (("class", spec.CLASSES), ("source", spec.SOURCES), ("status", spec.STATUSES)):
        value = meta.get(key)
        if value not in (None, "") and value not in allowed:
            add(key, f"unknown {key} {value!r}", f"use one of: {', '.join(allowed)}")
    if meta.get("created") not in (None, "") and not _is_date(meta["created"], allow_time=True):
        add("created", f"created {meta['created']!r} is not an ISO date", "write it as '2026-11-29' (quoted)")
    if "updated" in meta and not _is_date(meta["updated"], allow_time=True):
        add("updated", f"updated {meta['updated']!r} is not an ISO date", "write it as '2026-11-29' (quoted)")
    for key in ("project", "session"):
        if key in meta and not (isinstance(meta[key], str) and meta[key].strip()):
            add(key, f"`{key}` must be non-empty text", f"set a value or remove `{key}`")
    for key in ("project", "session", "superseded_by"):
        value = meta.get(key)
        if isinstance(value, str) and fence.problem(value):
            add(key, f"`{key}` {fence.problem(value)}", ONE_LINE_FIX)
    if "half_life_days" in meta:
        hl = meta["half_life_days"]
        if hl is not None and (isinstance(hl, bool) or not isinstance(hl, (int, float)) or not 0 < hl < math.inf):
            add("half_life_days", f"half_life_days {hl!r} is not a positive number", "use a number of days, or null for never")


def _check_lists_and_status(meta: dict[str, Any], add: Any) -> None:
    for key in spec.LIST_KEYS:
        if key in meta and not _str_list(meta[key]):
            add(key, f"`{key}` must be a list of words or phrases ({_not_words(meta[key])})", f"write it as `{key}: [one, two]`")
    for key in spec.LIST_KEYS:
        bad = [why for why in map(fence.problem, meta[key]) if why] if _str_list(meta.get(key)) else []
        if bad:
            add(key, f"an item of `{key}` {bad[0]}", ONE_LINE_FIX)
    upper = [t for t in meta["topics"] if t != t.lower()] if _str_list(meta.get("topics")) else []
    if upper:
        shown = ", ".join(repr(t[:40]) for t in upper[:3]) + (f" and {len(upper) - 3} more" if len(upper) > 3 else "")
        add("topics", f"topics must be lowercase ({shown})", "lowercase them; named things go in `entities`")
    status = meta.get("status", "active")
    sup = meta.get("superseded_by")
    if status == "superseded" and not (isinstance(sup, str) and sup):
        add("status", "status is superseded but `superseded_by` is missing", "add `superseded_by: <id of the newer memory>`")
    if sup is not None and status != "superseded":
        add("superseded_by", "`superseded_by` is set but status is not superseded", "add `status: superseded` or remove `superseded_by`")
    if sup is not None and not isinstance(sup, str):
        add("superseded_by", "`superseded_by` must be one memory id", "write the id of the newer memory")
    why = meta.get("retired_reason")
    if why is not None and (not isinstance(why, str) or not why.strip()):
        add("retired_reason", "`retired_reason` must be one line of text", "write why it no longer holds, or remove it")
    elif why is not None and fence.problem(why):
        add("retired_reason", f"`retired_reason` {fence.problem(why)}", ONE_LINE_FIX)
    elif why is not None and status != "retired":
        add("retired_reason", "`retired_reason` is set but status is not retired",
            "add `status: retired` or remove `retired_reason` (`memrepo undo` reverts a retire)")
    ver = meta.get("verification")
    if ver is not None:
        if not isinstance(ver, dict) or ver.get("status") not in spec.VERIFICATION_STATUSES:
            add("verification", "verification must be a mapping with status verified, unverified or unchecked",
                "let `memrepo verify` write it, or remove it")
        elif "failed" in ver and not _str_list(ver["failed"]):
            add("verification", "verification.failed must be a list of text", "let `memrepo verify` write it")
        elif "failed" in ver and any(map(fence.problem, ver["failed"])):
            why = next(filter(None, map(fence.problem, ver["failed"])))
            add("verification", f"a reason in verification.failed {why}", "let `memrepo verify` write it")
        elif "not_claims" in ver and not _str_list(ver["not_claims"]):
            add("verification", "verification.not_claims must be a list of text", "let `memrepo verify` write it")
        elif "not_claims" in ver and any(map(fence.problem, ver["not_claims"])):
            why = next(filter(None, map(fence.problem, ver["not_claims"])))
            add("verification", f"an entry of verification.not_claims {why}", "let `memrepo verify` write it")
    claims = meta.get("claims")
    if claims is not None and not (isinstance(claims, list) and all(isinstance(c, dict) and isinstance(c.get("probe"), str) for c in claims)):
        add("claims", "claims must be a list of probe mappings", "let `memrepo verify` write it, or remove it")


def check_profile(text: str, path: str) -> list[Problem]:
    """Validate the profile's text: each line is injected at session start, so none may break the fence."""
    out = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        why = fence.problem(line.rstrip("\r"))
        if why:
            out.append(Problem(path, lineno, f"the line {why}", ONE_LINE_FIX))
    return out


def check_graph(facts: Iterable[tuple[str, str, str | None]]) -> list[Problem]:
    """Repository-wide checks over (path, id, superseded_by): duplicate ids, dangling or cyclic supersession."""
    facts = list(facts)
    by_id: dict[str, str] = {}
    out: list[Problem] = []
    for path, mid, _ in facts:
        if mid in by_id:
            out.append(Problem(path, 2, f"duplicate id `{mid}` (also in {by_id[mid]})", "give one of them another id"))
        else:
            by_id[mid] = path
    edges = {mid: sup for _, mid, sup in facts if sup}
    for path, mid, sup in facts:
        if not sup:
            continue
        if sup not in by_id:
            out.append(Problem(path, 2, f"superseded_by names `{sup}`, which is no memory", "name an existing memory id"))
            continue
        seen = [mid]
        cur: str | None = sup
        while cur is not None and cur not in seen:
            seen.append(cur)
            cur = edges.get(cur)
        if cur == mid:
            chain = " → ".join(seen + [mid])
            out.append(Problem(path, 2, f"supersession cycle: {chain}", "one memory in the cycle must stay active"))
    return out
