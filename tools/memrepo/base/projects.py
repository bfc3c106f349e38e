"""Which project a directory belongs to (stdlib only, no git process: the prompt path asks).

A project is a repository, not a folder name. Its key is the `origin` remote's URL normalized
to `host/owner/name` (scheme, `user@` or credentials, port and a trailing `.git` or `/`
dropped, lowercased: the hosts people use treat these paths case-insensitively), so every clone
and every `git worktree` of one repository share memories and two repositories that happen to
share a folder name do not. Without an origin (or with a local-path origin) the key is the
folder name of the main checkout: a linked worktree maps to the checkout it was added from.
The label, shown and matched against the prompt's words ("the prompt names that project"),
is the key's last segment.

Memories written before keys carry a bare name (no `/`): the name of the git top-level folder.
A bare name still belongs to a project whose label, main checkout folder or top-level folder
has that name, so old memories keep their scope; two repositories with one folder name share
those old memories (and only those). New memories are written with the key.

Found from files alone: `.git` walking up from the directory (a directory, or a file `gitdir:
<path>` in a linked worktree or a submodule, relative to the file's folder), the gitdir's
`commondir` (relative to the gitdir), and `<common>/config`, read up to CONFIG_LIMIT bytes by a
small parser of `[remote "origin"] url` (`url.*.insteadOf` rewrites and `include`d files are
not followed). Anything unreadable or too big falls back to the folder name. Nothing is cached.
"""

from memrepo.base import _fast as _os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Iterable

CONFIG_LIMIT = 64 * 1024
POINTER_LIMIT = 4096  # a `.git` file or a `commondir`: one path
_S_IFMT, _S_IFDIR = 0o170000, 0o040000
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b"}


def label_of(key: str) -> str:
    """A project key's last segment: `github.com/acme/api` -> `api`; a bare name is its own label."""
    return key.rstrip("/").rsplit("/", 1)[-1]


class Project:
    """A project's key, its label, and the bare names its memories may carry from before keys."""

    __slots__ = ("key", "label", "names")

    def __init__(self, key: str, names: "Iterable[str]" = ()) -> None:
        self.key = key
        self.label = label_of(key)
        self.names = frozenset([self.label, *(n for n in names if n)])

    def owns(self, scope: "str | None") -> bool:
        """A memory's `project:` is this project: the key itself, or a bare name of it (see above)."""
        if not scope:
            return False
        return scope == self.key or ("/" not in scope and scope in self.names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Project) and (self.key, self.names) == (other.key, other.names)

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Project({self.key!r}, names={sorted(self.names)!r})"


def scope_of(project: "str | Project | None") -> "Project | None":
    """A project given by its key (the `--project` of a command) or already identified."""
    if project is None or isinstance(project, Project):
        return project
    return Project(project) if project else None


def same(a: "str | None", b: "str | None") -> bool:
    """Two memories' `project:` name one project: equal, or a bare name that is the other's label."""
    if not a or not b:
        return False
    if a == b:
        return True
    if ("/" in a) == ("/" in b):
        return False
    return label_of(a if "/" in a else b) == (b if "/" in a else a)


# -- the origin URL --------------------------------------------------------------------------

def normalize_url(url: "str | None") -> "str | None":
    """`host/owner/name` of a remote URL (https, ssh://, git://, scp-like `git@host:owner/name.git`).

    None for a local path or `file://` URL, or anything without both a host and a path.
    """
    url = (url or "").strip()
    if "://" in url:
        scheme, _, rest = url.partition("://")
        if scheme.lower() == "file":
            return None
        host, _, path = rest.partition("/")
        path = path.split("?", 1)[0].split("#", 1)[0]
    elif ":" in url.split("/", 1)[0]:
        host, _, path = url.partition(":")  # scp-like: a colon before any slash
        if len(host) == 1 and path[:1] in ("/", "\\"):
            return None  # a Windows drive letter, C:/src/api
    else:
        return None
    host = host.rpartition("@")[2]  # user@, user:token@: credentials never reach a key
    host = host[: host.find("]") + 1] if host.startswith("[") else host.partition(":")[0]
    segments = [s for s in path.replace("\\", "/").split("/") if s not in ("", ".")]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][:-4]
    segments = [s for s in segments if s]
    if not host or not segments or ".." in segments:
        return None
    return "/".join([host] + segments).lower()


def _value(text: str) -> str:
    """A git config value: quotes removed, escapes resolved, an inline comment cut."""
    out = []
    quoted = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out).strip()


def _is_origin(header: str) -> bool:
    section, _, sub = header.strip().partition(" ")
    if not sub:
        return section.lower() == "remote.origin"  # the deprecated [remote.origin] spelling
    return section.lower() == "remote" and sub.strip() == '"origin"'


def origin_url(config: str) -> "str | None":
    """The first `url` of `[remote "origin"]` in the text of a git config file."""
    inside = False
    for raw in config.splitlines():
        line = raw.strip()
        if line.startswith("["):
            end = line.find("]")
            inside = end > 0 and _is_origin(line[1:end])
            line = line[end + 1:].strip() if end > 0 else ""  # `[remote "origin"] url = ...` is legal
        if not inside or not line or line[0] in "#;":
            continue
        name, eq, value = line.partition("=")
        if eq and name.strip().lower() == "url":
            return _value(value.strip()) or None
    return None


# -- the repository, from files ----------------------------------------------------------------

def _read(path: str, limit: int) -> "str | None":
    """The text of a file of at most `limit` bytes; None when it is bigger or unreadable."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except (OSError, ValueError):
        return None
    return None if len(data) > limit else data.decode("utf-8", "surrogateescape")


def _is_dir(path: str) -> bool:
    try:
        return (_os.stat(path).st_mode & _S_IFMT) == _S_IFDIR
    except (OSError, ValueError):
        return False


def top_level(cwd: str) -> "str | None":
    """The nearest folder at or above `cwd` holding a `.git` (a directory or a file)."""
    cur = _os.abspath(cwd)
    while True:
        if _os.exists(_os.join(cur, ".git")):
            return cur
        parent = _os.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _pointer(base: str, name: str, prefix: str = "") -> "str | None":
    """The path a one-line pointer file names (`gitdir: ...`, `commondir`), resolved against `base`."""
    text = _read(_os.join(base, name), POINTER_LIMIT)
    if text is None or not text.startswith(prefix):
        return None
    target = text[len(prefix):].strip()
    return _os.abspath(_os.join(base, target)) if target else None


def git_dir(top: str) -> "str | None":
    """The git directory of the checkout at `top`: `.git` itself, or where a `.git` file points."""
    dotgit = _os.join(top, ".git")
    if _is_dir(dotgit):
        return dotgit
    target = _pointer(top, ".git", "gitdir:")
    return target if target is not None and _is_dir(target) else None


def common_dir(gitdir: str) -> str:
    """The directory shared by all worktrees of a repository (its `commondir`, else the gitdir)."""
    common = _pointer(gitdir, "commondir")
    return common if common is not None and _is_dir(common) else gitdir


def _main_name(common: str) -> str:
    """The folder name of the main checkout of a common dir (`.../webapp/.git` or a bare `webapp.git`)."""
    name = _os.basename(common)
    if name == ".git":
        return _os.basename(_os.dirname(common))
    return name[:-4] if name.endswith(".git") and len(name) > 4 else name


def identify(cwd: "str | None") -> "Project | None":
    """The project `cwd` is in, or None outside any git checkout."""
    top = top_level(cwd) if cwd else None
    folder = _os.basename(top) if top else ""
    if not folder:
        return None
    gitdir = git_dir(top)  # type: ignore[arg-type]
    if gitdir is None:
        return Project(folder)
    common = common_dir(gitdir)
    main = _main_name(common) if common != gitdir else folder
    config = _read(_os.join(common, "config"), CONFIG_LIMIT)
    key = normalize_url(origin_url(config)) if config is not None else None
    return Project(key or main or folder, (main, folder))
