"""Recall counts each index term once, and leans on the previous turn only when the prompt's own
words are known to the store (issue 17, parts 3 and 4)."""

from __future__ import annotations

from helpers import commit_all, write_memory
from memrepo.recall import decide as recall, query
from memrepo.store import index

DEPLOY_TURN = "I deployed the api to staging with the blue-green script and the smoke checks passed."


def store(repo: str) -> str:
    write_memory(repo, "deploy-blue-green", title="Deploys are blue-green", topics=["deploy", "staging"],
                 description="The api deploys to staging and production with the blue-green script.",
                 body="Run `scripts/deploy.sh --blue-green`; the smoke checks gate the switch.\n")
    write_memory(repo, "refund-window", title="Refund window is 14 days", topics=["refunds", "payments"],
                 description="Customers can ask for a refund within 14 days of delivery.", body="After that, support decides.\n")
    assert commit_all(repo, "memories").returncode == 0
    index.update(repo)
    return repo


def test_words_fts5_folds_together_are_one_term() -> None:
    assert query.build_query("refund refunds policy for validators and validation").terms == ("refund", "policy", "validators")


def test_a_follow_up_with_no_word_the_store_knows_recalls_nothing(repo: str) -> None:
    store(repo)
    d = recall.decide(repo, "explain that again but shorter", previous=DEPLOY_TURN)
    assert d.hits == [] and d.silent == "no-match"
    d = recall.decide(repo, "pode ser, avança", previous=DEPLOY_TURN)
    assert d.hits == []


def test_a_follow_up_whose_words_the_store_knows_still_leans_on_the_previous_turn(repo: str) -> None:
    store(repo)
    d = recall.decide(repo, "and on staging?", previous=DEPLOY_TURN)
    assert [h.id for h in d.hits][:1] == ["deploy-blue-green"] and d.context_terms
