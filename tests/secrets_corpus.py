"""The labeled secrets corpus of tests/data/secrets/: every provider format in four contexts, and
ordinary technical text that is no secret (issue 38, part 4).

A value's `<<piece*n>>` is expanded here, so the committed files hold no literal token.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "secrets")
CONTEXTS = ("prose", "env", "yaml", "json")


@dataclass(frozen=True)
class Case:
    fmt: str  # the format's id
    context: str
    text: str
    secret: str  # what must not survive

    @property
    def name(self) -> str:
        return f"{self.fmt}-{self.context}"


def expand(value: str) -> str:
    return re.sub(r"<<(.+?)\*([0-9]+)>>", lambda m: m.group(1) * int(m.group(2)), value)


def _yaml(key: str, value: str) -> str:
    if "\n" in value:
        return f"{key}: |\n" + "".join(f"  {line}\n" for line in value.split("\n"))
    if ": " in value or " #" in value or value[0] in "&*!|>'\"%@`{[-":
        return f'{key}: "{value}"'
    return f"{key}: {value}"


def _json(key: str, value: str) -> str:
    return '{"%s": "%s"}' % (key, value.replace('"', '\\"').replace("\n", "\\n"))


def contexts(label: str, name: str, value: str) -> dict[str, str]:
    """The four ways a secret is written down: in prose, a dotenv line, YAML and JSON."""
    key = name.lower()
    env = f'{name}="{value}"' if "\n" in value else f"{name}={value}"
    prose = f"The {label} is:\n{value}\n" if "\n" in value else f"The {label} is {value} (rotated last week)."
    return {"prose": prose, "env": env, "yaml": _yaml(key, value), "json": _json(key, value)}


def formats() -> list[dict[str, str]]:
    with open(os.path.join(HERE, "providers.json"), encoding="utf-8") as f:
        return list(json.load(f)["formats"])


def cases() -> list[Case]:
    """Every format in every context."""
    out = []
    for fmt in formats():
        value = expand(fmt["value"])
        secret = expand(fmt.get("secret", fmt["value"]))
        for context, text in contexts(fmt["label"], fmt["name"], value).items():
            out.append(Case(fmt["id"], context, text, secret))
    return out


def negatives() -> list[str]:
    with open(os.path.join(HERE, "negatives.json"), encoding="utf-8") as f:
        return list(json.load(f)["texts"])
