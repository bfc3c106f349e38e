"""Claude Code's SKILL.md: front matter (`name`, `description`) through the YAML emitter (`notes.emit`), then the body.

A description is model text. Written into YAML by hand, a `\\`, `:`, `#`, a quote, a newline or
a leading `-` becomes an escape or a parse error in the agent's skill loader (issue 38, part 10).
"""

from __future__ import annotations

from memrepo.format import notes


def render(name: str, description: str, body: str) -> str:
    """The text of a SKILL.md; the description is folded to one line (the loader shows one)."""
    head = notes.emit({"name": name, "description": " ".join(description.split())})
    return f"---\n{head}---\n\n{body.strip()}\n"

