"""The stdio MCP server on the official SDK (`mcp`): tools, memories as resources, a read-only mode.

The only module that imports `mcp` (at its top: the SDK resolves the tools' annotations from this
module's globals); `memrepo mcp` checks that the SDK is installed before importing it. Each tool is a thin wrapper over `memrepo.mcp.tools`; its
description is written for the model that reads it (when to call it, what it must hold).
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import Resource

from memrepo.errors import AmbiguousId, MemrepoError, NoteNotFound
from memrepo.format import terminal
from memrepo.mcp import tools

INSTALL_HINT = "pip install 'memrepo[mcp]'"
NAME = "memrepo"
RESOURCE = "memrepo://memory/{memory_id}"

INSTRUCTIONS = (
    "memrepo is the user's long-term memory: rules, preferences and facts they or earlier sessions wrote down, "
    "kept in git. Call `recall` with the user's request before you act on a task; it returns the few memories "
    "that bear on it, or nothing. Call `remember` when the user states a rule, preference or fact worth keeping "
    "for later sessions, and `forget` when they say one no longer holds."
)

RECALL = (
    "Call this first, before acting on a task: pass the user's request in their own words, and the working "
    "directory so the project's memories rank first. Returns the memories that bear on it (rules, preferences, "
    "facts from earlier sessions), fenced as reference data to weigh against what the user says now, or an empty "
    "result when nothing fits: then carry on without it. The same decision the prompt hooks of Claude Code, Codex "
    "and Gemini make; it never calls a model."
)
SEARCH = ("Ranked full-text search over every memory (the user's own, their teams' and this project's; a hit that "
          "is not the user's own names its `source`), without recall's silence: use it when the user asks what "
          "is remembered about something, or to find a memory's id for `show`, `history` or `forget`.")
SHOW = ("The whole text of one memory (front matter and body) and the commits that changed it: any id `recall` or "
        "`search` gave. `memory_id` may be the start of an id of the user's own.")
HISTORY = ("A memory's git history, newest first: each commit's subject, author, date and Memrepo-* trailers "
           "(who or which pass changed it, and why); `diff` adds each commit's patch.")
WHY = ("Why recall said what it said: the logged trace of a decision (query terms, candidates, their scores and "
       "what cut each). Pass the same prompt given to `recall`, or nothing for the latest decision.")
REMEMBER = (
    "Save one lasting memory for later sessions, committed to the user's memory repository. Call it when the user "
    "states a rule ('never deploy on Fridays'), a preference, or a fact that will still hold next week, or when "
    "they ask you to remember something; not for what this task alone needs, guesses, or secrets (keys, tokens, "
    "passwords are rejected). One subject per memory. `title`: one line of at most 120 characters; "
    "`description`: one self-contained line of at most 200 characters that says the whole point (recall shows only "
    "this line); `cls`: rule (the user's instruction), preference, fact, project (state of a piece of work), event "
    "(something that happened) or reference (where something is); `body`: detail in markdown, with the reason; "
    "`topics`: lowercase subject words; `entities`: named services, repos, people; `project`: set it only when the "
    "memory holds for one project. Returns the new memory's id."
)
FORGET = ("Retire a memory of the user's own that they say no longer holds, with their reason. Nothing is deleted: "
          "it stays in git history, labelled retired, and recall never shows it again. Find the id with `search` "
          "first. A team's or the project's memory is refused: forgetting it is a proposal only the user makes.")
WRITERS = ("remember", "forget")


def _fail(exc: MemrepoError) -> Exception:
    """The error as the model reads it: what is wrong (each problem of an invalid memory), then the
    fix, in the tools' words (the library's hint for an unknown id names `memrepo list`, a command)."""
    problems = "".join(f"\n{p}" for p in getattr(exc, "problems", None) or [])
    hint = tools.ID_HINT if isinstance(exc, NoteNotFound) and not isinstance(exc, AmbiguousId) else exc.hint
    return ToolError(terminal.safe(str(exc) + problems + (f"\nfix: {hint}" if hint else "")))


def _client(ctx: Any) -> str:
    """The agent's name, as its MCP client said in the handshake."""
    try:
        info = ctx.session.client_params.client_info
        return tools.agent_name(getattr(info, "name", None))
    except (AttributeError, ValueError):
        return tools.agent_name(None)


def _json(data: Any) -> str:
    """JSON whose control and bidirectional characters (from a memory's text) are `\\uXXXX` escapes:
    json.dumps leaves C1 controls and overrides raw, and clients print results on a terminal."""
    return terminal.json_text(data, indent=1)


def build(repo: str, read_only: bool = False) -> Any:
    """The server over memory repository `repo`; without `remember` and `forget` when `read_only`."""
    from memrepo import __version__

    class Memory(MCPServer):  # type: ignore[type-arg,misc]
        async def list_resources(self) -> list[Resource]:
            return [Resource(uri=f"memrepo://memory/{m['id']}", name=m["id"], title=m["title"], mime_type="text/markdown")
                    for m in tools.resources(repo)]

    # stderr is the client's log pane: a refused argument is the model's to read, not a log line.
    server = Memory(NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def call(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(repo, *args, **kwargs)
        except MemrepoError as exc:
            raise _fail(exc) from None

    # Tools answer in text only (structured_output=False): a client that prefers structured content
    # (Claude Code does) would otherwise hand the model {"result": "..."}, not the fenced block.
    @server.tool(description=RECALL, structured_output=False)
    def recall(prompt: str, cwd: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment,type-arg]
        return str(call(tools.recall, prompt, cwd, agent=_client(ctx)))

    @server.tool(description=SEARCH, structured_output=False)
    def search(query: str, limit: int = 10, project: str | None = None) -> str:
        return _json(call(tools.search, query, limit, project))

    @server.tool(description=SHOW, structured_output=False)
    def show(memory_id: str) -> str:
        return _json(call(tools.show, memory_id))

    @server.tool(description=HISTORY, structured_output=False)
    def history(memory_id: str, limit: int = tools.HISTORY_LIMIT, diff: bool = False) -> str:
        return _json(call(tools.history, memory_id, limit, diff))

    @server.tool(description=WHY, structured_output=False)
    def why(prompt: str | None = None) -> str:
        return terminal.safe(call(tools.why, prompt))

    if not read_only:
        @server.tool(description=REMEMBER, structured_output=False)
        def remember(title: str, description: str,
                     cls: Literal["rule", "preference", "fact", "project", "event", "reference"],
                     body: str = "", topics: list[str] | None = None, entities: list[str] | None = None,
                     project: str | None = None, ctx: Context = None) -> str:  # type: ignore[assignment,type-arg]
            return _json(call(tools.remember, _client(ctx), title, description, cls, body, topics, entities, project))

        @server.tool(description=FORGET, structured_output=False)
        def forget(memory_id: str, reason: str, ctx: Context = None) -> str:  # type: ignore[assignment,type-arg]
            return _json(call(tools.forget, _client(ctx), memory_id, reason))

    @server.resource(RESOURCE, name="memory", mime_type="text/markdown",
                     description="One memory's markdown file (front matter and body); a control character "
                                 "shows as an escape (\\x1b).")
    def memory(memory_id: str) -> str:
        try:
            return terminal.safe(tools.show(repo, memory_id)["text"])
        except MemrepoError as exc:
            raise ResourceNotFoundError(str(exc)) from None

    return server


def serve(repo: str, read_only: bool = False) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    tools.prepare(repo)
    build(repo, read_only).run("stdio")

