"""Claude Code integration: the hook stdin/stdout contract (`hookio`), the hook command that
settings install registers (`entry`, a small script) and its dispatcher (`handlers`), the hook
handlers (`prompt_hook`, `session_start`), settings install and the MEMORY.md / CLAUDE.md audit.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and every layer below
(`base` … `worker`). `hookio`, `entry`, `handlers` and the handlers run on hook paths: standard library
only at import time, heavy layers only inside the handler that needs them.
"""
