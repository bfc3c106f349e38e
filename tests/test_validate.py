"""Validation: every problem of a file at once, each as `path:line: problem — fix`."""

from __future__ import annotations

import pytest

from helpers import memory_text
from memrepo.format import validate

P = "memory/a.md"
FMT = f"run `memrepo fmt {P}`"
BASE = memory_text("a")
# BASE, numbered:
# 1 ---
# 2 id: a
# 3 title: Title of a
# 4 description: What a says, in one line.
# 5 class: fact
# 6 source: user
# 7 created: '2026-01-15'
# 8 ---
# 9 The body of a.
TOKEN = "ghp_" + "a1B2" * 9
KEYS = "id, title, description, class, source, created, updated, topics, entities, tech, aliases, project, status, superseded_by, retired_reason, half_life_days, verification, claims, session"


def edit(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def add_keys(*lines: str) -> str:
    return edit("created: '2026-01-15'\n", "created: '2026-01-15'\n" + "".join(line + "\n" for line in lines))


def drop(key: str) -> str:
    return "".join(line for line in BASE.splitlines(keepends=True) if not line.startswith(key + ":"))


def check(text: str, path: str = P) -> list[str]:
    problems, _ = validate.check_text(text, path)
    return [str(p) for p in problems]


def test_canonical_memory_is_valid() -> None:
    problems, note = validate.check_text(BASE, P)
    assert problems == []
    assert note is not None and note.id == "a"


QUOTE = "quote the value with single quotes"
CASES = {
    "unparsable-mapping-value": (edit("title: Title of a", "title: a: b"), [
        f"{P}:3: front matter is not valid YAML (mapping values are not allowed in this context) — {QUOTE}"]),
    "unparsable-unclosed-bracket": (edit("description: What a says, in one line.", "description: [unclosed"), [
        f"{P}:4: front matter is not valid YAML (did not find expected ',' or ']') — {QUOTE}"]),
    "unparsable-unclosed-quote": (edit("title: Title of a", 'title: "unclosed'), [
        f"{P}:3: front matter is not valid YAML (found unexpected end of stream) — {QUOTE}"]),
    "unparsable-tab-indent": (edit("class: fact", "\tclass: fact"), [
        f"{P}:5: front matter is not valid YAML (found a tab character that violates indentation) — {QUOTE}"]),
    "unparsable-bad-indent": (edit("source: user", "  source: user"), [
        f"{P}:6: front matter is not valid YAML (mapping values are not allowed in this context) — {QUOTE}"]),
    "merge-conflict-markers": (BASE.replace("The body", "<<<<<<< ours\nThe body\n=======\nTheir body\n>>>>>>> theirs\nThe body", 1), [
        f"{P}:9: holds git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`): a merge was left unfinished — keep one "
        f"version of each conflicting part and delete the marker lines (or take a side with `git checkout --ours -- {P}` "
        f"/ `--theirs`), then `git add {P}` and commit"]),
    "not-a-mapping": ("---\n- a\n- b\n---\nbody\n", [
        f"{P}:2: front matter is not a mapping of keys — write one `key: value` per line"]),
    "no-front-matter": ("# Just markdown\n\nNo keys.\n", [
        f"{P}:1: no front matter — start the file with a `---` line, the YAML keys, then `---`"]),
    "front-matter-not-first": ("\n" + BASE, [
        f"{P}:1: no front matter — start the file with a `---` line, the YAML keys, then `---`"]),
    "unclosed-front-matter": (BASE.replace("---\nThe body", "The body"), [
        f"{P}:1: front matter is never closed — add a `---` line after the last key"]),
    "empty-file": ("", [
        f"{P}:1: file must end with exactly one newline — {FMT}",
        f"{P}:1: no front matter — start the file with a `---` line, the YAML keys, then `---`"]),
    "missing-id": (drop("id"), [f"{P}:1: missing required key `id` — add `id:` to the front matter"]),
    "missing-title": (drop("title"), [f"{P}:1: missing required key `title` — add `title:` to the front matter"]),
    "missing-description": (drop("description"), [
        f"{P}:1: missing required key `description` — add `description:` to the front matter"]),
    "missing-class": (drop("class"), [f"{P}:1: missing required key `class` — add `class:` to the front matter"]),
    "missing-source": (drop("source"), [f"{P}:1: missing required key `source` — add `source:` to the front matter"]),
    "missing-created": (drop("created"), [
        f"{P}:1: missing required key `created` — add `created:` to the front matter"]),
    "empty-title": (edit("title: Title of a", "title: ''"), [
        f"{P}:3: missing required key `title` — add `title:` to the front matter"]),
    "null-class": (edit("class: fact", "class:"), [
        f"{P}:5: missing required key `class` — add `class:` to the front matter"]),
    "title-as-list": (edit("title: Title of a", "title: [a, b]"), [
        f"{P}:3: `title` must be text, not list — {QUOTE}"]),
    "title-as-number": (edit("title: Title of a", "title: 2026"), [
        f"{P}:3: `title` must be text, not int — {QUOTE}"]),
    "description-as-bool": (edit("description: What a says, in one line.", "description: yes"), [
        f"{P}:4: `description` must be text, not bool — {QUOTE}"]),
    "created-as-number": (edit("created: '2026-01-15'", "created: 20260115"), [
        f"{P}:7: created 20260115 is not an ISO date — write it as '2026-11-29' (quoted)"]),
    "created-not-a-date": (edit("created: '2026-01-15'", "created: last tuesday"), [
        f"{P}:7: created 'last tuesday' is not an ISO date — write it as '2026-11-29' (quoted)"]),
    "updated-not-a-date": (add_keys("updated: 2026/01/16"), [
        f"{P}:8: updated '2026/01/16' is not an ISO date — write it as '2026-11-29' (quoted)"]),
    "created-off-the-calendar": (edit("created: '2026-01-15'", "created: '2026-11-31'"), [
        f"{P}:7: created '2026-11-31' is not an ISO date — write it as '2026-11-29' (quoted)"]),
    "updated-hour-25": (add_keys("updated: '2026-01-16T25:00:00Z'"), [
        f"{P}:8: updated '2026-01-16T25:00:00Z' is not an ISO date — write it as '2026-11-29' (quoted)"]),
    "retired-reason-without-retired": (add_keys("retired_reason: it moved"), [
        f"{P}:8: `retired_reason` is set but status is not retired — add `status: retired` or remove "
        "`retired_reason` (`memrepo undo` reverts a retire)"]),
    "id-as-number": (edit("id: a", "id: 7"), [
        f"{P}:2: id 7 is not kebab-case [a-z0-9-] of at most 80 characters — use lowercase letters, digits and single hyphens"]),
    "unknown-class": (edit("class: fact", "class: wish"), [
        f"{P}:5: unknown class 'wish' — use one of: rule, preference, fact, project, event, reference"]),
    "unknown-source": (edit("source: user", "source: bot"), [
        f"{P}:6: unknown source 'bot' — use one of: user, agent, capture, import"]),
    "unknown-status": (add_keys("status: zombie"), [
        f"{P}:8: unknown status 'zombie' — use one of: active, superseded, retired"]),
    "id-not-the-stem": (edit("id: a", "id: b"), [
        f"{P}:2: id `b` is not the file name `a.md` — rename the file to `b.md` or set `id: a`"]),
    "title-too-long": (edit("title: Title of a", "title: " + "t" * 121), [
        f"{P}:3: `title` is 121 characters, over 120 — shorten it; details go in the body"]),
    "description-too-long": (edit("description: What a says, in one line.", "description: " + "d" * 201), [
        f"{P}:4: `description` is 201 characters, over 200 — shorten it; details go in the body"]),
    "multi-line-description": (edit("description: What a says, in one line.", "description: |\n  line one\n  line two"), [
        f"{P}:4: `description` must be one line — join the lines"]),
    "superseded-without-superseded-by": (add_keys("status: superseded"), [
        f"{P}:8: status is superseded but `superseded_by` is missing — add `superseded_by: <id of the newer memory>`"]),
    "superseded-by-without-status": (add_keys("superseded_by: b"), [
        f"{P}:8: `superseded_by` is set but status is not superseded — add `status: superseded` or remove `superseded_by`"]),
    "superseded-by-active": (add_keys("status: active", "superseded_by: b"), [
        f"{P}:9: `superseded_by` is set but status is not superseded — add `status: superseded` or remove `superseded_by`"]),
    "superseded-by-list": (add_keys("status: superseded", "superseded_by: [b, c]"), [
        f"{P}:8: status is superseded but `superseded_by` is missing — add `superseded_by: <id of the newer memory>`",
        f"{P}:9: `superseded_by` must be one memory id — write the id of the newer memory"]),
    "body-over-64k": (edit("The body of a.\n", "x" * (64 * 1024) + "\n"), [
        f"{P}:9: body is 65537 bytes, over the 65536-byte limit — split it into several memories or link to a file"]),
    "body-over-64k-multibyte": (edit("The body of a.\n", "é" * (32 * 1024) + "\n"), [
        f"{P}:9: body is 65537 bytes, over the 65536-byte limit — split it into several memories or link to a file"]),
    "secret-in-body": (edit("The body of a.", f"The token is {TOKEN} for CI."), [
        f"{P}:9: looks like a secret (github-token: ghp_…a1B2) — remove it and keep secrets in a secrets manager, "
        "or add `memrepo: allow-secret` to the line if it is not one"]),
    "secret-in-front-matter": (edit("title: Title of a", "title: key " + "sk-ant-" + "x9" * 15), [
        f"{P}:3: looks like a secret (anthropic-key: sk-ant-…x9x9) — remove it and keep secrets in a secrets manager, "
        "or add `memrepo: allow-secret` to the line if it is not one"]),
    "unknown-key": (add_keys("colour: red"), [
        f"{P}:8: unknown key `colour` — remove it or use one of: {KEYS}"]),
    "duplicate-key": (add_keys("title: Second title"), [
        f"{P}:8: key `title` appears twice (also on line 3) — keep one of them"]),
    "topics-not-lowercase": (add_keys("topics: [Backups, ci]"), [
        f"{P}:8: topics must be lowercase ('Backups') — lowercase them; named things go in `entities`"]),
    "topics-not-a-list": (add_keys("topics: backups"), [
        f"{P}:8: `topics` must be a list of words or phrases (it is one text) — write it as `topics: [one, two]`"]),
    "entities-with-number": (add_keys("entities: [tb-db-1, 42]"), [
        f"{P}:8: `entities` must be a list of words or phrases (item 2 is a number) — write it as `entities: [one, two]`"]),
    "half-life-negative": (add_keys("half_life_days: -3"), [
        f"{P}:8: half_life_days -3 is not a positive number — use a number of days, or null for never"]),
    "half-life-text": (add_keys("half_life_days: forever"), [
        f"{P}:8: half_life_days 'forever' is not a positive number — use a number of days, or null for never"]),
    "project-empty-list": (add_keys("project: []"), [
        f"{P}:8: `project` must be non-empty text — set a value or remove `project`"]),
    "verification-bad-status": (add_keys("verification: {status: maybe}"), [
        f"{P}:8: verification must be a mapping with status verified, unverified or unchecked — let `memrepo verify` write it, or remove it"]),
    "verification-not-a-mapping": (add_keys("verification: verified"), [
        f"{P}:8: verification must be a mapping with status verified, unverified or unchecked — let `memrepo verify` write it, or remove it"]),
    "verification-failed-not-text": (add_keys("verification:", "  status: unverified", "  failed: [1, 2]"), [
        f"{P}:8: verification.failed must be a list of text — let `memrepo verify` write it"]),
    "claims-without-probe": (add_keys("claims:", "  - {path: ops/x}"), [
        f"{P}:8: claims must be a list of probe mappings — let `memrepo verify` write it, or remove it"]),
    "crlf": (BASE.replace("\n", "\r\n"), [f"{P}:1: line endings are CRLF — {FMT}"]),
    "bom": ("\ufeff" + BASE, [f"{P}:1: file starts with a byte order mark — {FMT}"]),
    "no-final-newline": (BASE.rstrip("\n"), [f"{P}:8: file must end with exactly one newline — {FMT}"]),
    "two-final-newlines": (BASE + "\n", [f"{P}:10: file must end with exactly one newline — {FMT}"]),
}


@pytest.mark.parametrize(("text", "expected"), CASES.values(), ids=CASES.keys())
def test_each_rejection(text: str, expected: list[str]) -> None:
    assert check(text) == expected


@pytest.mark.parametrize(("mid", "path"), [
    ("A_b", "memory/A_b.md"),
    ("a--b", "memory/a--b.md"),
    ("-a", "memory/-a.md"),
    ("a-", "memory/a-.md"),
    ("a.b", "memory/a.b.md"),
    ("café", "memory/café.md"),
    ("a" * 81, "memory/" + "a" * 81 + ".md"),
])
def test_bad_id_characters(mid: str, path: str) -> None:
    text = memory_text("a").replace("id: a\n", f"id: {mid}\n")
    assert check(text, path) == [
        f"{path}:2: id {mid!r} is not kebab-case [a-z0-9-] of at most 80 characters — use lowercase letters, digits and single hyphens"]


@pytest.mark.parametrize("text", [
    edit("title: Title of a", "title: " + "t" * 120),
    edit("description: What a says, in one line.", "description: " + "d" * 200),
    edit("The body of a.\n", "x" * (64 * 1024 - 1) + "\n"),
    edit("created: '2026-01-15'", "created: 2026-01-15"),
    edit("created: '2026-01-15'", "created: '2026-01-15T10:20:30+02:00'"),
    edit("id: a", "id: " + "a" * 80).replace("Title of a", "t"),
    add_keys("status: superseded", "superseded_by: b"),
    add_keys("status: retired"),
    add_keys("half_life_days: null"),
    add_keys("topics: [backups, disaster recovery]", "entities: [Hetzner, tb-db-1]", "tech: [PostgreSQL]"),
    add_keys("verification:", "  status: unverified", "  checked: '2026-11-20'", "  failed: ['path_exists: x']"),
    add_keys("claims:", "  - {probe: path_exists, path: ops/x}"),
    edit("The body of a.", f"The token is {TOKEN} for CI. <!-- memrepo: allow-secret -->"),
    edit("title: Title of a", "title: fake sk-ant-" + "x9" * 15 + "  # memrepo: allow-secret"),
    edit("The body of a.", "Intro\n---\nnot a fence problem\n---"),
])
def test_valid_variants(text: str) -> None:
    path = "memory/" + ("a" * 80 if "id: " + "a" * 80 in text else "a") + ".md"
    assert check(text, path) == []


def test_allow_marker_applies_to_its_line_only() -> None:
    text = edit("The body of a.", f"ok {TOKEN} memrepo: allow-secret\nbad {TOKEN}")
    assert check(text) == [
        f"{P}:10: looks like a secret (github-token: ghp_…a1B2) — remove it and keep secrets in a secrets manager, "
        "or add `memrepo: allow-secret` to the line if it is not one"]


def test_a_file_with_several_problems_reports_all_of_them_in_line_order() -> None:
    text = (
        "---\r\n"
        "id: Bad_Id\r\n"
        "title: [a, b]\r\n"
        "class: wish\r\n"
        "source: bot\r\n"
        "created: 20260115\r\n"
        "topics: [Backups]\r\n"
        "status: superseded\r\n"
        "colour: red\r\n"
        "---\r\n"
        f"secret {TOKEN}\r\n"
        + "x" * (64 * 1024) + "\r\n"
    )
    assert check(text) == [
        f"{P}:1: line endings are CRLF — {FMT}",
        f"{P}:1: missing required key `description` — add `description:` to the front matter",
        f"{P}:2: id 'Bad_Id' is not kebab-case [a-z0-9-] of at most 80 characters — use lowercase letters, digits and single hyphens",
        f"{P}:3: `title` must be text, not list — {QUOTE}",
        f"{P}:4: unknown class 'wish' — use one of: rule, preference, fact, project, event, reference",
        f"{P}:5: unknown source 'bot' — use one of: user, agent, capture, import",
        f"{P}:6: created 20260115 is not an ISO date — write it as '2026-11-29' (quoted)",
        f"{P}:7: topics must be lowercase ('Backups') — lowercase them; named things go in `entities`",
        f"{P}:8: status is superseded but `superseded_by` is missing — add `superseded_by: <id of the newer memory>`",
        f"{P}:9: unknown key `colour` — remove it or use one of: {KEYS}",
        f"{P}:11: looks like a secret (github-token: ghp_…a1B2) — remove it and keep secrets in a secrets manager, "
        "or add `memrepo: allow-secret` to the line if it is not one",
        f"{P}:11: body is 65587 bytes, over the 65536-byte limit — split it into several memories or link to a file",
    ]


def test_parse_error_still_reports_file_level_problems() -> None:
    text = f"---\r\nid: a\r\ntitle: a: b\r\n---\r\n{TOKEN}"
    assert check(text) == [
        f"{P}:1: line endings are CRLF — {FMT}",
        f"{P}:3: front matter is not valid YAML (mapping values are not allowed in this context) — {QUOTE}",
        f"{P}:4: file must end with exactly one newline — {FMT}",
        f"{P}:5: looks like a secret (github-token: ghp_…a1B2) — remove it and keep secrets in a secrets manager, "
        "or add `memrepo: allow-secret` to the line if it is not one",
    ]


# -- check_graph ------------------------------------------------------------------

GRAPH_CASES = {
    "clean": ([("memory/a.md", "a", None), ("memory/b.md", "b", "a")], []),
    "duplicate-id": ([("memory/a.md", "a", None), ("memory/b.md", "a", None)], [
        "memory/b.md:2: duplicate id `a` (also in memory/a.md) — give one of them another id"]),
    "dangling": ([("memory/a.md", "a", "gone")], [
        "memory/a.md:2: superseded_by names `gone`, which is no memory — name an existing memory id"]),
    "self-cycle": ([("memory/a.md", "a", "a")], [
        "memory/a.md:2: supersession cycle: a → a — one memory in the cycle must stay active"]),
    "two-cycle": ([("memory/a.md", "a", "b"), ("memory/b.md", "b", "a")], [
        "memory/a.md:2: supersession cycle: a → b → a — one memory in the cycle must stay active",
        "memory/b.md:2: supersession cycle: b → a → b — one memory in the cycle must stay active"]),
    "three-cycle": ([("memory/a.md", "a", "b"), ("memory/b.md", "b", "c"), ("memory/c.md", "c", "a")], [
        "memory/a.md:2: supersession cycle: a → b → c → a — one memory in the cycle must stay active",
        "memory/b.md:2: supersession cycle: b → c → a → b — one memory in the cycle must stay active",
        "memory/c.md:2: supersession cycle: c → a → b → c — one memory in the cycle must stay active"]),
    "chain-into-cycle-blames-only-the-cycle": (
        [("memory/x.md", "x", "a"), ("memory/a.md", "a", "b"), ("memory/b.md", "b", "a")], [
            "memory/a.md:2: supersession cycle: a → b → a — one memory in the cycle must stay active",
            "memory/b.md:2: supersession cycle: b → a → b — one memory in the cycle must stay active"]),
    "long-chain-is-fine": ([(f"memory/m{i}.md", f"m{i}", f"m{i + 1}") for i in range(50)] + [("memory/m50.md", "m50", None)], []),
}


@pytest.mark.parametrize(("facts", "expected"), GRAPH_CASES.values(), ids=GRAPH_CASES.keys())
def test_check_graph(facts: list, expected: list[str]) -> None:
    assert [str(p) for p in validate.check_graph(facts)] == expected


def test_conflict_markers_need_both_ends() -> None:
    from memrepo.format import validate

    heading = "A title\n=======\n\nText.\n"
    assert validate.conflict_line(heading) == 0  # a Markdown heading rule, not a merge
    merged = "intro\n<<<<<<< ours\nmine\n=======\ntheirs\n>>>>>>> theirs\n"
    assert validate.conflict_line(merged) == 2
    assert validate.conflict_line("x\n>>>>>>> only a close\n<<<<<<< then an open\n") == 0


def test_a_body_far_over_the_limit_is_refused_for_its_size_without_a_secret_scan() -> None:
    """Scanning megabytes for secrets took seconds (1.5 s a megabyte) for a file refused for its
    size anyway: past four times the limit the size is the problem named; nearer the limit every
    problem still is (the test above with a secret and a body of 65,587 bytes)."""
    scanned: list[str] = []

    def find_secrets(text: str) -> list[tuple[int, str, str]]:
        scanned.append(text)
        return [(9, "github-token", "ghp_…a1B2")]

    assert validate.SCAN_MAX_BODY_BYTES == 4 * 64 * 1024
    first = f"The token is {TOKEN}.\n"
    far = edit("The body of a.\n", first + "x" * (validate.SCAN_MAX_BODY_BYTES - len(first)) + "\n")
    problems, _ = validate.check_text(far, P, find_secrets)
    assert [str(p) for p in problems] == [
        f"{P}:9: body is 262145 bytes, over the 65536-byte limit — split it into several memories or link to a file"]
    assert scanned == []
    near = edit("The body of a.\n", first + "x" * (validate.SCAN_MAX_BODY_BYTES - len(first) - 1) + "\n")
    problems, _ = validate.check_text(near, P, find_secrets)
    assert scanned == [near]
    assert [p.problem.split(" (")[0] for p in problems] == ["looks like a secret", "body is 262144 bytes, over the 65536-byte limit"]


def test_a_list_key_names_the_item_that_is_not_a_word() -> None:
    """An agent's `remember` with topics ["Has Space", "UPPER", ""] learns which item to fix."""
    assert check(add_keys('topics: ["deploys", ""]')) == [
        f"{P}:8: `topics` must be a list of words or phrases (item 2 is empty) — write it as `topics: [one, two]`"]
    assert check(add_keys("aliases: [one, {two: 2}]")) == [
        f"{P}:8: `aliases` must be a list of words or phrases (item 2 is a mapping) — write it as `aliases: [one, two]`"]
    assert check(add_keys("topics: [Has Space, UPPER, Ok, Fine, Five]")) == [
        f"{P}:8: topics must be lowercase ('Has Space', 'UPPER', 'Ok' and 2 more) — lowercase them; named things go in `entities`"]
