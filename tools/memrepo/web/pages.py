"""The pages of `memrepo serve`, each from the library calls the CLI makes: (title, body HTML).

Memories (`memrepo list` / `memrepo search`), one memory (`memrepo show` and its history with
diffs and trailers), Recall (`memrepo recall-log` as a timeline), Review (`memrepo review`) and
Runs (`memrepo log --runs`). Every value goes through `html.h`.
"""

from __future__ import annotations

import collections
import os
from typing import Any

from memrepo.format import notes
from memrepo.base import paths
from memrepo.web.html import action, diff, h, labels, link, table

MAX_LIST = 500  # rows on the memories page; a search shows its best 50
RECALL_ROWS = 100


def _select(name: str, values: list[str], chosen: str) -> str:
    options = [f'<option value=""{"" if chosen else " selected"}>any {h(name)}</option>']
    options += [f'<option value="{h(v)}"{" selected" if v == chosen else ""}>{h(v)}</option>' for v in values]
    return f'<select name="{h(name)}">{"".join(options)}</select>'


def _every(repo: str) -> list[dict[str, Any]]:
    """Every source's memories (issue 41): yours (the server keeps that cache fresh,
    `server.App.refresh`), each team's and the project of the folder the server started in."""
    from memrepo.store import sources

    return sources.list_all(repo, os.getcwd(), fresh=False)


def _key(m: dict[str, Any]) -> tuple[str, str]:
    return (str(m.get("source") or "personal"), str(m["id"]))


def memories(repo: str, params: dict[str, str]) -> tuple[str, str]:
    from memrepo.store import sources

    every = _every(repo)
    several = any(m["source"] != "personal" for m in every)
    chosen = {k: params.get(k, "") for k in ("class", "project", "status", "verification") + (("source",) if several else ())}
    q = params.get("q", "").strip()
    if q:
        hits = {(h.source or "personal", h.id): h.score for h in sources.search_all(repo, os.getcwd(), q, limit=50, fresh=False)}
        rows = sorted((m for m in every if _key(m) in hits), key=lambda m: -hits[_key(m)])
    else:
        hits, rows = {}, every
    rows = [m for m in rows if all(not v or str(m.get(k) or "") == v for k, v in chosen.items())]
    # A retired memory is never recalled: it is listed only when the status filter asks for it (issue 39).
    retired = 0 if chosen["status"] else sum(1 for m in rows if m["status"] == "retired")
    rows = rows if chosen["status"] else [m for m in rows if m["status"] != "retired"]
    start = int(params.get("start", "0")) if params.get("start", "0").isdigit() else 0
    start = min(start, max(0, len(rows) - 1))
    form = (f'<form method="get" action="/"><input type="search" name="q" value="{h(q)}" placeholder="search" size="40" '
            f'autofocus> ' + " ".join(_select(k, sorted({str(m.get(k)) for m in every if m.get(k)}), chosen[k])
                                       for k in chosen) + ' <button type="submit">Search</button></form>')
    head = ["memory", "class", "status", "project", "updated"] + (["source"] if several else []) + (["score"] if q else [])
    cells = [[link(f"/m/{m['id']}", m["title"] or m["id"]) + f'<br><span class="muted">{h(m["id"])}</span>',
              h(m["class"]), h(m["status"]) + (f' → {link("/m/" + m["superseded_by"], m["superseded_by"])}'
                                                  if m.get("superseded_by") else ""),
              h(m["project"] or ""), h(m["updated"])] + ([h(m["source"])] if several else [])
             + ([h(f"{hits[_key(m)]:.2f}")] if q else [])
             for m in rows[start:start + MAX_LIST]]
    shown = f"{len(rows)} of {len(every)} memories" + (f", {retired} retired not listed (status: retired lists them)"
                                                         if retired else "")
    if len(rows) > MAX_LIST:
        shown += f" ({start + 1}–{min(start + MAX_LIST, len(rows))} shown)"
    return "Memories", (f"{form}<p class=muted>{h(shown)}</p>" + _not_indexed(repo) + table(head, cells)
                        + _pager(params, start, len(rows)))


def _not_indexed(repo: str, most: int = 20) -> str:
    """The memory files the cache could not read, each linking to its problem, as `memrepo list`
    names them (a hand edit that broke one made it vanish from the page without a word)."""
    from memrepo.store import cachefacts

    skipped = cachefacts.skipped(repo)
    lines = [f'not indexed: {link("/m/" + os.path.basename(path)[:-3], path)}: {h(problem)}'
             for path, problem in skipped[:most] if path.endswith(".md")]
    more = f"<br>… and {len(skipped) - most} more (`memrepo doctor` lists them)" if len(skipped) > most else ""
    return f'<div class="error">{"<br>".join(lines)}{more}</div>' if lines else ""


def _pager(params: dict[str, str], start: int, total: int) -> str:
    """Links to the previous and next MAX_LIST rows, keeping the search and the filters."""
    from urllib.parse import urlencode

    def at(n: int, text: str) -> str:
        return link("/?" + urlencode({**{k: v for k, v in params.items() if v and k != "start"}, "start": n}), text)

    parts = ([at(max(0, start - MAX_LIST), "← previous")] if start > 0 else []) + \
            ([at(start + MAX_LIST, "next →")] if start + MAX_LIST < total else [])
    return f"<p>{' · '.join(parts)}</p>" if parts else ""


def memory(repo: str, note_id: str, token: str = "", read_only: bool = True) -> tuple[str, str]:
    from memrepo.errors import NoteNotFound
    from memrepo.store import memories as store

    try:
        text = store.read_text(repo, note_id)
    except NoteNotFound:
        return _elsewhere(repo, note_id, token, read_only)
    try:
        note = notes.parse(text, f"memory/{note_id}.md")
    except notes.ParseError as exc:
        fix = f"repair it with `memrepo edit {note_id}`, or take the hand edit back with `git checkout -- memory/{note_id}.md`"
        return note_id, _unreadable(note_id, text, exc, fix) + f"<h2>History</h2>{_history(repo, note_id)}"
    meta = note.meta
    listed = ("topics", "entities", "tech", "aliases")
    fields = [[h(k), labels(v) if k in listed and isinstance(v, list) else
               (link(f"/m/{v}", v) if k in ("supersedes", "superseded_by") and v else h(v))]
              for k, v in meta.items() if k not in ("title", "body", "claims", "verification")]
    chain = _chain(repo, note_id, meta)
    body = (f'<p class="muted">{h(note_id)}</p>' + _share_buttons(repo, note_id, token, read_only)
            + table(["field", "value"], fields)
            + f"<h2>Text</h2><pre>{h(note.body)}</pre>" + _claims(meta) + (f"<h2>Chain</h2>{chain}" if chain else "")
            + f"<h2>History</h2>{_history(repo, note_id)}")
    return str(meta.get("title") or note_id), body


def _history(repo: str, note_id: str) -> str:
    """Each commit that touched the memory's file: subject, trailers and diff, newest first."""
    from memrepo.vcs import gitops

    changes = gitops.changes(repo, f"{paths.MEMORY_DIR}/{note_id}.md")
    return "".join(
        f'<section><h3>{h(c["date"])} · {h(c["subject"])}</h3>'
        f'<p class="muted">{h(str(c["commit"])[:12])} by {h(c["author"])}</p>'
        + (table(["trailer", "value"], [[h(k), h(v)] for k, v in c["trailers"].items()]) if c["trailers"] else "")
        + diff(str(c["diff"])) + "</section>" for c in changes) or "<p class=muted>no commit touched this file</p>"


def _unreadable(note_id: str, text: str, exc: notes.ParseError, fix: str) -> str:
    """A memory whose front matter cannot be read (a hand edit): where and why, the fix, the text
    as it is (was: a 500 naming ParseError)."""
    where = f"memory/{note_id}.md:{exc.line}: {exc}" + (f" — {exc.fix}" if exc.fix else "")
    return (f'<p class="muted">{h(note_id)}</p><div class="error">{h(where)}</div><p>{h(fix)}</p>'
            f"<h2>Text</h2><pre>{h(text)}</pre>")


def share_targets(repo: str) -> list[tuple[str, str]]:
    """(`--to` value, what the button says) of each source `memrepo share` can propose to from
    here: every team this machine joined (read-only ones too: a proposal is a branch on their
    remote, not a write into the clone) and the code repository the server was started in."""
    from memrepo.base import projects
    from memrepo.recall import sources as rs
    from memrepo.store import sources

    out = [(name, f"team {name}") for name in sources.teams(repo)]
    top = projects.top_level(os.getcwd())
    if top is not None and os.path.realpath(top) != os.path.realpath(repo):
        out.append((rs.PROJECT, f"{rs.PROJECT} {os.path.basename(top)}"))
    return out


def _share_buttons(repo: str, note_id: str, token: str, read_only: bool) -> str:
    """`memrepo share ID --to …` for one of your memories, one button per source it can go to."""
    buttons = [action("/m/share", token, {"id": note_id, "to": to}, f"Share to {label}", read_only)
               for to, label in share_targets(repo)]
    return f'<p>{" ".join(buttons)} <span class="muted">a proposal: a pull request, or a file to commit with the code</span></p>' \
        if buttons and not read_only else ""


def _elsewhere(repo: str, note_id: str, token: str, read_only: bool) -> tuple[str, str]:
    """A team's or the project's memory (issue 41): its source, fields, text and commits; its
    changes are proposed there (`memrepo forget` as a button), not made here."""
    from memrepo.store import sources

    data = sources.show_any(repo, os.getcwd(), note_id, None)
    try:
        note = notes.parse(data["text"], f"memory/{note_id}.md")
    except notes.ParseError as exc:
        return note_id, _unreadable(note_id, data["text"], exc, f"it is {data['source']}'s memory: ask there for the "
                                    "fix; recall skips it meanwhile")
    fields = [[h(k), labels(v) if isinstance(v, list) else h(v)] for k, v in note.meta.items() if k not in ("title", "claims")]
    history = table(["commit", "date", "subject"], [[h(str(c["commit"])[:12]), h(str(c["date"])[:10]), h(c["subject"])]
                                                    for c in data["history"]])
    forget = "" if note.meta.get("status") == "retired" else action(
        "/m/forget", token, {"id": note_id, "source": data["source"]}, "Propose to forget", read_only,
        text=("reason", "why it no longer holds (optional)"))
    where = ("a branch and a pull request retiring it on the team's remote" if data["source"].startswith("team ")
             else "the file retired in the code repository, for you to commit")
    body = (f'<p class="muted">{h(note_id)} · source: {h(data["source"])} ({h(data["root"])})</p>'
            + (f'<p>{forget} <span class="muted">{h(where)}</span></p>' if forget else "")
            + table(["field", "value"], fields) + f"<h2>Text</h2><pre>{h(note.body)}</pre><h2>History</h2>{history}")
    return str(note.meta.get("title") or note_id), body


def _claims(meta: dict[str, Any]) -> str:
    """The typed claims `memrepo verify` checks, and the last check (`verification`)."""
    raw_claims, raw_check = meta.get("claims"), meta.get("verification")
    claims: list[Any] = raw_claims if isinstance(raw_claims, list) else []
    check: dict[str, Any] = raw_check if isinstance(raw_check, dict) else {}
    if not claims and not check:
        return ""
    status = str(check.get("status", "not checked yet"))
    last = (f'<p>last check: <span class="{"ok" if status == "verified" else "warn"}">{h(status)}</span>'
            + "".join(f", {h(k)} {h(v)}" for k, v in check.items() if k != "status") + "</p>")
    rows = [[h(c.get("probe", "?")), h(", ".join(f"{k}={v}" for k, v in (c.get("args") or {}).items())
                                       if isinstance(c.get("args"), dict) else c.get("args")),
             h(", ".join(f"{k}: {v}" for k, v in c.items() if k not in ("probe", "args")))]
            for c in claims if isinstance(c, dict)]
    return "<h2>Claims</h2>" + last + (table(["probe", "arguments", "from"], rows) if rows else "")


def _chain(repo: str, note_id: str, meta: dict[str, Any]) -> str:
    """Predecessors and successors through `supersedes` / `superseded_by`, oldest first."""
    from memrepo.store import memories as store

    def meta_of(mid: str) -> dict[str, Any]:
        try:
            return notes.parse(store.read_text(repo, mid)).meta
        except Exception:  # noqa: BLE001 — a broken link shows as an id without a title
            return {}

    before: list[str] = []
    after: list[str] = []
    seen = {note_id}
    prev = meta.get("supersedes")
    while isinstance(prev, str) and prev and prev not in seen and len(seen) < 50:
        seen.add(prev)
        before.insert(0, prev)
        prev = meta_of(prev).get("supersedes")
    nxt = meta.get("superseded_by")
    while isinstance(nxt, str) and nxt and nxt not in seen and len(seen) < 50:
        seen.add(nxt)
        after.append(nxt)
        nxt = meta_of(nxt).get("superseded_by")
    if not before and not after:
        return ""
    items = [link(f"/m/{m}", m) for m in before] + [f"<strong>{h(note_id)}</strong>"] + [link(f"/m/{m}", m) for m in after]
    return "<p>" + " → ".join(items) + "</p>"


def recall(repo: str) -> tuple[str, str]:
    from memrepo.recall import log, usage

    entries = log.read_all(repo)
    verdicts = usage.read_all(repo)
    judged = {str(v.get("key")) for v in verdicts}
    used = usage.used_by_key(verdicts)
    per_day: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    injected, used_count = collections.Counter[str](), collections.Counter[str]()
    for e in entries:
        day = str(e.get("t", "?"))[:10]
        ids = [str(i.get("id")) for i in e.get("injected", []) if isinstance(i, dict)]
        per_day[day]["injected" if ids else "silent"] += 1
        k = usage.key(e)
        for mid in ids:
            injected[mid] += 1
            if mid in used.get(k, ()):
                used_count[mid] += 1
                per_day[day]["used"] += 1
    rows = []
    for e in reversed(entries[-RECALL_ROWS:]):
        k = usage.key(e)
        marks = [f'{link("/m/" + str(i.get("id")), i.get("id"))} {h(i.get("score"))}'
                 + ("" if k not in judged else (' <span class="ok">used</span>' if i.get("id") in used.get(k, ())
                                                 else ' <span class="warn">unused</span>'))
                 for i in e.get("injected", []) if isinstance(i, dict)]
        why = h(e.get("silent") or e.get("why") or "")
        outcome = "<br>".join(marks) or f'<span class="muted">silent: {why}</span>'
        rows.append([h(e.get("t")), h(e.get("agent") or "claude"), h(e.get("project") or ""),
                     f'<span class="muted">{h(e.get("prompt_sha"))}</span>', outcome + _trace(e)])
    noisy = sorted(injected, key=lambda m: (used_count[m] / injected[m], -injected[m]))[:10]
    body = (f"<p class=muted>{len(entries)} decisions on this machine; prompts are kept as hashes only</p>"
            + _chart(per_day)
            + "<h2>Injected most, used least</h2>"
            + table(["memory", "injected", "used"], [[link(f"/m/{m}", m), h(injected[m]), h(used_count[m])] for m in noisy])
            + f"<h2>The last {min(RECALL_ROWS, len(entries))} decisions</h2>"
            + table(["time", "agent", "project", "prompt", "injected (score) or why silent"], rows))
    return "Recall", body


def _trace(entry: dict[str, Any]) -> str:
    """A decision's trace, folded under its outcome: the terms, each candidate, what cut it."""
    from memrepo.recall import explain

    lines = explain.logged(entry)
    if len(lines) <= 2 and not entry.get("why"):
        return ""
    return f'<details><summary>trace</summary><pre>{h(chr(10).join(lines))}</pre></details>'


def _chart(per_day: dict[str, collections.Counter[str]], days: int = 30) -> str:
    """Injected, silent and used per day as inline SVG bars (no script, nothing fetched)."""
    keys = sorted(per_day)[-days:]
    if not keys:
        return "<p class=muted>no recall decisions logged yet</p>"
    top = max(max(per_day[d]["injected"], per_day[d]["silent"], per_day[d]["used"]) for d in keys) or 1
    width, bar = max(360, 24 * len(keys) + 40), 6
    parts = []
    for n, day in enumerate(keys):
        x = 30 + n * 24
        for k, (kind, color) in enumerate((("injected", "#3b7dd8"), ("silent", "#b8c2cc"), ("used", "#2f9e44"))):
            height = 100 * per_day[day][kind] / top
            parts.append(f'<rect x="{x + k * bar}" y="{110 - height:.1f}" width="{bar - 1}" height="{height:.1f}" '
                         f'fill="{color}"><title>{h(day)} {kind}: {per_day[day][kind]}</title></rect>')
        parts.append(f'<text x="{x}" y="124">{h(day[5:])}</text>')
    legend = ('<text x="30" y="10"><tspan fill="#3b7dd8">■ injected</tspan>  <tspan fill="#8a96a0">■ silent</tspan>  '
              '<tspan fill="#2f9e44">■ used</tspan>  per day</text>')
    return f'<svg role="img" width="{width}" height="130" viewBox="0 0 {width} 130">{legend}{"".join(parts)}</svg>'


def review(repo: str, token: str, read_only: bool) -> tuple[str, str]:
    from memrepo.passes.curate import review as rev

    found = rev.proposals(repo)
    if not found:
        return "Review", ("<p class=muted>no open proposals. A proposal appears here when the curator (`memrepo curate` "
                          "or the daily sweep) is unsure of a supersession, or a capture resembles a memory "
                          "someone forgot.</p>")
    sections = []
    for p in found:
        shown = rev.show(repo, p["id"])
        t = shown["trailers"]
        buttons = (action("/review/accept", token, {"id": p["id"]}, "Accept", read_only) + " "
                   + action("/review/reject", token, {"id": p["id"]}, "Reject", read_only,
                            text=("reason", "why (recorded in the commit)")))
        sections.append(
            f'<section id="p-{h(p["id"])}"><h2>{h(p["id"])} · {h(shown["subject"])}</h2>'
            f'<p>{h(shown["summary"])}<br>reason: {h(t.get("Reason", ""))}'
            f'<br>held back by: {h(t.get("Review", "?"))}</p>'
            '<div class="pair">' + "".join(f'<div><h3>{h(side["id"])} ({h(side["role"])})</h3><pre>{h(side["text"])}</pre></div>'
                                           for side in (shown["loser"], shown["winner"])) + '</div>'
            f"<p>{buttons}</p></section>")
    return "Review", "".join(sections)


def _decision(d: dict[str, Any]) -> str:
    """A run's decision in one line: its subject, led by its action unless the subject already
    says it ("add: add: x" was shown, issue 39)."""
    subject, action_ = str(d["subject"]), str(d["action"])
    return subject if action_ in subject.replace(":", " ").split()[:3] else f"{action_}: {subject}"


def runs(repo: str, token: str, read_only: bool) -> tuple[str, str]:
    from memrepo.vcs import runs as runlog

    found = runlog.list_runs(repo, limit=100)
    if not found:
        return "Runs", "<p class=muted>no runs yet: capture, curate, enrich, verify, import, sweep, add and edit each make one</p>"
    rows = []
    for r in found:
        decisions = "<br>".join(h(_decision(d)) for d in r["decisions"][:20])
        more = len(r["decisions"]) - 20
        state = (f'<span class="muted">undone by {h(r["undone_by"])}</span>' if r["undone_by"]
                 else action("/runs/undo", token, {"run": r["run"]}, "Undo", read_only))
        rows.append([h(r["run"]), h(r["date"]), decisions + (f"<br>… {more} more" if more > 0 else ""), state])
    return "Runs", table(["run", "date", "decisions", ""], rows)
