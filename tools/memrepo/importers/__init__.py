"""Importers from the memory tools people use today: Claude Code auto memory, memsearch, Hermes.

May import: the standard library, `memrepo.errors`, and the layers below: `base`, `recall`, `format`,
`vcs`, `store`, `passes`. Foreign files are parsed through `memrepo.format.foreign`.
"""
