"""The memories recall injected often and that were never used (stdlib only: the prompt path reads
it before every prompt, so it is a module of its own, without the usage judge behind it).

The daily sweep writes `index/recall-noisy.json` (`usage.write_noisy`); recall ranks the ids it
lists as fully decayed notes (`rank._priority`).
"""

from memrepo.base import _fast, paths

NOISY_FILE = "recall-noisy.json"
MAX_NOISY_BYTES = 64 * 1024


def noisy_path(repo: str) -> str:
    return _fast.join(paths.index_dir(repo), NOISY_FILE)


def noisy_ids(repo: str) -> frozenset[str]:
    """The ids `usage.write_noisy` recorded; none when the file is missing, too big or damaged."""
    try:
        with open(noisy_path(repo), "rb") as fh:
            raw = fh.read(MAX_NOISY_BYTES + 1)
        data = _fast.loads(raw.decode("utf-8")) if len(raw) <= MAX_NOISY_BYTES else None
    except (OSError, ValueError, UnicodeDecodeError):
        return frozenset()
    ids = data.get("ids") if isinstance(data, dict) else None
    return frozenset(v for v in ids if isinstance(v, str)) if isinstance(ids, list) else frozenset()
