"""Format check for cases.jsonl. Standalone: imports nothing from memrepo."""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
STORE = HERE.parent / "recall_held" / "memory"
KEYS = ["id", "prompt", "injected", "reply", "used"]


def store_ids():
    ids = set()
    for path in STORE.glob("*.md"):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            if line == "---":
                break
            if line.startswith("id: "):
                ids.add(line[4:].strip())
    return ids


def main():
    known = store_ids()
    problems = []
    seen = set()
    lines = (HERE / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        try:
            case = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {n}: not JSON ({err})")
            continue
        if list(case) != KEYS:
            problems.append(f"line {n}: keys {list(case)}")
            continue
        cid = case["id"]
        if cid != f"u{n:03d}" or cid in seen:
            problems.append(f"line {n}: id {cid}")
        seen.add(cid)
        inj, used = case["injected"], case["used"]
        if not (1 <= len(inj) <= 3) or len(set(inj)) != len(inj):
            problems.append(f"{cid}: injected {inj}")
        for mid in inj:
            if mid not in known:
                problems.append(f"{cid}: unknown memory {mid}")
        if not set(used) <= set(inj) or len(set(used)) != len(used):
            problems.append(f"{cid}: used {used} not a subset of injected")
        if not case["prompt"].strip() or not case["reply"].strip():
            problems.append(f"{cid}: empty prompt or reply")
    print(f"{len(lines)} cases, {len(known)} memories in the store, {len(problems)} problems")
    for p in problems:
        print(" ", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
