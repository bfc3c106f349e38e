"""The transcript reader over real Claude Code transcripts and over transcripts the tests write."""

from __future__ import annotations

import json
import os
import sys
import tracemalloc

import pytest

from memrepo.format import transcript

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures", "claude-code")
sys.path.insert(0, os.path.join(HERE, "data", "capture"))

from ccbuild import Session  # noqa: E402

FAKE_KEY = "sk-ant-api03-" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz"


def shape(path: str, **kw: bool) -> list[tuple[int, int, str, str]]:
    return [(t.line, t.last_line, t.role, t.kind) for t in transcript.read(path, **kw)]


def test_real_short_session_merges_split_reply_and_drops_thinking() -> None:
    path = os.path.join(FIXTURES, "spotter-short-2.1.38.jsonl")
    assert shape(path) == [(4, 4, "user", "prompt"), (5, 10, "assistant", "reply"), (11, 11, "tool", "tool_result"),
                           (12, 12, "tool", "tool_result"), (13, 13, "user", "command")]
    turns = list(transcript.read(path))
    reply = turns[1]
    assert reply.text == "Let me check the project structure and try running the server to see the error."
    assert [(c.name, c.command, c.paths) for c in reply.tools] == [
        ("Bash", "mix phx.server 2>&1 | head -80", []), ("Glob", "", ["/home/marco/projects/spotter"])]
    assert reply.message_id.startswith("msg_01MKH1cc") and reply.session_id == "55604662-cf2a-4331-851a-ec234028f8ca"
    assert turns[2].is_error and turns[2].tool_use_ids == ["toolu_0116Hyi5v8ut7Ffb7d8qV1Sc"]
    assert turns[0].uuid == "7d48cbd2-6615-4dd8-87f6-38f12b8167d6" and turns[0].timestamp == "2026-02-10T21:11:56.846Z"
    assert all("Phoenix server" not in t.text for t in turns)  # the thinking block


def test_real_332_session_drops_attachments_meta_and_bookkeeping() -> None:
    path = os.path.join(FIXTURES, "cc-2.1.332-mock-session-excerpt.jsonl")
    turns = list(transcript.read(path))
    assert [(t.line, t.role, t.kind) for t in turns] == [
        (4, "user", "prompt"), (16, "assistant", "reply"), (19, "tool", "tool_result"), (20, "assistant", "reply"),
        (29, "user", "prompt"), (32, "assistant", "reply"), (33, "tool", "tool_result"), (34, "assistant", "reply"),
        (43, "system", "compact_boundary"), (44, "user", "compact_summary"), (46, "user", "command"),
        (47, "user", "command"), (56, "user", "prompt"), (62, "assistant", "reply")]
    assert turns[8].text == "manual"
    everything = json.dumps([t.as_dict() for t in turns])
    assert "<<CTX-" not in everything and "<<PLAIN-" not in everything  # hook output attachments
    assert "local-command-caveat" not in everything
    with_meta = list(transcript.read(path, meta=True))
    assert [t.line for t in with_meta if t.line not in {t.line for t in turns}] == [45]
    assert turns[1].tools[0].as_dict() == {"id": "toolu_5d8cbd3ec5d84a9d8dec5daa", "name": "Bash", "command": "echo hello-from-bash",
                                           "paths": [], "description": "Print a greeting"}


@pytest.mark.parametrize("sidechains, expected", [(False, []), (True, [(1, 1, "user", "prompt"), (2, 3, "assistant", "reply")])])
def test_sidechain_lines_only_when_asked(sidechains: bool, expected: list[tuple[int, int, str, str]]) -> None:
    path = os.path.join(FIXTURES, "spotter-subagent-excerpt-2.1.39.jsonl")
    assert shape(path, sidechains=sidechains)[:2] == expected
    if sidechains:
        assert all(t.is_sidechain and t.agent_id == "a2898e3" for t in transcript.read(path, sidechains=True))


def test_compact_boundary_and_summary() -> None:
    turns = list(transcript.read(os.path.join(FIXTURES, "spotter-compact-excerpt-2.1.39.jsonl")))
    assert [(t.kind, t.text[:40]) for t in turns] == [
        ("compact_boundary", "auto"), ("compact_summary", "This session is being continued from a p")]


def _written(tmp_path: str) -> tuple[str, Session]:
    s = Session()
    s.user("plain string prompt about the deploy script")
    s.user([{"type": "text", "text": "block prompt"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" + "A" * 5000}}])
    s.user(f"my key is {FAKE_KEY} and <private>the staging password is hunter2-hunter2</private> keep going")
    s.user("before <private>never shown, the tag is not closed")
    s.user("<memrepo-memories>\n- (rule) Old note: recalled text (id: old-note)\n</memrepo-memories>\nwhat next?")
    s.attachment("hook_additional_context", ["memrepo recalled 1 note from the user's memory repository"])
    s.assistant({"type": "thinking", "thinking": "secret plan", "signature": "x"}, msg_id="msg_a")
    s.assistant({"type": "text", "text": "First part."}, msg_id="msg_a")
    s.assistant({"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {"file_path": "/srv/app/deploy.sh", "old_string": "a", "new_string": "b"}}, msg_id="msg_a")
    s.assistant({"type": "text", "text": "Second part."}, msg_id="msg_a")
    s.user([{"tool_use_id": "toolu_1", "type": "tool_result",
             "content": [{"type": "text", "text": "ok data:image/png;base64," + "Qk0" * 300},
                         {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}])
    s.raw({"type": "brand-new-line-type", "uuid": "zzz", "message": {"role": "user", "content": "ignored"}})
    s.raw({"type": "summary", "summary": "Deploy script work", "leafUuid": s.lines[0]["uuid"]})
    s.raw({"type": "summary", "summary": "From another session", "leafUuid": "not-in-this-file"})
    path = os.path.join(str(tmp_path), "s.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(s.text())
        fh.write("{broken json\n\n")
    return path, s


def test_written_transcript_edge_cases(tmp_path: str) -> None:
    path, _ = _written(tmp_path)
    turns = list(transcript.read(path))
    assert [(t.role, t.kind, t.text) for t in turns] == [
        ("user", "prompt", "plain string prompt about the deploy script"),
        ("user", "prompt", "block prompt"),
        ("user", "prompt", "my key is [REDACTED:anthropic-key] and  keep going"),
        ("user", "prompt", "before"),
        ("user", "prompt", "what next?"),
        ("assistant", "reply", "First part.\nSecond part."),
        ("tool", "tool_result", "ok [base64]"),
        ("system", "title", "Deploy script work"),
    ]
    assert turns[5].tools[0].paths == ["/srv/app/deploy.sh"] and (turns[5].line, turns[5].last_line) == (7, 10)
    dump = json.dumps([t.as_dict() for t in turns])
    for leaked in (FAKE_KEY, "hunter2", "never shown", "secret plan", "iVBORw0KGgo", "Old note", "memrepo recalled"):
        assert leaked not in dump


def test_start_line_resumes_and_counts(tmp_path: str) -> None:
    path, s = _written(tmp_path)
    # the title line names a leaf before line 5, so it is not trusted from a resumed read
    assert [t.line for t in transcript.read(path, start_line=5)] == [7, 11]
    assert transcript.count_lines(path) == len(s.lines) + 2
    assert transcript.uuid_at(path, 1) == s.lines[0]["uuid"] and transcript.uuid_at(path, 999) is None


def test_100_mb_transcript_in_bounded_memory(tmp_path: str) -> None:
    path = os.path.join(str(tmp_path), "big.jsonl")
    s = Session()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * (1024 * 1024)}}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "user", "uuid": "huge", "message": {"role": "user", "content": "x" * (30 * 1024 * 1024)}}) + "\n")
        for i in range(70):
            s.lines = []
            s.user([{"type": "text", "text": f"screenshot {i}"}, image])
            fh.write(s.text())
        s.lines = []
        s.user("the last prompt")
        s.say("the last reply")
        fh.write(s.text())
    assert os.path.getsize(path) > 100 * 1024 * 1024
    tracemalloc.start()
    try:
        turns = list(transcript.read(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [t.text for t in turns[-2:]] == ["the last prompt", "the last reply"]
    assert turns[0].text == "screenshot 0" and len(turns) == 72  # the 30 MB line is skipped, never held
    assert peak < 40 * 1024 * 1024, peak


def test_a_line_still_being_written_is_left_for_next_time(tmp_path: str) -> None:
    s = Session()
    s.user("first prompt")
    s.say("first reply")
    path = os.path.join(str(tmp_path), "live.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(s.text())
        fh.write(json.dumps(s.lines[0])[:40])  # half of the next line
    assert [t.text for t in transcript.read(path)] == ["first prompt", "first reply"]
    assert transcript.count_lines(path) == 2
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(s.text().rstrip("\n"))  # a complete last line without its newline still counts
    assert transcript.count_lines(path) == 2 and len(list(transcript.read(path))) == 2
