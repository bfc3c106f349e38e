"""Git hook shims, installed into each clone's untracked hooks directory, and how doctor checks them.

A memory repository is shared through a remote, so whatever it tracks may be hostile (issue 15):
git must never run a tracked file. `memrepo init` writes the shims from this module into
`git rev-parse --git-path hooks` (per clone, never transferred by git, as pre-commit does); the
committed `.githooks/` copies are templates only, and an old `core.hooksPath=.githooks` is unset.
A shim holds no path inside the working tree: it finds an interpreter that has memrepo through
`$MEMREPO_PYTHON`, then the one recorded (uncommitted) in `.git/memrepo-python` by `memrepo
init`, then `python3`, and drops the working directory from `sys.path` so nothing committed is
imported. When none has memrepo, pre-commit and pre-merge-commit refuse and the post-* hooks let
git go on, each saying how to fix it.

The merge driver for `memory/*.md` (`memrepo.vcs.mergedriver`) is wired here too: its command
names an absolute interpreter, so it lives only in the untracked `.git/config`; the committed
`.gitattributes` only names it, and git ignores a driver name no config defines.
"""

from __future__ import annotations

import os
import stat
import sys

from memrepo import proc
from memrepo.vcs import gitcmd
from memrepo.errors import MemrepoError

HOOKS = ("pre-commit", "pre-merge-commit", "post-commit", "post-merge", "post-checkout", "post-rewrite")
MARKER = "# memrepo-hook-shim v3"
FORWARDER_MARKER = "# memrepo-hook-forwarder v3"
# Any version: what memrepo wrote and may replace, as opposed to another tool's hook.
OURS = ("# memrepo-hook-shim v", "# memrepo-hook-forwarder v")
HOOKS_DIR = ".githooks"
PYTHON_RECORD = "memrepo-python"
# The hooks that validate what is about to be committed: they fail closed.
BLOCKING = ("pre-commit", "pre-merge-commit")
MERGE_DRIVER = "memrepo"
MERGE_DRIVER_NAME = "memrepo: memory files merge key by key"
MERGE_DRIVER_MODULE = "memrepo.vcs.mergedriver"
# git runs hooks in the top of the work tree, and `python -m`/`-c` would import from there first.
SAFE_PATH = proc.SAFE_PATH

SHIM_BODY = """# Runs memrepo.store.githooks {hook} with the first interpreter that has memrepo; nothing from the work tree.
hook={hook}
gitdir=$(git rev-parse --git-common-dir 2>/dev/null)
top=$(git rev-parse --show-toplevel 2>/dev/null)
recorded=
[ -n "$gitdir" ] && [ -r "$gitdir/{record}" ] && read -r recorded < "$gitdir/{record}"
# One interpreter start per hook: an interpreter without memrepo answers 97 and the next is tried.
for py in "$MEMREPO_PYTHON" "$recorded" python3; do
    [ -n "$py" ] || continue
    command -v "$py" >/dev/null 2>&1 || continue
    {run}
    rc=$?
    [ $rc -eq 97 ] || exit $rc
done
echo "memrepo $hook: no Python with memrepo installed was found; pip install memrepo, or set MEMREPO_PYTHON" >&2
{fallback}
"""

FORWARDER_HEAD = """# Runs the hook that was here before memrepo (now {hook}.legacy), then memrepo's shim below.
here=$(dirname "$0")
input=
{read_stdin}
if [ -x "$here/{hook}.legacy" ]; then
    {run_legacy}
    rc=$?
    [ $rc -eq 0 ] || {on_legacy_fail}
fi
"""


def _body(hook: str) -> str:
    # Without an interpreter the cache cannot follow this change: say so where doctor and SessionStart look.
    fallback = "exit 1" if hook in BLOCKING else '[ -d "$top/index" ] && : > "$top/index/STALE"\nexit 0'
    run = (f"\"$py\" -c '{SAFE_PATH}\ntry:\n    from memrepo.store.githooks import main\nexcept ImportError:\n    raise SystemExit(97)\n"
           "raise SystemExit(main())' \"$hook\" \"$@\"")
    return SHIM_BODY.format(hook=hook, record=PYTHON_RECORD, safe=SAFE_PATH, run=run, fallback=fallback)


def shim_text(hook: str) -> str:
    """The shim `memrepo init` installs as `<hooks dir>/<hook>` (and commits as a template)."""
    return f"#!/bin/sh\n{MARKER}\n" + _body(hook)


def forwarder_text(hook: str) -> str:
    """The hook installed where another tool's hook was: that one (`<hook>.legacy`), then the shim."""
    stdin_hooks = hook == "post-rewrite"
    read_stdin = 'input=$(cat)' if stdin_hooks else ":"
    run_legacy = ('printf "%s\\n" "$input" | "$here/{h}.legacy" "$@"' if stdin_hooks else '"$here/{h}.legacy" "$@"').format(h=hook)
    on_fail = "exit $rc" if hook in BLOCKING else ":"
    head = FORWARDER_HEAD.format(hook=hook, read_stdin=read_stdin, run_legacy=run_legacy, on_legacy_fail=on_fail)
    return f"#!/bin/sh\n{FORWARDER_MARKER}\n" + head + _body(hook)


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
    """Write the committed `.githooks/<hook>` templates; returns the repo-relative paths that changed.

    git never runs these (see the module docstring); they show a reader what each clone installs.
    """
    os.makedirs(os.path.join(root, HOOKS_DIR), exist_ok=True)
    return [f"{HOOKS_DIR}/{h}" for h in HOOKS if _write_exec(os.path.join(root, HOOKS_DIR, h), shim_text(h))]


def _git_path(root: str, *parts: str) -> str:
    found = gitcmd.git_paths(root, gitcmd.COMMON_DIR)
    return os.path.join(found[0] if found else os.path.join(root, ".git"), *parts)


def hooks_dir(root: str) -> str:
    """The clone's own hooks directory (`git rev-parse --git-path hooks`; shared by its worktrees).

    Only meaningful with `core.hooksPath` unset, which is what `wire` leaves; any other answer
    falls back to the common git dir's `hooks/`, never a folder of the work tree.
    """
    rc, out, _ = gitcmd.run_git("rev-parse", "--git-path", "hooks", cwd=root)
    path = out.decode().strip() if rc == 0 else ""
    path = os.path.join(root, path) if path and not os.path.isabs(path) else path
    expected = _git_path(root, "hooks")
    return path if path and os.path.realpath(path) == os.path.realpath(expected) else expected


def _config(root: str, key: str) -> str | None:
    rc, out, _ = gitcmd.run_git("config", "--get", key, cwd=root)
    return out.decode().strip() if rc == 0 else None


def _read(path: str) -> str | None:
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read()


def _is_ours(path: str) -> bool:
    text = _read(path)
    return text is not None and any(m in text for m in OURS)


def foreign_hooks(root: str) -> list[str]:
    """Active hooks in the hooks directory that memrepo did not write."""
    directory = hooks_dir(root)
    found = []
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        path = os.path.join(directory, name)
        if name.endswith((".sample", ".legacy")) or not os.path.isfile(path) or not os.access(path, os.X_OK):
            continue
        if not _is_ours(path):
            found.append(name)
    return found


def record_python(root: str, python: str | None = None) -> None:
    """Remember (outside the commit) the interpreter that has memrepo, for the shims."""
    with open(_git_path(root, PYTHON_RECORD), "w", encoding="utf-8") as fh:
        fh.write((python or sys.executable) + "\n")


def _old_hooks_path(current: str | None) -> bool:
    return current is not None and current.rstrip("/") in (HOOKS_DIR, "./" + HOOKS_DIR)


def wire(root: str) -> str:
    """Install the shims into the clone's hooks directory, chaining hooks other tools put there.

    An old install's `core.hooksPath=.githooks` (which ran tracked files) is unset first.
    Returns what it did: "shims", "forwarders", "migrated" or "already".
    """
    current = _config(root, "core.hooksPath")
    migrated = False
    if _old_hooks_path(current):
        gitcmd.run_git("config", "--local", "--unset-all", "core.hooksPath", cwd=root)
        current, migrated = _config(root, "core.hooksPath"), True
    if current:
        raise MemrepoError(
            f"core.hooksPath is already set to {current!r} by another tool, so git would not run memrepo's hooks",
            hint="unset it with `git config --unset core.hooksPath` (memrepo chains the hooks it finds in "
                 "`git rev-parse --git-path hooks`) and run `memrepo init` again")
    changed, forwarded = install(root)
    if migrated:
        return "migrated"
    if not changed:
        return "already"
    return "forwarders" if forwarded else "shims"


def install(root: str) -> tuple[bool, bool]:
    """Write each hook: the shim, or a forwarder keeping another tool's hook as `<hook>.legacy`.

    Returns (changed anything, any forwarder installed).
    """
    directory = hooks_dir(root)
    os.makedirs(directory, exist_ok=True)
    changed = forwarded = False
    for hook in HOOKS:
        path = os.path.join(directory, hook)
        legacy = path + ".legacy"
        if os.path.isfile(path) and not _is_ours(path):
            if os.path.exists(legacy):
                raise MemrepoError(f"{path} and {legacy} both exist; memrepo will not overwrite either",
                                   hint=f"merge them by hand, remove {legacy}, and run `memrepo init` again")
            os.replace(path, legacy)
            changed = True
        chain = os.path.exists(legacy)
        forwarded = forwarded or chain
        changed = _write_exec(path, forwarder_text(hook) if chain else shim_text(hook)) or changed
    return changed, forwarded


def wiring(root: str) -> tuple[bool, str]:
    """(ok, description) of how git runs memrepo's hooks here, for `doctor`."""
    current = _config(root, "core.hooksPath")
    if _old_hooks_path(current):
        return False, (f"core.hooksPath={current}: git runs the tracked {HOOKS_DIR}/, which a pushed commit can change "
                       "(old install)")
    if current:
        return False, f"core.hooksPath={current}, so memrepo's hooks never run"
    directory = hooks_dir(root)
    states = {h: _hook_state(os.path.join(directory, h)) for h in HOOKS}
    stale = [h for h, s in states.items() if s == "stale"]
    if stale:
        return False, f"hooks differ from this memrepo's (an older install, or edited): {', '.join(stale)}"
    absent = [h for h, s in states.items() if s == "absent"]
    if absent:
        return False, f"git hooks not installed ({', '.join(absent)})"
    inert = [h for h in HOOKS if not os.access(os.path.join(directory, h), os.X_OK)]
    if inert:
        return False, f"hooks not executable, so git ignores them: {', '.join(inert)}"
    if any(s == "forwarder" for s in states.values()):
        return True, "shims in the clone's hooks directory, chaining the existing hooks"
    return True, "shims in the clone's hooks directory"


def _hook_state(path: str) -> str:
    """"shim" or "forwarder" when it is what `install` writes today, "stale" for an older memrepo's, else "absent"."""
    text = _read(path)
    hook = os.path.basename(path)
    if text == shim_text(hook):
        return "shim"
    if text == forwarder_text(hook):
        return "forwarder"
    return "stale" if text is not None and any(m in text for m in OURS) else "absent"


def merge_driver_command(python: str | None = None) -> str:
    """The `merge.memrepo.driver` command: this interpreter, isolated (`-I`: nothing from the
    repository's directory is imported), quoted for the shell git runs it with."""
    import shlex

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
    import shlex

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


# Every hook `git commit` may run: a writer does memrepo's own hooks' work itself only when no
# other one is there to be skipped.
COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-index-change",
                "reference-transaction")


def only_ours(root: str) -> bool:
    """Whether `git commit` here would run memrepo's own pre-commit and post-commit shims and
    nothing else, with this very interpreter: then a writer may do their work in its own process
    (the same functions, without starting two interpreters per commit; issue 44)."""
    if _config(root, "core.hooksPath") is not None:
        return False
    directory = _git_path(root, "hooks")  # where git looks for hooks with core.hooksPath unset
    for hook in COMMIT_HOOKS:
        path = os.path.join(directory, hook)
        runs = os.path.isfile(path) and os.access(path, os.X_OK)
        if hook in ("pre-commit", "post-commit"):
            if not runs or _hook_state(path) != "shim":
                return False
        elif runs:
            return False
    # The path itself, not where its links lead: a venv's python links to an interpreter without memrepo.
    return _shim_python(root) == os.path.abspath(sys.executable)


def _shim_python(root: str) -> str | None:
    """The interpreter the shims try first: $MEMREPO_PYTHON, else the one `memrepo init` recorded."""
    python = os.environ.get("MEMREPO_PYTHON") or (_read(_git_path(root, PYTHON_RECORD)) or "").strip()
    if not python:
        return None
    if os.path.isabs(python):
        return os.path.abspath(python)
    import shutil  # only for a name to look up on PATH: shutil loads bz2, lzma and fnmatch (issue 44)

    found = shutil.which(python)
    return os.path.abspath(found) if found else None
