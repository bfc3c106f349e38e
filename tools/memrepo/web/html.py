"""HTML for `memrepo serve`: one layout, a few components, and `h`, which every value goes through.

Memory text comes from a repository that may be shared, so it is untrusted: nothing reaches a
page without `h` (html.escape with quotes, and control and bidirectional characters shown as
escapes, as the CLI shows them), and no page runs a script.
"""

from __future__ import annotations

import html as _html
from typing import Any, Iterable

from memrepo.format import terminal

NAV = (("/", "Memories"), ("/recall", "Recall"), ("/review", "Review"), ("/runs", "Runs"))
STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafafa}
header{background:#1d2b36;color:#fff;padding:.6em 1.2em;display:flex;gap:1.4em;align-items:baseline}
header a{color:#cfe3f3;text-decoration:none}header a.on{color:#fff;font-weight:600}
header .repo{margin-left:auto;font-size:.85em;color:#9fb6c8}
main{padding:1em 1.4em;max-width:1200px}
table{border-collapse:collapse;width:100%}td,th{padding:.3em .5em;border-bottom:1px solid #e3e6e8;text-align:left;vertical-align:top}
th{font-weight:600;font-size:.9em;color:#55616b}
.label{display:inline-block;background:#e8eef3;border-radius:3px;padding:0 .35em;margin:0 .2em .2em 0;font-size:.85em}
.muted{color:#6b7780}.warn{color:#9a4b00}.ok{color:#23702e}
pre{background:#fff;border:1px solid #e3e6e8;padding:.6em;overflow-x:auto;white-space:pre-wrap}
.diff .add{color:#1c6b2c}.diff .del{color:#a12a2a}.diff .hunk{color:#5a4aa0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em}
form.inline{display:inline}button{font:inherit;padding:.2em .7em;cursor:pointer}
input[type=search],select,input[type=text]{font:inherit;padding:.2em .4em}
.done{white-space:pre-wrap}.ro{background:#fff4d6;padding:.4em .8em;border:1px solid #f0d48a;margin-bottom:1em}
.error{background:#fde8e8;padding:.4em .8em;border:1px solid #e9a3a3;margin-bottom:1em}
svg text{font-size:10px;fill:#55616b}
"""


def h(value: Any) -> str:
    """`value` as text inside HTML (element content or a quoted attribute). A control character
    (an escape sequence) or a bidirectional override is shown as `\\x1b` / `\\u202e`: an override
    would reorder what the page shows, so `<script>` could read as something else."""
    return _html.escape(terminal.safe("" if value is None else value), quote=True)


def labels(values: Iterable[Any]) -> str:
    return "".join(f'<span class="label">{h(v)}</span>' for v in values if v not in (None, ""))


def link(href: str, text: Any) -> str:
    return f'<a href="{h(href)}">{h(text)}</a>'


def table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    """A table whose cells are already HTML (built with `h`)."""
    cols = "".join(f"<th>{h(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cols}</tr></thead><tbody>{body}</tbody></table>"


def diff(text: str) -> str:
    """A unified diff, each line escaped and marked added, removed or a hunk header."""
    out = []
    for line in text.splitlines():
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
              "del" if line.startswith("-") and not line.startswith("---") else "hunk" if line.startswith("@@") else ""
        out.append(f'<span class="{cls}">{h(line)}</span>' if cls else h(line))
    return '<pre class="diff">' + "\n".join(out) + "</pre>"


def action(path: str, token: str, fields: dict[str, str], label: str, read_only: bool,
           text: tuple[str, str] | None = None) -> str:
    """A POST form with the session's CSRF token: a button that changes the repository (none when
    read-only), with one text box (`text`: its name and placeholder) when the action takes words."""
    if read_only:
        return ""
    hidden = "".join(f'<input type="hidden" name="{h(k)}" value="{h(v)}">' for k, v in {**fields, "token": token}.items())
    box = f'<input type="text" name="{h(text[0])}" placeholder="{h(text[1])}" size="32"> ' if text else ""
    return f'<form class="inline" method="post" action="{h(path)}">{hidden}{box}<button type="submit">{h(label)}</button></form>'


def bare(title: str, message: str, hint: str = "") -> str:
    """A page for someone not logged in: the message and its fix, nothing of the repository."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{h(title)} · memrepo</title>'
            f'<style>{STYLE}</style></head><body><header><strong>memrepo</strong></header><main>'
            f'<h1>{h(title)}</h1><div class="error">{h(message)}</div>' + (f"<p>{h(hint)}</p>" if hint else "")
            + "</main></body></html>")


def page(title: str, body: str, active: str, repo: str, read_only: bool, notice: str = "") -> str:
    nav = "".join(f'<a href="{href}"{" class=on" if href == active else ""}>{name}</a>' for href, name in NAV)
    ro = '<div class="ro">read-only: this server changes nothing (started with --read-only)</div>' if read_only else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{h(title)} · memrepo</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>'
            f'<body><header><strong>memrepo</strong>{nav}<span class="repo">{h(repo)}</span></header>'
            f"<main>{ro}{notice}<h1>{h(title)}</h1>{body}</main></body></html>")
