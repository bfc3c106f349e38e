"""Tooling apart from the runtime: `memrepo eval` over labeled prompt sets and `memrepo demo`.

May import: the standard library, `memrepo.errors`, and every layer below (`base` … `agents`).
"""
