"""Enrichment: `aliases`, the words a person would type when they need a memory.

The model (pass "enrich") proposes paraphrases for a batch of memories. An alias whose every
subject word (query.subject_terms, lightly stemmed) is already one of the memory's own
title/description/body/topic words is dropped: such copies add nothing to what FTS already
matches and displaced the real paraphrases in earlier tests. One commit per run
(`Memrepo-Action: enrich`). A memory counts as enriched once it has aliases, or once it was
asked about in its current wording (`index/enrich-state.json`), so a sweep never asks twice.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from memrepo.progress import Progress, silent
from memrepo.vcs import commit, runs, status
from memrepo.vcs.commit import commit_if_unchanged
from memrepo.passes import model
from memrepo.format import catalogue, files, notes, spec, validate
from memrepo.base import paths
from memrepo.recall import query
from memrepo.store import memories as store
from memrepo.format.notes import Note

PASS = "enrich"
BATCH = 8
MAX_ALIASES = 12
STATE = "enrich-state.json"
ATTEMPTS = "enrich-attempts.json"  # per memory: [fingerprint, rejected or unanswered asks]
MAX_ATTEMPTS = 3  # then it counts as asked, and a changed wording asks again
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["memories"],
          "properties": {"memories": {"type": "array", "maxItems": 50, "items": {
              "type": "object", "additionalProperties": False, "required": ["id", "aliases"],
              "properties": {"id": {"type": "string", "maxLength": spec.MAX_ID},
                             "aliases": {"type": "array", "maxItems": 20,
                                         "items": {"type": "string", "minLength": 2, "maxLength": 80}}}}}}}

PROMPT = """For each memory below, list up to 8 aliases: short phrases (2 to 6 words) a person would
TYPE in a prompt when they need this memory without remembering how it was written - their own
everyday words, synonyms, the question they would ask, the symptom they would see. Do not
repeat the memory's own title or words; paraphrase. Example: a note titled "production deploy
incident" gets aliases like "am I about to break prod", "outage after release".

{memories}

Answer with only this JSON object and nothing else:
{{"memories": [{{"id": "<id>", "aliases": ["...", "..."]}}]}}
"""

_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ness", "ies", "ers", "er", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """A light suffix-stripping stem, enough to tell 'deploys'/'deploying' from 'deploy'."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            return word + "y" if suffix == "ies" else word
    return word


def own_stems(note: Note) -> set[str]:
    values = [str(note.get("title", "")), str(note.get("description", "")), note.body]
    for key in ("topics", "entities", "tech"):
        values += [str(v) for v in note.get(key) or []]
    return {stem(w) for w in query.tokenize(" ".join(values))}


def filter_aliases(note: Note, aliases: list[str]) -> tuple[list[str], list[str]]:
    """(kept, dropped): drop aliases that only repeat the memory's own words, and repeats."""
    own = own_stems(note)
    kept: list[str] = []
    dropped: list[str] = []
    seen = {" ".join(str(a).lower().split()) for a in note.get("aliases") or []}
    for alias in aliases:
        text = " ".join(catalogue.redact(alias).split())
        key = text.lower()
        terms = query.subject_terms(text)
        if not terms or key in seen or all(stem(t) in own for t in terms):
            dropped.append(alias)
            continue
        seen.add(key)
        kept.append(text)
    return kept, dropped


def _describe(note: Note) -> str:
    body = " ".join(note.body.split())[:600]
    return f"id: {note.id}\ntitle: {note.get('title')}\ndescription: {note.get('description')}\nbody: {body}\n"


def aliases_for(repo: str, batch: list[Note], report: dict[str, Any] | None = None,
                answered: set[str] | None = None, progress: Progress = silent) -> dict[str, list[str]]:
    """Filtered new aliases per memory id for up to BATCH memories (one model call each BATCH).

    `answered` receives the ids of every batch whose answer was valid (an id it leaves out got
    no aliases): a memory in a rejected answer was not asked, whatever was sent."""
    out: dict[str, list[str]] = {}
    for i in range(0, len(batch), BATCH):
        progress("enrich: memories asked about", i, len(batch))
        part = batch[i : i + BATCH]
        left_out: dict[str, list[tuple[int, Any]]] = {}
        answer = model.ask_json(repo, PASS, PROMPT.format(memories="\n".join(_describe(n) for n in part)), SCHEMA,
                                dropped=left_out)
        if report is not None:
            report["model_calls"] = report.get("model_calls", 0) + 1
        if answer is None:
            continue
        by_id = {n.id: n for n in part}
        unknown = [str(item["id"]) for item in answer["memories"] if item["id"] not in by_id]
        if unknown and report is not None:
            report.setdefault("unknown_ids", []).extend(unknown)
        if answered is not None:
            # A memory whose item was invalid (logged) was not answered: it stays pending. When the
            # answer names an id that was not asked (a mistyped one), a memory it leaves out may be
            # that one: it stays pending too, rather than recorded as having no aliases.
            invalid = {item.get("id") for _, item in left_out.get("memories", []) if isinstance(item, dict)}
            named = {item["id"] for item in answer["memories"]}
            answered.update(i for i in by_id if i not in invalid and (i in named or not unknown))
        for item in answer["memories"]:
            note = by_id.get(item["id"])
            if note is None:
                continue
            kept, dropped = filter_aliases(note, item["aliases"])
            out[note.id] = kept
            if report is not None and dropped:
                report.setdefault("dropped", {})[note.id] = dropped
    progress("enrich: memories asked about", len(batch), len(batch))
    return out


def apply(note: Note, new: list[str]) -> Note:
    """The note with `new` aliases appended (existing ones first), capped at MAX_ALIASES."""
    merged = list(note.get("aliases") or []) + [a for a in new if a not in (note.get("aliases") or [])]
    meta = dict(note.meta, aliases=merged[:MAX_ALIASES])
    return Note({k: meta[k] for k in notes.ordered_keys(meta)}, note.body, note.path)


def _fingerprint(note: Note) -> str:
    text = "\n".join([str(note.get("title", "")), str(note.get("description", "")), note.body])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _load_state(repo: str, name: str = "") -> dict[str, Any]:
    return files.read_state(os.path.join(paths.index_dir(repo), name or STATE))


def _save_state(repo: str, state: dict[str, Any], name: str = "") -> None:
    files.write_state(os.path.join(paths.index_dir(repo), name or STATE), state)


def needs_enrichment(repo: str) -> list[Note]:
    """Active memories without aliases that were never asked about in their current wording."""
    state = _load_state(repo)
    found = []
    for name in files.memory_files(paths.memory_dir(repo)):
        try:
            note = notes.read(os.path.join(paths.memory_dir(repo), name))
        except (OSError, UnicodeDecodeError, notes.ParseError):
            continue
        if validate.unusable(note, name):  # the curator reports it; `memrepo doctor` names the problem
            continue
        if (note.get("status") or "active") == "active" and not note.get("aliases") and state.get(note.id) != _fingerprint(note):
            found.append(note)
    return found


def _named(repo: str, note_id: str) -> Note:
    """The memory a person named, or NoteInvalid saying why it cannot be read (a hand edit broke it)."""
    from memrepo.errors import NoteInvalid

    rel = f"{paths.MEMORY_DIR}/{note_id}.md"
    try:
        return notes.parse(store.read_text(repo, note_id), paths.note_path(repo, note_id))
    except notes.ParseError as exc:
        raise NoteInvalid(f"{rel} cannot be read, so it was not enriched",
                          [f"{rel}:{exc.line}: {exc}" + (f" — {exc.fix}" if exc.fix else "")],
                          hint=f"repair it with `memrepo edit {note_id}`, or take the hand edit back with `git checkout -- {rel}`") from None


def run(repo: str, ids: list[str] | None = None, run_id: str | None = None, progress: Progress = silent) -> dict[str, Any]:
    """Enrich the memories named (default: every un-enriched one); one commit. Returns a report."""
    store.require_repo(repo)
    model.require_enabled(repo)
    commit.refuse_in_progress(repo)  # before the model: a memory in conflict read as a broken hand edit (h31)
    report: dict[str, Any] = {"run_id": run_id or runs.fresh_run_id(repo, PASS), "asked": [], "enriched": {}, "model_calls": 0}
    targets = [_named(repo, i) for i in ids] if ids else needs_enrichment(repo)
    dirty = status.dirty_ids(repo, paths.MEMORY_DIR)
    report["skipped_dirty"] = [n.id for n in targets if n.id in dirty]
    targets = [n for n in targets if n.id not in dirty]
    if not targets:
        return report
    report["asked"] = [n.id for n in targets]
    heard = model.Heard()
    answered: set[str] = set()
    found = aliases_for(repo, targets, report, answered, progress)
    state = _load_state(repo)
    files, read = {}, {}
    for note in targets:
        if found.get(note.id):
            rel = f"{paths.MEMORY_DIR}/{note.id}.md"
            files[rel], read[rel] = notes.serialize(apply(note, found[note.id])), notes.original(note)
    if files:
        trailers: dict[str, Any] = {"Action": "enrich", "Run": report["run_id"], "Model": heard.trailer()}

        def subject(kept: list[str]) -> str:
            trailers["Count"] = len(kept)
            return f"enrich: aliases for {len(kept)} memor{'y' if len(kept) == 1 else 'ies'}"

        sha, stale = commit_if_unchanged(repo, files, read, subject, trailers)
        if sha:
            report["commit"] = sha
        # Changed by someone while the model answered: not enriched now, asked again next time.
        report["skipped_changed"] = [os.path.basename(rel)[:-3] for rel in stale]
    attempts = _load_state(repo, ATTEMPTS)
    report["pending"], report["gave_up"] = [], []
    for note in targets:
        if note.id in report.get("skipped_changed", []):
            continue
        fp = _fingerprint(note)
        if note.id in answered:
            state[note.id] = fp
            attempts.pop(note.id, None)
            if found.get(note.id):
                report["enriched"][note.id] = found[note.id]
            continue
        # The answer was rejected, or left this memory out: it stays pending, a bounded number of times.
        before = attempts.get(note.id)
        tries = (int(before[1]) if isinstance(before, list) and len(before) == 2 and before[0] == fp else 0) + 1
        if tries >= MAX_ATTEMPTS:
            state[note.id] = fp
            attempts.pop(note.id, None)
            report["gave_up"].append(note.id)
        else:
            attempts[note.id] = [fp, tries]
            report["pending"].append(note.id)
    _save_state(repo, state)
    _save_state(repo, attempts, ATTEMPTS)
    return report
