"""The cache's term statistics (store/docstats.py) and recall's scoring from them (issue 22).

Recall scores its candidates from `docterms`/`terms` instead of bm25() walks of each term's
doclist. These tests hold the two to the same figures, bit for bit, and check that every writer
keeps the tables in step with the full-text index, and that a cache without usable statistics
(an older build, other weights, a damaged `averages` record) falls back to bm25() instead of
scoring wrong.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from typing import Any

import pytest

from helpers import commit_all, git, write_memory
from memrepo.evaluation import evaluate
from memrepo.base import paths
from memrepo.recall import decide, porter, search
from memrepo.store import docstats, index

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
TODAY = time.mktime(time.strptime("2026-11-30", "%Y-%m-%d"))


def _stats(repo: str) -> tuple[dict[str, tuple[int, str]], dict[str, int]]:
    """Each memory's (length, terms text) by id, and each token's document count."""
    db = sqlite3.connect(paths.index_db(repo))
    try:
        per = {i: (dl, text) for i, dl, text in
               db.execute("SELECT m.id, d.dl, d.terms FROM docterms d JOIN memories m ON m.rowid = d.rowid")}
        dfs = dict(db.execute("SELECT term, df FROM terms"))
        assert db.execute("SELECT count(*) FROM docterms").fetchone()[0] == len(per)  # no orphan row
        return per, dfs
    finally:
        db.close()


def _rebuilt_copy(repo: str, tmp_path: Any) -> str:
    fresh = str(tmp_path / "fresh")
    shutil.copytree(os.path.join(repo, "memory"), os.path.join(fresh, "memory"))
    index.rebuild(fresh)
    return fresh


def _project(cwd: str | None) -> str | None:
    # the labeled sets' cwds are /home/<user>/<folder>/<project>/...: the project is the fourth part
    parts = (cwd or "").strip("/").split("/")
    return parts[3] if len(parts) > 3 else None


def _decisions(repo: str, prompts: list[dict[str, Any]]) -> list[list[tuple[str, float, float]]]:
    out = []
    for row in prompts:
        d = decide.decide(repo, row["prompt"], previous=evaluate.previous_text(row), today=TODAY,
                          project=_project(row.get("cwd")))
        out.append([(h.id, h.score, h.p) for h in d.hits])
    return out


class _Counting:
    """Counts the calls of search._stat_hits (scoring from the cache's statistics) that returned."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = search._stat_hits

        def counted(*args: Any) -> Any:
            got = real(*args)
            self.calls += 1  # only a call that scored: one that raised fell back to bm25()
            return got

        monkeypatch.setattr(search, "_stat_hits", counted)


@pytest.mark.parametrize("name", ("recall_blind", "recall_chat"))
def test_scores_from_the_statistics_equal_bm25s_bit_for_bit(name: str, tmp_path: Any,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    repo = str(tmp_path / name)
    shutil.copytree(os.path.join(DATA, name, "memory"), os.path.join(repo, "memory"))
    index.rebuild(repo)
    prompts = list(evaluate.load_prompts(os.path.join(DATA, name, "prompts.jsonl")))
    counting = _Counting(monkeypatch)
    fast = _decisions(repo, prompts)
    assert counting.calls > len(prompts) // 2  # most prompts scored from the statistics
    monkeypatch.setattr(search, "_token", lambda word: None)  # every word through bm25()
    calls = counting.calls
    slow = _decisions(repo, prompts)
    assert counting.calls == calls
    assert sum(1 for hits in fast if hits) > 10
    assert fast == slow


def test_commits_keep_the_statistics_equal_to_a_rebuilds(repo: str, tmp_path: Any) -> None:
    write_memory(repo, "deploy-window", title="Deploy window", description="Deploys stop at 16:00 on Fridays.",
                 entities=["Acme"], body="Ask the release captain before deploying late.\n")
    write_memory(repo, "cache-keys", title="Cache keys", description="Redis keys carry the tenant id.",
                 tech=["redis"], body="Keys look like tenant:42:session.\n")
    write_memory(repo, "empty-ish", title="Ok", description="Ok.", body="")
    assert commit_all(repo, "three").returncode == 0
    write_memory(repo, "deploy-window", title="Deploy window", description="Deploys stop at 15:00 on Fridays.",
                 entities=["Acme", "Globex"], body="The captain decides; deploying deploys deployed.\n")
    write_memory(repo, "cafe-notes", title="Café Wi-Fi", description="The café's network blocks SSH.",
                 body="Use the phone's hotspot at the café.\n")
    assert commit_all(repo, "edit one, add one").returncode == 0
    git(repo, "rm", "-q", "memory/cache-keys.md")
    assert commit_all(repo, "remove one").returncode == 0
    index.update(repo)
    per, dfs = _stats(repo)
    assert sorted(per) == ["cafe-notes", "deploy-window", "empty-ish"]
    assert "redi" not in dfs and dfs["deploi"] == 1  # the removed memory's tokens are gone
    assert (per, dfs) == _stats(_rebuilt_copy(repo, tmp_path))


def test_the_statistics_hold_fts5s_own_tokens_and_weights(repo: str) -> None:
    write_memory(repo, "deploy-window", title="Deploy window", description="Deploys stop on Fridays.",
                 entities=["Acme"], tech=["kubernetes"], body="Ask before deploying.\n")
    assert commit_all(repo, "one").returncode == 0
    per, dfs = _stats(repo)
    dl, text = per["deploy-window"]
    fields = {p.rsplit(":", 2)[0]: p.rsplit(":", 2)[1:] for p in text.split()}
    # "deploy" in the title (weight 8) and "deploys", "deploying" in prose (3, 1): twice 12
    assert fields["deploi"] == ["24", str(1 | 4)]
    assert fields["acm"] == ["10", "2"] and fields["kubernet"] == ["3", "0"]
    db = sqlite3.connect(paths.index_db(repo))
    n_rows, avgdl = search._averages(db.execute("SELECT block FROM fts_data WHERE id = 1").fetchone()[0])  # type: ignore[misc]
    assert n_rows == db.execute("SELECT count(*) FROM fts").fetchone()[0]
    assert avgdl == float(dl) / n_rows
    db.close()
    assert dfs["deploi"] == 1


@pytest.mark.parametrize("block", [b"", b"\x01", b"\x00" * 8, b"\x81" * 200, "text", None])
def test_an_unreadable_averages_record_is_not_used(block: Any) -> None:
    assert search._averages(block) is None


def test_tokens_are_known_only_where_fts5s_are_certain() -> None:
    assert search._token("deploys") == "deploi"
    assert search._token("k8s") == porter.stem("k8s")
    for word in ("café", "Deploy", "tenant:42", "naïve", "über", "日本"):
        assert search._token(word) is None


def _one(repo: str) -> None:
    write_memory(repo, "deploy-window", title="Deploy window", description="Deploys stop at 16:00 on Fridays.",
                 body="Ask the release captain.\n")
    write_memory(repo, "cafe-notes", title="Café Wi-Fi", description="The café network blocks SSH.",
                 body="Use the hotspot.\n")
    for i in range(6):
        write_memory(repo, f"other-{i}", title=f"Other note {i}", description="Something unrelated entirely.")
    assert commit_all(repo, "memories").returncode == 0


def _search(repo: str, words: list[str]) -> dict[str, float]:
    db = search.connect(paths.index_db(repo))
    try:
        found = search.relevance(db, [(w, 1.0) for w in words])
        ids = dict(db.execute("SELECT rowid, id FROM memories"))
        return {ids[r]: ev.score for r, ev in found.items()}
    finally:
        db.close()


def test_a_word_without_a_certain_token_scores_by_bm25_beside_the_others(repo: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _one(repo)
    counting = _Counting(monkeypatch)
    mixed = _search(repo, ["café", "deploys", "network"])
    assert counting.calls == 1 and set(mixed) == {"cafe-notes", "deploy-window"}
    monkeypatch.setattr(search, "_token", lambda word: None)
    assert _search(repo, ["café", "deploys", "network"]) == mixed and counting.calls == 1


def _tamper(repo: str, sql: str) -> None:
    db = sqlite3.connect(paths.index_db(repo))
    with db:
        db.execute(sql)
    db.close()


@pytest.mark.parametrize("sql", [
    "UPDATE meta SET value = 'v0 other weights' WHERE key = 'docstats'",
    "DELETE FROM meta WHERE key = 'docstats'",
    "DROP TABLE terms",
    "DROP TABLE docterms",
])
def test_a_cache_without_usable_statistics_scores_by_bm25_and_the_next_update_rebuilds(
        sql: str, repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _one(repo)
    want = _search(repo, ["deploys", "captain"])
    assert want
    _tamper(repo, sql)
    counting = _Counting(monkeypatch)
    assert _search(repo, ["deploys", "captain"]) == want
    assert counting.calls == 0
    report = index.update(repo)
    assert report.rebuilt
    assert _search(repo, ["deploys", "captain"]) == want and counting.calls == 1
    db = sqlite3.connect(paths.index_db(repo))
    assert docstats.current(db)
    db.close()


def test_a_cache_with_a_damaged_averages_record_scores_by_bm25(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _one(repo)
    monkeypatch.setattr(search, "_averages", lambda block: None)
    counting = _Counting(monkeypatch)
    assert set(_search(repo, ["deploys", "captain"])) == {"deploy-window"}
    assert counting.calls == 0


def test_weights_that_are_not_halves_are_refused_before_a_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "WEIGHTS", (8.0, 6.0, 5.0, 5.0, 1.25, 3.0, 1.0))
    with pytest.raises(ValueError, match="multiples of 0.5"):
        docstats._check_weights()
