"""The prompt path from one file (memrepo/base/bundle.py, issue 44): the hook answers the same
with it and without it, and a bundle that is stale, foreign, writable by others, broken or that
fails while it runs leaves nothing behind, so the import system loads memrepo as it always did."""

from __future__ import annotations

import ast
import json
import marshal
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, commit_all, write_memory
from memrepo.base import bundle
from test_precompile import _plugin_copy as _plugin  # the plugin's hooks and package, no compiled code

LOAD = ("import sys; sys.path.insert(0, {tools!r}); from memrepo.base import bundle; ok = bundle.load({path!r}, {tools!r}); "
        "d = sys.modules.get('memrepo.recall.decide'); print(ok, d is not None, d is not None and d.__spec__ is None)")
# A module only a prompt that reaches the cache runs: served to the import system by the bundle.
LATER = ("import sys; sys.path.insert(0, {tools!r}); from memrepo.base import bundle; bundle.load({path!r}, {tools!r}); "
         "from memrepo.recall import search; print(type(search.__spec__.loader).__name__)")


def _load(tools: Path, path: str) -> str:
    ran = subprocess.run([sys.executable, "-I", "-S", "-c", LOAD.format(tools=str(tools), path=path)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip()


def _written(tools: Path) -> str:
    ran = subprocess.run([sys.executable, "-I", "-S", str(tools / "memrepo" / "base" / "bundle.py")],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip()


def _hook(plugin: Path, repo: str, prompt: str, cwd: str) -> subprocess.CompletedProcess[bytes]:
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": cwd, "session_id": "s1"})
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo}
    return subprocess.run([sys.executable, "-I", "-S", str(plugin / "hooks" / "user_prompt_submit.py")],
                          input=event.encode(), env=env, capture_output=True, timeout=60)


def test_the_hook_answers_the_same_from_the_bundle_as_through_the_import_system(tmp_path: Path, repo: str) -> None:
    write_memory(repo, "deploy-shop", title="Deploying the shop service",
                 description="The shop service deploys with make release from the ops checkout, Tuesday to Thursday.")
    assert commit_all(repo, "a memory").returncode == 0
    plugin = _plugin(tmp_path)
    tools = plugin / "tools"
    for prompt in ("how do we deploy the shop service?", "ok, go ahead"):
        plain = _hook(plugin, repo, prompt, str(tmp_path))
        path = _written(tools)
        assert path == bundle.path(str(tools)) and Path(path).stat().st_mode & 0o777 == 0o600
        assert _load(tools, path) == "True True True"  # loaded by hand: no spec, no import system
        later = subprocess.run([sys.executable, "-I", "-S", "-c", LATER.format(tools=str(tools), path=path)],
                               capture_output=True, text=True, timeout=60)
        assert later.stdout.strip() == "_Finder", later.stderr
        bundled = _hook(plugin, repo, prompt, str(tmp_path))
        assert (bundled.returncode, bundled.stderr, bundled.stdout) == (plain.returncode, plain.stderr, plain.stdout)
        os.remove(path)
    assert "deploy-shop" in plain.stdout.decode() or "deploy-shop" in _hook(plugin, repo, "how do we deploy the shop service?",
                                                                           str(tmp_path)).stdout.decode()


def test_a_prompt_that_reaches_the_cache_runs_its_modules_at_once(tmp_path: Path) -> None:
    """The import system asks for the first module of a prompt that reaches the cache; the bundle
    then runs them all by hand, so the others are never asked for (issue 44)."""
    tools = _plugin(tmp_path) / "tools"
    path = _written(tools)
    code = ("import sys; sys.path.insert(0, {tools!r}); from memrepo.base import bundle; bundle.load({path!r}, {tools!r}); "
            "from memrepo.base import projects; from memrepo.recall import rank, transcript_tail; "
            "print(projects.__spec__.loader is sys.meta_path[0], rank.__spec__, "
            "sorted(n for n in bundle.MODULES[bundle.TOGETHER:bundle.SOME_HOOKS] if n not in sys.modules), "
            "transcript_tail.__spec__.loader is sys.meta_path[0])")
    ran = subprocess.run([sys.executable, "-I", "-S", "-c", code.format(tools=str(tools), path=path)],
                         capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "True None [] True", ran.stderr
    assert bundle.MODULES[bundle.TOGETHER - 1] == "memrepo.recall.transcript_tail"  # a follow-up's, served alone


def test_the_bundle_s_modules_need_no_docstring_and_assert_nothing() -> None:
    """The bundle is compiled without docstrings and asserts (optimize=2): a module of the prompt
    path that read a docstring or asserted would run differently from it."""
    for name in bundle.MODULES:
        source, _ = bundle._source(os.path.join(ROOT, "tools"), name)
        tree = ast.parse(Path(source).read_text(encoding="utf-8"))
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Assert)], name
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Name, ast.Attribute, ast.Constant))
                    and "__doc__" in (getattr(n, "id", None), getattr(n, "attr", None), getattr(n, "value", None))], name


def test_the_hook_script_runs_its_body_compiled_and_fails_open_without_it(tmp_path: Path, repo: str) -> None:
    """hooks/user_prompt_submit.py runs memrepo/claude/prompt_main.py from its compiled code (Python
    compiles a script it is started on every time: ~1 M instructions a prompt, issue 44); without
    that file it says so in one line and exits 0, printing nothing."""
    plugin = _plugin(tmp_path)
    prefix = tmp_path / "pycache"
    body = plugin / "tools" / "memrepo" / "claude" / "prompt_main.py"
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo}
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "ok, go ahead", "cwd": str(tmp_path)}).encode()
    ran = subprocess.run([sys.executable, "-I", "-S", "-X", f"pycache_prefix={prefix}", str(plugin / "hooks" / "user_prompt_submit.py")],
                         input=event, env=env, capture_output=True, timeout=60)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"", b"")
    assert list(prefix.rglob("prompt_main.*.pyc"))  # compiled once, read compiled from then on
    body.unlink()
    ran = subprocess.run([sys.executable, "-I", "-S", str(plugin / "hooks" / "user_prompt_submit.py")],
                         input=event, env=env, capture_output=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, b"") and ran.stderr.decode().count("\n") == 1, ran.stderr
    assert "cannot load memrepo" in ran.stderr.decode()


def test_the_installed_prompt_hook_runs_as_the_plugin_s_from_the_bundle(tmp_path: Path, repo: str) -> None:
    """`python -I -S …/claude/entry.py UserPromptSubmit` (what `memrepo install claude` registers)
    answers as the plugin's hook does, from the bundle, importing none of memrepo through the import
    system but the first module of a prompt that reaches the cache (issue 44)."""
    write_memory(repo, "deploy-shop", title="Deploying the shop service",
                 description="The shop service deploys with make release from the ops checkout, Tuesday to Thursday.")
    assert commit_all(repo, "a memory").returncode == 0
    plugin = _plugin(tmp_path)
    _written(plugin / "tools")
    event = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy the shop service?",
                        "cwd": str(tmp_path), "session_id": "s1"}).encode()
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo}
    entry = [sys.executable, "-I", "-S", "-X", "importtime", str(plugin / "tools" / "memrepo" / "claude" / "entry.py"),
             "UserPromptSubmit"]
    installed = subprocess.run(entry, input=event, env=env, capture_output=True, timeout=60)
    assert installed.returncode == 0 and b"deploy-shop" in installed.stdout
    assert installed.stdout == _hook(plugin, repo, "how do we deploy the shop service?", str(tmp_path)).stdout
    imported = set(re.findall(r"\|\s*(memrepo[\w.]*)\s*$", installed.stderr.decode(), re.M))
    assert imported == {bundle.MODULES[bundle.TOGETHER]}


def test_importing_the_hook_s_body_runs_nothing() -> None:
    ran = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, 'tools'); "
                          "from memrepo.claude import prompt_main; print(callable(prompt_main.main))"],
                         cwd=ROOT, input=b"{}", capture_output=True, timeout=60)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, b"True\n", b"")


def test_a_changed_source_is_never_run_from_the_bundle(tmp_path: Path) -> None:
    tools = _plugin(tmp_path) / "tools"
    path = _written(tools)
    decide = tools / "memrepo" / "recall" / "decide.py"
    decide.write_text(decide.read_text() + "\n# an upgrade changed this module\n")
    assert _load(tools, path) == "False False False"  # nothing of it stays: the import system loads memrepo
    assert not bundle.current(path, str(tools))


def test_a_bundle_others_may_write_a_foreign_or_a_broken_one_is_not_loaded(tmp_path: Path) -> None:
    tools = _plugin(tmp_path) / "tools"
    path = _written(tools)
    assert bundle.current(path, str(tools))
    os.chmod(path, 0o664)
    assert _load(tools, path) == "False False False" and not bundle.current(path, str(tools))
    os.chmod(path, 0o600)
    good = Path(path).read_bytes()
    header, items = marshal.loads(good)
    Path(path).write_bytes(marshal.dumps(((header[0], "cpython-0", header[2]), items)))  # another interpreter's
    assert _load(tools, path) == "False False False"
    Path(path).write_bytes(good[: len(good) // 2])  # cut short
    assert _load(tools, path) == "False False False"
    Path(path).write_bytes(good)
    assert _load(tools, path) == "True True True"


def test_a_module_that_fails_while_the_bundle_runs_leaves_nothing_of_it(tmp_path: Path) -> None:
    tools = _plugin(tmp_path) / "tools"
    path = _written(tools)
    header, items = marshal.loads(Path(path).read_bytes())
    broken = [item if item[0] != "memrepo.recall.query" else item[:5] + (compile("raise RuntimeError('x')", item[2], "exec"),)
              for item in items]
    Path(path).write_bytes(marshal.dumps((header, broken)))
    assert _load(tools, path) == "False False False"


def test_a_hook_run_loads_no_module_of_memrepo_the_bundle_does_not_hold(tmp_path: Path, repo: str) -> None:
    """Every agent's prompt hook, with no bundle: what the import system loads is in the bundle, and
    the bundle holds nothing none of them loads."""
    write_memory(repo, "deploy-shop", title="Deploying the shop service",
                 description="The shop service deploys with make release from the ops checkout.")
    assert commit_all(repo, "a memory").returncode == 0
    plugin = _plugin(tmp_path)
    loaded: set[str] = set()
    for hook in HOOKS:
        for prompt in ("how do we deploy the shop service?", "and the staging one?", "ok, go ahead"):
            ran, modules = _agent_hook(plugin, hook, repo, prompt, str(tmp_path))
            assert ran.returncode == 0 and ran.stderr == b"", (hook, ran.stderr)
            assert modules - {"memrepo.base.bundle"} <= set(bundle.MODULES), hook
            loaded |= modules
    assert set(bundle.MODULES) - loaded == set()  # and it holds none of them never loads


# Each agent's prompt hook as its install runs it, by path under -I -S: (script in the plugin's
# layout, arguments, the transcript its follow-ups read the previous turn from).
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
HOOKS = {
    "claude plugin": ("hooks/user_prompt_submit.py", [], "claude-code/cc-2.1.332-mock-session-excerpt.jsonl"),
    "claude settings": ("tools/memrepo/claude/entry.py", ["UserPromptSubmit"], "claude-code/cc-2.1.332-mock-session-excerpt.jsonl"),
    "codex plugin": ("hooks/codex.py", ["UserPromptSubmit"], "codex/rollout-sample.jsonl"),
    "codex settings": ("tools/memrepo/agents/codex/entry.py", ["UserPromptSubmit"], "codex/rollout-sample.jsonl"),
    "gemini settings": ("tools/memrepo/agents/gemini/entry.py", ["BeforeAgent"], "gemini/session-2026-12-02T02-27-cd51b046.jsonl"),
}
IMPORTTIME = re.compile(rb"^import time:.*\n", re.M)


def _agent_hook(plugin: Path, hook: str, repo: str, prompt: str, cwd: str) -> "tuple[subprocess.CompletedProcess[bytes], set[str]]":
    """One run of an agent's prompt hook: the process (stderr without -X importtime's lines) and the
    modules of memrepo the import system loaded (those the bundle runs by hand are not among them)."""
    script, args, transcript = HOOKS[hook]
    event = {"hook_event_name": args[0] if args else "UserPromptSubmit", "prompt": prompt, "cwd": cwd, "session_id": "s1",
             "transcript_path": os.path.join(FIXTURES, transcript)}
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo}
    ran = subprocess.run([sys.executable, "-X", "importtime", "-I", "-S", str(plugin / script), *args],
                         input=json.dumps(event).encode(), env=env, capture_output=True, timeout=60)
    modules = set(re.findall(r"\|\s*(memrepo[\w.]*)\s*$", ran.stderr.decode(), re.M))
    ran.stderr = IMPORTTIME.sub(b"", ran.stderr)
    return ran, modules


PROMPTS = ("how do we deploy the shop service?", "ok, go ahead")
# What every hook imports through the import system to reach the bundle; the rest of what it loads
# that way the bundle serves (`_Finder`), and none of what every prompt runs (hookio, the decision).
TO_THE_BUNDLE = {"memrepo", "memrepo.base", "memrepo.base.bundle"}


@pytest.fixture
def shop(repo: str) -> str:
    write_memory(repo, "deploy-shop", title="Deploying the shop service",
                 description="The shop service deploys with make release from the ops checkout, Tuesday to Thursday.")
    assert commit_all(repo, "a memory").returncode == 0
    return repo


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_each_agent_s_prompt_hook_answers_the_same_from_the_bundle(tmp_path: Path, shop: str, hook: str) -> None:
    plugin = _plugin(tmp_path)
    plain = {prompt: _agent_hook(plugin, hook, shop, prompt, str(tmp_path)) for prompt in PROMPTS}
    assert "deploy-shop" in plain[PROMPTS[0]][0].stdout.decode() and plain[PROMPTS[1]][0].stdout == b""
    assert all("memrepo.claude.hookio" in modules for _, modules in plain.values())  # no bundle: the import system
    _written(plugin / "tools")
    for prompt, (before, _) in plain.items():
        ran, modules = _agent_hook(plugin, hook, shop, prompt, str(tmp_path))
        assert (ran.returncode, ran.stderr, ran.stdout) == (before.returncode, before.stderr, before.stdout)
        assert modules - TO_THE_BUNDLE <= set(bundle.MODULES[bundle.EVERY_PROMPT:]), (hook, prompt)
        assert "memrepo.claude.hookio" not in modules


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_each_agent_s_prompt_hook_ignores_a_stale_or_foreign_bundle(tmp_path: Path, shop: str, hook: str) -> None:
    old = _plugin(tmp_path / "v1")
    plugin = _plugin(tmp_path / "v2")
    prompt = PROMPTS[0]
    plain, _ = _agent_hook(plugin, hook, shop, prompt, str(tmp_path))
    assert "deploy-shop" in plain.stdout.decode()
    ours = bundle.path(str(plugin / "tools"))
    os.makedirs(os.path.dirname(ours), exist_ok=True)
    shutil.copy2(_written(old / "tools"), ours)  # another version's, whose sources still exist and still match
    ran, modules = _agent_hook(plugin, hook, shop, prompt, str(tmp_path))
    assert (ran.returncode, ran.stderr, ran.stdout) == (plain.returncode, plain.stderr, plain.stdout)
    assert "memrepo.claude.hookio" in modules  # the import system, as with no bundle at all
    _written(plugin / "tools")
    decide = plugin / "tools" / "memrepo" / "recall" / "decide.py"
    decide.write_text(decide.read_text() + "\n# an upgrade changed this module\n")  # stale
    ran, modules = _agent_hook(plugin, hook, shop, prompt, str(tmp_path))
    assert (ran.returncode, ran.stderr, ran.stdout) == (plain.returncode, plain.stderr, plain.stdout)
    assert "memrepo.claude.hookio" in modules  # and when a source changed since it was written


def test_another_version_s_bundle_is_not_loaded(tmp_path: Path) -> None:
    """A plugin's data folder outlives its versions, each in a folder of its own: the bundle an
    older version wrote there names its own sources, which still exist and still match."""
    old = _plugin(tmp_path / "v1") / "tools"
    new = _plugin(tmp_path / "v2") / "tools"
    path = _written(old)
    assert _load(new, path) == "False False False" and not bundle.current(path, str(new))
    assert _load(old, path) == "True True True"
