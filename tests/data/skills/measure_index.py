"""Measure the transcript index's size per 1,000 turns (run from the repo root).

python tests/data/skills/measure_index.py — builds 20 sessions × 100 indexed turns with
tests/data/capture/ccbuild.py (prompts of 8–40 words, replies of 30–120, a Bash call and an
Edit per exchange) in a temporary directory, indexes them, prints the figures.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "capture"), os.path.join(HERE, "..", "..", "..", "tools")]

from ccbuild import Session  # noqa: E402
from memrepo.store import repoinit, sessions  # noqa: E402


def main() -> None:
    rnd = random.Random(7)
    words = [f"w{i}" for i in range(5000)]

    def sent(n: int) -> str:
        return " ".join(rnd.choice(words) for _ in range(n))

    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "t"))
        for k in range(20):
            s = Session(f"dddd{k:04d}-0000-4000-8000-000000000000", cwd="/home/user/app")
            for _ in range(25):
                s.user(sent(rnd.randint(8, 40)))
                s.say(sent(rnd.randint(30, 120)))
                s.bash(f"pytest -x tests/test_{rnd.choice(words)}.py -k {rnd.choice(words)}", sent(50))
                tid = f"toolu_{s.n}"
                s.assistant({"type": "tool_use", "id": tid, "name": "Edit",
                             "input": {"file_path": f"/home/user/app/src/{rnd.choice(words)}.py", "old_string": "a", "new_string": "b"}})
                s.user([{"tool_use_id": tid, "type": "tool_result", "content": "ok"}])
            s.write(os.path.join(tmp, "t", f"{k}.jsonl"))
        repoinit.init(os.path.join(tmp, "mem"))
        start = time.perf_counter()
        sessions.index(os.path.join(tmp, "mem"), os.path.join(tmp, "t"))
        took = time.perf_counter() - start
        st = sessions.stats(os.path.join(tmp, "mem"))
        src = sum(os.path.getsize(os.path.join(tmp, "t", f)) for f in os.listdir(os.path.join(tmp, "t")))
        print(f"{st['turns']} turns, {st['tool_calls']} tool calls, index {st['bytes']} bytes "
              f"({st['bytes'] * 1000 // st['turns']} bytes per 1,000 turns), transcripts {src} bytes, indexed in {took:.2f}s")


if __name__ == "__main__":
    main()
