"""A replay of scripted sessions in which memories are used and cited files go away (issue 43):
hit@2 and stale injections before and after the citation check and the renewal by use, with the
Stop hook's usage judgement's own accuracy on tests/data/usage beside them.

    python tests/bench/replay_usage.py [--json] [--quick]

The labeled set is written here: a code checkout `shop` (a real git repository) and memories of
it, some citing its files. The stream: sessions over 200 simulated days; between them the code
changes (a file deleted, a file renamed and the memory of its new name written, a helper
deleted); in each session labeled prompts are asked, each with the ids a right answer needs, and
a scripted reply: an honest agent's answer that names the facts of the memories it relied on
(the labeled ones it was given). The Stop hook's judge (`usage.judge_stop`) reads those replies;
its verdicts renew what was used.

"before" is recall without issue 43: citations not checked, no renewal by use (the same code
with `recall.citations.check` and the renewal turned off); "after" is recall as it is. Figures:
- hit@2: the prompts with a labeled answer whose memory is among the first two injected (the
  prompts whose only memory went stale expect silence: counted apart);
- stale injections: injected memories every path of which (in this checkout) is gone;
- unmarked partly stale: injected memories some path of which is gone, without the note.
The replies are scripted, not a model's: the renewal figures follow from the judge's verdicts
on them. The usage judge's accuracy comes from tests/bench/report_usage.py (labels written blind).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)
from memrepo.format import notes  # noqa: E402
from memrepo.recall import citations, decide, log, noisy, paths, usage  # noqa: E402
from memrepo.store import index  # noqa: E402

DAY = 86400.0
START = (2026 - 1970) * 365.25 * DAY  # about 2026-01-01

FILES = ("src/exporter.py", "src/auth/legacy_session.py", "src/auth/oauth.py", "scripts/warm_cache.sh",
         ".github/workflows/ci.yml", "src/ledger.py")

MEMORIES: list[dict[str, Any]] = [
    {"id": "exporter-batches", "title": "Invoice exporter batches ledger rows in chunks of 500",
     "description": "The invoice exporter batches ledger rows in chunks of 500 before writing the CSV.",
     "topics": ["invoice exporter", "ledger rows", "csv export"], "created": "2025-12-01",
     "body": "The batching lives in `src/exporter.py`; rows come from `src/ledger.py`.\n"},
    {"id": "legacy-session-auth", "title": "Sessions are signed by the legacy session module",
     "description": "Login sessions are signed with HMAC by the legacy session module, cookie name sid.",
     "topics": ["login sessions", "session cookie", "auth"], "created": "2025-12-01",
     "body": "See `src/auth/legacy_session.py`.\n"},
    {"id": "oauth-login", "title": "Google login goes through the OAuth module",
     "description": "Google sign-in uses the OAuth module with PKCE; the callback is /auth/callback.",
     "topics": ["google login", "oauth", "auth"], "created": "2025-12-01",
     "body": "See `src/auth/oauth.py`.\n"},
    {"id": "ci-cache-warmup", "title": "CI warms the dependency cache before the test job",
     "description": "The CI workflow warms the pip dependency cache with a script before the test job runs.",
     "topics": ["ci cache", "dependency cache", "ci workflow"], "created": "2025-12-01",
     "body": "The workflow is `.github/workflows/ci.yml`; the warm-up is `scripts/warm_cache.sh`.\n"},
    {"id": "release-checklist", "class": "project", "title": "Release checklist: tag, changelog, staging soak",
     "description": "A release is tagged, the changelog written, then it soaks on staging for a day.",
     "topics": ["release checklist", "release process"], "created": "2025-06-01", "body": "No files.\n"},
    {"id": "release-freeze-window", "class": "project", "title": "Release freeze window before quarter end",
     "description": "No release process runs in the last week of a quarter: the release checklist waits.",
     "topics": ["release freeze", "release process"], "created": "2025-09-01", "body": "No files.\n"},
]
LATER = {"id": "export-rows-batches", "title": "Invoice exporter moved: export_rows batches ledger rows",
         "description": "The invoice exporter now lives in export_rows and batches ledger rows in chunks of 1000.",
         "topics": ["invoice exporter", "ledger rows", "csv export"], "created": "2026-03-01",
         "body": "The batching lives in `src/export_rows.py`.\n"}

# (prompt, the ids a right answer needs in the top two; [] when silence is right)
PROMPTS = {
    "exporter": ("how does the invoice exporter batch the ledger rows?", ["exporter-batches"]),
    "session": ("how are login sessions signed, which session cookie?", ["legacy-session-auth"]),
    "oauth": ("how does google login work, is it oauth?", ["oauth-login"]),
    "ci": ("how does the ci cache warm up in the ci workflow?", ["ci-cache-warmup"]),
    "release": ("what is on the release checklist for the release process?", ["release-checklist"]),
}
# Sessions: (day, code changes before it, prompts asked). After day 60 the exporter file is renamed
# (and its new memory written), after day 90 the legacy session module is deleted (nothing replaces
# it: silence is right), after day 120 the cache warm-up script is deleted (the CI memory is half true).
STREAM: list[tuple[int, list[str], list[str]]] = [
    (10, [], ["exporter", "session", "oauth", "ci", "release"]),
    (40, [], ["release", "exporter"]),
    (61, ["rename-exporter"], ["exporter", "release"]),
    (91, ["delete-session"], ["session", "oauth", "release"]),
    (121, ["delete-warmup"], ["ci", "exporter", "session"]),
    (160, [], ["release", "session", "ci"]),
    (200, [], ["exporter", "session", "oauth", "ci", "release"]),
]


def _git(cwd: str, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _memory_text(m: dict[str, Any]) -> str:
    meta = {"id": m["id"], "title": m["title"], "description": m["description"], "class": m.get("class", "fact"),
            "source": "capture", "created": m["created"], "topics": m["topics"], "project": "shop"}
    return notes.serialize(notes.Note({k: meta[k] for k in notes.ordered_keys(meta)}, m["body"]))


def _write(repo: str, m: dict[str, Any]) -> None:
    with open(os.path.join(repo, "memory", m["id"] + ".md"), "w", encoding="utf-8") as fh:
        fh.write(_memory_text(m))


def _setup(tmp: str) -> tuple[str, str]:
    shop, repo = os.path.join(tmp, "shop"), os.path.join(tmp, "mem")
    os.makedirs(shop)
    _git(shop, "init", "-q", "-b", "main")
    for rel in FILES:
        os.makedirs(os.path.dirname(os.path.join(shop, rel)), exist_ok=True)
        with open(os.path.join(shop, rel), "w", encoding="utf-8") as fh:
            fh.write("x\n")
    os.makedirs(os.path.join(repo, "memory"))
    for m in MEMORIES:
        _write(repo, m)
    index.rebuild(repo)
    return shop, repo


def _change(shop: str, repo: str, what: str) -> None:
    if what == "rename-exporter":
        os.rename(os.path.join(shop, "src/exporter.py"), os.path.join(shop, "src/export_rows.py"))
        _write(repo, LATER)
        index.update(repo)
    elif what == "delete-session":
        os.remove(os.path.join(shop, "src/auth/legacy_session.py"))
    elif what == "delete-warmup":
        os.remove(os.path.join(shop, "scripts/warm_cache.sh"))


def _cited(m: dict[str, Any]) -> list[str]:
    return [c[0] for c in notes_citations(m)]


def notes_citations(m: dict[str, Any]) -> list[tuple[str, int | None, str | None]]:
    from memrepo.format import mentions

    return mentions.citations(m["title"], m["description"], m["body"])


def _reply(ids: list[str], given: list[str]) -> str:
    """An honest agent's scripted answer: it names the memories it relied on (the labeled ones it was given)."""
    by_id = {m["id"]: m for m in MEMORIES + [LATER]}
    used = [i for i in given if i in ids or (i == "export-rows-batches" and "exporter-batches" in ids)]
    return " ".join(f"Per {i}: {by_id[i]['description']}" for i in used) or "I could not find anything on that; let me look at the code."


def replay(after: bool) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="memrepo-replay-")
    check, renew = citations.check, noisy.renew
    if not after:  # recall as it was before issue 43: nothing checked, nothing renewed
        citations.check = lambda db, hits, *a, **k: (hits, [])  # type: ignore[assignment]
        noisy.renew = lambda *a, **k: None  # type: ignore[assignment]
    try:
        shop, repo = _setup(tmp)
        by_id = {m["id"]: m for m in MEMORIES + [LATER]}
        hits = total = quiet = stale = unmarked = marked = right_silence = 0
        for day, changes, asked in STREAM:
            for what in changes:
                _change(shop, repo, what)
            session = f"day-{day}"
            for name in asked:
                text, expect = PROMPTS[name]
                if name == "exporter" and day > 60:
                    expect = ["export-rows-batches"]
                if name == "session" and day > 90:
                    expect = []  # the module it describes is gone: what it says is no longer true
                d = decide.decide(repo, text, cwd=shop, today=START + day * DAY)
                log.log_decision(repo, text, d, session)
                got = [h.id for h in d.hits]
                if expect:
                    total += 1
                    hits += bool(set(expect) & set(got[:2]))
                else:
                    quiet += 1
                    right_silence += not got
                for h in d.hits:
                    cited = _cited(by_id[h.id])
                    gone = [c for c in cited if not os.path.exists(os.path.join(shop, c))]
                    stale += bool(cited) and len(gone) == len(cited)
                    if gone and len(gone) < len(cited):
                        marked += bool(h.gone)
                        unmarked += not h.gone
                usage.judge_stop(repo, session, _reply(expect, got))
        return {"prompts": total, "hit@2": round(hits / total, 3), "stale_injections": stale,
                "silence_expected": quiet, "silent": right_silence,
                "partly_stale_unmarked": unmarked, "partly_stale_with_note": marked}
    finally:
        citations.check, noisy.renew = check, renew
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--quick", action="store_true", help="the replay alone, without the usage judge's accuracy")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"before": replay(False), "after": replay(True),
                           "source": "scripted sessions and replies (tests/bench/replay_usage.py), not a model's"}
    if not args.quick:
        import report_usage

        judged = report_usage.measure()
        out["usage_judge"] = {k: judged[k] for k in ("cases", "pairs", "precision", "recall", "accuracy")}
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    for when in ("before", "after"):
        r = out[when]
        print(f"{when:<7} hit@2 {r['hit@2']:.3f} over {r['prompts']} prompts (goal: not lower after); stale injections "
              f"{r['stale_injections']} (goal: 0 after); partly stale without a note {r['partly_stale_unmarked']}, "
              f"with one {r['partly_stale_with_note']}; silent on {r['silent']} of {r['silence_expected']} prompts whose "
              "memory went stale (the rest got a related memory)")
    if "usage_judge" in out:
        u = out["usage_judge"]
        print(f"usage judge on tests/data/usage ({u['cases']} blind cases, {u['pairs']} pairs): precision {u['precision']}, "
              f"recall {u['recall']}, accuracy {u['accuracy']}")
    print(out["source"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
