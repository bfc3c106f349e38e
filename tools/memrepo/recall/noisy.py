"""What use says about each memory, as recall ranks it (stdlib only: the prompt path reads it
before every prompt, so it is a module of its own, without the usage judge behind it).

One rule, from the usage verdicts of this machine (`memrepo.recall.usage`, the Stop hook's
"was it used" judgement), kept in the local, untracked `index/recall-noisy.json`:

- **used renews**: the day a memory was last used restarts its decay clock: recall decays it
  from that day, not from its `updated` (`rank._priority`). The Stop hook records the day as it
  judges a turn (`renew`); the daily sweep folds in every verdict of the usage log
  (`usage.write_noisy`). The memory file is never rewritten for it.
- **injected and never used fades**: a memory injected at least `usage.REVIEW_AFTER` times in the
  last `usage.DEFAULT_DAYS` days of judged turns, and used in none, ranks as a fully decayed one
  (it yields to comparable matches, never to a much weaker one). The sweep lists them.
- **unused for long is proposed for retirement** (`memrepo curate`, the `retire_unused_days`
  setting): never retired without a person, and never a rule, a preference or a memory the user
  wrote (`memrepo.passes.curate.disuse`).
"""

from memrepo.recall import _fast, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Iterable

NOISY_FILE = "recall-noisy.json"
MAX_NOISY_BYTES = 256 * 1024
MAX_RENEWED = 5000  # ids whose last use the file keeps (the most recent)


class Usage(frozenset):  # type: ignore[type-arg]
    """The noisy ids (a set, as `rank` has always taken them), with `renewed`: id -> the day
    (YYYY-MM-DD) it was last used."""

    renewed: "dict[str, str]"

    def __new__(cls, ids: "Iterable[str]" = (), renewed: "dict[str, str] | None" = None) -> "Usage":
        self = super().__new__(cls, ids)
        self.renewed = renewed or {}
        return self


def noisy_path(repo: str) -> str:
    return _fast.join(paths.index_dir(repo), NOISY_FILE)


def read_state(repo: str) -> "dict[str, Any]":
    """The file's object; {} when it is missing, too big or damaged."""
    try:
        with open(noisy_path(repo), "rb") as fh:
            raw = fh.read(MAX_NOISY_BYTES + 1)
        data = _fast.loads(raw.decode("utf-8")) if len(raw) <= MAX_NOISY_BYTES else None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def renewed_days(data: "dict[str, Any]") -> "dict[str, str]":
    used = data.get("used")
    if not isinstance(used, dict):
        return {}
    return {k: v for k, v in used.items() if isinstance(k, str) and isinstance(v, str) and len(v) == 10}


def noisy_ids(repo: str) -> Usage:
    """The ids `usage.write_noisy` recorded as noisy, and the day each memory was last used."""
    data = read_state(repo)
    ids = data.get("ids")
    noisy = [v for v in ids if isinstance(v, str)] if isinstance(ids, list) else []
    return Usage(noisy, renewed_days(data))


def write_state(repo: str, data: "dict[str, Any]") -> None:
    """Replace the file whole (a reader never sees half of it), 0600."""
    used = data.get("used")
    if isinstance(used, dict) and len(used) > MAX_RENEWED:
        data["used"] = dict(sorted(used.items(), key=lambda kv: kv[1], reverse=True)[:MAX_RENEWED])
    path = noisy_path(repo)
    tmp = f"{path}.tmp-{_fast.getpid()}"
    fd = _fast.open_fd(tmp, _fast.O_WRONLY | _fast.O_CREAT | _fast.O_TRUNC, 0o600)
    try:
        _fast.write(fd, _fast.dumps(data).encode("utf-8", "surrogatepass"))
    finally:
        _fast.close(fd)
    _fast.replace(tmp, path)


def renew(repo: str, ids: "Iterable[str]", day: str) -> None:
    """Record that `ids` were used on `day` (YYYY-MM-DD): their decay clocks restart there."""
    ids = [i for i in ids if isinstance(i, str) and i]
    if not ids:
        return
    data = read_state(repo)
    used = renewed_days(data)
    changed = False
    for note_id in ids:
        if used.get(note_id, "") < day:
            used[note_id] = day
            changed = True
    if changed:
        data["used"] = used
        write_state(repo, data)
