#!/usr/bin/env python3
"""A fake model command for end-to-end capture: answers a capture prompt as an honest model would
for the sessions those tests run, with no fixtures and no network.

The sessions state a fact the way people do ("Remember that X", "Note that X"); an honest
model writes that fact down as one memory citing the turn that said it, and nothing else (the
fake assistant's replies establish nothing). Any other prompt (enrichment, curation) gets `{}`,
which the pass rejects and retries later: those passes are not under test here.

FAKE_MODEL_LOG, when set, receives {"prompt": ...} per call. The answer is printed in
`claude -p --output-format json`'s envelope, like tests/fake/fakemodel.py.
"""

import json
import os
import re
import sys

_TURN = re.compile(r"^\[(t\d+)\] user: (.*)$", re.MULTILINE)
_STATED = re.compile(r"\b(?:remember|note) that (.+)", re.IGNORECASE)
_WORD = re.compile(r"[a-z][a-z0-9-]{3,}")
_COMMON = frozenset("that this with from they their there were have will when what which than then into only".split())


def memories(prompt: str) -> list:
    out = []
    turns = prompt.split("Session turns (new since the last capture):", 1)[-1]
    for tid, text in _TURN.findall(turns):
        m = _STATED.search(text)
        if not m:
            continue
        fact = m.group(1).strip().rstrip(".!")
        title = fact[0].upper() + fact[1:]
        words = [w for w in _WORD.findall(fact.lower()) if w not in _COMMON]
        out.append({"class": "fact", "title": title[:120], "description": title[:200], "topics": words[:4],
                    "entities": [], "tech": [], "body": title + ".", "evidence": [tid], "scope": "global"})
    return out


def main() -> int:
    prompt = sys.stdin.read()
    if os.environ.get("FAKE_MODEL_LOG"):
        with open(os.environ["FAKE_MODEL_LOG"], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"prompt": prompt}) + "\n")
    if "You write long-term memories for a coding agent" in prompt:
        text = json.dumps({"memories": memories(prompt), "refuted": []})
    else:
        text = "{}"
    sys.stdout.write(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": text,
                                 "usage": {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
