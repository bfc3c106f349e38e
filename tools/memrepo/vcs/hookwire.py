"""Committed git hook shims (`.githooks/`) and how a repository is wired to run them.

The shims hold no absolute paths. They find an interpreter that has memrepo: `$MEMREPO_PYTHON`,
then the one recorded (uncommitted) in `.git/memrepo-python` by `memrepo init`, then the
repository's `.venv`, then `python3`; when none has memrepo, pre-commit and pre-merge-commit
refuse and the post-* hooks let git go on, each saying how to fix it.

The merge driver for `memory/*.md` (`memrepo.vcs.mergedriver`) is wired here too: its command
names an absolute interpreter, so it lives only in the untracked `.git/config`; the committed
`.gitattributes` only names it, and git ignores a driver name no config defines.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys

from memrepo import proc
from memrepo.vcs import gitcmd
from memrepo.errors import MemrepoError

HOOKS = ("pre-commit", "pre-merge-commit", "post-commit", "post-merge", "post-checkout", "post-rewrite")
MARKER = "# memrepo-hook-shim v1"
FORWARDER_MARKER = "# memrepo-hook-forwarder v1"
HOOKS_DIR = ".githooks"
PYTHON_RECORD = "memrepo-python"
# The hooks that validate what is about to be committed: they fail closed.
BLOCKING = ("pre-commit", "pre-merge-commit")
MERGE_DRIVER = "memrepo"
MERGE_DRIVER_NAME = "memrepo: memory files merge key by key"
MERGE_DRIVER_MODULE = "memrepo.vcs.mergedriver"

SHIM = """#!/bin/sh
{marker}
# Runs `python -m memrepo.store.githooks {hook}` with the first interpreter that has memrepo.
hook={hook}
gitdir=$(git rev-parse --git-common-dir 2>/dev/null)
top=$(git rev-parse --show-toplevel 2>/dev/null)
recorded=
[ -n "$gitdir" ] && [ -r "$gitdir/{record}" ] && read -r recorded < "$gitdir/{record}"
for py in "$MEMREPO_PYTHON" "$recorded" "$top/.venv/bin/python" python3; do
    [ -n "$py" ] || continue
    if "$py" -c 'import memrepo.store.githooks' >/dev/null 2>&1; then
        exec "$py" -m memrepo.store.githooks "$hook" "$@"
    fi
done
echo "memrepo $hook: no Python with memrepo installed was found; pip install memrepo, or set MEMREPO_PYTHON" >&2
{fallback}
"""

FORWARDER = """#!/bin/sh
{marker}
# Runs the hook that was here before memrepo (now {hook}.legacy), then memrepo's .githooks/{hook}.
here=$(dirname "$0")
top=$(git rev-parse --show-toplevel)
input=
{read_stdin}
if [ -x "$here/{hook}.legacy" ]; then
    {run_legacy}
    rc=$?
    [ $rc -eq 0 ] || {on_legacy_fail}
fi
# A branch from before `memrepo init` has no .githooks/: nothing of memrepo's to run there.
[ -x "$top/{hooks_dir}/{hook}" ] || exit 0
exec "$top/{hooks_dir}/{hook}" "$@"
"""


def shim_text(hook: str) -> str:
    # Without an interpreter the cache cannot follow this change: say so where doctor and SessionStart look.
    fallback = "exit 1" if hook in BLOCKING else '[ -d "$top/index" ] && : > "$top/index/STALE"\nexit 0'
    return SHIM.format(marker=MARKER, hook=hook, record=PYTHON_RECORD, fallback=fallback)


def forwarder_text(hook: str) -> str:
    stdin_hooks = hook == "post-rewrite"
    read_stdin = 'input=$(cat)' if stdin_hooks else ":"
    run_legacy = ('printf "%s\\n" "$input" | "$here/{h}.legacy" "$@"' if stdin_hooks else '"$here/{h}.legacy" "$@"').format(h=hook)
    on_fail = "exit $rc" if hook in BLOCKING else ":"
    return FORWARDER.format(marker=FORWARDER_MARKER, hook=hook, read_stdin=read_stdin, run_legacy=run_legacy,
                            on_legacy_fail=on_fail, hooks_dir=HOOKS_DIR)


def _write_exec(path: str, text: str) -> bool:
    """Write an executable file when its content differs; True when it changed anything."""
    current = None
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as fh:
            current = fh.read()
    if current != text:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    mode = os.stat(path).st_mode
    wanted = mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    if mode != wanted:
        os.chmod(path, wanted)
    return current != text


def write_shims(root: str) -> list[str]:
    """Write `.githooks/<hook>` shims; returns the repo-relative paths that changed."""
    os.makedirs(os.path.join(root, HOOKS_DIR), exist_ok=True)
    return [f"{HOOKS_DIR}/{h}" for h in HOOKS if _write_exec(os.path.join(root, HOOKS_DIR, h), shim_text(h))]


def _git_path(root: str, *parts: str) -> str:
    rc, out, _ = gitcmd.run_git("rev-parse", "--git-common-dir", cwd=root)
    gitdir = out.decode().strip() if rc == 0 else ".git"
    return os.path.join(root, gitdir, *parts) if not os.path.isabs(gitdir) else os.path.join(gitdir, *parts)


def _config(root: str, key: str) -> str | None:
    rc, out, _ = gitcmd.run_git("config", "--get", key, cwd=root)
    return out.decode().strip() if rc == 0 else None


def foreign_hooks(root: str) -> list[str]:
    """Active hooks in .git/hooks that memrepo did not write."""
    hooks_dir = _git_path(root, "hooks")
    found = []
    for name in sorted(os.listdir(hooks_dir)) if os.path.isdir(hooks_dir) else []:
        path = os.path.join(hooks_dir, name)
        if name.endswith((".sample", ".legacy")) or not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        with open(path, encoding="utf-8", errors="replace") as fh:
            if FORWARDER_MARKER not in fh.read():
                found.append(name)
    return found


def record_python(root: str, python: str | None = None) -> None:
    """Remember (outside the commit) the interpreter that has memrepo, for the shims."""
    with open(_git_path(root, PYTHON_RECORD), "w", encoding="utf-8") as fh:
        fh.write((python or sys.executable) + "\n")


def wire(root: str) -> str:
    """Make git run `.githooks/`: `core.hooksPath`, or forwarders that chain existing hooks.

    Returns what it did: "hooksPath", "forwarders", or "already".
    """
    current = _config(root, "core.hooksPath")
    if current in (HOOKS_DIR, HOOKS_DIR + "/"):
        return "already"
    if current:
        raise MemrepoError(
            f"core.hooksPath is already set to {current!r} by another tool, so git would not run memrepo's hooks",
            hint=f"add `\"$(git rev-parse --show-toplevel)/{HOOKS_DIR}/<hook>\" \"$@\"` to each hook in {current}, "
                 f"or unset it with `git config --unset core.hooksPath` and run `memrepo init` again")
    if not foreign_hooks(root) and not _is_forwarder(_git_path(root, "hooks", "pre-commit")):
        gitcmd.run_git("config", "--local", "core.hooksPath", HOOKS_DIR, cwd=root)
        return "hooksPath"
    return "forwarders" if install_forwarders(root) else "already"


def install_forwarders(root: str) -> bool:
    """Install marker-tagged forwarders in .git/hooks, keeping each existing hook as `<hook>.legacy`."""
    hooks_dir = _git_path(root, "hooks")
    os.makedirs(hooks_dir, exist_ok=True)
    changed = False
    for hook in HOOKS:
        path = os.path.join(hooks_dir, hook)
        if os.path.isfile(path) and not _is_forwarder(path):
            legacy = path + ".legacy"
            if os.path.exists(legacy):
                raise MemrepoError(f"{path} and {legacy} both exist; memrepo will not overwrite either",
                                   hint=f"merge them by hand, remove {legacy}, and run `memrepo init` again")
            os.replace(path, legacy)
            changed = True
        changed = _write_exec(path, forwarder_text(hook)) or changed
    return changed


def wiring(root: str) -> tuple[bool, str]:
    """(ok, description) of how git runs memrepo's hooks here, for `doctor`."""
    current = _config(root, "core.hooksPath")
    missing = [h for h in HOOKS if not os.path.isfile(os.path.join(root, HOOKS_DIR, h))]
    if missing:
        return False, f"missing shims in {HOOKS_DIR}/: {', '.join(missing)}"
    if current in (HOOKS_DIR, HOOKS_DIR + "/"):
        return True, f"core.hooksPath={HOOKS_DIR}"
    if current:
        return False, f"core.hooksPath={current}, so {HOOKS_DIR}/ never runs"
    absent = [h for h in HOOKS if not _is_forwarder(_git_path(root, "hooks", h))]
    if absent:
        return False, f"git hooks not wired ({', '.join(absent)})"
    return True, "forwarders in .git/hooks chain the existing hooks"


def _is_forwarder(path: str) -> bool:
    if not os.path.isfile(path):
        return False
    with open(path, encoding="utf-8", errors="replace") as fh:
        return FORWARDER_MARKER in fh.read()


def merge_driver_command(python: str | None = None) -> str:
    """The `merge.memrepo.driver` command: this interpreter, isolated (`-I`: nothing from the
    repository's directory is imported), quoted for the shell git runs it with."""
    # git expands %O/%A/%B/%P in the whole command and turns %% into %.
    exe = shlex.quote(python or sys.executable).replace("%", "%%")
    return f"{exe} -I -m {MERGE_DRIVER_MODULE} %O %A %B %P"


def _local_config(root: str, key: str) -> str | None:
    rc, out, _ = gitcmd.run_git("config", "--file", _git_path(root, "config"), "--get", key, cwd=root)
    return out.decode().strip() if rc == 0 else None


def wire_merge_driver(root: str, python: str | None = None) -> bool:
    """Define the memrepo merge driver in this clone's `.git/config`; True when it changed anything."""
    changed = False
    for key, value in ((f"merge.{MERGE_DRIVER}.name", MERGE_DRIVER_NAME),
                       (f"merge.{MERGE_DRIVER}.driver", merge_driver_command(python))):
        if _local_config(root, key) == value:
            continue
        rc, _, err = gitcmd.run_git("config", "--file", _git_path(root, "config"), key, value, cwd=root)
        if rc != 0:
            raise MemrepoError(f"could not set {key} in .git/config: {err.decode(errors='replace').strip()}",
                               hint="check that .git/config is writable, then run `memrepo init` again")
        changed = True
    return changed


def merge_driver_wiring(root: str, probe: str = "memory/x.md") -> tuple[bool, str]:
    """(ok, description) of whether git merges memory files with memrepo's driver, for `doctor`."""
    rc, out, _ = gitcmd.run_git("check-attr", "-z", "merge", "--", probe, cwd=root)
    fields = out.decode("utf-8", "replace").split("\0")
    attr = fields[2] if rc == 0 and len(fields) >= 3 else ""
    if attr != MERGE_DRIVER:
        return False, f"memory/*.md is not routed to the merge driver (merge attribute: {attr or 'unset'})"
    command = _local_config(root, f"merge.{MERGE_DRIVER}.driver")
    if not command and _local_config(root, f"merge.{MERGE_DRIVER}.name") is not None:
        return False, (f"merge.{MERGE_DRIVER}.name is set without merge.{MERGE_DRIVER}.driver, "
                       "so git refuses to merge memory files")
    if not command or MERGE_DRIVER_MODULE not in command:
        return False, f"merge.{MERGE_DRIVER}.driver is not set in .git/config, so git merges memory files as text"
    try:
        python = shlex.split(command)[0].replace("%%", "%")
    except (ValueError, IndexError):
        python = command
    if not os.access(python, os.X_OK):
        return False, f"merge.{MERGE_DRIVER}.driver names {python}, which is not an executable"
    # -I skips the user site too: a `pip install --user` memrepo is invisible to the driver, and
    # git would then stop every merge of a memory both sides changed as a conflict without markers.
    try:
        imports = proc.run([python, "-I", "-c", f"import {MERGE_DRIVER_MODULE}"], timeout=30).ok
    except OSError:
        imports = False
    if not imports:
        return False, f"{python} -I cannot import {MERGE_DRIVER_MODULE} (memrepo installed with --user, or removed)"
    return True, f"memory/*.md merge with {MERGE_DRIVER_MODULE}"
