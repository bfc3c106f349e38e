"""A memory repository's settings: `memrepo.json` (committed, shared) under `index/local.json` (this machine).

Both are optional JSON objects; keys of the local file override the shared one, one level deep
for nested objects. Environment variables named by each reader (e.g. MEMREPO_MODEL_CMD)
override both.

Settings whose meaning is this machine's (`LOCAL_ONLY`) are read from this machine alone: a
command (a teammate's pushed `memrepo.json` would run it on every clone after the next pull,
issue 15), where memrepo reaches or pushes, and the folders of this machine (`projects`: a
pushed `{"shop": "~"}` made the verifier stamp facts about the home directory and commit them,
issue 38). A committed one is dropped by `load`, and `memrepo doctor` warns about it.
"""

from __future__ import annotations

import json
import os
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.base import paths
from memrepo.base.projects import Project, identify

SHARED = "memrepo.json"
LOCAL = os.path.join("index", "local.json")
MAX_BYTES = 256 * 1024  # settings are a few lines; a bigger file arrived by pull is refused, not read
ENV_RECALL_ONLY = paths.ENV_RECALL_ONLY
# Why each local-only setting is this machine's: what doctor says of a committed one.
COMMAND = "names a command this machine runs"
LOCAL_ONLY_WHY = {
    "model_cmd": COMMAND,
    "providers": COMMAND,  # the verifier's provider templates become argument lists
    "model_timeout": "is how long this machine's model command may take",
    "url_allow_hosts": "widens where this machine's probes may reach (internal hosts `url_alive` may fetch)",
    "url_probe_budget": "is how long this machine's URL probes may take",
    "remote": "names where this machine pushes review branches",
    "forge": "names where this machine opens pull requests",
    "projects": "names folders on this machine (each project's root), which the verifier and curator read",
    # Read with `local` already (a pull must not switch them on); listed so doctor names a committed one.
    "sync": "switches on this machine's background pull and push",
    "prompt_fallback": "says how this machine's agent client receives recall",
    "teams": "names folders on this machine (each team's clone), which recall reads before every prompt",
}
LOCAL_ONLY = frozenset(LOCAL_ONLY_WHY)


def _read(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        return {}
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ValueError(f"over {MAX_BYTES:,} bytes")
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise MemrepoError(f"{path} is not valid JSON (nested too deeply)", hint="fix the file, or remove it to use the defaults") from None
    except ValueError as exc:
        raise MemrepoError(f"{path} is not valid JSON ({exc})", hint="fix the file, or remove it to use the defaults") from None
    if not isinstance(data, dict):
        raise MemrepoError(f"{path} must hold a JSON object", hint="write it as {\"key\": value, ...}")
    return data


def load(repo: str) -> dict[str, Any]:
    """The merged settings of `repo`; `LOCAL_ONLY` keys come from this machine's file alone."""
    merged = {k: v for k, v in _read(os.path.join(repo, SHARED)).items() if k not in LOCAL_ONLY}
    for key, value in local(repo).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def local(repo: str) -> dict[str, Any]:
    """This machine's settings alone: what a `git pull` must never switch on (e.g. auto sync).

    A tracked `index/local.json` came with a pull like any shared file, so it counts for nothing here.
    """
    if _tracked(repo, LOCAL):
        return {}
    return _read(os.path.join(repo, LOCAL))


# Whether a path is tracked changes only with git's index file: a verify over 10,000 memories
# asked git twice per memory (issue 44: ~57 s of `git ls-files`), now once per change of the index.
_GIT_INDEX: dict[str, str] = {}  # repo -> its git index file
_TRACKED: dict[tuple[str, str], tuple[tuple[int, int] | None, bool]] = {}  # (repo, rel) -> (index stamp, tracked)


def _index_stamp(repo: str) -> tuple[int, int] | None:
    from memrepo.vcs import refs

    if repo not in _GIT_INDEX:
        _GIT_INDEX[repo] = refs.git_path(repo, "index")
    try:
        st = os.stat(_GIT_INDEX[repo]) if _GIT_INDEX[repo] else None
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size) if st else None


def _tracked(repo: str, rel: str) -> bool:
    from memrepo.vcs import status

    stamp = _index_stamp(repo)
    known = _TRACKED.get((repo, rel))
    if stamp is not None and known is not None and known[0] == stamp:
        return known[1]
    tracked = bool(status.tracked(repo, rel.replace(os.sep, "/")))
    _TRACKED[(repo, rel)] = (stamp, tracked)
    return tracked


def local_only(repo: str, key: str, default: Any = None) -> Any:
    """A `LOCAL_ONLY` setting: from `index/local.json` only, never from the committed `memrepo.json`."""
    if key not in LOCAL_ONLY:
        raise ValueError(f"{key!r} is not a local-only setting")
    return local(repo).get(key, default)


def committed_local_only(repo: str) -> list[str]:
    """The `LOCAL_ONLY` keys the committed settings hold (ignored), for `memrepo doctor`."""
    return sorted(k for k in _read(os.path.join(repo, SHARED)) if k in LOCAL_ONLY)


def local_is_tracked(repo: str) -> bool:
    """True when `index/local.json` is committed, so `local` ignores it (for `memrepo doctor`)."""
    return _tracked(repo, LOCAL)


def get(repo: str, key: str, default: Any = None) -> Any:
    return load(repo).get(key, default)


def recall_only(repo: str) -> bool:
    """Recall-only mode (`memrepo.base.paths.recall_only`): no background pass runs."""
    return paths.recall_only(repo)


def project_roots(settings: dict[str, Any]) -> dict[str, str]:
    """Each configured project's root on this machine, `~` expanded (from `load`, which takes
    `projects` from this machine's settings alone).

    `projects` maps a project to its root, written either as a path or as `{"root": path}`:
    `{"shop": "~/src/shop", "github.com/acme/blog": {"root": "/srv/blog"}}`. A name may be a
    project's key or any other name: `root_of` matches memories to roots.
    """
    projects = settings.get("projects")
    roots: dict[str, str] = {}
    for name, value in projects.items() if isinstance(projects, dict) else []:
        root = value.get("root") if isinstance(value, dict) else value
        if isinstance(root, str) and root:
            roots[str(name)] = os.path.expanduser(root)
    return roots


def _bases(root: str) -> list[str]:
    norm = os.path.normpath(os.path.expanduser(root))
    return list(dict.fromkeys((norm, os.path.realpath(norm))))


def owner(path: str, roots: dict[str, str]) -> tuple[str, str] | None:
    """(project, path relative to its root) for an absolute `path` inside a configured root; the
    deepest root wins when roots nest. None outside them all. Compares text; touches no file."""
    best: tuple[int, str, str] | None = None
    for name, root in sorted(roots.items()):
        for base in _bases(root):
            prefix = base.rstrip("/") + "/"
            if path == base or path.startswith(prefix):
                rel = path[len(prefix):].lstrip("/") if path != base else ""
                if best is None or len(base) > best[0]:
                    best = (len(base), name, rel or ".")
    return (best[1], best[2]) if best else None


def shareable_path(path: str, roots: dict[str, str]) -> str | None:
    """`path` as history shared with other machines may hold it: `project:relative/path` inside a
    configured project root (`owner`), `~/relative/path` under the home directory, None anywhere
    else. A commit message or a committed file never carries this machine's layout (issue 37:
    "missing under /home/<user>/src/..." reached the team's remote)."""
    path = os.path.abspath(path)
    found = owner(path, roots)
    if found:
        return f"{found[0]}:{found[1]}"
    home = os.path.abspath(os.path.expanduser("~"))
    if path.startswith(home.rstrip("/") + "/"):
        return "~/" + os.path.relpath(path, home)
    return None


def _identity(root: str) -> Project | None:
    return identify(root) if os.path.isdir(root) else None


def root_of(roots: dict[str, str], project: str | None) -> str | None:
    """The root on this machine of a memory's `project:` (a key, or a bare name from before keys).

    The entry named exactly so, else the one configured root whose repository is that project
    (`memrepo.base.projects`: its origin, else its main checkout's folder), so settings may name
    a project by its key or its label. Two roots that both fit answer None: a path is checked
    against the right checkout or not at all.
    """
    if not project:
        return None
    if project in roots:
        return roots[project]
    found = {os.path.realpath(root) for root in roots.values() if (p := _identity(root)) is not None and p.owns(project)}
    return found.pop() if len(found) == 1 else None
