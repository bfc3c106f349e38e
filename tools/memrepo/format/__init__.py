"""The file formats memrepo reads and writes: the memory file (spec, parse/serialize, validate),
secret redaction, agents' transcripts, and repository text made safe to print on a terminal.

May import: the standard library, PyYAML (this is the only layer that may), python-frontmatter
(only for foreign files, see `foreign`), detect-secrets (only `catalogue`, the write path's
second catalogue of secret formats), `memrepo.errors`, `memrepo.base` and `memrepo.recall`.
"""
