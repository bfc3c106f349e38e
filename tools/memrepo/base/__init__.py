"""The base: where things are (`paths`), which project a folder belongs to (`projects`), and the
prompt path's stdlib-only stand-ins for `os` and `json` (`_fast`). Every layer may use it.

May import: the standard library and this package, nothing else (not even `memrepo.errors`).
The prompt hook imports it, so every module here loads under `python -I -S`, lazily and without
`os`, `json`, `re` or `typing` (tests/test_hook.py).
"""
