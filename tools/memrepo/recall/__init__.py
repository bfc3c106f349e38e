"""The prompt path: a prompt becomes at most three memories, or silence, in milliseconds.

May import: the standard library, `memrepo.base` and this package, nothing else (not even
`memrepo.errors`). Runs in the UserPromptSubmit hook under `python -I -S`: every module here
must load without site-packages, and the heavy stdlib modules (`os`, `json`, `re`, `typing`)
are avoided through `base._fast`. tests/test_layers.py enforces the import rule;
tests/test_hook.py the loaded modules.
"""
