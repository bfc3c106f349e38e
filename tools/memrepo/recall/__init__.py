"""The prompt path: a prompt becomes at most three memories, or silence, in milliseconds.

May import: the standard library, `memrepo.base` and this package, nothing else (not even
`memrepo.errors`). Runs in the UserPromptSubmit hook under `python -I -S`: every module here
must load without site-packages, and the heavy stdlib modules (`os`, `json`, `re`, `typing`)
are avoided through `base._fast`. tests/test_layers.py enforces the import rule;
tests/test_hook.py the loaded modules.
"""

_MOVED = ("_fast", "paths", "projects")  # into memrepo.base (issue 40); see recall/paths.py


def __getattr__(name: str) -> object:
    """`from memrepo.recall import paths` gives `memrepo.base.paths` without loading the file
    that keeps the old name (a module less on the prompt path, ~0.3 M instructions each)."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import sys

    __import__("memrepo.base." + name)
    module = sys.modules["memrepo.base." + name]
    sys.modules[f"{__name__}.{name}"] = module
    globals()[name] = module
    return module
