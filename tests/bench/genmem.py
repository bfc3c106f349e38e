"""Generate N realistic, canonical memory files for benchmarks (deterministic with --seed).

Memories are spread over 20 projects plus global ones; each project has its own services,
hosts, people and technologies, so memories of a project share subjects the way real ones do.
About 3% are superseded, each by a later memory on the same subject. Every file is written
through `memrepo.format.notes.serialize`; a sample (or, with --check-all, every file) is validated
with `memrepo.format.validate.check_text`.

    python tests/bench/genmem.py DIR [-n 10000] [--seed 7]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vocab  # noqa: E402

END = dt.date(2026, 11, 1)
SPAN_DAYS = 730
SUPERSEDED_SHARE = 0.03
GLOBAL_SHARE = 0.2
CLASS_WEIGHTS = {"fact": 34, "project": 20, "event": 15, "rule": 10, "preference": 8, "reference": 13}
SOURCE_WEIGHTS = {"user": 30, "agent": 25, "capture": 35, "import": 10}

TITLES: dict[str, tuple[str, ...]] = {
    "fact": (
        "{svc} runs on {tech} in {env}",
        "{svc} {noun} lives on {host}",
        "The {noun} for {svc} is kept in {tech}",
        "{person} owns the {svc} {noun}",
        "{tech} {noun} limit for {svc} is {n}",
        "{svc} reads {noun2} from {svc2}",
        "Where the {adj} {noun} of {svc} comes from",
    ),
    "project": (
        "{svc} {noun} moves to {tech}",
        "Plan: {verb} the {noun} of {svc} before {weekday}",
        "{svc} {noun} redesign: status and open questions",
        "Migrating {svc} from {tech2} to {tech}",
        "{person} is splitting {svc} into {svc2}",
        "Why {svc} keeps a {adj} {noun}",
    ),
    "event": (
        "{svc} {noun} outage on {date}",
        "{adj} {noun} took down {svc} ({date})",
        "{tech} {noun} incident on {host}",
        "Rolled back {svc} after a bad {noun} ({date})",
        "{svc} paged {person} for {noun} {noun2}",
    ),
    "rule": (
        "Never {verb} {noun} on {env} on a {weekday}",
        "Always {verb} the {noun} before you {verb2} {svc}",
        "{noun} changes to {svc} need review from {person}",
        "Do not {verb} {tech} {noun}s by hand",
        "Snapshot {host} before any {noun} {noun2}",
    ),
    "preference": (
        "Prefer {tech} over {tech2} for {topic}",
        "Keep {noun} {noun2}s short and {adj}",
        "{person} likes {noun} reviews in small pull requests",
        "Use {tech} for new {noun} work",
        "Write {topic} notes as checklists",
    ),
    "reference": (
        "{tech} {noun} dashboard for {svc}",
        "Runbook: {verb} {svc} {noun}",
        "Where to find the {svc} {noun} docs",
        "{tech} console links for {env}",
        "{svc} {noun} API reference",
    ),
}

DESCRIPTIONS = (
    "{svc} {verb}s its {noun} through {tech}; {person} set it up and the {noun2} is on {host}.",
    "On {env} the {noun} of {svc} is {adj}; {verb} it with the pipeline, never by hand.",
    "{person} decided to {verb} the {noun} weekly because the {noun2} grew {adj} in {tech}.",
    "Use {tech} for the {noun}; {tech2} was tried and dropped after the {noun2} {incident}.",
    "{svc} depends on {svc2} for {noun2}; a {adj} {noun} there shows up as {topic} alerts.",
    "The {noun} runbook for {svc}: {verb}, check the {tech} dashboard, then page {person}.",
    "{topic}: {svc} keeps {n} days of {noun} and {verb2}s the rest to {tech}.",
)

ALIASES = (
    "{noun} keeps failing", "why is {svc} slow", "{topic} for {svc}", "how do I {verb} {noun}",
    "{tech} {noun} problem", "who handles {noun}", "{noun} on {env}", "{adj} {noun}s",
)


class Vocab:
    """Zipf-weighted choices over the word lists, and a project's own named entities."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        services = [f"{h}-{t}" for h in vocab.SERVICE_HEADS for t in vocab.SERVICE_TAILS]
        rng.shuffle(services)
        self.services = services[:400]
        self.hosts = [f"{role}-{reg}-{i:02d}" for role in vocab.HOST_ROLES for reg in vocab.REGIONS for i in (1, 2, 3)]
        rng.shuffle(self.hosts)
        self.people = [n.capitalize() for n in dict.fromkeys(vocab.FIRST_NAMES)]
        self._weights: dict[int, list[float]] = {}

    def zipf(self, items: list[str] | tuple[str, ...], s: float = 0.9) -> str:
        n = len(items)
        if n not in self._weights:
            acc, total = [], 0.0
            for rank in range(1, n + 1):
                total += 1.0 / rank ** s
                acc.append(total)
            self._weights[n] = acc
        return self.rng.choices(items, cum_weights=self._weights[n])[0]


class Project:
    """A scope with its own slice of services, hosts, people and technologies."""

    def __init__(self, name: str | None, v: Vocab) -> None:
        rng = v.rng
        self.name = name
        self.services = rng.sample(v.services, 12)
        self.hosts = rng.sample(v.hosts, 8)
        self.people = rng.sample(v.people, 5)
        self.tech = rng.sample(vocab.TECH, 14)
        self.topics = rng.sample(vocab.TOPIC_PHRASES, 12)


def _subject(p: Project, v: Vocab) -> dict[str, str]:
    """The slots one memory (or a superseded/replacement pair) talks about."""
    rng = v.rng
    svc, svc2 = rng.sample(p.services, 2)
    tech, tech2 = rng.sample(p.tech, 2)
    return {
        "svc": svc, "svc2": svc2, "svcu": svc.replace("-", "_"), "tech": tech, "tech2": tech2,
        "host": v.zipf(p.hosts), "person": v.zipf(p.people), "noun": v.zipf(vocab.NOUNS),
        "noun2": v.zipf(vocab.NOUNS), "topic": v.zipf(p.topics), "project": p.name or "shared",
    }


def _fill(template: str, slots: dict[str, str], v: Vocab) -> str:
    rng = v.rng
    extra = {
        "verb": v.zipf(vocab.VERBS), "verb2": v.zipf(vocab.VERBS), "adj": v.zipf(vocab.ADJECTIVES),
        "env": rng.choice(vocab.ENVS), "weekday": rng.choice(vocab.WEEKDAYS), "n": str(rng.randint(2, 90)),
        "n2": str(rng.randint(1, 9)), "incident": rng.choice(("incident", "outage", "migration", "audit")),
        "channel": rng.choice(vocab.CHANNELS), "verbu": v.zipf(vocab.VERBS).replace("-", "_").split()[0],
    }
    extra.update(slots)
    return template.format(**extra)


def _cap(text: str, limit: int) -> str:
    text = text[0].upper() + text[1:]
    if len(text) <= limit:
        return text
    return text[: limit].rsplit(" ", 1)[0].rstrip(",;:") + "."


def _body(slots: dict[str, str], v: Vocab) -> str:
    rng = v.rng
    n_lines = min(40, 2 + int(rng.expovariate(1 / 8.0)))
    lines: list[str] = []
    while len(lines) < n_lines:
        kind = rng.random()
        if kind < 0.45:
            lines.append("- " + _fill(rng.choice(vocab.FILLER_SENTENCES), _fresh(slots, v), v))
        elif kind < 0.6:
            lines.append(f"{len(lines) + 1}. " + _cap(_fill("{verb} the {noun} on {host}, then {verb2} {svc}", _fresh(slots, v), v), 160))
        elif kind < 0.75:
            lines.append("- `" + _fill(rng.choice(vocab.COMMANDS), _fresh(slots, v), v) + "`")
        elif kind < 0.8 and n_lines - len(lines) >= 3:
            room = min(3, n_lines - len(lines) - 2)
            cmds = [_fill(rng.choice(vocab.COMMANDS), _fresh(slots, v), v) for _ in range(rng.randint(1, room))]
            lines.extend(["```sh", *cmds, "```"])
        elif kind < 0.85:
            lines.append(_fill("See https://wiki.{project}.internal/{noun}/{svc} for the {noun2} notes.", slots, v))
        else:
            lines.append(_fill(rng.choice(vocab.FILLER_SENTENCES), _fresh(slots, v), v))
    return "\n".join(lines)


def _fresh(slots: dict[str, str], v: Vocab) -> dict[str, str]:
    """The memory's subject, with the secondary noun redrawn so lines differ."""
    out = dict(slots)
    out["noun2"] = v.zipf(vocab.NOUNS)
    return out


def _slug(text: str, words: int = 6) -> str:
    parts = [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w and w not in ("the", "a", "of", "for", "on", "to", "is")]
    return "-".join(parts[:words])


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.v = Vocab(self.rng)
        self.projects = [Project(name, self.v) for name in vocab.PROJECTS]
        self.global_scope = Project(None, self.v)
        self.ids: set[str] = set()

    def scope(self) -> Project:
        if self.rng.random() < GLOBAL_SHARE:
            return self.global_scope
        return self.v.zipf(self.projects, 0.6)  # type: ignore[arg-type, return-value]

    def _unique_id(self, base: str) -> str:
        base = base[:72].strip("-")
        nid, k = base, 2
        while nid in self.ids:
            nid, k = f"{base}-{k}", k + 1
        self.ids.add(nid)
        return nid

    def _dates(self, after: dt.date | None = None) -> tuple[dt.date, dt.date]:
        lo = (END - after).days if after else SPAN_DAYS
        created = END - dt.timedelta(days=self.rng.randint(0, max(0, lo - 1)))
        updated = created
        if self.rng.random() < 0.45:
            updated = created + dt.timedelta(days=self.rng.randint(1, max(1, (END - created).days)))
            updated = min(updated, END)
        return created, updated

    def note_fields(self, p: Project, slots: dict[str, str], cls: str | None = None,
                    after: dt.date | None = None) -> dict[str, Any]:
        rng, v = self.rng, self.v
        cls = cls or rng.choices(list(CLASS_WEIGHTS), weights=list(CLASS_WEIGHTS.values()))[0]
        source = rng.choices(list(SOURCE_WEIGHTS), weights=list(SOURCE_WEIGHTS.values()))[0]
        created, updated = self._dates(after)
        slots = dict(slots, date=created.isoformat())
        title = _cap(_fill(rng.choice(TITLES[cls]), slots, v), 120)
        prefix = (p.name + "-") if p.name else ("" if cls in ("fact", "project") else cls[:4] + "-")
        fields: dict[str, Any] = {
            "id": self._unique_id(prefix + _slug(title)),
            "title": title,
            "description": _cap(_fill(rng.choice(DESCRIPTIONS), slots, v), 200),
            "class_": cls,
            "source": source,
            "created": created.isoformat(),
            "updated": updated.isoformat() if updated != created else None,
            "topics": list(dict.fromkeys([slots["topic"]] + [v.zipf(p.topics) for _ in range(rng.randint(0, 3))]
                                         + [slots["noun"]] * (rng.random() < 0.5))),
            "entities": list(dict.fromkeys([slots["svc"]] + [slots["person"]] * (rng.random() < 0.4)
                                           + [slots["host"]] * (rng.random() < 0.3) + [slots["svc2"]] * (rng.random() < 0.3))),
            "tech": list(dict.fromkeys([slots["tech"]] + [slots["tech2"]] * (rng.random() < 0.3))) if rng.random() < 0.8 else None,
            "aliases": [_fill(rng.choice(ALIASES), slots, v) for _ in range(rng.randint(1, 3))] if rng.random() < 0.5 else None,
            "project": p.name,
            "body": _body(slots, v),
        }
        self._extras(fields, source, created)
        return fields

    def _extras(self, fields: dict[str, Any], source: str, created: dt.date) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.02:
            fields["half_life_days"] = rng.choice((30, 90, 730, "never"))
        roll = rng.random()
        checked = min(END, created + dt.timedelta(days=rng.randint(0, 200))).isoformat()
        if roll < 0.08:
            fields["verification"] = {"status": "verified", "checked": checked}
        elif roll < 0.1:
            fields["verification"] = {"status": "unverified", "checked": checked,
                                      "failed": [f"path_exists: deploy/{fields['id'][:30]}.yml is gone"]}
        if source == "capture":
            fields["session"] = "%08x-%04x-4%03x-a%03x-%012x" % (
                rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(48))

    def generate(self, n: int) -> list[dict[str, Any]]:
        pairs = round(n * SUPERSEDED_SHARE)
        out: list[dict[str, Any]] = []
        for i in range(n - pairs):
            p = self.scope()
            slots = _subject(p, self.v)
            old = self.note_fields(p, slots)
            out.append(old)
            if i < pairs:
                # The replacement: same subject and class, created after the old one was last updated.
                last = dt.date.fromisoformat(old["updated"] or old["created"])
                if last >= END:
                    old["created"] = old["updated"] = (END - dt.timedelta(days=30)).isoformat()
                    last = END - dt.timedelta(days=30)
                new = self.note_fields(p, slots, cls=old["class_"], after=last)
                old["status"] = "superseded"
                old["superseded_by"] = new["id"]
                out.append(new)
        self.rng.shuffle(out)
        return out


def build_notes(n: int, seed: int) -> list[Any]:
    """The N notes (memrepo.format.notes.Note) for a seed, in a deterministic order."""
    from memrepo.format import notes

    result = []
    for fields in Generator(seed).generate(n):
        half_life = fields.pop("half_life_days", "unset")
        note = notes.new_note(**fields)
        if half_life != "unset":
            # new_note drops None, but here null is meant: "never decays".
            note.meta["half_life_days"] = None if half_life == "never" else half_life
            note.meta = {k: note.meta[k] for k in notes.ordered_keys(note.meta)}
        result.append(note)
    return result


def write_corpus(directory: str, n: int = 10_000, seed: int = 7, check: str = "sample") -> dict[str, Any]:
    """Write N memory files into `directory`; returns counts and timing. `check`: none, sample or all."""
    from memrepo.format import notes, validate

    start = time.perf_counter()
    os.makedirs(directory, exist_ok=True)
    built = build_notes(n, seed)
    written = []
    for note in built:
        path = os.path.join(directory, note.id + ".md")
        text = notes.serialize(note)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        written.append((path, text))
    to_check = written if check == "all" else random.Random(seed).sample(written, min(200, len(written))) if check == "sample" else []
    problems = []
    for path, text in to_check:
        found, note = validate.check_text(text, os.path.join("memory", os.path.basename(path)))
        problems.extend(str(p) for p in found)
        if note is not None and notes.serialize(note) != text:
            problems.append(f"{path}: not canonical (serialize(parse(text)) differs)")
    graph = validate.check_graph((n_.id + ".md", n_.id, n_.get("superseded_by")) for n_ in built)
    problems.extend(str(p) for p in graph)
    return {
        "n": len(written),
        "superseded": sum(1 for n_ in built if n_.get("status") == "superseded"),
        "global": sum(1 for n_ in built if not n_.get("project")),
        "projects": len({n_.get("project") for n_ in built if n_.get("project")}),
        "bytes": sum(len(t.encode("utf-8")) for _, t in written),
        "checked": len(to_check),
        "problems": problems,
        "seconds": round(time.perf_counter() - start, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", help="where to write the .md files (e.g. REPO/memory)")
    ap.add_argument("-n", type=int, default=10_000, help="number of memories (default 10000)")
    ap.add_argument("--seed", type=int, default=7, help="random seed (default 7)")
    ap.add_argument("--check", choices=("none", "sample", "all"), default="sample",
                    help="validate none, a 200-file sample (default) or all files with memrepo.format.validate")
    ap.add_argument("--quick", action="store_true", help="generate 500 memories and validate all of them")
    args = ap.parse_args(argv)
    n, check = (500, "all") if args.quick else (args.n, args.check)
    info = write_corpus(args.directory, n, args.seed, check)
    for p in info["problems"][:20]:
        print(p, file=sys.stderr)
    print(f"wrote {info['n']} memories ({info['superseded']} superseded, {info['global']} global, "
          f"{info['projects']} projects, {info['bytes'] / 1e6:.1f} MB) in {info['seconds']:.1f}s; "
          f"validated {info['checked']}: {len(info['problems'])} problems")
    return 1 if info["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
