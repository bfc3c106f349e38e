"""The previous turn, read from the tail of a Claude Code transcript."""

from __future__ import annotations

import json
import os
import shutil
import sys

from typing import Any

import pytest

from memrepo.recall import transcript_tail
from memrepo.recall.transcript_tail import previous_turn

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "claude-code")
SPOTTER_SHORT = os.path.join(FIXTURES, "spotter-short-2.1.38.jsonl")
MOCK_SESSION = os.path.join(FIXTURES, "cc-2.1.332-mock-session-excerpt.jsonl")
COMPACT = os.path.join(FIXTURES, "spotter-compact-excerpt-2.1.39.jsonl")
SUBAGENT = os.path.join(FIXTURES, "spotter-subagent-excerpt-2.1.39.jsonl")

SPOTTER_TURN = (
    "mix phx.server doesnt seem to start\n"
    "Let me check the project structure and try running the server to see the error.\n"
    "mix phx.server 2>&1 | head -80"
)
SPAWN_TURN = "SPAWN_SUBAGENT now\nDone: the tool returned its result."


def user(content: object, **extra: object) -> dict:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def assistant(msg_id: str, *blocks: dict, **extra: object) -> dict:
    return {
        "type": "assistant",
        "message": {"id": msg_id, "role": "assistant", "content": list(blocks)},
        **extra,
    }


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(name: str, **inputs: object) -> dict:
    return {"type": "tool_use", "id": "toolu_1", "name": name, "input": inputs}


def tool_result(value: str) -> dict:
    return {"type": "tool_result", "tool_use_id": "toolu_1", "content": value}


def write(path: str, *entries: object) -> str:
    with open(path, "w", encoding="utf-8") as f:
        for entry in entries:
            f.write(entry if isinstance(entry, str) else json.dumps(entry))
            f.write("\n")
    return path


def fixture_lines(path: str, upto: int) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][:upto]


# --- real transcripts ---------------------------------------------------------------------


def test_spotter_split_assistant_lines_thinking_and_rejected_tools() -> None:
    # Lines 5-10 are one API response split per block (text "\n\n", thinking, text, Bash,
    # Glob); then two rejected tool_results, an interrupt notice and local_command lines.
    assert previous_turn(SPOTTER_SHORT) == SPOTTER_TURN


def test_mock_session_last_turn_after_compaction() -> None:
    assert previous_turn(MOCK_SESSION) == "hello again\nHello from the mock model."


def test_mock_session_answered_prompt_equal_to_current_is_a_repeat() -> None:
    # "hello again" has a reply, so it cannot be the prompt being submitted now.
    assert previous_turn(MOCK_SESSION, "hello again") == "hello again\nHello from the mock model."


def test_mock_session_current_prompt_already_written(tmp_path: object) -> None:
    # Lines 1-61: "hello again" and its hook attachments, not answered yet. Walking back
    # crosses /compact (command, stdout, caveat, compact summary, boundary), the hook's
    # additional context and the Agent tool_result to the turn before.
    path = write(os.path.join(str(tmp_path), "t.jsonl"), *fixture_lines(MOCK_SESSION, 61))
    assert previous_turn(path, "hello again") == SPAWN_TURN
    assert previous_turn(path, "  hello   again ") == SPAWN_TURN
    assert previous_turn(path, "something else") == "hello again"


def test_mock_session_tool_call_turn(tmp_path: object) -> None:
    path = write(os.path.join(str(tmp_path), "t.jsonl"), *fixture_lines(MOCK_SESSION, 28))
    assert previous_turn(path) == (
        "RUN_BASH please\necho hello-from-bash\nDone: the tool returned its result."
    )


def test_compact_excerpt_has_no_human_prompt() -> None:
    assert previous_turn(COMPACT) == ""


def test_subagent_lines_are_sidechain() -> None:
    assert previous_turn(SUBAGENT) == ""


# --- transcripts written here -------------------------------------------------------------


def test_string_and_block_content(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("first question"),
        assistant("m1", text("first answer")),
        user([text("fix the flaky upload test"), {"type": "image", "source": {"data": "iVBO"}}]),
        assistant("m2", text("The upload test races the cleanup job.")),
    )
    assert previous_turn(path) == (
        "fix the flaky upload test\nThe upload test races the cleanup job."
    )


def test_split_assistant_message_joined_in_order_without_duplicates(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("why is nginx returning 502"),
        assistant("m1", text("\n\n")),
        assistant("m1", {"type": "thinking", "thinking": "secret plan", "signature": "x"}),
        assistant("m1", text("Checking the upstream config.")),
        assistant("m1", tool_use("Read", file_path="/etc/nginx/sites-enabled/app.conf")),
        user([tool_result("server { ... }")], toolUseResult={"type": "text"}),
        assistant("m2", text("The upstream port is wrong.")),
        assistant("m2", text("The upstream port is wrong.")),  # a line written twice
        assistant("m2", tool_use("Bash", command="sudo nginx -t\nsudo systemctl reload nginx")),
        assistant("m3", tool_use("Grep", pattern="proxy_pass")),
    )
    assert previous_turn(path) == (
        "why is nginx returning 502\n"
        "Checking the upstream config.\n"
        "/etc/nginx/sites-enabled/app.conf\n"
        "The upstream port is wrong.\n"
        "sudo nginx -t"
    )


@pytest.mark.parametrize(
    "noise",
    [
        user([tool_result("ok")]),
        user([tool_result("ok"), text("Tool loaded.")]),
        user("<local-command-caveat>Caveat</local-command-caveat>", isMeta=True),
        user("sidechain prompt", isSidechain=True),
        assistant("s1", text("sidechain reply"), isSidechain=True),
        user("This session is being continued from a previous conversation.", isCompactSummary=True),
        user("<command-name>/model</command-name>\n<command-message>model</command-message>"),
        user("<command-message>init</command-message>\n<command-name>/init</command-name>"),
        user("<local-command-stdout>Set model to opus</local-command-stdout>"),
        user("<bash-stdout>done</bash-stdout><bash-stderr></bash-stderr>"),
        user([text("[Request interrupted by user for tool use]")]),
        user("[Request interrupted by user]"),
        user("<system-reminder>\nmemrepo recall: deploy-rule\n</system-reminder>"),
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
        {"type": "system", "subtype": "turn_duration", "durationMs": 10},
        {"type": "summary", "summary": "Nginx debugging", "leafUuid": "u1"},
        {"type": "progress", "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit"}},
        {"type": "last-prompt", "lastPrompt": "typed later"},
        {"type": "queue-operation", "operation": "enqueue", "content": "queued prompt"},
        {"type": "future-kind", "message": {"role": "user", "content": "unknown"}},
        {"type": "user", "message": "not a dict"},
        {"type": "user"},
        ["a", "list"],
        "not json at all {",
        "",
    ],
)
def test_lines_that_are_not_part_of_a_turn(tmp_path: object, noise: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("rotate the staging certificate"),
        assistant("m1", text("Rotated; it expires in 90 days.")),
        noise,
    )
    assert previous_turn(path) == "rotate the staging certificate\nRotated; it expires in 90 days."


def test_memrepo_injected_context_never_feeds_back(tmp_path: object) -> None:
    injected = "<memrepo-recall>rule: Deploys go through make release</memrepo-recall>"
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("how do we deploy the docs site"),
        {
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": [injected],
                "hookName": "UserPromptSubmit",
                "hookEvent": "UserPromptSubmit",
            },
            "rendered": [{"content": "<system-reminder>\n" + injected + "\n</system-reminder>"}],
            "renderedRole": "system",
        },
        {"type": "attachment", "attachment": {"type": "hook_success", "content": injected}},
        user([text("and the api docs?"), text("<system-reminder>" + injected + "</system-reminder>")]),
        user("also check <user-prompt-submit-hook>" + injected + "</user-prompt-submit-hook>links"),
        assistant("m1", text("Netlify builds both.")),
    )
    assert previous_turn(path) == "also check links\nNetlify builds both."
    assert "Deploys" not in previous_turn(path, max_bytes=100000)


def test_no_human_prompt_returns_empty(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        {"type": "file-history-snapshot", "snapshot": {}},
        user([tool_result("x")]),
    )
    assert previous_turn(path) == ""


def test_prompt_without_reply_yet(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("old prompt"),
        assistant("m1", text("old reply")),
        user("interrupted before any reply"),
    )
    assert previous_turn(path) == "interrupted before any reply"
    assert previous_turn(path, "interrupted before any reply") == "old prompt\nold reply"


def test_repeated_prompt_is_skipped_only_once(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("continue"),
        assistant("m1", text("Step 2 done.")),
        user("continue"),
    )
    assert previous_turn(path, "continue") == "continue\nStep 2 done."


def test_image_only_prompt_keeps_the_reply(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("earlier"),
        assistant("m0", text("earlier reply")),
        user([{"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}}]),
        assistant("m1", text("The screenshot shows a 404.")),
    )
    assert previous_turn(path) == "The screenshot shows a 404."


def test_text_is_capped(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("p" * 5000),
        assistant("m1", text("a" * 5000)),
    )
    assert previous_turn(path) == "p" * 2000 + "\n" + "a" * 1999
    assert previous_turn(path, max_chars=10) == "ppppp\naaaa"


def test_partial_last_line_being_written(tmp_path: object) -> None:
    path = write(
        os.path.join(str(tmp_path), "t.jsonl"),
        user("q"),
        assistant("m1", text("r")),
    )
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"type":"user","message":{"role":"user","content":"half wri')
    assert previous_turn(path) == "q\nr"


# --- bounded reads ------------------------------------------------------------------------


def big_transcript(path: str, size: int, *tail: dict) -> str:
    """`ancient prompt`, then `size` bytes of tool output, then the `tail` entries."""
    filler = json.dumps(user([tool_result("x" * 2000)]), separators=(",", ":")) + "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(user("ancient prompt")) + "\n")
        f.write(filler * (size // len(filler) + 1))
        for entry in tail:
            f.write(json.dumps(entry) + "\n")
    return path


def test_five_megabytes_only_the_tail_is_read(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    path = big_transcript(
        os.path.join(str(tmp_path), "big.jsonl"),
        5 * 1024 * 1024,
        user("tail prompt"),
        assistant("m1", text("tail reply")),
        user("now"),
    )
    assert os.path.getsize(path) > 5 * 1024 * 1024
    # Counted, not timed: the bytes the reader asks the file for stay within the window.
    asked: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, f: Any) -> None:
            self.f = f

        def __enter__(self) -> "Counting":
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def __getattr__(self, name: str) -> Any:
            return getattr(self.f, name)

        def read(self, n: int = -1) -> bytes:
            assert n >= 0  # never "the rest of the file"
            data: bytes = self.f.read(n)
            asked.append(len(data))
            return data

    monkeypatch.setattr(transcript_tail, "open", lambda *a, **k: Counting(real_open(*a, **k)), raising=False)
    assert previous_turn(path, "now") == "tail prompt\ntail reply"
    assert 0 < sum(asked) <= transcript_tail.MAX_BYTES + 1 and sum(asked) < os.path.getsize(path) // 4


def test_five_megabytes_prompt_out_of_reach(tmp_path: object) -> None:
    # A long tool loop: the prompt that started it is 5 MB back, beyond the window.
    path = big_transcript(
        os.path.join(str(tmp_path), "big.jsonl"),
        5 * 1024 * 1024,
        assistant("m9", text("Tool loop finished.")),
    )
    assert previous_turn(path) == "Tool loop finished."
    assert previous_turn(path, max_bytes=6 * 1024 * 1024) == "ancient prompt\nTool loop finished."


def test_max_bytes_bounds_the_window(tmp_path: object) -> None:
    prompt = json.dumps(user("tail prompt")) + "\n"
    reply = json.dumps(assistant("m1", text("tail reply"))) + "\n"
    path = write(os.path.join(str(tmp_path), "t.jsonl"), user("x" * 5000), prompt[:-1], reply[:-1])
    size = os.path.getsize(path)
    assert previous_turn(path, max_bytes=len(reply) + len(prompt)) == "tail prompt\ntail reply"
    # One byte short: the prompt line is partial and dropped; the reply is returned alone.
    assert previous_turn(path, max_bytes=len(reply) + len(prompt) - 1) == "tail reply"
    assert previous_turn(path, max_bytes=len(reply)) == "tail reply"
    assert previous_turn(path, max_bytes=len(reply) - 1) == ""
    assert previous_turn(path, max_bytes=0) == ""
    assert previous_turn(path, max_bytes=size * 2) == "tail prompt\ntail reply"


def test_reads_are_bounded(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    path = big_transcript(
        os.path.join(str(tmp_path), "big.jsonl"),
        5 * 1024 * 1024,
        user("tail prompt"),
        assistant("m1", text("tail reply")),
    )
    sizes: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, f: object) -> None:
            self.f = f

        def __enter__(self) -> Spy:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()  # type: ignore[attr-defined]

        def fileno(self) -> int:
            return self.f.fileno()  # type: ignore[attr-defined]

        def seek(self, pos: int) -> int:
            return self.f.seek(pos)  # type: ignore[attr-defined]

        def read(self, n: int = -1) -> bytes:
            sizes.append(n)
            return self.f.read(n)  # type: ignore[attr-defined]

    monkeypatch.setattr(
        transcript_tail, "open", lambda *a, **k: Spy(real_open(*a, **k)), raising=False
    )
    assert previous_turn(path, max_bytes=4096) == "tail prompt\ntail reply"
    assert sizes == [4097]


def test_single_line_of_one_megabyte(tmp_path: object) -> None:
    huge = json.dumps(user("y" * (1024 * 1024)))
    path = write(os.path.join(str(tmp_path), "t.jsonl"), huge)
    assert previous_turn(path) == ""
    path2 = write(
        os.path.join(str(tmp_path), "t2.jsonl"),
        user("before"),
        huge,
        assistant("m1", text("after the huge line")),
    )
    assert previous_turn(path2) == "after the huge line"
    assert previous_turn(path2, max_bytes=4 * 1024 * 1024) == "y" * 2000 + "\nafter the huge line"


# --- errors: always "" ----------------------------------------------------------------------


def test_missing_file(tmp_path: object) -> None:
    assert previous_turn(os.path.join(str(tmp_path), "nope.jsonl")) == ""
    assert previous_turn("") == ""


def test_directory(tmp_path: object) -> None:
    assert previous_turn(str(tmp_path)) == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo_is_not_opened(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "fifo")
    os.mkfifo(path)
    assert previous_turn(path) == ""  # opening it would block until a writer came


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() == 0, reason="root reads unreadable files"
)
def test_unreadable_file(tmp_path: object) -> None:
    path = write(os.path.join(str(tmp_path), "t.jsonl"), user("q"), assistant("m", text("r")))
    os.chmod(path, 0)
    assert previous_turn(path) == ""


def test_permission_denied(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(os.path.join(str(tmp_path), "t.jsonl"), user("q"), assistant("m", text("r")))

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(transcript_tail, "open", denied, raising=False)
    assert previous_turn(path) == ""


@pytest.mark.parametrize(
    "garbage",
    [
        bytes(range(256)) * 64,
        b"\xff\xfe" + "user assistant".encode("utf-16-le") + b"\n" * 3,
        b'{"type":"user","message":{"role":"user","content":"\xff\xfe bad utf-8"}}\n',
        b"[" * 100000 + b'"user"' + b"]" * 100000 + b"\n",
        b'{"type":"user","message":{"role":"user","content":' + b"[" * 50000 + b"\n",
        b"\x00" * 10000,
    ],
)
def test_binary_garbage(tmp_path: object, garbage: bytes) -> None:
    path = os.path.join(str(tmp_path), "t.jsonl")
    with open(path, "wb") as f:
        f.write(garbage)
    assert previous_turn(path) == ""


def test_garbage_around_a_good_turn(tmp_path: object) -> None:
    path = os.path.join(str(tmp_path), "t.jsonl")
    with open(path, "wb") as f:
        f.write(bytes(range(256)) + b"\n")
        f.write(json.dumps(user("the real prompt")).encode() + b"\n")
        f.write(b"\xc3\x28 invalid utf-8 \"user\"\n")
        f.write(json.dumps(assistant("m1", text("the real reply"))).encode() + b"\n")
        f.write(b"\x00\x00\x00\n")
    assert previous_turn(path) == "the real prompt\nthe real reply"


def test_never_raises_on_wrong_argument_types(tmp_path: object) -> None:
    assert previous_turn(None) == ""  # type: ignore[arg-type]
    assert previous_turn(SPOTTER_SHORT, None) == SPOTTER_TURN  # type: ignore[arg-type]
    assert previous_turn(SPOTTER_SHORT, max_bytes="x") == ""  # type: ignore[arg-type]


def test_copied_fixture_is_read_in_place(tmp_path: object) -> None:
    copy = shutil.copy(SPOTTER_SHORT, os.path.join(str(tmp_path), "session.jsonl"))
    assert previous_turn(copy) == SPOTTER_TURN
