"""The model runner for offline passes: a command that reads a prompt on stdin and prints text.

Default: `claude -p --model haiku --output-format json` (the user's own subscription), run with
only memrepo's prompt (`modelcmd`: no Claude Code system prompt, tools, settings or saved
session); `MEMREPO_MODEL_CMD`, else `model_cmd` in this machine's `index/local.json` (never the
committed `memrepo.json`), overrides it. A call waits `model_timeout` seconds (this machine's settings,
or `MEMREPO_MODEL_TIMEOUT`; default 300). `recall_only` (settings, or `MEMREPO_RECALL_ONLY=1`) turns
every call off. Every answer must be JSON valid against the pass's schema; an invalid answer is
dropped and logged, never repaired. Each call is recorded in `index/model-ledger.jsonl` (pass,
duration, tokens when the command reports them). Never imported on the prompt path.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import time
from typing import Any

from memrepo import proc
from memrepo.store import config
from memrepo.base import paths
from memrepo.format import catalogue, transcript
from memrepo.passes import modelcmd
from memrepo.passes.answers import extract_json, loads, salvage
from memrepo.errors import MemrepoError

DEFAULT_CMD = "claude -p --model haiku --output-format json"
ENV_CMD = "MEMREPO_MODEL_CMD"
ENV_TIMEOUT = "MEMREPO_MODEL_TIMEOUT"
TIMEOUT = 300
MAX_TIMEOUT = 3600
MAX_OUTPUT = 2 * 1024 * 1024
HEALTH_WINDOW = 3  # doctor warns when this many of the latest calls all failed
LEDGER = "model-ledger.jsonl"
# What `claude --output-format json` reports in `usage`; the cache fields are input too.
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
CHARS_PER_TOKEN = 4  # for a command that reports no usage: an estimate, and labelled so
REJECTS = "model-rejects.jsonl"


# A failed call's fix (h31: `memrepo capture` printed the exit alone, with nothing to do about it).
_CHECK = ("run the model command (MEMREPO_MODEL_CMD, or `model_cmd` in index/local.json) by hand on a short prompt; "
          "`memrepo stats` lists the failed calls")


class ModelError(MemrepoError):
    """The model command could not be run or failed."""


class Tally:
    """This process's model calls: how many answered, how many failed, and the last failure.
    A sweep whose every call failed must not look like a quiet day (issue 16)."""

    ok = 0
    failed = 0
    last_error = ""
    by_pass: dict[str, dict[str, Any]] = {}  # pass -> {"ok": n, "failed": n, "last_error": text}

    @classmethod
    def reset(cls) -> None:
        cls.ok, cls.failed, cls.last_error, cls.by_pass = 0, 0, "", {}

    @classmethod
    def count(cls, pass_name: str, error: str = "") -> None:
        row = cls.by_pass.setdefault(pass_name, {"ok": 0, "failed": 0, "last_error": ""})
        if error:
            cls.failed += 1
            cls.last_error = row["last_error"] = error
            row["failed"] += 1
        else:
            cls.ok += 1
            row["ok"] += 1


class Heard:
    """The model calls a run made from its start on, per pass: what each of its commits says in
    `Memrepo-Model`, so a commit made while the model failed says so (issue 37)."""

    def __init__(self, use_model: bool = True) -> None:
        self.use_model = use_model
        self.start = {name: (row["ok"], row["failed"]) for name, row in Tally.by_pass.items()}

    def trailer(self) -> str:
        """`not run (--no-model)`, `no call yet`, or each pass's answered and failed calls so far."""
        if not self.use_model:
            return "not run (--no-model)"
        parts = []
        for name, row in sorted(Tally.by_pass.items()):
            ok0, failed0 = self.start.get(name, (0, 0))
            ok, failed = row["ok"] - ok0, row["failed"] - failed0
            if ok or failed:
                parts.append(f"{name} {ok} answered" + (f", {failed} failed" if failed else ""))
        return "; ".join(parts) or "no call yet"


def _failed(repo: str, entry: dict[str, Any], error: str, exc: ModelError) -> ModelError:
    entry.update(ok=False, error=error)
    _append(repo, LEDGER, entry)
    Tally.count(str(entry.get("pass", "?")), str(exc))
    return exc


def command(repo: str) -> list[str]:
    """The configured model command as an argument list."""
    # Never the committed memrepo.json: a pushed `model_cmd` would run on the next capture (issue 15).
    raw = os.environ.get(ENV_CMD) or config.local_only(repo, "model_cmd") or DEFAULT_CMD
    args = shlex.split(raw) if isinstance(raw, str) else [str(a) for a in raw]
    if not args:
        raise ModelError("the model command is empty", hint=f"set {ENV_CMD} or `model_cmd` in {config.LOCAL}")
    return args


def timeout_of(repo: str) -> float:
    """Seconds a model call may take: MEMREPO_MODEL_TIMEOUT, else `model_timeout`, else TIMEOUT."""
    raw: Any = os.environ.get(ENV_TIMEOUT) or config.get(repo, "model_timeout", TIMEOUT)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        value = float("nan")
    if not 1 <= value <= MAX_TIMEOUT:  # also false for NaN
        raise ModelError(f"the model timeout {raw!r} is not a number of seconds from 1 to {MAX_TIMEOUT}",
                         hint=f"fix `model_timeout` in {config.LOCAL}, or {ENV_TIMEOUT}")
    return value


class RecallOnly(ModelError):
    """Recall-only mode is on: no model call runs."""


def _append(repo: str, name: str, entry: dict[str, Any]) -> None:
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    with open(os.path.join(paths.index_dir(repo), name), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _answer(stdout: str) -> tuple[str, dict[str, int]]:
    """The model's text and token usage; understands `claude --output-format json` envelopes."""
    try:
        envelope = loads(stdout)
    except ValueError:
        return stdout, {}
    if isinstance(envelope, dict) and isinstance(envelope.get("result"), str):
        structured = envelope.get("structured_output")  # `--json-schema`: the CLI's validated answer
        _usage = envelope.get("usage")
        usage: dict[str, Any] = _usage if isinstance(_usage, dict) else {}
        tokens = {k: int(v) for k, v in usage.items() if k in USAGE_KEYS and isinstance(v, int) and not isinstance(v, bool)}
        if envelope.get("is_error"):
            raise ModelError(f"the model command reported an error: {envelope['result'][:200]}", hint=_CHECK)
        if isinstance(structured, (dict, list)):
            return json.dumps(structured, ensure_ascii=False), tokens
        return envelope["result"], tokens
    return stdout, {}


def call(repo: str, pass_name: str, prompt: str, timeout: float | None = None,
         schema: dict[str, Any] | None = None) -> str:
    """Run the model command once and return its answer text. Raises ModelError on failure.

    The prompt goes out as `[memrepo background pass: <pass>]` and the pass's prompt, so a
    session file the command leaves behind is recognised as memrepo's, not the user's.
    """
    text, entry = _ask(repo, pass_name, prompt, timeout, schema)
    _succeeded(repo, entry)
    return text


def _succeeded(repo: str, entry: dict[str, Any], **extra: Any) -> None:
    entry.update(ok=True, **extra)
    _append(repo, LEDGER, entry)
    Tally.count(str(entry.get("pass", "?")))


def require_enabled(repo: str) -> None:
    """Raise RecallOnly when recall-only mode is on: a pass checks before its first call (h31: curate
    ran its deterministic pass and reported a model call that never ran; verify printed one skip per memory)."""
    if config.recall_only(repo):
        raise RecallOnly("recall-only mode is on: memrepo runs no model call",
                         hint=f"unset {config.ENV_RECALL_ONLY}, or set \"recall_only\": false in {config.SHARED} / {config.LOCAL}")


def _ask(repo: str, pass_name: str, prompt: str, timeout: float | None,
         schema: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """One call: (the answer text, its ledger entry, not yet written); a failure is written and raised."""
    require_enabled(repo)
    timeout = timeout_of(repo) if timeout is None else timeout
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    login = os.path.join(paths.index_dir(repo), f".model-settings-{os.getpid()}.json")
    try:
        base = command(repo)
        args = modelcmd.isolated(base, schema, login)
        return _run(repo, pass_name, f"{transcript.OWN_MARK}: {pass_name}]\n{prompt}", args, timeout, len(base))
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(login)


def _run(repo: str, pass_name: str, prompt: str, args: list[str], timeout: float, own: int) -> tuple[str, dict[str, Any]]:
    """One call of `args`; `own` is how many of them are the user's command (the rest memrepo added)."""
    start = time.perf_counter()
    entry: dict[str, Any] = {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pass": pass_name, "cmd": args[0]}
    try:
        # MEMREPO_PASS tells memrepo's own hooks in a `claude -p` model session to stand aside.
        env = dict(os.environ, MEMREPO_PASS=pass_name)
        for _ in range(len(modelcmd.ADDED) + 1):
            res = proc.run(args, input=prompt.encode("utf-8"), timeout=timeout, env=env, max_output=MAX_OUTPUT)
            retry = modelcmd.without_unknown(args, args[own:], res.text("stderr")) if res.returncode else None
            if retry is None:
                break
            args = retry  # an older `claude` without that flag: ask again without it
    except OSError as exc:
        raise _failed(repo, entry, "not found", ModelError(f"model command not found: {args[0]} ({exc.strerror})",
                                                          hint=f"install it, or set {ENV_CMD}")) from None
    entry["ms"] = round((time.perf_counter() - start) * 1000)
    if res.timed_out:
        raise _failed(repo, entry, "timeout", ModelError(f"the model command timed out after {timeout:.0f}s",
                                                         hint=f"raise `model_timeout` in {config.LOCAL} (or {ENV_TIMEOUT}), or check the model command"))
    if res.truncated:
        raise _failed(repo, entry, "output over the bound", ModelError(f"the model command printed more than {MAX_OUTPUT} bytes", hint=_CHECK))
    if res.returncode != 0:
        said = res.text("stderr").strip()[:300] or "nothing on stderr"
        raise _failed(repo, entry, f"exit {res.returncode}", ModelError(f"the model command exited {res.returncode}: {said}", hint=_CHECK))
    try:
        text, tokens = _answer(res.text())
    except ModelError as exc:  # an `is_error` envelope: a failed call, recorded like the others
        raise _failed(repo, entry, "is_error", exc) from None
    if tokens:
        entry.update(tokens)
    else:  # the command reported no usage: what was sent and printed, labelled as an estimate
        entry.update(est_input_tokens=-(-len(prompt) // CHARS_PER_TOKEN),
                     est_output_tokens=-(-len(res.text()) // CHARS_PER_TOKEN))
    return text, entry


def ask_json(repo: str, pass_name: str, prompt: str, schema: dict[str, Any],
             dropped: dict[str, list[tuple[int, Any]]] | None = None) -> Any | None:
    """The model's answer parsed and validated against `schema`, or None (dropped and logged).

    Validation is per item (`salvage`): an invalid item of a list is left out and logged with
    its reason, the rest is kept. `dropped` receives the items left out with their original
    indexes ({list key: [(index, item), ...]}): some answers point into a list by index, and a
    pass may keep the work of an item it could not use pending.
    """
    text, entry = _ask(repo, pass_name, prompt, None, schema)
    try:
        value = extract_json(text)
    except ValueError as exc:
        _invalid(repo, entry, [f"not JSON: {exc}"], text)
        return None
    value, left_out, errors = salvage(value, schema)
    if value is None:
        _invalid(repo, entry, errors, text)
        return None
    if errors:
        reject(repo, pass_name, errors, text, kept=True)
        _succeeded(repo, entry, partial=len(errors))
    else:
        _succeeded(repo, entry)
    if dropped is not None:
        dropped.update(left_out)
    return value


def _invalid(repo: str, entry: dict[str, Any], errors: list[str], text: str) -> None:
    """An answer that is not valid by the schema is a failed call (issue 37): the ledger, `stats`
    and the run's tally count it so, and the answer goes to index/model-rejects.jsonl."""
    pass_name = str(entry.get("pass", "?"))
    reject(repo, pass_name, errors, text)
    first = errors[0] if errors else "invalid"
    entry.update(ok=False, error=f"invalid answer ({first[:120]})")
    _append(repo, LEDGER, entry)
    said = " ".join(text.split())[:80]
    Tally.count(pass_name, f"the model's answer is not valid ({first[:120]}): {said!r}")


def reject(repo: str, pass_name: str, errors: list[str], answer: str, kept: bool = False) -> None:
    """Log a dropped answer, or the items left out of a kept one (`kept`), to index/model-rejects.jsonl.

    The answer is redacted and truncated."""
    entry = {"t": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "pass": pass_name,
             "errors": errors[:20], "answer": catalogue.redact(answer)[:2000]}
    if kept:
        entry["kept"] = "the answer's other items"
    _append(repo, REJECTS, entry)


def ledger(repo: str) -> list[dict[str, Any]]:
    """Every recorded model call, oldest first."""
    path = os.path.join(paths.index_dir(repo), LEDGER)
    if not os.path.exists(path):
        return []
    out = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except (ValueError, RecursionError):
                continue  # a torn or corrupt line (a killed writer) costs its own entry only
            if isinstance(entry, dict):
                out.append(entry)
    return out


def checks(repo: str) -> list[Any]:
    """`memrepo doctor`'s lines about the model command: it exists, and its last calls did not all fail."""
    from memrepo.store.doctor import Check

    where = f"{ENV_CMD}, or `model_cmd` in {config.LOCAL}"
    try:
        args = command(repo)
    except ModelError as exc:
        return [Check("model command", False, str(exc), f"set {where}")]
    exe = args[0]
    found = (os.path.isfile(exe) and os.access(exe, os.X_OK)) if os.sep in exe else shutil.which(exe) is not None
    if not found:
        # A warning: recall, the part that runs before every prompt, needs no model.
        out = [Check("model command", True, f"`{exe}` (of the model command `{' '.join(args)}`) is not installed or "
                     "not on PATH: captures, enrichment and the curator wait; recall is unaffected",
                     f"install it, or set {where} to a command that is", warn=True)]
    else:
        out = [Check("model command", True, " ".join(args))]
    last = ledger(repo)[-HEALTH_WINDOW:]
    if last and not any(e.get("ok") for e in last):
        out.append(Check("model calls", True, f"the last {len(last)} model call{'s' * (len(last) != 1)} failed, the latest "
                         f"at {last[-1].get('t')} ({last[-1].get('pass')}: {last[-1].get('error')}): captures, "
                         "enrichment and the curator wait",
                         f"check the model command ({where}), then run `memrepo sweep`", warn=True))
    return out
