"""The only place git runs: the git runner, commits, trailers, hook wiring, runs and undo.

May import: the standard library, `memrepo.errors`, `memrepo.proc`, `memrepo.base`, `memrepo.recall` and
`memrepo.format`. No other layer starts a git process or parses git's output itself.
"""
