"""Where things are: the memory repository and the files inside it (stdlib only)."""

from memrepo.base import _fast as _os

# The layout of a memory repository.
MEMORY_DIR = "memory"
INDEX_DIR = "index"
# The cache's schema. Each schema has a file of its own, so two memrepo versions side by side
# (two plugin versions in two terminals) keep a cache each instead of rebuilding one in turns;
# schema 3 keeps the name it always had.
SCHEMA_VERSION = 6  # 6: the `citations` table (issue 43)
INDEX_FILE = "memrepo.sqlite3" if SCHEMA_VERSION == 3 else f"memrepo-v{SCHEMA_VERSION}.sqlite3"
RECALL_LOG = "recall-log.jsonl"
SESSION_STARTS = "session-starts.jsonl"  # one line per SessionStart: how doctor tells a prompt hook that never fires
STALE_MARKER = "STALE"
PROFILE_FILE = "profile.md"  # the always-on profile, at the root (memrepo.passes.profile)


ENV_DIR = "MEMREPO_DIR"
DEFAULT_DIR = "~/.memrepo"
ENV_RECALL_ONLY = "MEMREPO_RECALL_ONLY"
# The shared settings, then this machine's (which win); see `memrepo.store.config`.
SETTINGS_FILES = ("memrepo.json", INDEX_DIR + "/local.json")
MAX_SETTINGS_BYTES = 256 * 1024


def memory_repo(explicit: str | None = None) -> str:
    """The memory repository: `--repo`, else `$MEMREPO_DIR`, else `~/.memrepo`."""
    chosen = explicit or _os.getenv(ENV_DIR) or DEFAULT_DIR
    return _os.abspath(_os.expanduser(chosen))


def memory_dir(repo: str) -> str:
    return _os.join(repo, MEMORY_DIR)


# A memory folder whose cache is kept elsewhere: a code repository's project memory, whose cache
# lives in the user's cache folder, never in the code repository (`memrepo.recall.sources`).
_PLACED: "dict[str, str]" = {}


def place_index(root: str, folder: str) -> None:
    """Keep the cache of the memory folder `root` in `folder` instead of `root/index` (this process)."""
    _PLACED[root] = folder


def index_dir(repo: str) -> str:
    return _PLACED.get(repo) or _os.join(repo, INDEX_DIR)


def index_db(repo: str) -> str:
    return _os.join(index_dir(repo), INDEX_FILE)


def stale_marker(repo: str) -> str:
    return _os.join(index_dir(repo), STALE_MARKER)


def recall_log(repo: str) -> str:
    return _os.join(index_dir(repo), RECALL_LOG)


def session_starts(repo: str) -> str:
    return _os.join(index_dir(repo), SESSION_STARTS)


def note_path(repo: str, note_id: str) -> str:
    return _os.join(repo, MEMORY_DIR, note_id + ".md")


def project_of(cwd: str | None) -> str | None:
    """The key of the project a directory belongs to (see `memrepo.base.projects`), or None."""
    from memrepo.base import projects

    found = projects.identify(cwd)
    return found.key if found else None


def recall_only(repo: str) -> bool:
    """True when every background pass is off: MEMREPO_RECALL_ONLY=1, or `"recall_only": true`.

    Read here, without `json` or git, because the capture hooks ask it. Recall keeps working; no
    capture, enrichment, curator, verifier or skill pass runs, and the hooks queue nothing.
    A pulled `memrepo.json` can only turn work off with it.
    """
    env = (_os.getenv(ENV_RECALL_ONLY) or "").strip().lower()
    if env:
        return env not in ("0", "false", "no", "off")
    found = False
    for rel in SETTINGS_FILES:
        data = _settings(_os.join(repo, rel))
        if "recall_only" in data:
            found = data["recall_only"] is True
    return found


def _settings(path: str) -> "dict[str, object]":
    """A settings file's object; {} when it is missing, too big or not JSON (doctor names those)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_SETTINGS_BYTES + 1)
        value = _os.loads(raw.decode("utf-8")) if len(raw) <= MAX_SETTINGS_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
