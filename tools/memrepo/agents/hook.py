"""`memrepo-hook AGENT EVENT`: one agent's hook, for packaging that cannot name an interpreter.

Settings installs (`memrepo install claude|codex|gemini`) write the interpreter's path into the
hook command. A packaged extension cannot (Gemini CLI's, in `gemini-extension/`, is a folder
copied as it is), so its hooks run this console script, which pip puts next to `memrepo` on
PATH. Standard library only: it dispatches to the agent's `handlers` module as its `entry` script does.
"""

import sys

AGENTS = ("claude", "codex", "gemini")
PROMPTS = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


def main(argv: "list[str] | None" = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in AGENTS:
        sys.stderr.write("usage: memrepo-hook claude|codex|gemini EVENT (the event's JSON on stdin)\n")
        return 0  # a hook fails open, even when misconfigured
    agent, event = args
    if event == PROMPTS[agent]:  # a prompt: the prompt path from its bundle before the rest loads
        from memrepo.base import bundle

        bundle.use()
    if agent == "gemini":
        from memrepo.agents.gemini import handlers as gemini

        return gemini.main([event])
    if agent == "codex":
        from memrepo.agents.codex import handlers as codex

        return codex.main([event])
    from memrepo.claude import handlers as claude

    return claude.main([event])


def run() -> None:
    """The console script: the hook's answer flushed, then out without the interpreter's teardown."""
    code = main()
    from memrepo.claude import hookio

    hookio.exit_now(code)
