"""What each `memrepo mcp` tool does, over the library: no MCP SDK here, so each is testable alone.

Every tool calls what the matching command calls: `recall` the prompt hook's `decide` (and logs
the decision as the hook does, with the agent named), `remember` the validated, locked,
committed `memories.add`, `forget` `lifecycle.retire`. Errors are `MemrepoError`s, which the
server turns into a tool error the model reads (message and fix).
"""

from __future__ import annotations

import os
import re
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.base import paths

CLASSES = ("rule", "preference", "fact", "project", "event", "reference")
HISTORY_LIMIT = 20
AGENT_NAME = 60
ID_HINT = "find ids with the `search` tool"


def agent_name(client: str | None) -> str:
    """The MCP client's name as a trailer value: one line of safe characters, or `mcp` when it gave none."""
    name = re.sub(r"[^A-Za-z0-9 ._/-]+", "-", " ".join(str(client or "").split()))[:AGENT_NAME].strip(" -")
    return name or "mcp"


def recall(repo: str, prompt: str, cwd: str | None = None, agent: str = "mcp") -> str:
    """The block a hooked agent would get for `prompt` in `cwd` (the hook's own decision), "" when silent.

    The decision goes to the recall log like a hook's, so `why` and `memrepo recall-log` explain it.
    """
    from memrepo.recall import decide, log

    if not prompt.strip():
        raise MemrepoError("recall needs the user's request", hint="pass the task as `prompt`, in the user's words")
    d = decide.decide(repo, prompt, cwd=cwd or os.getcwd())
    try:
        log.log_decision(repo, prompt, d, agent=f"mcp:{agent}")
    except OSError:
        pass  # as in the hook: a log that cannot be written never costs the answer
    return decide.format_context(d.hits)


def prepare(repo: str) -> None:
    """Bring the cache up to date once, at start: `recall` then reads it as the hook does, never
    scanning the files per call (commits made meanwhile are indexed by the git hooks)."""
    from memrepo.store import index, memories

    memories.require_repo(repo)
    index.update(repo)


def search(repo: str, query: str, limit: int = 10, project: str | None = None) -> list[dict[str, Any]]:
    """Ranked full-text search over every source without recall's silence floors, as `memrepo
    search --json`: a team's or the project's memory says its `source` (recall injects those too)."""
    from memrepo.store import sources

    if not 1 <= limit <= 50:
        raise MemrepoError(f"limit {limit} is out of range", hint="ask for 1 to 50 results")
    if not query.strip():
        raise MemrepoError("search needs words to look for", hint="pass the subject as `query`, e.g. 'friday deploys'")
    hits = sources.search_all(repo, os.getcwd(), query, limit=limit, project=project)
    return [dict(h.as_dict(), **({"source": h.source} if h.source else {})) for h in hits]


def show(repo: str, memory_id: str) -> dict[str, Any]:
    """A memory's whole file and the commits that touched it, as `memrepo show --json`; ID may be a
    prefix of one of the user's own. A team's or the project's memory (recall names its source) too."""
    from memrepo.store import memories, sources

    memories.require_repo(repo)
    data = sources.show_any(repo, os.getcwd(), memory_id)
    return data if data["source"] != "personal" else {k: v for k, v in data.items() if k not in ("source", "root")}


def history(repo: str, memory_id: str, limit: int = HISTORY_LIMIT, diff: bool = False) -> list[dict[str, Any]]:
    """Each commit that touched a memory, newest first, with its `Memrepo-*` trailers (and its diff):
    one of the user's own, else a team's or the project's, in the repository it lives in."""
    from memrepo.store import memories
    from memrepo.vcs import gitops

    if not 1 <= limit <= 100:
        raise MemrepoError(f"limit {limit} is out of range", hint="ask for 1 to 100 commits")
    memories.require_repo(repo)
    top, rel = _where(repo, memory_id)
    rows = gitops.changes(top, rel, limit=limit)
    return rows if diff else [{k: v for k, v in row.items() if k != "diff"} for row in rows]


def _where(repo: str, memory_id: str) -> tuple[str, str]:
    """(the git repository, the file's path in it) of the memory `memory_id` names, in any source."""
    from memrepo.errors import AmbiguousId, NoteNotFound
    from memrepo.format import notes
    from memrepo.store import memories, sources

    try:
        return repo, f"{paths.MEMORY_DIR}/{memories.resolve(repo, memory_id)}.md"
    except AmbiguousId:
        raise
    except NoteNotFound:
        for src in sources.others(repo, os.getcwd()) if notes.is_id(memory_id) else []:
            if os.path.exists(paths.note_path(src.root, memory_id)):
                return sources.in_git(src, memory_id)
        raise NoteNotFound(f"no memory with id {memory_id!r} in any source", hint=ID_HINT) from None


def why(repo: str, prompt: str | None = None) -> str:
    """The recall trace of a logged decision: the newest one for `prompt`, else the newest of all."""
    from memrepo.recall import explain, log

    entries = log.read_all(repo)
    if prompt:
        sha = log.text_hash(prompt)
        entries = [e for e in entries if e.get("prompt_sha") == sha]
    if not entries:
        raise MemrepoError("no recall decision is logged for that prompt" if prompt else "no recall decision is logged yet",
                           hint="call `recall` with the prompt first; the log keeps only a hash of each prompt")
    entry = entries[-1]
    head = f"{entry.get('t', '?')}  project {entry.get('project') or '-'}  {float(entry.get('ms', 0)):.1f} ms"
    return "\n".join([head] + explain.logged(entry))


def remember(repo: str, agent: str, title: str, description: str, cls: str, body: str = "",
             topics: list[str] | None = None, entities: list[str] | None = None, project: str | None = None) -> dict[str, Any]:
    """Add a memory (`source: agent`) through `memories.add`, the commit naming the agent; {id, commit, run}."""
    from memrepo.format import notes
    from memrepo.store import memories

    if cls not in CLASSES:
        raise MemrepoError(f"class {cls!r} is not one of {', '.join(CLASSES)}", hint="pick the class that says what it is")
    for name, value in (("title", title), ("description", description)):
        if not value.strip():
            raise MemrepoError(f"{name} is empty", hint=f"write one line that says what the memory holds as `{name}`")
    note = notes.new_note(title=title.strip(), description=description.strip(), class_=cls, source="agent",
                          topics=[t.lower() for t in topics or []], entities=list(entities or []),
                          project=project or None, body=body)
    new_id, sha, run = memories.add(repo, note, trailers={"Agent": agent})
    return {"id": new_id, "commit": sha, "run": run}


def forget(repo: str, agent: str, memory_id: str, reason: str) -> dict[str, Any]:
    """Retire a memory with a reason (nothing is deleted; `memrepo undo RUN` brings it back); {id, commit, run}."""
    from memrepo.errors import AmbiguousId, NoteNotFound
    from memrepo.store import lifecycle, memories

    memories.require_repo(repo)
    try:
        note_id = memories.resolve(repo, memory_id)
    except AmbiguousId:
        raise
    except NoteNotFound:
        _where(repo, memory_id)  # in no source: that error; in a team's or the project's: this one
        raise MemrepoError(f"{memory_id} is not the user's own memory but a team's or the project's: forgetting it is a "
                           "proposal to them, which only the user makes",
                           hint=f"tell the user; `memrepo forget {memory_id}` proposes it") from None
    sha, run = lifecycle.retire(repo, note_id, reason, by={"By": "agent", "Agent": agent})
    return {"id": note_id, "commit": sha, "run": run}


def resources(repo: str, limit: int = 500) -> list[dict[str, Any]]:
    """The active memories a client may list as resources, newest update first (at most `limit`)."""
    from memrepo.store import memories

    return memories.list_memories(repo, status="active")[:limit]
