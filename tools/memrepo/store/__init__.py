"""A memory repository as a store: add/show/list/fmt, the FTS5 index, the transcript index,
settings, init, doctor, and what the git hooks run (validation and index updates).

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and the layers below:
`base`, `recall`, `format`, `vcs`.
"""
