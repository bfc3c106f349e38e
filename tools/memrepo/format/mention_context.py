"""Whether a mention the text rules found is a claim about the world now: the words around it
(shared by the verifier's claims and the cache's citations, `format.mentions`).

The rule-based extractor finds backticked paths, branch names, URLs and `owner/repo#N`; this
module reads the clause around each mention and says (as a refusal reason) when it does not
claim the thing exists now:

- a plan: future tense ("will add", "to be written"), "TODO", "next sprint";
- a negation: "no longer exists", "was removed", "there is no", renamed or moved away (the new
  name after "to", "with" or "by" is still a claim). No probe checks absence, so a negated
  mention is refused, never turned into a claim that the thing is gone;
- a path on another machine: the clause runs a command over `ssh` (or `scp`, `kubectl exec`…)
  or puts the path "on the server";
- a web route: a path without an extension named as a route, endpoint or page.

A clause ends at `.`, `;`, `!`, `?`, a blank line or a list item. Within it, the words that
belong to a mention are those between it and its neighbours; "`a` and `b` were removed" reaches
both, and a clause joined by "and", "but" or "while" is cut there.
"""

from __future__ import annotations

import bisect
import functools
import re

Span = tuple[int, int]
WINDOW = 300  # characters of a clause read on each side of a mention

_CLAUSE_END = re.compile(r"[.;!?](?=\s|$)|\n[ \t]*\n|\n(?=[ \t]*(?:[-*+>]|\d+[.)]|#+)\s)")
_JOINER = re.compile(r"[\s,]*(?:(?:and|or|&)[\s,]*)?", re.I)
_CUT = re.compile(r"(?:,\s*|\s)(?:and|but|while|whereas|although|though|so|then|because)\s", re.I)

_PLAN_ANY = re.compile(
    r"\b(?:TODO|FIXME|TBD|next\s+(?:sprint|week|month|quarter|release|iteration|cycle|milestone)|"
    r"(?:later|early)\s+this\s+(?:week|month|sprint|quarter)|someday|"
    r"not\s+(?:yet\s+)?(?:written|created|added|built|implemented|merged|there)|"
    r"(?:does\s+not|doesn't|do\s+not|don't)\s+exist\s+yet|yet\s+to\s+be|"
    r"to\s+be\s+(?:\w+ed|written|built|done|made|cut|split|set\s+up))\b", re.I)
_PLAN_VERB = re.compile(
    r"(?:\bwill|'ll|\bshall|\bgoing\s+to|\bplan(?:s|ned|ning)?\s+to|\bintend(?:s|ed)?\s+to|\bwants?\s+to|"
    r"\bhope\s+to|\babout\s+to)\s+(?:\w+\s+){0,2}?(?:be\s+)?"
    r"(?:add|creat|writ|introduc|build|built|implement|split|generat|scaffold|set\s+up|port|extract|land|"
    r"ship|cut|open|merg|mov|renam)\w*", re.I)

# Only next to the mention: "the planned `x`", "`x` (proposed)"; elsewhere they describe other things.
_PLAN_NEAR_BEFORE = re.compile(r"\b(?:planned|proposed|upcoming|future)\s+(?:[\w-]+\s+)?$", re.I)
_PLAN_NEAR_AFTER = re.compile(r"^[\s,(]*(?:(?:is|are|was|still)\s+)*(?:planned|proposed|upcoming)\b", re.I)

_NEG_AFTER = re.compile(
    r"\bno\s+longer\s+(?:exists?|there|present|around|used|in\s+the\s+repo)\b|"
    r"\b(?:is|are|was|were|been|got|gets|get)\s+(?:now\s+|since\s+|already\s+|long\s+)?"
    r"(?:removed|deleted|dropped|gone|retired|renamed|moved|replaced|superseded)\b|"
    r"\b(?:does|do|did)(?:\s+not|n't)\s+exist\b|\bis\s+no\s+more\b|\bnow\s+lives?\s+(?:in|at|under)\b|"
    r"^[\s,:()-]*(?:(?:has|have|was|were)\s+(?:been\s+)?)?(?:removed|deleted|dropped|gone|renamed|moved)\b", re.I)
_NEG_BEFORE = re.compile(
    r"\b(?:removed|deleted|dropped|retired|renamed|moved|replaced|got\s+rid\s+of|without|"
    r"there\s+(?:is|are|was|were)\s+no(?:\s+longer)?|there's\s+no(?:\s+longer)?|"
    r"no\s+longer\s+(?:have|has|ship|ships|use|uses|keep|keeps))\b", re.I)
_DESTINATION = frozenset("to into onto with by as for from in".split())

_REMOTE_COMMAND = re.compile(
    r"\b(?:ssh|scp|rsync|kubectl|docker\s+(?:exec|run|cp)|heroku\s+run|fly\s+ssh|vagrant\s+ssh)\b", re.I)
_REMOTE_PLACE = (
    r"\bon\s+(?:the\s+|each\s+|every\s+|both\s+|all\s+|a\s+|our\s+)?"
    r"(?:(?:prod(?:uction)?|staging|remote|app|web|db|database|worker|build|ci|deploy|bastion|jump)\s+)?"
    r"(?:servers?|hosts?|box(?:es)?|machines?|vms?|instances?|nodes?|pods?|containers?|droplets?)\b|"
    r"\bon\s+(?:prod(?:uction)?|staging|the\s+bastion)\b|\bremotely\b|\bserver-side\b|"
    r"\b(?:remote|server|host)(?:'s)?\s+(?:path|file|side)\b")
_REMOTE_BEFORE = re.compile(_REMOTE_PLACE, re.I)
# After the mention, only where it is: "`x` on the app servers", "`x` is kept on each host".
_REMOTE_AFTER = re.compile(r"^[\s,()-]*(?:(?:is|are|was|lives?|sits?|stays?|kept|stored|found|exists?|only|just|also|"
                           r"located|placed|written|deployed|present|there)\s+){0,3}(?:" + _REMOTE_PLACE + ")", re.I)

_ROUTE_BEFORE = re.compile(r"(?:\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)|"
                           r"\b(?i:route|endpoint|url|uri|page|handler|"
                           r"(?:served|mounted|routed|exposed)\s+(?:at|on|under)|browse\s+to|navigate\s+to))\s*$")
_ROUTE_AFTER = re.compile(r"^\s*(?:route|endpoint|url|uri|page|handler|screen|tab)s?\b", re.I)


def _quote(m: re.Match[str]) -> str:
    return " ".join(m.group(0).split()).strip(" ,:;()-")[:40]


class Reader:
    """One text's clauses and mentions, computed once: each mention's words are then found by
    bisection, so a long memory full of backticks costs linear time, not quadratic."""

    def __init__(self, text: str, marks: list[Span]) -> None:
        self.text = text
        self.marks: list[Span] = []
        for a, b in sorted(set(marks)):  # outermost only: a URL inside backticks is one mention
            if not self.marks or a >= self.marks[-1][1]:
                self.marks.append((a, b))
        self.starts = [a for a, _ in self.marks]
        ends = [m for m in _CLAUSE_END.finditer(text) if not self._in_mark(m.start())]
        self.end_starts, self.end_stops = [m.start() for m in ends], [m.end() for m in ends]
        self.chain_head, self.chain_tail = self._chains()

    def _in_mark(self, pos: int) -> bool:
        i = bisect.bisect_right(self.starts, pos) - 1
        return i >= 0 and pos < self.marks[i][1]

    def _joined(self, i: int) -> bool:
        """Mention i follows mention i-1 with only a comma, "and" or "or" between them."""
        between = self.text[self.marks[i - 1][1]:self.marks[i][0]] if i > 0 else ""
        return i > 0 and bool(_JOINER.fullmatch(between)) and not _CLAUSE_END.search(between)

    def _chains(self) -> tuple[list[int], list[int]]:
        head, tail = list(range(len(self.marks))), list(range(len(self.marks)))
        for i in range(1, len(self.marks)):
            if self._joined(i):
                head[i] = head[i - 1]
        for i in range(len(self.marks) - 2, -1, -1):
            if self._joined(i + 1):
                tail[i] = tail[i + 1]
        return head, tail

    def clause(self, span: Span) -> Span:
        """The bounds of the clause holding `span`; an end inside a mention does not count."""
        i = bisect.bisect_right(self.end_stops, span[0]) - 1
        j = bisect.bisect_left(self.end_starts, span[1])
        stop = self.end_starts[j] if j < len(self.end_starts) else len(self.text)
        return (self.end_stops[i] if i >= 0 else 0), stop

    def around(self, span: Span) -> "Around":
        lo, hi = self.clause(span)
        i = bisect.bisect_right(self.starts, span[0]) - 1  # the outermost mark holding `span`
        head, tail = self.chain_head[i], self.chain_tail[i]
        prev_end = self.marks[head - 1][1] if head > 0 else lo
        next_start = self.marks[tail + 1][0] if tail + 1 < len(self.marks) else hi
        first, last = self.marks[head][0], self.marks[tail][1]
        before = self.text[max(lo, prev_end, first - WINDOW):first]
        after = self.text[last:min(hi, next_start, last + WINDOW)]
        return Around(before, after, self.text[max(lo, span[0] - WINDOW):span[0]])


class Around:
    """The words of one mention's clause before and after it, up to the neighbouring mentions
    (a clause joined by "and", "but", "while"… is cut there), and the clause up to it (`head`)."""

    def __init__(self, before: str, after: str, head: str) -> None:
        cuts = list(_CUT.finditer(before))
        self.before = before[cuts[-1].end():] if cuts else before
        cut = _CUT.search(after)
        self.after = after[:cut.start()] if cut else after
        self.head = head


def _negated_before(before: str) -> re.Match[str] | None:
    """A removal named just before the mention ("removed the old `x`"), not its destination."""
    for m in reversed(list(_NEG_BEFORE.finditer(before))):
        words = re.findall(r"[A-Za-z']+", before[m.end():])
        if len(words) <= 3 and not _DESTINATION.intersection(w.lower() for w in words):
            return m
    return None


def plan(before: str, after: str) -> str:
    m = _PLAN_ANY.search(before) or _PLAN_ANY.search(after) or _PLAN_VERB.search(before) \
        or _PLAN_VERB.search(after) or _PLAN_NEAR_BEFORE.search(before) or _PLAN_NEAR_AFTER.search(after)
    return f"a plan, not a claim about now ({_quote(m)!r})" if m else ""


def negation(before: str, after: str) -> str:
    m = _NEG_AFTER.search(after) or _negated_before(before)
    return (f"negated: the text says it does not exist now ({_quote(m)!r}); no probe checks absence"
            if m else "")


@functools.lru_cache(maxsize=256)
def _plan_or_negation(before: str, after: str) -> str:
    """Mentions listed together ("`a`, `b` and `c` were removed") share their words: read them once."""
    return plan(before, after) or negation(before, after)


def elsewhere(around: Around) -> str:
    m = _REMOTE_COMMAND.search(around.head) or _REMOTE_BEFORE.search(around.before) \
        or _REMOTE_AFTER.search(around.after)
    return f"runs elsewhere: a path on another machine ({_quote(m)!r}), not this project's file" if m else ""


def route(around: Around) -> str:
    m = _ROUTE_BEFORE.search(around.before) or _ROUTE_AFTER.search(around.after)
    return f"a web route, not a file ({_quote(m)!r})" if m else ""


def judge(reader: Reader, span: Span, kind: str) -> str:
    """Why the mention at `span` is not a present claim ("" when it is one). `kind` is path, dir
    (a path without an extension), branch, url or pr: only paths and dirs can be on another
    machine, and only a dir can be a web route."""
    around = reader.around(span)
    reason = _plan_or_negation(around.before, around.after)
    if not reason and kind in ("path", "dir"):
        reason = elsewhere(around) or (route(around) if kind == "dir" else "")
    return reason
