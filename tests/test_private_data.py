"""Private data stays private on disk (issue 15): `index/` is 0700 and everything in it 0600;
the recall log keeps no word of a `<private>` span or of a prompt that may hold a secret; and
every way people write `<private>` is stripped in the recall hook, the transcript index and
what the capture pass sends to the model.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from typing import Any

import pytest

from helpers import IDENTITY, ROOT, build_template, commit_all, copy_template, git, write_memory
from memrepo.format import redact, token_formats, transcript
from memrepo.base import paths
from memrepo.recall import secretish, spans
from memrepo.store import doctor, private, repoinit, sessions
from test_hook import event, hook
from test_redact import POSITIVES

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

FAKE_MODEL = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
SECRET = "quokkafarm"  # only ever inside a private span: it must appear nowhere afterwards


def user_umask() -> None:
    os.umask(0o022)  # a usual login shell: git and SQLite would make 0755 folders and 0644 files


def cli(repo: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          preexec_fn=user_umask, env=dict(os.environ, **env), timeout=300)


def modes(top: str) -> dict[str, str]:
    """Every path under `top` (itself as "."), with its permission bits in octal."""
    out = {".": oct(stat.S_IMODE(os.stat(top).st_mode))}
    for base, dirs, names in os.walk(top):
        for name in dirs + names:
            path = os.path.join(base, name)
            out[os.path.relpath(path, top)] = oct(stat.S_IMODE(os.lstat(path).st_mode))
    return out


def test_index_and_everything_in_it_is_the_owners_alone(tmp_path: Any) -> None:
    """A clone made with the user's umask, then a day of use: every file, including the transcript index."""
    origin = str(tmp_path / "origin")
    repoinit.init(origin)
    clone = str(tmp_path / "clone")
    subprocess.run(["git", "clone", "-q", origin, clone], check=True, preexec_fn=user_umask)
    assert modes(os.path.join(clone, "index"))["."] == "0o755"  # as git made it
    assert cli(clone, "init").returncode == 0
    assert cli(clone, "add", "--class", "rule", "--title", "Friday deploys need an OK",
               "--description", "No production deploys after 16:00 on Fridays without an OK").returncode == 0
    env = dict(os.environ, MEMREPO_DIR=clone, MEMREPO_PYTHON=sys.executable)
    proc = subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "user_prompt_submit"], env=env, capture_output=True,
                          input=event("can we deploy on friday?").encode(), preexec_fn=user_umask, timeout=60)
    assert proc.returncode == 0 and b"Friday deploys" in proc.stdout
    s = Session()
    s.user("how do we deploy on friday?")
    s.say("Ask for an OK first.")
    path = s.write(str(tmp_path / "session.jsonl"))
    assert cli(clone, "transcripts", "index", path).returncode == 0
    assert cli(clone, "sweep", "--no-model").returncode == 0
    found = modes(os.path.join(clone, "index"))
    for name in (paths.INDEX_FILE, "recall-log.jsonl", sessions.DB_FILE, "README.md", ".gitignore"):
        assert name in found
    loose = {p: m for p, m in found.items() if m not in ("0o700", "0o600")}
    assert loose == {}
    dirs = {p for p in found if os.path.isdir(os.path.join(clone, "index", p))}
    assert {found[p] for p in dirs} == {"0o700"} and {found[p] for p in set(found) - dirs} == {"0o600"}
    assert git(clone, "status", "--porcelain").stdout == ""  # modes git doesn't track: nothing to commit


def test_doctor_names_loose_permissions_and_its_fix_works(repo: str) -> None:
    os.chmod(paths.index_dir(repo), 0o755)
    os.chmod(paths.index_db(repo), 0o644)
    check = next(c for c in doctor.run(repo) if c.name == "private files")
    assert not check.ok
    # (SQLite gives -wal and -shm the database's mode, so doctor's own look may add them.)
    head_, _, listed = check.detail.partition(" can be read by other users: ")
    db = f"index/{paths.INDEX_FILE}"
    assert (head_, set(listed.split(", "))) in (("2 paths in index/", {"index/", db}),
                                               ("4 paths in index/", {"index/", db, db + "-wal", db + "-shm"}))
    assert check.fix == f"memrepo --repo {repo} index"
    assert cli(repo, "index").returncode == 0
    assert next(c for c in doctor.run(repo) if c.name == "private files").ok
    assert private.loose(paths.index_dir(repo)) == []


def log_bytes(repo: str) -> bytes:
    with open(paths.recall_log(repo), "rb") as fh:
        return fh.read()


def _two_memories(repo: str) -> None:
    write_memory(repo, "friday", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships without an OK.", topics=["deploy"])
    write_memory(repo, "quokka", title=f"The {SECRET} box", description=f"{SECRET} runs the nightly backups.")
    assert commit_all(repo, "memories").returncode == 0


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(tmp_path_factory, _two_memories, identity=IDENTITY)


@pytest.fixture
def store(store_template: str, tmp_path: Any) -> str:
    """The two memories, committed once per module; a copy per test."""
    return copy_template(store_template, tmp_path)


def test_the_recall_log_keeps_no_word_of_a_private_span(store: str) -> None:
    proc = hook("user_prompt_submit", event(f"can we deploy on friday afternoon? <private>{SECRET} pin 4821</private>"), store)
    assert proc.returncode == 0 and b"(id: friday)" in proc.stdout and b"quokka" not in proc.stdout
    data = log_bytes(store)
    assert SECRET.encode() not in data and b"4821" not in data
    assert json.loads(data.splitlines()[-1])["terms"]  # an ordinary prompt keeps its terms


def test_a_prompt_that_may_hold_a_secret_is_logged_without_terms(store: str) -> None:
    token = "ghp_" + "Zq8" * 12
    proc = hook("user_prompt_submit", event(f"deploy on friday afternoon with token {token} and password: plumtree42x9"), store)
    assert proc.returncode == 0 and b"(id: friday)" in proc.stdout
    data = log_bytes(store)
    for word in (b"zq8", b"Zq8", b"plumtree", b"ghp"):
        assert word not in data
    entry = json.loads(data.splitlines()[-1])
    assert entry["terms"] == [] and entry["withheld"] > 0


# Sixteen ways to write a private span; each hides SECRET.
VARIANTS = [
    f"<private>{SECRET}</private>",
    f"<PRIVATE>{SECRET}</PRIVATE>",
    f"<Private>{SECRET}</private>",
    f"<private reason=\"pin\">{SECRET}</private>",
    f"<private data-x='1'>{SECRET}</PrIvAtE>",
    f"<private >{SECRET}</private >",
    f"<private\t>{SECRET}</private\n>",
    f"< private>{SECRET}< /private>",
    f"<private>a<private>b</private>{SECRET}</private>",
    f"<private><private>{SECRET}</private></private>",
    f"<private>{SECRET}",
    f"<private>\n{SECRET}\n</private>",
    f"<private/>x <private>{SECRET}</private>",
    f"<PRIVATE>{SECRET}</private >",
    f"</private> <private>{SECRET}</private>",
    f"<private>one</private> two <private>{SECRET}</private>",
]


@pytest.mark.parametrize("span", VARIANTS)
def test_every_private_variant_is_stripped(span: str) -> None:
    assert SECRET not in spans.strip_private(f"before {span} after")
    assert SECRET not in transcript.clean(f"before {span} after")
    assert "before" in spans.strip_private(f"before {span} after")


def test_a_private_word_is_not_a_private_span() -> None:
    text = "the privateer <privates> of <private-key>"
    assert spans.strip_private(text) == text


@pytest.mark.parametrize("span", VARIANTS)
def test_no_private_variant_reaches_recall_the_index_or_the_model(store: str, tmp_path: Any, span: str) -> None:
    proc = hook("user_prompt_submit", event(f"what hosts the staging database? {span}"), store)
    assert proc.returncode == 0 and SECRET.encode() not in log_bytes(store)
    s = Session()
    s.user(f"remember where staging lives {span} thanks")
    s.say("Noted.")
    s.user("and now deploy it")
    s.say("Deployed.")
    path = s.write(str(tmp_path / "private.jsonl"))
    sessions.index(store, path)
    with open(sessions.db_path(store), "rb") as fh:
        assert SECRET.encode() not in fh.read()
    log = str(tmp_path / "model.jsonl")
    proc = subprocess.run([sys.executable, "-m", "memrepo", "--repo", store, "capture", path],
                          env=dict(os.environ, MEMREPO_MODEL_CMD=f"{sys.executable} {FAKE_MODEL}", FAKE_MODEL_LOG=log,
                                   FAKE_MODEL_DEFAULT='{"memories": [], "refuted": []}'), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(log, encoding="utf-8") as fh:
        sent = fh.read()
    assert "remember where staging lives" in sent and SECRET not in sent


def test_the_previous_turns_private_span_is_no_context_term(store: str, tmp_path: Any) -> None:
    s = Session()
    s.user(f"notes on <private>{SECRET}</private>")
    s.say("ok")
    path = s.write(str(tmp_path / "t.jsonl"))
    proc = hook("user_prompt_submit", event("and the database?", transcript_path=path), store)
    assert proc.returncode == 0 and b"quokka" not in proc.stdout
    assert SECRET.encode() not in log_bytes(store)


@pytest.mark.parametrize(("text", "kind", "preview"), POSITIVES)
def test_the_cheap_check_says_yes_to_every_secret_the_redactor_finds(text: str, kind: str, preview: str) -> None:
    assert redact.redact(text) != text
    assert secretish.may_hold_secret(text)
    assert secretish.may_hold_secret(f"Deploy it. {text.upper() if text.isupper() else text} Thanks.")


def test_the_cheap_check_covers_every_token_prefix_of_the_redactor() -> None:
    for _kind, prefix, _rest, _keep in token_formats.TOKEN_PATTERNS:
        literal = prefix.replace("\\", "").replace("[rs]", "").replace("[pousr]_", "p_").replace("[abeoprs]-", "")
        literal = literal.replace("A[KS]IA", "AKIA")
        assert any(p in literal or literal in p for p in secretish.TOKEN_PREFIXES), prefix


def test_ordinary_prompts_keep_their_terms() -> None:
    for prompt in ("how do we deploy on friday?", "which queue do the invoice jobs use", "rotate the api token policy"):
        assert redact.redact(prompt) == prompt
    assert not secretish.may_hold_secret("how do we deploy on friday?")
    assert not secretish.may_hold_secret("which queue do the invoice jobs use")
