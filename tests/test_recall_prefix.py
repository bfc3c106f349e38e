"""A prompt word the store has never seen is searched by its prefix (issue 36): a Portuguese or
Spanish prompt about English memories finds them through its cognates, at a reduced weight, and
user text never changes the MATCH grammar on the way."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing

import pytest

from helpers import commit_all, write_memory
from memrepo.base import paths
from memrepo.recall import decide as recall, rank, search
from memrepo.store import index

TODAY = time.mktime(time.strptime("2026-11-30", "%Y-%m-%d"))
TOKENIZER = "porter unicode61 remove_diacritics 2"  # the index's own

MEMORIES = {
    "alert-silences": dict(title="Alert silences go through amtool", description="Silences for planned maintenance are set with amtool and expire after two hours.",
                           topics=["alerting", "maintenance"], entities=["Alertmanager"]),
    "agent-context-budget": dict(title="Keep agent contexts under 50k tokens", description="Long contexts made the agent slower and less precise; summarise before 50k.",
                                 topics=["agents", "tokens"]),
    "deploy-days": dict(class_="rule", source="user", title="Deploys only Tuesday to Thursday",
                        description="No deploys on Fridays or Mondays."),
}


@pytest.fixture(autouse=True)
def prefix_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # The mechanism is an experiment, off in the code (search.PREFIX_WEIGHT 0): these tests run it
    # at the fitting sets' choice, 5 letters at weight 0.55.
    monkeypatch.setattr(search, "PREFIX_CHARS", 5)
    monkeypatch.setattr(search, "PREFIX_WEIGHT", 0.55)


@pytest.fixture
def store(repo: str) -> str:
    for mid, fields in MEMORIES.items():
        write_memory(repo, mid, **fields)
    assert commit_all(repo, "memories").returncode == 0
    index.update(repo)
    return repo


def ids(d: recall.Decision) -> list[str]:
    return [h.id for h in d.hits]


@pytest.mark.parametrize("prompt, expected", [
    ("como silenciar os alertas durante a manutenção?", "alert-silences"),
    ("qual o limite de contexto do agente?", "agent-context-budget"),
])
def test_a_portuguese_prompt_recalls_the_english_memory_its_cognate_names(
        store: str, prompt: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    d = recall.decide(store, prompt, today=TODAY)
    assert ids(d) == [expected]
    prefixed = {t for t in d.hits[0].matched if t.endswith(search.PREFIX_MARK)}
    assert prefixed and all(len(t) == search.PREFIX_CHARS + 1 for t in prefixed)
    monkeypatch.setattr(search, "PREFIX_WEIGHT", 0.0)  # without the prefix search: silent
    assert ids(recall.decide(store, prompt, today=TODAY)) == []


def test_a_prefix_term_weighs_less_than_the_word_itself(store: str) -> None:
    whole = recall.decide(store, "agent contexts", today=TODAY).hits[0]
    cognate = recall.decide(store, "agent contexto", today=TODAY).hits[0]
    assert whole.id == cognate.id == "agent-context-budget"
    assert set(cognate.matched) == {"agent", "conte*"}
    assert cognate.relevance < whole.relevance


def test_a_name_the_store_does_not_know_stays_a_name(store: str) -> None:
    # "Alertina" is written as a name: a person or product the store does not know, searched as itself.
    why: list = []
    recall.decide(store, "ask Alertina about it", today=TODAY, explain=why)
    assert why == [(None, "no memory holds any of the prompt's words (or they are in too many to tell any apart)")]


def _statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    connect = search.connect

    def traced(path: str) -> sqlite3.Connection:
        db = connect(path)
        db.set_trace_callback(seen.append)
        return db

    monkeypatch.setattr(search, "connect", traced)
    return seen


@pytest.mark.parametrize("prompt", ["deploy on friday", "can we deploy on a friday with the zzqxwvy?"])
def test_a_prompt_with_no_unknown_word_or_none_that_prefixes_a_word_costs_nothing(
        store: str, prompt: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _statements(monkeypatch)
    on = recall.decide(store, prompt, today=TODAY)
    with_prefix = list(seen)
    seen.clear()
    monkeypatch.setattr(search, "PREFIX_WEIGHT", 0.0)
    off = recall.decide(store, prompt, today=TODAY)
    assert ids(on) == ids(off) == ["deploy-days"]
    assert [(h.relevance, h.features) for h in on.hits] == [(h.relevance, h.features) for h in off.hits]
    extra = [s for s in with_prefix if s not in seen]
    # an unknown word is counted by its prefix once (one bounded statement); a known one never is
    assert len(extra) == ("zzqxwvy" in prompt)
    assert all("MATCH" in s for s in extra)


def test_only_the_prompts_own_words_are_searched_by_prefix(store: str) -> None:
    with closing(search.connect(paths.index_db(store))) as db:
        facts = search.Lookups(db, ["contexto", "silenciar", "zzqxwvy", "ab"])
        terms = [("contexto", 1.0), ("silenciar", 0.6), ("zzqxwvy", 1.0), ("ab", 1.0)]
        got, origin, _ = rank._widen(db, facts, terms, {"silenciar": "previous"}, frozenset(), frozenset())
    assert got == [("conte*", pytest.approx(search.PREFIX_WEIGHT)), ("silenciar", 0.6), ("zzqxwvy", 1.0), ("ab", 1.0)]
    assert origin["conte*"] == "own"


HOSTILE = ['contexto*', '"contexto" OR *', 'NEAR(contexto silenciar)', 'contexto NEAR silenciar', 'title:contexto',
           '{title body}:silenciamento', '^contexto', 'contexto AND NOT x', '(contexto', '"', '*contexto*']


@pytest.mark.parametrize("prompt", HOSTILE)
def test_a_hostile_prompt_cannot_change_the_match_grammar(store: str, prompt: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    match = search.match

    def recorded(term: str) -> str:
        made.append(match(term))
        return made[-1]

    monkeypatch.setattr(search, "match", recorded)
    recall.decide(store, prompt, today=TODAY)  # never raises: every term reaches MATCH quoted
    for expr in made:
        body = expr[:-2] if expr.endswith('" *') else expr
        assert body[0] == body[-1] == '"' and '"' not in body[1:-1].replace('""', "")
        if expr.endswith(" *"):
            assert body[1:-1].isalpha() and len(body) - 2 == search.PREFIX_CHARS


@pytest.mark.parametrize("text, decoy", [("depl", True), ("(depl", True), ('de"pl', False), ("NEAR", False),
                                         ("title:depl", False), ("*", False), ("depl OR friday", False)])
def test_a_prefix_term_is_a_quoted_prefix_query(text: str, decoy: bool) -> None:
    # Only its words, as a phrase whose last word is a prefix, find a row: "(depl" finds "deploy"
    # by its letters, "title:depl" is no column filter and "depl OR friday" no operator.
    with closing(sqlite3.connect(":memory:")) as db:
        db.execute(f"CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize='{TOKENIZER}')")
        db.execute("INSERT INTO fts(rowid, title, body) VALUES (1, 'deploy', 'friday')")
        expr = search.match(text + search.PREFIX_MARK)
        assert expr == search.quote(text) + " *"
        found = [r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,))]
    assert found == [1] * decoy
