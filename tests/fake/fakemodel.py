#!/usr/bin/env python3
"""A fake model command for tests: reads the prompt on stdin, answers from fixtures, no network.

Configuration by environment:
- FAKE_MODEL_RULES: a JSON file, a list of {"contains": "text" or ["all", "of", "these"],
  "reply": <JSON value> | "reply_text": "raw text", "exit": int (optional)}; the first rule
  whose strings all occur in the prompt answers. No rule matches: FAKE_MODEL_DEFAULT (raw
  text) or `{}`. A rule's "sleep": seconds waits that long first, as a model that takes too
  long to answer (the caller's timeout kills it).
- FAKE_MODEL_LOG: a JSONL file that receives {"prompt": ...} for every call (tests assert on it).
- FAKE_MODEL_USAGE: a JSON object printed as the envelope's `usage` instead of the default.
- FAKE_MODEL_PLAIN=1: print the bare answer, no envelope and no usage, like a command that
  only prints what the model said.
The answer is printed in `claude -p --output-format json`'s envelope, with token usage.
"""

import json
import os
import sys
import time


def main() -> int:
    prompt = sys.stdin.read()
    log = os.environ.get("FAKE_MODEL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"prompt": prompt, "memrepo_pass": os.environ.get("MEMREPO_PASS")}) + "\n")
    rules = []
    if os.environ.get("FAKE_MODEL_RULES"):
        with open(os.environ["FAKE_MODEL_RULES"], encoding="utf-8") as fh:
            rules = json.load(fh)
    text = os.environ.get("FAKE_MODEL_DEFAULT", "{}")
    for rule in rules:
        needles = rule.get("contains", [])
        needles = [needles] if isinstance(needles, str) else needles
        if all(n in prompt for n in needles):
            if rule.get("sleep"):
                time.sleep(float(rule["sleep"]))
            if rule.get("exit"):
                sys.stderr.write("fake model failure\n")
                return int(rule["exit"])
            text = rule["reply_text"] if "reply_text" in rule else json.dumps(rule.get("reply"))
            break
    if os.environ.get("FAKE_MODEL_PLAIN") == "1":
        sys.stdout.write(text)
        return 0
    usage = {"input_tokens": len(prompt) // 4, "output_tokens": len(text) // 4}
    if os.environ.get("FAKE_MODEL_USAGE"):
        usage = json.loads(os.environ["FAKE_MODEL_USAGE"])
    envelope = {"type": "result", "subtype": "success", "is_error": False, "result": text, "usage": usage}
    sys.stdout.write(json.dumps(envelope))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
