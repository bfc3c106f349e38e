"""Whether recall speaks: the evidence of a prompt's best match, as quantities that mean the same
in any store, combined by a small fitted model (stdlib only: the prompt path).

A bm25 sum grows with the store and the prompt, so no constant floor on it separates a real
question from a general one (issue 36: the same rule was silent in a store of five memories and
recalled once four unrelated ones were added). The decision reads instead:

- `lnrel`: the match's score over the most the query could score (every term at its idf and the
  saturated frequency of BM25), on a log scale;
- `cov`: the share of the prompt's idf mass (words the store knows) the memory holds, and `covall`
  the share of the whole prompt's, a word the store has never seen (not a name) counted as an
  average word of the prompt; `subj`,
  `ent`, `tech`, `common`: the shares it holds in its subject fields (title, aliases, topics), in
  its entities, only in `tech:`, and in everyday words;
- `owncov`: the share of the prompt's own words' mass it holds (not the previous turn's);
- `names`, `other`: the share of the prompt's mass in words the store has never seen, written as
  names (capitalised inside a sentence: a person or product the store does not know) and the
  rest (another language, a typo), each counted at the idf of the rarest word;

- `techw`: the share it holds in words that only ever name a technology in this store (in some
  memory's `tech:`, in no memory's `entities:`): a textbook question about a tool the store uses
  holds little else;
- `ours`: 1 when the prompt speaks in the first person plural ("our", "we"): of the user's own
  team or setup;
- `margin`: how far it leads the next candidate; `nm`: how many of the prompt's words it holds;
  `lnnt`: how many words the prompt has; `scope`: 1 when it is global or the prompt's project's;
- `bare`: 1 when the memory lists no aliases, topics or entities (a dialogue turn an importer
  made): prose is all such a memory can match in, so its matches read differently.

`p_inject` combines them by logistic regression. The coefficients are constants, fitted by
`tests/bench/fit_recall.py` on the sets it names (the fitting sets are never the ones quoted as
results); rerun it after changing a feature (`--write`). The store's size is deliberately not a
feature: fitted on stores of 3 to 650 memories, it silenced half the answers once 10,000
distractors were added.
"""

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Container

K1 = 1.2  # FTS5's bm25() k1: a term's saturated frequency part is at most K1 + 1
MAX_MATCHED = 6

FEATURES = ("lnrel", "cov", "covall", "subj", "ent", "tech", "common", "owncov", "names", "other", "margin", "nm", "lnnt",
            "scope", "bare", "techw", "ours")
# The sign each feature's coefficient must have, by what it means (+1 more evidence for speaking,
# -1 less, 0 either): the fit leaves out a feature whose fitted sign says otherwise, so the
# decision never counts a better match against speaking (collinear features can fit either way).
SIGNS = {"lnrel": 1, "cov": 1, "covall": 1, "subj": 1, "ent": 1, "tech": -1, "common": -1, "owncov": 1, "names": -1,
         "other": -1, "margin": 1, "nm": 1, "lnnt": 0, "scope": 1, "bare": 0, "techw": -1, "ours": 1}
# Fitted by tests/bench/fit_recall.py (see its docstring for the sets and the command).
INTERCEPT = -4.9164
COEF = {
    'lnrel': 0.6444,
    'cov': 0.0000,
    'covall': 0.0000,
    'subj': 0.0000,
    'ent': 0.0000,
    'tech': -5.1025,
    'common': -1.2885,
    'owncov': 0.0000,
    'names': -6.5890,
    'other': -0.0720,
    'margin': 0.5407,
    'nm': 0.8160,
    'lnnt': 0.4504,
    'scope': 3.7875,
    'bare': 1.9520,
    'techw': -9.1583,
    'ours': 5.3795,
}
THRESHOLD = 0.72  # inject when p_inject of the best match reaches it
RUNNER_UP = 0.3  # a further candidate is injected beside the best when it scores at least this share of it

def fts_idf(df: int, n: int) -> float:
    """FTS5's own bm25() idf, clamped as SQLite clamps it."""
    return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)

def mass_idf(df: int, n: int) -> float:
    """An idf that stays positive when a word is in most memories (what a word weighs in a
    prompt's mass); a word no memory holds weighs as the rarest possible one."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) if df else math.log(1.0 + (n + 0.5) / 0.5)

class Query:
    """What the features need of the query: each term's weight, document count, origin ('own',
    'pasted', 'previous') and whether the user wrote it as a name."""

    __slots__ = ("terms", "smax", "mass", "own_mass", "names", "other", "n_own", "weights", "origin", "named", "tech",
                 "ours", "unseen")

    def __init__(self, terms: "list[tuple[str, float]]", dfs: "dict[str, int]", n: int,
                 origin: "dict[str, str]", named: "frozenset[str] | set[str]", tech: "set[str] | frozenset[str]" = frozenset(),
                 ours: bool = False) -> None:
        self.terms = terms
        self.origin = origin
        self.named = named
        self.tech = tech
        self.ours = ours
        self.weights: dict[str, float] = {}  # each known term's share of the mass, unnormalised
        smax = mass = own_mass = names = other = unseen = 0.0
        for t, w in terms:
            df = dfs.get(t, 0)
            if df:
                smax += w * fts_idf(df, n) * (K1 + 1.0)
                m = self.weights[t] = w * mass_idf(df, n)
                mass += m
                if origin.get(t, "own") == "own":
                    own_mass += m
            elif t in named:
                names += w * mass_idf(0, n)
            else:
                other += w * mass_idf(0, n)
                unseen += w
        self.smax = smax or 1e-9
        self.mass = mass or 1e-9
        self.own_mass = own_mass or 1e-9
        self.names = names / (mass + names) if mass + names else 0.0
        self.other = other / (mass + names + other) if mass + names + other else 0.0
        self.n_own = sum(1 for t, _ in terms if origin.get(t, "own") == "own")
        # The whole prompt's mass, an unseen word (not a name) counted as an average word of it:
        # another language's words or a typo must not dominate what a memory covers (issue 36).
        known = sum(w for t, w in terms if dfs.get(t, 0))
        self.unseen = self.mass + unseen * (self.mass / known if known else 0.0)

def features(q: Query, score: float, matched: "dict[str, int]", next_score: float, in_scope: bool, bare: bool,
             is_common: "Container[str]") -> "dict[str, float]":
    """The decision's features for one candidate (`matched`: term -> where it matched, as
    `search.Evidence.matched`)."""
    w = q.weights
    held = [t for t in matched if t in w]
    cov = sum(w[t] for t in held)
    return {
        "lnrel": math.log(max(score / q.smax, 1e-4)),
        "cov": cov / q.mass,
        "covall": cov / q.unseen if q.unseen else 0.0,
        "subj": sum(w[t] for t in held if matched[t] & 1) / q.mass,
        "ent": sum(w[t] for t in held if matched[t] & 2) / q.mass,
        "tech": sum(w[t] for t in held if not matched[t]) / q.mass,
        "common": sum(w[t] for t in held if t in is_common) / q.mass,
        "owncov": sum(w[t] for t in held if q.origin.get(t, "own") == "own") / q.own_mass,
        "names": q.names,
        "other": q.other,
        "margin": (score - next_score) / score if score > 0 else 0.0,
        "nm": float(min(len(held), MAX_MATCHED)),
        "lnnt": math.log(max(q.n_own, 1)),
        "scope": 1.0 if in_scope else 0.0,
        "bare": 1.0 if bare else 0.0,
        "techw": sum(w[t] for t in held if t in q.tech) / q.mass,
        "ours": 1.0 if q.ours else 0.0,
    }

def p_inject(f: "dict[str, float]") -> float:
    """The fitted probability that the prompt wants this memory's store to speak."""
    z = INTERCEPT + sum(COEF.get(k, 0.0) * f[k] for k in FEATURES)
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
