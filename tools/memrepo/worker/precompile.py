"""Byte-compile memrepo where the hooks' interpreter will look for it (stdlib only).

The first prompt after an install or an upgrade cost 3.6x the steady hook (180 M instructions
against 49 M): every module of the prompt path was compiled on first use, and a plugin folder the
hook cannot write would pay that on every prompt (issue 44). So the package is compiled ahead:
by `memrepo install claude|codex|gemini` with the interpreter written into the hook commands, and
by SessionStart, in the background, when this interpreter finds the prompt path uncompiled (the
plugin's first session, a new plugin version). The plugin's launcher (`hooks/run`) gives the
interpreter `-X pycache_prefix=${CLAUDE_PLUGIN_DATA}/pycache`, a folder the user owns, so a
read-only plugin folder still gets compiled code; this compiles with the same flags.
"""

from __future__ import annotations

import os
import sys

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the `memrepo` folder
# Compiled first (compileall skips what is already current): what every prompt imports.
FIRST = ("__init__.py", "claude", "recall")
MARKER = os.path.join("recall", "decide.py")  # a module every prompt imports
TIMEOUT = 300.0


def argv(python: str | None = None, package: str = PACKAGE, prefix: str | None = None) -> list[str]:
    """`python -I -S [-X pycache_prefix=PREFIX] -m compileall -q` over the package, prompt path first."""
    flags = ["-X", f"pycache_prefix={prefix}"] if prefix else []
    return [python or sys.executable, "-I", "-S", *flags, "-m", "compileall", "-q",
            *[os.path.join(package, name) for name in FIRST], package]


def current(package: str = PACKAGE) -> bool:
    """Whether this interpreter (with its pycache prefix) finds the prompt path compiled and current."""
    from importlib.util import cache_from_source

    source = os.path.join(package, MARKER)
    try:
        return os.stat(cache_from_source(source)).st_mtime >= os.stat(source).st_mtime
    except (OSError, NotImplementedError, ValueError):
        return False


def bundle_argv(python: str | None = None, package: str = PACKAGE, prefix: str | None = None) -> list[str]:
    """`python -I -S [-X pycache_prefix=PREFIX] …/base/bundle.py`: the prompt path's bundle, written
    where that interpreter's hook looks for it (`memrepo.base.bundle`)."""
    flags = ["-X", f"pycache_prefix={prefix}"] if prefix else []
    return [python or sys.executable, "-I", "-S", *flags, os.path.join(package, "base", "bundle.py")]


def spawn_if_needed(log_path: str, package: str = PACKAGE) -> bool:
    """Start compiling, and writing the prompt path's bundle, in the background when `current` or
    the bundle says no, with this interpreter's flags; True when started."""
    from memrepo import proc
    from memrepo.base import bundle

    started = False
    if not current(package):
        proc.spawn_detached(argv(package=package, prefix=sys.pycache_prefix), log_path=log_path)
        started = True
    if not bundle.current(bundle.path(os.path.dirname(package)), os.path.dirname(package)):
        proc.spawn_detached(bundle_argv(package=package, prefix=sys.pycache_prefix), log_path=log_path)
        started = True
    return started


def compile_for(python: str, package: str = PACKAGE) -> bool:
    """Compile the package, and write the prompt path's bundle, as `python -I -S` (a hook command's
    interpreter) will look for them; True when both were done. An installer calls this: compiled
    code is an optimisation, never a failure."""
    from memrepo import proc

    try:
        return proc.run(argv(python, package), timeout=TIMEOUT).ok and proc.run(bundle_argv(python, package),
                                                                                timeout=TIMEOUT).ok
    except OSError:
        return False
