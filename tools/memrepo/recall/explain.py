"""A recall decision as lines a person can read: the terms, every candidate with its score and
evidence, what cut it, and what was injected (`memrepo recall --explain`, `memrepo recall-log
--explain`, the web page's recall trace). Not on the prompt path.
"""

from __future__ import annotations

from typing import Any

from memrepo.recall import decide, rank

ROWS = 8
_WHERE = ((1, "subject"), (2, "names"), (4, "prose"))


def _where(bits: int) -> str:
    return "+".join(name for bit, name in _WHERE if bits & bit) or "tech"


def _terms(terms: list[str], pasted: list[str], previous: list[str]) -> str:
    line = f"terms: {' '.join(terms) or '-'}"
    if pasted:
        line += f"; pasted (weight {decide.PASTED_WEIGHT}): {' '.join(pasted)}"
    if previous:
        line += f"; from the previous turn: {' '.join(previous)}"
    return line


def _verdict(cut: str | None) -> str:
    return "injected" if cut is None else f"left out: {cut}"


def live(d: Any, why: list[tuple[rank.Hit | None, str | None]], rows: int = ROWS) -> list[str]:
    """The lines for a decision just made (`why`: rank's explain list)."""
    out = [_terms(list(d.terms), list(d.pasted_terms), list(d.context_terms))]
    if d.silent and not why:
        out.append(f"  silent before any search: {d.silent}")
    out += [f"  {reason}" for h, reason in why if h is None]
    cands = [(h, r) for h, r in why if h is not None]
    for n, (h, reason) in enumerate(cands[:rows], start=1):
        holds = ", ".join(f"{t} ({_where(b)})" for t, b in sorted(h.matched.items()))
        p = f"  p {h.p:.2f}" if h.features else ""
        where = f" ({h.source})" if getattr(h, "source", "") else ""
        lent = f" + {h.lent:.2f} its session lent" if getattr(h, "lent", 0.0) else ""
        out.append(f"  {n}. {h.id}{where}  score {_num(h.score)}{p} (relevance {_num(h.relevance)} × scope {h.scope:.2f}"
                   f" × priority {h.priority:.2f}{lent}; holds {holds}) — {_verdict(reason)}")
        if h.features:
            out.append("     evidence: " + features(h.features))
    if len(cands) > rows:
        out.append(f"  … {len(cands) - rows} more candidates")
    return out


def _num(x: float) -> str:
    """Two decimals, or two significant digits for a score that small (in a store of one or two
    memories every word is in half of them, and bm25's idf is clamped to 1e-06)."""
    return f"{x:.2f}" if x == 0 or abs(x) >= 0.005 else f"{x:.2g}"


def features(f: dict[str, float]) -> str:
    """Every feature with its part of the decision's logit, largest first."""
    return rank.explain_features(f, None, 2)


def logged(entry: dict[str, Any]) -> list[str]:
    """The lines for a decision read back from the recall log."""
    out = [_terms(list(entry.get("terms") or []), list(entry.get("pasted_terms") or []),
                  list(entry.get("context_terms") or []))]
    if entry.get("withheld"):
        out[0] += f" ({entry['withheld']} terms withheld: the prompt may have held a secret)"
    injected = [str(i.get("id")) + (f" ({i['source']})" if i.get("source") else "")
                for i in entry.get("injected") or [] if isinstance(i, dict)]
    out.append("  injected: " + (", ".join(injected) if injected else f"nothing ({entry.get('silent') or 'silent'})"))
    if entry.get("why"):
        out.append(f"  why: {entry['why']}")
    for n, c in enumerate(entry.get("candidates") or [], start=1):
        if not isinstance(c, dict):
            continue
        p = f"  p {c['p']:.2f}" if isinstance(c.get("p"), (int, float)) else ""
        where = f" ({c['source']})" if c.get("source") else ""
        out.append(f"  {n}. {c.get('id')}{where}  score {c.get('score')}{p} — {_verdict(c.get('cut'))}")
    return out
