"""Commands around recall: recall, recall-log, eval, install/uninstall claude|codex|gemini."""

from __future__ import annotations

import os
import sys

import click
from typing import Any

from memrepo.cli.common import _date, _fail_friendly, _json, _repo
from memrepo.cli.term import count, echo
from memrepo.base import paths
from memrepo.errors import CacheError


@click.command()
@click.argument("prompt")
@click.option("--cwd", type=click.Path(file_okay=False), help="Working directory the prompt comes from (sets the project).")
@click.option("--previous", help="Text of the previous turn (sharpens a query that has a subject).")
@click.option("--today", help="Reference date for decay, YYYY-MM-DD (default: today).")
@click.option("--json", "as_json", is_flag=True, help="Print [{id, score, title, class, labels}], [] when silent.")
@click.option("--explain", is_flag=True, help="Also list the candidates, their scores and evidence, and what cut each.")
@click.pass_context
@_fail_friendly
def recall(ctx: click.Context, prompt: str, cwd: str | None, previous: str | None, today: str | None, as_json: bool,
           explain: bool) -> None:
    """Run the UserPromptSubmit hook's exact code path on PROMPT and show what it would inject.

    \b
    Example:
      memrepo recall "how do I ship tallybird?" --cwd ~/work/tallybird
      memrepo recall --explain "what's the difference between PSM and eDRX?"
    """
    from memrepo.recall import decide as rc
    from memrepo.store import memories as store

    repo = store.require_repo(_repo(ctx))
    if not os.path.exists(paths.index_db(repo)):  # the hook fails open on it: here it is an error with its fix
        raise CacheError(f"no cache at {paths.index_db(repo)}, so the prompt hook recalls nothing",
                         hint=f"build it with `memrepo --repo {repo} index`")
    why: list = []  # type: ignore[type-arg]
    d = rc.decide(repo, prompt, cwd=cwd or os.getcwd(), previous=previous or "", today=_date(today),
                  explain=why if explain else None)
    if as_json:
        hits = [{"id": h.id, "score": round(h.score, 4), "title": h.title, "class": h.cls, "labels": h.labels(),
                 **({"source": h.source} if h.source else {})} for h in d.hits]
        if not explain:
            return _json(hits)
        return _json({"injected": hits, "terms": list(d.terms), "context_terms": list(d.context_terms), "silent": d.silent,
                      "candidates": [_candidate(h, reason) for h, reason in why if h is not None],
                      "why": [reason for h, reason in why if h is None]})
    if not d.hits:
        echo(f"(silent: {d.silent}; terms: {' '.join(d.terms) or '-'}; {d.ms:.1f} ms)")
        if d.best is not None and not explain:  # the trace below says it, candidate by candidate
            echo(f"({_silence_why(d.best.id, round(d.best.score, 2), d.why)})")
    else:
        echo(rc.format_context(d.hits))
    sys.stdout.flush()  # the block, whole and on its own lines, before anything on stderr (issue 39)
    if explain:
        _explain(d, why)
    if d.hits:
        echo(f"({len(d.hits)} injected; terms: {' '.join(d.terms)}; {d.ms:.1f} ms)", err=True)


def _candidate(h: Any, reason: str | None) -> dict:  # type: ignore[type-arg]
    return {"id": h.id, "score": round(h.score, 4), "relevance": round(h.relevance, 4), "scope": round(h.scope, 4),
            "priority": round(h.priority, 4), "lent": round(h.lent, 4), "matched": dict(sorted(h.matched.items())),
            "p": round(h.p, 4) if h.features else None, "features": {k: round(v, 4) for k, v in h.features.items()},
            "cut": reason, **({"source": h.source} if h.source else {})}


def _explain(d: Any, why: list) -> None:  # type: ignore[type-arg]
    """The candidates behind a decision, best first, and what cut each (on stderr, after a blank
    line: stdout stays exactly what the hook would inject)."""
    from memrepo.recall import explain

    echo("", err=True)
    for line in explain.live(d, why):
        echo(line, err=True)


@click.command("recall-log")
@click.option("--limit", "-n", default=20, show_default=True, type=click.IntRange(min=1),
              help="Most entries to show (after the filters).")
@click.option("--session", help="Only this session (its id, or the start of it).")
@click.option("--agent", type=click.Choice(["claude", "codex", "gemini"]), help="Only prompts from this agent's hooks.")
@click.option("--project", help="Only prompts in this project (its key, e.g. github.com/acme/web, or its name).")
@click.option("--silent", "only", flag_value="silent", help="Only decisions that injected nothing.")
@click.option("--injected", "only", flag_value="injected", help="Only decisions that injected something.")
@click.option("--explain", is_flag=True, help="Also show each decision's candidates, their scores and what cut each.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def recall_log(ctx: click.Context, limit: int, session: str | None, agent: str | None, project: str | None,
               only: str | None, explain: bool, as_json: bool) -> None:
    """Recent recall decisions on this machine, newest first, and why each one was made.

    Each shows its time, project, agent (Claude Code unless named), session and query terms (never the prompt: only its hash is
    kept), then what was injected with the scores, or that it stayed silent and why: the floor
    the best candidate failed, with its score. An injected id is marked `used` or `unused` once
    the turn's Stop hook judged it; unmarked: not judged yet.

    \b
    Example:
      memrepo recall-log --silent -n 5 --explain
      memrepo recall-log --session 1a2b3c4d --json
      memrepo recall-log --agent codex
    """
    from memrepo.recall import log, usage

    repo = _repo(ctx)
    entries = [e for e in reversed(log.read_all(repo)) if _keep(e, session, project, only, agent)][:max(0, limit)]
    verdicts = usage.read_all(repo)
    judged = {str(v.get("key")) for v in verdicts}
    used = usage.used_by_key(verdicts)
    for e in entries:
        k = usage.key(e)
        for i in e.get("injected", []):
            if k in judged:
                i["used"] = i.get("id") in used.get(k, ())
    if as_json:
        return _json(entries)
    for e in entries:
        echo(_entry_lines(e))
        if explain:
            from memrepo.recall import explain as trace

            echo("\n".join("  " + line for line in trace.logged(e)[1:]))
    if not entries:
        filtered = session or project or only or agent
        echo("no recall decisions match these filters" if filtered else
             "no recall decisions logged yet: they appear after the first prompt in a session with the hooks", err=True)


def _keep(e: dict[str, Any], session: str | None, project: str | None, only: str | None, agent: str | None = None) -> bool:
    if agent and str(e.get("agent") or "claude") != agent:
        return False
    if session and not str(e.get("session", "")).startswith(session):
        return False
    if project:
        key = str(e.get("project", ""))
        if project not in (key, key.rsplit("/", 1)[-1]):
            return False
    if only == "silent" and e.get("injected"):
        return False
    return not (only == "injected" and not e.get("injected"))


def _entry_lines(e: dict[str, Any]) -> str:
    # No project: outside any checkout, or a prompt silenced before the search looked one up.
    head = [str(e.get("t", "?")), str(e.get("project") or "-")]
    if e.get("agent"):
        head.append(str(e["agent"]))
    if e.get("session"):
        head.append(f"session {str(e['session'])[:8]}")
    head.append(f"{float(e.get('ms', 0)):.1f} ms")
    lines = ["  ".join(head)]
    terms = list(e.get("terms", []))
    context = list(e.get("context_terms", []))
    if e.get("withheld"):
        lines.append(f"  terms: {e['withheld']} withheld (the prompt may hold a secret)")
    elif terms or context:
        lines.append("  terms: " + " ".join(terms) + (f"  + from the previous turn: {' '.join(context)}" if context else ""))
    if e.get("injected"):
        lines.append("  injected: " + ", ".join(f"{i['id']} ({i['score']}{_mark(i)})" for i in e["injected"]))
    else:
        best = e.get("best")
        why = _silence_why(best.get("id"), best.get("score"), e.get("why")) if isinstance(best, dict) else e.get("why")
        lines.append(f"  silent ({e.get('silent')})" + (f": {why}" if why else ""))
    return "\n".join(lines)


def _silence_why(best: Any, score: Any, why: Any) -> str:
    """Why a prompt with candidates stayed silent: its best candidate and what the decision read in it."""
    return f"the best candidate {best} ({score}): {why}"


def _mark(injected: dict) -> str:  # type: ignore[type-arg]
    return "" if "used" not in injected else ", used" if injected["used"] else ", unused"


@click.command("eval")
@click.argument("prompts", type=click.Path(exists=True, dir_okay=False))
@click.option("--memory", "memory_dir", type=click.Path(exists=True, file_okay=False),
              help="Evaluate against this folder of memory files (indexed into a temp dir) instead of the "
                   "repository; --repo names a whole memory repository, --memory just a memory/ folder.")
@click.option("--today", help="Reference date for decay, YYYY-MM-DD (default: today).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary and every prompt's result as JSON.")
@click.option("--failures", is_flag=True, help="Also list the prompts that missed, with their cause.")
@click.option("--top", default=2, show_default=True, type=click.IntRange(1, 3),
              help="A prompt expecting a memory is a hit when one is among the first TOP injected.")
@click.pass_context
@_fail_friendly
def eval_(ctx: click.Context, prompts: str, memory_dir: str | None, today: str | None, as_json: bool, failures: bool,
          top: int) -> None:
    """Score recall on a labeled PROMPTS.jsonl exactly as the prompt hook decides, beside plain BM25.

    Prints hit@1/hit@TOP of the prompts that expect a memory and the silence rate of the rest,
    per kind; plain BM25 (every word OR-ed, never silent) and field-weighted BM25 on the same
    store, top TOP and top 10; and every miss by cause: vocabulary (no expected memory shares a
    word with the prompt), outranked, silenced (ranked first or second, cut by the decision),
    injected (on a prompt expecting silence).

    \b
    Example:
      memrepo eval tests/data/recall/prompts.jsonl --memory tests/data/recall/memory
      memrepo eval prompts.jsonl --memory memory/ --failures --today 2026-11-30
    """
    from memrepo.evaluation import evaluate

    repo = None if memory_dir else _repo(ctx)
    if repo is not None:  # say which store is scored: a labeled set scored against the wrong one means nothing
        from memrepo.store import memories as store

        store.require_repo(repo)
        echo(f"scoring against the memory repository at {repo} (--memory DIR scores a folder instead)", err=True)
    report = evaluate.run(prompts, repo=repo, memory_dir=memory_dir, today=_date(today), top=top)
    if as_json:
        return _json(report)
    for line in evaluate.report_lines(report, top, failures):
        echo(line)


@click.group()
def install() -> None:
    """Install memrepo's hooks into a client's settings: claude, codex or gemini."""


@install.command("claude")
@_fail_friendly
def install_claude() -> None:
    """Add the recall and session hooks to ~/.claude/settings.json (instead of the plugin).

    Refused while the memrepo plugin is enabled (every memory would be injected twice).
    Idempotent; other hooks are kept; `memrepo uninstall claude` gives the file back as it was.
    """
    from memrepo.claude import install as claudeinstall

    path, changed = claudeinstall.install()
    _written(path, changed, claudeinstall.written())
    _records(changed, path)


@install.command("codex")
@click.option("--plugin", is_flag=True,
              help="Do not add hooks: trust the hooks of the memrepo Codex plugin (codex plugin add memrepo@MARKETPLACE) instead.")
@click.option("--marketplace", default="memrepo", show_default=True, metavar="NAME",
              help="With --plugin: the marketplace the plugin was added from.")
@_fail_friendly
def install_codex(plugin: bool, marketplace: str) -> None:
    """Add the recall and session hooks to Codex CLI's $CODEX_HOME/hooks.json (default ~/.codex).

    Codex runs a user hook only once it is trusted, so memrepo also writes the trust entries of
    its own hooks to $CODEX_HOME/config.toml ([hooks.state] tables; the rest of the file is kept
    as written). Idempotent; other hooks and settings are kept; `memrepo uninstall codex` gives
    the files back as they were.

    \b
    With the plugin instead (from a memrepo checkout):
      codex plugin marketplace add /path/to/memrepo && codex plugin add memrepo@memrepo
      memrepo install codex --plugin
    """
    from memrepo.agents.codex import install as codexinstall

    if plugin:
        cfg, changed = codexinstall.trust_plugin(marketplace)
        echo(f"{'trusted' if changed else 'already trusted:'} the hooks of memrepo@{marketplace} in {cfg} "
                   f"({len(codexinstall.plugin_entries(marketplace))} [hooks.state] tables)")
        if codexinstall.installed():
            echo(f"memrepo's hooks are also in {codexinstall.hooks_path()}: every memory would be injected "
                 "twice; `memrepo uninstall codex` removes those (then run this again)", err=True)
        return
    path, changed = codexinstall.install()
    _written(path, changed, codexinstall.written())
    echo(f"and trusted them in {codexinstall.config_path()} ({len(codexinstall.EVENTS)} [hooks.state] tables)")
    _records(changed, path, codexinstall.config_path())
    echo("If Codex's /hooks screen lists them as needing review, trust them there.", err=True)


@install.command("gemini")
@_fail_friendly
def install_gemini() -> None:
    """Add the recall and session hooks to Gemini CLI's settings.json ($GEMINI_CLI_HOME/.gemini, default ~/.gemini).

    Idempotent; other hooks and settings are kept; `memrepo uninstall gemini` gives the file back
    as it was. A settings.json with comments is not rewritten: the block to paste is printed.
    """
    from memrepo.agents.gemini import install as geminiinstall

    path, changed = geminiinstall.install()
    _written(path, changed, geminiinstall.written())
    _records(changed, path)


def _written(path: str, changed: bool, hooks: list[str]) -> None:
    echo(f"{'installed memrepo hooks in' if changed else 'already installed in'} {path}:")
    for line in hooks:
        echo(f"  {line}")


def _records(changed: bool, *paths: str) -> None:
    """Name the files `memrepo uninstall` gives the user's files back from."""
    from memrepo.claude import configfile

    for path in paths:
        if changed and os.path.exists(configfile.record_path(path)):
            echo(f"what uninstall gives back of {os.path.basename(path)} is kept in {configfile.record_path(path)}")


@click.group()
def uninstall() -> None:
    """Remove memrepo's hooks from a client's settings: claude, codex or gemini."""


@uninstall.command("claude")
@_fail_friendly
def uninstall_claude() -> None:
    """Remove memrepo's hooks from ~/.claude/settings.json, leaving every other hook."""
    from memrepo.claude import install as claudeinstall

    path, changed = claudeinstall.uninstall()
    _removed(path, changed)


@uninstall.command("codex")
@_fail_friendly
def uninstall_codex() -> None:
    """Remove memrepo's hooks from Codex CLI's hooks.json and their trust (and the plugin's) from config.toml, leaving everything else."""
    from memrepo.agents.codex import install as codexinstall

    path, changed = codexinstall.uninstall()
    _removed(path, changed)


@uninstall.command("gemini")
@_fail_friendly
def uninstall_gemini() -> None:
    """Remove memrepo's hooks from Gemini CLI's settings.json, leaving every other hook."""
    from memrepo.agents.gemini import install as geminiinstall

    path, changed = geminiinstall.uninstall()
    _removed(path, changed)




def _removed(path: str, changed: bool) -> None:
    if not changed:
        echo(f"no memrepo hooks in {path}")
    elif os.path.exists(path):
        echo(f"removed memrepo hooks from {path}")
    else:
        echo(f"removed memrepo hooks: {path} is gone, as before memrepo's install made it")


@click.command()
@click.option("--memory", "memory_dir", type=click.Path(exists=True, file_okay=False),
              help="Folder of memory files to demonstrate on (default: the example memories shipped with memrepo); "
                   "a memory/ folder, not a repository, so it works on any copy of one.")
@click.option("--prompt", "prompts", multiple=True, help="Prompt to try instead of the built-in ones; repeatable.")
@click.option("--full", is_flag=True, help="Print the exact text the hook would inject.")
@_fail_friendly
def demo(memory_dir: str | None, prompts: tuple[str, ...], full: bool) -> None:
    """Show recall on the bundled example memories: what each prompt injects, or silence, and how fast.

    Indexes the memories into a temporary cache; no repository is created or changed.

    \b
    Example:
      memrepo demo
      memrepo demo --prompt "who reviews database migrations?"
    """
    from memrepo.evaluation import demo as demo_mod

    memory_dir = memory_dir or demo_mod.EXAMPLES
    info, *results = demo_mod.run(memory_dir, [(p, None) for p in prompts] or None)
    echo(f"Indexed {count(info['indexed'], 'memory', 'memories')} from {memory_dir}/ in {info['index_seconds'] * 1000:.0f} ms.\n")
    for r in results:
        where = f"  (in project {r['project']})" if r["project"] else ""
        echo(f"> {r['prompt']}{where}")
        if full and r["hits"]:
            echo("  " + r["context"].replace("\n", "\n  "))
        for h in r["hits"]:
            labels = "".join(f" [{label}]" for label in h.labels())
            echo(f"  recalls {h.id} ({h.cls}, score {h.score:.2f}){labels}")
        if not r["hits"]:
            echo(f"  silent ({r['silent']})" + (f": {_silence_why(r['best'].id, round(r['best'].score, 2), r['why'])}"
                                                if r["best"] is not None else ""))
        echo(f"  {r['ms']:.1f} ms\n")


def register(group: click.Group) -> None:
    for command in (recall, recall_log, eval_, demo, install, uninstall):
        group.add_command(command)
