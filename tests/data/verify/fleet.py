"""A stand-in for a cloud CLI: exit 0 when the instance id is in the fleet, 1 when it is not."""

import json
import os
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "world.json"), encoding="utf-8") as fh:
    fleet = json.load(fh)["fleet"]
raise SystemExit(0 if len(sys.argv) == 2 and sys.argv[1] in fleet else 1)
