"""`python -I -S …/memrepo/agents/gemini/entry.py EVENT`: the hook command `memrepo install gemini` registers.

Kept this small: a script run by path is compiled on every run, a module (`handlers`) once.
A prompt takes the prompt path from its bundle (`memrepo.base.bundle`) before anything loads.
"""

import gc
import sys

if __name__ == "__main__":
    gc.disable()  # the process lives for one event, as the plugin's hooks do
    if not __package__:  # run by path (the installed hooks): the folder holding the memrepo package
        sys.path.insert(0, __file__.rsplit("/", 4)[0])
    try:
        if sys.argv[1:2] == ["BeforeAgent"]:  # handlers.PROMPT
            from memrepo.base import bundle

            bundle.use()
        from memrepo.agents.gemini import handlers
        from memrepo.claude import hookio
    except BaseException as exc:  # noqa: BLE001 — fail open even when the package cannot load
        sys.stderr.write(f"memrepo (gemini): cannot load memrepo: {exc}\n")
        raise SystemExit(0) from None
    hookio.exit_now(handlers.main())
