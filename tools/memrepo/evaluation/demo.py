"""`memrepo demo`: recall at work on a folder of memories, without touching any repository."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from memrepo.store import index
from memrepo.recall import decide as recall
from memrepo.errors import MemrepoError

# The example memories shipped in the package (package data), and prompts written for them.
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "memory")
PROMPTS = (
    ("how do I ship a new version of tallybird?", "tallybird"),
    ("cut a release of the cli, the tag is v1.9.0", "fieldnotes-cli"),
    ("invoice emails are not going out, is the job worker stuck?", "tallybird"),
    ("where should I put the new Postmark API key?", "driftwood-docs"),
    ("ok, go ahead", "tallybird"),
    ("what's the difference between a list and a tuple in python?", None),
)


def run(memory_dir: str, prompts: list[tuple[str, str | None]] | None = None) -> list[dict[str, Any]]:
    """Index `memory_dir` into a temporary cache and run each prompt through recall's own path."""
    if not os.path.isdir(memory_dir) or not any(f.endswith(".md") for f in os.listdir(memory_dir)):
        raise MemrepoError(f"no memories in {memory_dir}",
                           hint="run it from a memrepo checkout, or pass --memory DIR with memory files")
    tmp = tempfile.mkdtemp(prefix="memrepo-demo-")
    try:
        shutil.copytree(memory_dir, os.path.join(tmp, "memory"))
        report = index.rebuild(tmp)
        results = []
        for prompt, project in prompts or list(PROMPTS):
            d = recall.decide(tmp, prompt, project=project)
            results.append({"prompt": prompt, "project": project, "hits": d.hits, "silent": d.silent, "best": d.best,
                            "why": d.why, "ms": d.ms, "context": recall.format_context(d.hits)})
        return [{"indexed": report.added, "index_seconds": report.seconds}] + results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
