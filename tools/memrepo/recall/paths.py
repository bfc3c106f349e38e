"""Where things are: the memory repository and the files inside it (stdlib only)."""

from memrepo.recall import _fast as _os

# The layout of a memory repository.
MEMORY_DIR = "memory"
INDEX_DIR = "index"
INDEX_FILE = "memrepo.sqlite3"
RECALL_LOG = "recall-log.jsonl"
STALE_MARKER = "STALE"
PROFILE_FILE = "profile.md"  # the always-on profile, at the root (memrepo.passes.profile)


ENV_DIR = "MEMREPO_DIR"
DEFAULT_DIR = "~/.memrepo"


def memory_repo(explicit: str | None = None) -> str:
    """The memory repository: `--repo`, else `$MEMREPO_DIR`, else `~/.memrepo`."""
    chosen = explicit or _os.getenv(ENV_DIR) or DEFAULT_DIR
    return _os.abspath(_os.expanduser(chosen))


def memory_dir(repo: str) -> str:
    return _os.join(repo, MEMORY_DIR)


def index_dir(repo: str) -> str:
    return _os.join(repo, INDEX_DIR)


def index_db(repo: str) -> str:
    return _os.join(repo, INDEX_DIR, INDEX_FILE)


def stale_marker(repo: str) -> str:
    return _os.join(repo, INDEX_DIR, STALE_MARKER)


def recall_log(repo: str) -> str:
    return _os.join(repo, INDEX_DIR, RECALL_LOG)


def note_path(repo: str, note_id: str) -> str:
    return _os.join(repo, MEMORY_DIR, note_id + ".md")


def project_of(cwd: str | None) -> str | None:
    """The key of the project a directory belongs to (see `memrepo.recall.projects`), or None."""
    from memrepo.recall import projects

    found = projects.identify(cwd)
    return found.key if found else None
