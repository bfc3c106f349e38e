"""Inert skill drafts from recurring procedures, a structural gate, and human-only promotion.

A candidate (procedures.py: seen in ≥ 3 sessions, counted by the index) goes to the model
(pass "skill") with the real transcript turns of its sessions; the model answers JSON
{name, description, failure_prevented, body}. The draft is written in Claude Code's skill
format (front matter `name` + `description`, then the body) into the memory repository's
`skills/drafts/<name>/SKILL.md`. No agent loads that folder, so a draft's description never
reaches any context: skills an agent writes for itself and loads automatically make it worse.

The gate admits a draft only if it names a concrete failure it prevents (not "saves time"),
every path it cites exists (absolute, or under a project root from settings `projects`), it
fits in one page (MAX_LINES lines and MAX_CHARS characters of SKILL.md), its name does not
shadow a built-in command or skill, and it was seen in ≥ 3 sessions. A rejected draft is kept
under `skills/rejected/<name>/` with the gate's reasons. Each is a commit (Memrepo-Action
skill-draft / skill-reject). Only `promote`, run by a person, writes to `.claude/skills/`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from typing import Any

from memrepo.store import config, memories as store
from memrepo.vcs import runs
from memrepo.vcs.commit import commit_files
from memrepo.passes.skills import procedures
from memrepo.errors import MemrepoError
from memrepo.format import skillmd

DRAFTS = "skills/drafts"
REJECTED = "skills/rejected"
MAX_LINES = 60
MAX_CHARS = 3000
MAX_PROMPT_CHARS = 12000
BUILTINS = frozenset("""
help clear compact config cost doctor init login logout memory model review status vim bug pr-comments
terminal-setup agents hooks mcp permissions plugin plugins resume export add-dir context rewind upgrade
usage todos statusline output-style ide install-github-app release-notes security-review privacy-settings
exit quit feedback fast sandbox agent bashes continue theme skills pdf docx xlsx pptx skill-creator
""".split())
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")
_VAGUE = re.compile(r"\b(sav\w* time|time[- ]saving|faster|quicker|speed\w* up|convenien\w*|efficien\w*|productiv\w*|"
                    r"easier|streamlin\w*|less typing|fewer keystrokes|more quickly|saves effort)\b", re.I)
_FAILURE = re.compile(r"\b(fail\w*|error\w*|break\w*|broke\w*|crash\w*|lost|los[es]\w*|wrong|missing|miss\w*|stale|"
                      r"corrupt\w*|reject\w*|conflict\w*|leak\w*|outage|regress\w*|drift\w*|mismatch\w*|overwrit\w*|"
                      r"timeout\w*|time[sd] out|hang\w*|deadlock\w*|undefined|not found|exception\w*|bug\w*|"
                      r"data loss|downtime|red build|unapplied|skipp\w*)\b", re.I)
_CODE = re.compile(r"`([^`\n]+)`")
_BARE = re.compile(r"(?<![\w/.:~<-])((?:\.{1,2}/|/|~/)?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)(?![\w/])")
_URLISH = re.compile(r"^[a-z]+://|^[\w.-]+\.(com|org|net|io|dev)(/|$)", re.I)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 3, "maxLength": 64},
        "description": {"type": "string", "minLength": 10, "maxLength": 300},
        "failure_prevented": {"type": "string", "minLength": 1, "maxLength": 600},
        "body": {"type": "string", "minLength": 1, "maxLength": 20000},
    },
    "required": ["name", "description", "failure_prevented", "body"],
    "additionalProperties": False,
}


class SkillError(MemrepoError):
    """A skill command cannot do what was asked."""


def skill_md(draft: dict[str, Any]) -> str:
    """A draft as Claude Code's SKILL.md: front matter name + description, then the body."""
    return skillmd.render(str(draft["name"]), str(draft["description"]), str(draft["body"]))


def project_roots(repo: str) -> list[str]:
    """Roots of the projects configured on this machine (`projects: {name: path | {root: path}}`)."""
    return [os.path.realpath(root) for root in config.project_roots(config.load(repo)).values()]


def cited_paths(text: str) -> list[str]:
    """Paths a draft names: in backticks (the first word of a command is not a path) or bare with a slash."""
    found: list[str] = []
    for span in _CODE.findall(text):
        for tok in span.split():
            if "/" in tok or tok.startswith(("./", "~/")):
                found.append(tok)
    found.extend(_BARE.findall(_CODE.sub(" ", text)))
    clean = []
    for p in found:
        p = p.strip("'\"(),;:")
        if p and not _URLISH.match(p) and not re.search(r"[<>*?{}$]", p) and p not in clean:
            clean.append(p)
    return clean


def _exists(path: str, roots: list[str]) -> bool:
    if path.startswith("~") or os.path.isabs(path):
        return os.path.exists(os.path.expanduser(path))
    return any(os.path.exists(os.path.join(root, path)) for root in roots)


def gate(draft: dict[str, Any], sessions_seen: int, roots: list[str]) -> list[str]:
    """The reasons a draft is refused; empty when it is admitted."""
    reasons = []
    failure = str(draft.get("failure_prevented") or "")
    if not _FAILURE.search(failure):
        vague = _VAGUE.search(failure)
        reasons.append(f"names no concrete failure it prevents (only {vague.group(0)!r})" if vague
                       else "names no concrete failure it prevents")
    text = skill_md(draft)
    missing = [p for p in cited_paths(str(draft.get("body", "")) + "\n" + str(draft.get("description", "")))
               if not _exists(p, roots)]
    if missing:
        reasons.append("cites paths that do not exist: " + ", ".join(missing[:5]))
    lines = text.count("\n")
    if lines > MAX_LINES or len(text) > MAX_CHARS:
        reasons.append(f"longer than one page ({lines} lines, {len(text)} characters; at most {MAX_LINES} and {MAX_CHARS})")
    name = str(draft.get("name", ""))
    if not NAME_RE.match(name):
        reasons.append(f"name {name!r} is not lower-case kebab-case (a-z, 0-9, -)")
    elif name in BUILTINS:
        reasons.append(f"name {name!r} shadows a built-in command or skill")
    if sessions_seen < procedures.MIN_SESSIONS:
        reasons.append(f"seen in {sessions_seen} session(s); at least {procedures.MIN_SESSIONS} needed")
    return reasons


def _evidence(repo: str, candidate: dict[str, Any]) -> str:
    """The real turns of the candidate's sessions, from the first prompt to the last step, capped."""
    from memrepo.store import sessions

    parts, budget = [], MAX_PROMPT_CHARS
    for sid in candidate["sessions"]:
        lines = [f"## session {sid}"]
        for turn in sessions.turns_of(repo, sid):
            lines.append(f"[{turn['role']}] {turn['text']}")
        block = "\n".join(lines)[: max(0, budget)]
        budget -= len(block)
        parts.append(block)
    return "\n\n".join(p for p in parts if p)


def prompt(repo: str, candidate: dict[str, Any]) -> str:
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(candidate["steps"], 1))
    return (
        "You draft a Claude Code skill (SKILL.md) from a procedure a person walked an agent through in "
        f"{len(candidate['sessions'])} separate sessions. The normalized steps:\n{steps}\n\n"
        "The real transcript turns follow. Answer ONLY a JSON object {\"name\", \"description\", "
        "\"failure_prevented\", \"body\"}: name in kebab-case (not a built-in command); a one-line description "
        "of when to use it; failure_prevented = the concrete failure the skill prevents (an error, a broken "
        "build, lost data — not 'saves time'); body = markdown steps, at most "
        f"{MAX_LINES - 8} lines, citing only paths that appear in the transcripts.\n\n"
        f"Procedure id: {candidate['id']}\n\n{_evidence(repo, candidate)}\n"
    )


def _safe_name(name: Any, fallback: str) -> str:
    text = str(name or "")
    return text if NAME_RE.match(text) else (store.slugify(text, "")[:60].strip("-") or fallback)


def write_draft(repo: str, candidate: dict[str, Any], draft: dict[str, Any], run_id: str,
                heard: str = "") -> dict[str, Any]:
    """Gate one draft, write it under drafts/ or rejected/, and commit it; returns the outcome.
    `heard` is the run's model calls so far, for the commit's `Memrepo-Model` trailer."""
    reasons = gate(draft, len(candidate["sessions"]), project_roots(repo))
    name = _safe_name(draft.get("name"), f"procedure-{candidate['id']}")
    folder = os.path.join(REJECTED if reasons else DRAFTS, name)
    record = {"name": name, "procedure": candidate["id"], "steps": candidate["steps"], "sessions": candidate["sessions"],
              "failure_prevented": draft.get("failure_prevented", ""), "run": run_id, "reasons": reasons}
    files = {os.path.join(folder, "SKILL.md"): skill_md({**draft, "name": name}),
             os.path.join(folder, "draft.json"): json.dumps(record, indent=2, ensure_ascii=False) + "\n"}
    action = "skill-reject" if reasons else "skill-draft"
    trailers: dict[str, Any] = {"Action": action, "Run": run_id, "Procedure": candidate["id"],
                                "Sessions": len(candidate["sessions"])}
    if heard:
        trailers["Model"] = heard
    if reasons:
        trailers["Reason"] = "; ".join(reasons)
    body = "Refused by the gate:\n" + "\n".join(f"- {r}" for r in reasons) if reasons else ""
    commit_files(repo, files, f"skills: {'reject' if reasons else 'draft'} {name}", trailers, body)
    return {"name": name, "admitted": not reasons, "reasons": reasons, "path": os.path.join(folder, "SKILL.md")}


def draft(repo: str, numbers: list[int] | None = None) -> list[dict[str, Any]]:
    """Ask the model for a draft of each chosen candidate (1-based numbers; None = all) and gate it."""
    from memrepo.passes import model

    store.require_repo(repo)
    found = procedures.candidates(repo)
    chosen = found if numbers is None else [c for c in found if c["n"] in numbers]
    if numbers and len(chosen) != len(set(numbers)):
        raise SkillError(f"no candidate numbered {sorted(set(numbers) - {c['n'] for c in chosen})}",
                         hint="run `memrepo skills detect` to see the candidates and their numbers")
    run_id = runs.fresh_run_id(repo, "skill")
    heard = model.Heard()
    out = []
    for cand in chosen:
        answer = model.ask_json(repo, "skill", prompt(repo, cand), SCHEMA)
        if answer is None:
            out.append({"name": None, "procedure": cand["id"], "admitted": False, "reasons": ["the model's answer was invalid"]})
            continue
        out.append(write_draft(repo, cand, answer, run_id, heard.trailer()))
    return out


def list_skills(repo: str) -> list[dict[str, Any]]:
    """Drafts and rejected drafts, with their procedure, sessions and the gate's reasons."""
    out = []
    for state, base in (("draft", DRAFTS), ("rejected", REJECTED)):
        root = os.path.join(repo, base)
        for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
            meta = _record(os.path.join(root, name))
            out.append({"name": name, "state": state, "sessions": len(meta.get("sessions", [])),
                        "reasons": meta.get("reasons", []), "promoted": meta.get("promoted", [])})
    return out


def _record(folder: str) -> dict[str, Any]:
    try:
        with open(os.path.join(folder, "draft.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _find(repo: str, name: str) -> tuple[str, str]:
    for state, base in (("draft", DRAFTS), ("rejected", REJECTED)):
        folder = os.path.join(repo, base, name)
        if NAME_RE.match(name) and os.path.isfile(os.path.join(folder, "SKILL.md")):
            return state, folder
    raise SkillError(f"no skill draft named {name!r}", hint="run `memrepo skills list` to see the drafts")


def show(repo: str, name: str) -> dict[str, Any]:
    """A draft's SKILL.md text, its state and its record (evidence sessions, reasons)."""
    state, folder = _find(repo, name)
    with open(os.path.join(folder, "SKILL.md"), encoding="utf-8") as fh:
        return {"name": name, "state": state, "text": fh.read(), "record": _record(folder)}


def _bytes(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def promote(repo: str, name: str, project_dir: str | None = None) -> str:
    """Copy an admitted draft to ~/.claude/skills/NAME/ (or DIR/.claude/skills/NAME/) and commit the record.

    Only a person runs this. Refuses rejected drafts and an existing, different skill of that name.
    """
    state, folder = _find(repo, name)
    if state != "draft":
        raise SkillError(f"{name!r} was refused by the gate: {'; '.join(_record(folder).get('reasons', []))}",
                         hint="fix the draft's problems and draft it again; rejected drafts are never promoted")
    base = os.path.abspath(project_dir) if project_dir else os.path.expanduser("~")
    dest = os.path.join(base, ".claude", "skills", name, "SKILL.md")
    source = os.path.join(folder, "SKILL.md")
    if os.path.exists(dest) and _bytes(dest) != _bytes(source):
        raise SkillError(f"{dest} already exists with other content", hint=f"remove or rename {os.path.dirname(dest)} first")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(source, dest)
    record = _record(folder)
    # Committed and pushed: where it went, as another machine can read it, or not at all.
    shared = config.shareable_path(dest, config.project_roots(config.load(repo))) or \
        f"a directory outside every project root: .claude/skills/{name}/SKILL.md"
    record["promoted"] = [*record.get("promoted", []), shared]
    rel = os.path.join(DRAFTS, name, "draft.json")
    trailers = {"Action": "skill-promote", "Run": runs.fresh_run_id(repo, "skill-promote"), "Target": shared}
    commit_files(repo, {rel: json.dumps(record, indent=2, ensure_ascii=False) + "\n"}, f"skills: promote {name}", trailers)
    return dest
