"""Claude Code transcript reader (stdlib only): a JSONL session file → conversation turns.

`read` also reads Codex CLI's rollouts and Gemini CLI's session files (`sniff` tells them
apart by their first line; `codex_rollout`, `gemini_chat`) into the same turns.

Streams the file line by line with a per-line cap, so a 100 MB transcript is read in bounded
memory. What it yields has already been cleaned for every consumer (capture, a transcript
search index): images and base64 runs dropped; memrepo's own injected context dropped
(`attachment` lines such as hook_additional_context / hook_success, `<memrepo-memories>`
blocks and `<system-reminder>` blocks inside user text — see anthropics/claude-code#11906);
`<private>…</private>` spans removed (an unclosed one runs to the end of its block); secret-
looking strings replaced by `[REDACTED:<kind>]`. Nothing private or secret leaves this module.

A `Turn` is one of:
- role "user", kind "prompt": text a person typed (string content or text blocks);
- role "user", kind "command": a slash command or its local output, an interrupt notice;
- role "user", kind "compact_summary": the summary Claude Code writes after compaction;
- role "tool", kind "tool_result": tool output sent back to the model (`tool_use_ids`, `is_error`);
- role "assistant", kind "reply": one API message, its lines merged on `message.id`:
  text blocks joined, `thinking` dropped, `tool_use` blocks as `tools`;
- role "system", kind "compact_boundary": where history was compacted (`text` is the trigger);
- role "system", kind "title": an older build's `summary` line, kept only when its `leafUuid`
  is a line of the same file.
Lines of unknown type, `progress`, bookkeeping and `attachment` lines never become turns;
`isMeta` lines and sidechain (subagent) lines are skipped unless asked for.
"""

from __future__ import annotations

from typing import IO, Any, Iterator

from memrepo.format.turns import (MAX_LINE_BYTES, MAX_TEXT_CHARS, MAX_TOOL_FIELD, ToolCall, Turn,  # noqa: F401 (part of the reader's API)
                                   clean, lines as _lines, parse_line as _parse)

MAX_TITLES = 200
PATH_KEYS = ("file_path", "path", "notebook_path")
# Every model call of an offline pass starts its prompt with this mark (`passes.model.call`), so
# the session a `claude -p` model command may leave behind is never indexed as the user's own
# work (issue 16). Prompts from before the mark start with one of the pass prompts' first words.
OWN_MARK = "[memrepo background pass"
_OWN_OPENERS = (
    OWN_MARK,
    "You write long-term memories for a coding agent from part of one of its sessions.",
    "For each memory below, list up to 8 aliases",
    "You curate a memory store of notes an agent relies on.",
    "You draft a Claude Code skill (SKILL.md) from a procedure",
    "You read one memory of a coding agent and list the checkable claims",
)


def is_memrepo_prompt(text: str) -> bool:
    """True when a session's first prompt is one of memrepo's own model calls."""
    return text.lstrip().startswith(_OWN_OPENERS)


_NOT_A_PROMPT = ("<command-name>", "<command-message>", "<command-args>", "<local-command-", "<bash-stdout>",
                 "<bash-stderr>", "[Request interrupted by user")
def _block_texts(content: Any) -> list[str]:
    """Texts of string content or of text blocks (images, documents, thinking dropped)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
        elif isinstance(block, str):
            out.append(block)
    return out


def _tool_call(block: dict[str, Any]) -> ToolCall:
    _args = block.get("input")
    args: dict[str, Any] = _args if isinstance(_args, dict) else {}
    raw_command = args.get("command")
    command = raw_command if isinstance(raw_command, str) else ""
    paths = [clean(args[k])[:MAX_TOOL_FIELD] for k in PATH_KEYS if isinstance(args.get(k), str) and args[k]]
    desc = args.get("description") or args.get("prompt") or args.get("pattern") or ""
    return ToolCall(str(block.get("id") or ""), str(block.get("name") or "?"), clean(command)[:MAX_TOOL_FIELD], paths,
                    clean(str(desc))[:MAX_TOOL_FIELD] if isinstance(desc, str) else "")


def _user_turn(raw: dict[str, Any], content: Any, line: int) -> Turn | None:
    if raw.get("isCompactSummary"):
        return Turn(raw, "user", "compact_summary", clean("\n".join(_block_texts(content))), line)
    blocks = content if isinstance(content, list) else []
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results:
        texts = [t for b in results for t in _block_texts(b.get("content"))]
        turn = Turn(raw, "tool", "tool_result", clean("\n".join(texts)), line)
        turn.tool_use_ids = [str(b.get("tool_use_id") or "") for b in results]
        turn.is_error = any(bool(b.get("is_error")) for b in results)
        return turn
    text = "\n".join(_block_texts(content))
    kind = "command" if text.lstrip().startswith(_NOT_A_PROMPT) else "prompt"
    text = clean(text)
    return Turn(raw, "user", kind, text, line) if text else None


def _assistant_part(raw: dict[str, Any], content: Any, line: int) -> Turn:
    turn = Turn(raw, "assistant", "reply", "", line)
    _extend(turn, raw, content, line)
    return turn


def _extend(turn: Turn, raw: dict[str, Any], content: Any, line: int) -> None:
    """Add one line's blocks to an assistant turn (Claude Code splits one reply over lines)."""
    texts = [turn.text] if turn.text else []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            turn.tools.append(_tool_call(block))
    piece = clean("\n".join(_block_texts(content)))
    if piece:
        texts.append(piece)
    turn.text = "\n".join(texts)[: MAX_TEXT_CHARS + 10]
    turn.last_line = line


def read(path: str, start_line: int = 0, sidechains: bool = False, meta: bool = False) -> Iterator[Turn]:
    """Turns of the transcript at `path` after line `start_line`, in file order.

    `sidechains` also yields subagent lines (`is_sidechain` set); `meta` also yields `isMeta`
    harness lines (as kind "command"). Malformed lines and unknown line types are skipped.
    """
    with open(path, "rb") as fh:
        agent = sniff(fh)
        if agent == "gemini":
            from memrepo.format import gemini_chat

            yield from gemini_chat.read_stream(fh, start_line)
        elif agent == "codex":
            from memrepo.format import codex_rollout

            yield from codex_rollout.read_stream(fh, start_line)
        else:
            yield from read_stream(fh, start_line, sidechains, meta)


def sniff(fh: IO[bytes]) -> str:
    """Which agent wrote the session file open in `fh`: "gemini", "codex" or "claude" (the
    default, also for an empty file); `fh` is left at its start."""
    first = _parse(fh.readline(MAX_LINE_BYTES + 1))
    fh.seek(0)
    if first is None:
        return "claude"
    from memrepo.format import codex_rollout, gemini_chat

    if gemini_chat.is_gemini(first):
        return "gemini"
    return "codex" if codex_rollout.is_codex(first) else "claude"


def read_stream(fh: IO[bytes], start_line: int = 0, sidechains: bool = False, meta: bool = False) -> Iterator[Turn]:
    pending: Turn | None = None
    seen: set[str] = set()
    titles: list[tuple[int, dict[str, Any]]] = []
    for n, data in _lines(fh, start_line):
        raw = _parse(data)
        if raw is None:
            continue
        kind = raw.get("type")
        if raw.get("uuid"):
            seen.add(str(raw["uuid"]))
        if kind == "summary" and len(titles) < MAX_TITLES:
            titles.append((n, raw))
            continue
        if kind not in ("user", "assistant", "system") or (raw.get("isSidechain") and not sidechains):
            continue
        _message = raw.get("message")
        message: dict[str, Any] = _message if isinstance(_message, dict) else {}
        if kind == "assistant":
            mid = message.get("id")
            if pending is not None and mid and pending.message_id == mid:
                _extend(pending, raw, message.get("content"), n)
                continue
            if pending is not None:
                yield pending
            pending = _assistant_part(raw, message.get("content"), n)
            continue
        turn = _other_turn(raw, kind, message, n, meta)
        if turn is None:
            continue
        if pending is not None:
            yield pending
            pending = None
        yield turn
    if pending is not None:
        yield pending
    for n, raw in titles:
        if str(raw.get("leafUuid") or "") in seen and isinstance(raw.get("summary"), str):
            yield Turn({"uuid": raw.get("leafUuid")}, "system", "title", clean(raw["summary"]), n)


def _other_turn(raw: dict[str, Any], kind: str, message: dict[str, Any], n: int, meta: bool) -> Turn | None:
    if kind == "system":
        if raw.get("subtype") != "compact_boundary":
            return None
        _md = raw.get("compactMetadata")
        md: dict[str, Any] = _md if isinstance(_md, dict) else {}
        return Turn(raw, "system", "compact_boundary", str(md.get("trigger") or ""), n)
    if raw.get("isMeta"):
        if not meta:
            return None
        text = clean("\n".join(_block_texts(message.get("content"))))
        return Turn(raw, "user", "command", text, n) if text else None
    return _user_turn(raw, message.get("content"), n)


def count_lines(path: str) -> int:
    """Lines in the file (what a capture has read up to), counted in bounded memory."""
    n = 0
    with open(path, "rb") as fh:
        for n, _ in _lines(fh, 0):
            pass
    return n


def uuid_at(path: str, line: int) -> str | None:
    """The `uuid` of line `line` (1-based), or None."""
    if line <= 0:
        return None
    with open(path, "rb") as fh:
        for n, data in _lines(fh, line - 1):
            raw = _parse(data)
            return str(raw.get("uuid")) if raw and raw.get("uuid") else None
    return None
