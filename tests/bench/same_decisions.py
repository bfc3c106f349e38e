"""Check that two versions of the prompt hook decide, score and inject the same (issue 44).

For a change meant to make the hook cheaper and nothing else: runs the UserPromptSubmit hook of
two checkouts (`--before`, e.g. `git archive REV | tar -x -C DIR`, and `--after`, this one), each
from its own prompt-path bundle as SessionStart writes it, on the same prompts over the same
memory repositories, and compares what each run leaves: stdout (the injected block), stderr, the
exit code and its recall-log line (the time and the latency aside: the log holds every candidate's
score and p_inject). Prompts per store: PER_STORE generated from its memories' titles and
entities in the shapes below, the conversational and follow-up ones of EXTRA, and every 23rd
prompt of the labeled sets (tests/data/*/prompts.jsonl); each with a transcript, so the short
ones read the previous turn. Stores: any memory repository with a built cache, such as the ones
`tests/bench/bench_hook.py --keep --workdir DIR` leaves in DIR/repo-N.

    python tests/bench/same_decisions.py --before DIR --stores REPO [REPO ...] [--quick]

Exits 1 when any run differs.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

PER_STORE = 40
SHAPES = (
    "{title} — is that still how it works? I need to change it today",
    "what do we know about {entity}? {title_lc}",
    "before I touch {entity}: {title_lc}?",
    "{entity}",
    "and {entity}?",
    "our {entity} setup: {desc}",
    "why does {entity} fail?\n```\nTraceback (most recent call last):\n  File \"x.py\", line 3\n{title}\n```\nhelp",
    "Como funciona o {entity} hoje? {title_lc}",
    "{title_lc} v2.4.1 3.12",
)
EXTRA = ("ok, go ahead", "thanks!", "yes", "and the staging one?", "explain that again but shorter", "hmm", "",
         "what is a monad?", "lgtm 👍", "<command-name>/clear</command-name>", "fix it like before")
TRANSCRIPT = os.path.join(bl.ROOT, "tests", "fixtures", "claude-code", "cc-2.1.332-mock-session-excerpt.jsonl")


def prompts(repo: str, per_store: int) -> list[tuple[str, str | None]]:
    """(prompt, the project of the memory it was made from) for one store."""
    db_path = glob.glob(os.path.join(repo, "index", "memrepo-v*.sqlite3"))[0]
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT m.title, m.project, f.entities, m.description FROM memories m"
                          " JOIN fts f ON f.rowid = m.rowid ORDER BY m.id").fetchall()
    out: list[tuple[str, str | None]] = []
    for k, (title, project, entities, desc) in enumerate(rows[::max(1, len(rows) // per_store)][:per_store]):
        entity = (entities or title).split(" ; ")[0]
        out.append((SHAPES[k % len(SHAPES)].format(title=title, title_lc=title.lower(), entity=entity, desc=desc), project))
    out += [(p, None) for p in EXTRA]
    labeled: list[str] = []
    for path in sorted(glob.glob(os.path.join(bl.ROOT, "tests", "data", "*", "prompts.jsonl"))):
        with open(path, encoding="utf-8") as fh:
            labeled += [json.loads(line)["prompt"] for line in fh if line.strip()]
    return out + [(p, None) for p in labeled[::23]]


def run_hook(tree: str, python: str, repo: str, event: bytes) -> tuple[object, ...]:
    proc = subprocess.run([python, "-I", "-S", os.path.join(tree, "hooks", "user_prompt_submit.py")], input=event,
                          capture_output=True, env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo})
    with open(os.path.join(repo, "index", "recall-log.jsonl"), "rb") as fh:
        logged = json.loads(fh.read().splitlines()[-1])
    logged.pop("t", None)
    logged.pop("ms", None)
    return proc.returncode, proc.stdout, proc.stderr, logged


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a checkout of the code to compare with")
    ap.add_argument("--after", default=bl.ROOT, help="the checkout under test (default: this one)")
    ap.add_argument("--stores", nargs="+", required=True, help="memory repositories with a built cache")
    ap.add_argument("--python", default=sys.executable, help="the hooks' interpreter (default: this one)")
    ap.add_argument("--quick", action="store_true", help="the first store, 8 generated prompts")
    args = ap.parse_args(argv)
    stores = args.stores[:1] if args.quick else args.stores
    for tree in (args.before, args.after):  # each from its own bundle, as SessionStart writes it
        subprocess.run([args.python, "-I", "-S", os.path.join(tree, "tools", "memrepo", "base", "bundle.py")],
                       check=True, capture_output=True)
    runs = differ = injected = 0
    for repo in stores:
        checkouts = os.path.join(os.path.dirname(os.path.abspath(repo)), "same-decisions-checkouts")
        for prompt, project in prompts(repo, 8 if args.quick else PER_STORE):
            cwd = os.path.join(checkouts, project or "scratch")
            os.makedirs(os.path.join(cwd, ".git"), exist_ok=True)
            event = json.dumps({"session_id": "s", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": prompt,
                                "transcript_path": TRANSCRIPT}).encode()
            before = run_hook(args.before, args.python, repo, event)
            after = run_hook(args.after, args.python, repo, event)
            runs += 1
            injected += bool(after[1])
            if before != after:
                differ += 1
                print(f"differs: {repo}: {prompt[:70]!r}")
    print(f"{runs} prompts, {injected} injecting: {runs - differ} the same (stdout, stderr, exit code, log line), {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
