"""`memrepo install codex|gemini` and `uninstall`: idempotent, every other hook and setting kept,
each CLI's config-dir variable honoured, Codex's hook trust written so its hooks run.

Codex's trust hashes are checked against vectors the real codex-cli 0.171.0 reported and ran
(tests/e2e/CODEX-NOTES.md §3); test_e2e_agents.py runs the installed hooks in the real CLIs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.agents.codex import install as codex, trust
from memrepo.agents.gemini import install as gemini
from memrepo.claude import install as claudeinstall

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]


ENTRY = {agent: str(Path(mod.__file__).resolve().parent / "entry.py") for agent, mod in (("codex", codex), ("gemini", gemini))}


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", *args], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=60)


# -- Codex: the trust hash ----------------------------------------------------------------------------


@pytest.mark.parametrize("event, matcher, handler, expected", [
    ("SessionStart", "startup|resume",
     {"type": "command", "command": "memrepo-probe-hook SessionStart", "timeout": 30, "statusMessage": "Loading memory"},
     "sha256:d177786b9d5f72ed8f5aaf818b8b700377058d4a5531ae2240c2e5c174e9dbeb"),
    ("UserPromptSubmit", "*", {"type": "command", "command": "memrepo-probe-hook UserPromptSubmit"},
     "sha256:db14e7b5bece7fa0f9ee078e78a84e875932f9e3b9f1ba7dfd8e0347d3c56c12"),
    ("Stop", None, {"type": "command", "command": "memrepo-probe-hook Stop", "timeout": 20},
     "sha256:3eb3d12fbb8055add67ddadd7d2fb424d22bdc39c1bd949a1beac7456fb48f69"),
    ("SessionEnd", None, {"type": "command", "command": "memrepo-probe-hook SessionEnd"},
     "sha256:27fe5766c426feed953e6e41c3e7a6091edfe39d633a086f7a87a56e846a9d5b"),
    ("UserPromptSubmit", "*", {"type": "command", "command": "memrepo hook d", "additionalContextLimit": 20000},
     "sha256:26f468b73a4268f753e1a558dbc8ea798e5d657b803a4787e609d7f68ab06fd5"),
    ("PreCompact", None, {"type": "command", "command": "memrepo hook pre-compact"},
     "sha256:c245650f775109ef337f2dcbc5ad11a2aac9584384bc924b887dd4ed2fcb23b5"),
    ("SessionStart", None, {"type": "command", "command": "memrepo hook session-start"},
     "sha256:a707c6ddcccc2c643fd98d6b40cb4353c0a3faf974ad17ed3bca64fe33bf09c1"),
    ("Stop", "x", {"type": "command", "command": "memrepo hook stop"},
     "sha256:73dc8218d650d24721f305238957edf7d3bba02b1ef9b087f5300a238fed09b9"),
    ("SessionEnd", "other", {"type": "command", "command": "memrepo hook a", "timeout": 5},
     "sha256:e8eeca819d240fba9ca76ae3dad3ecd744971201289b2d7b1e0286522a9b5f57"),
])
def test_the_trust_hash_is_the_one_codex_computes(event: str, matcher: str | None, handler: dict, expected: str) -> None:
    assert trust.trusted_hash(event, matcher, handler) == expected


def test_state_keys_name_the_file_event_and_position() -> None:
    assert trust.state_key("/h/.codex/hooks.json", "UserPromptSubmit", 2) == "/h/.codex/hooks.json:user_prompt_submit:2:0"


# -- Codex: install / uninstall ---------------------------------------------------------------------


USER_HOOKS = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "my-linter --check"}]}],
                        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]},
              "other": 1}
USER_CONFIG = '''model = "gpt-5"

[projects."/home/me/web"]
trust_level = "trusted"

[hooks.state."/elsewhere/hooks.json:user_prompt_submit:0:0"]
trusted_hash = "sha256:mine"
'''


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "hooks.json").write_text(json.dumps(USER_HOOKS), encoding="utf-8")
    (home / "config.toml").write_text(USER_CONFIG, encoding="utf-8")
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_install_codex_adds_its_hooks_and_their_trust_and_keeps_the_rest(codex_home: Path) -> None:
    path, changed = codex.install("/opt/py/bin/python3")
    assert changed and path == str(codex_home / "hooks.json")
    data = json.loads((codex_home / "hooks.json").read_text())
    assert data["other"] == 1 and data["hooks"]["PreToolUse"] == USER_HOOKS["hooks"]["PreToolUse"]
    ups = data["hooks"]["UserPromptSubmit"]
    assert ups[0] == USER_HOOKS["hooks"]["UserPromptSubmit"][0]  # the user's hook keeps its place (and its trust key)
    assert ups[1]["hooks"][0]["command"] == f"/opt/py/bin/python3 -I -S {ENTRY['codex']} UserPromptSubmit"
    assert sorted(codex.EVENTS) == sorted(e for e in data["hooks"] if e != "PreToolUse")
    config = (codex_home / "config.toml").read_text()
    assert config.startswith(USER_CONFIG)  # the user's file is not rewritten, only appended to
    if tomllib is not None:
        state = tomllib.loads(config)["hooks"]["state"]
        key = f"{codex_home / 'hooks.json'}:user_prompt_submit:1:0"
        assert state[key]["trusted_hash"] == trust.trusted_hash("UserPromptSubmit", None, ups[1]["hooks"][0])
        assert state["/elsewhere/hooks.json:user_prompt_submit:0:0"] == {"trusted_hash": "sha256:mine"}
        assert len(state) == 1 + len(codex.EVENTS)
        assert state[f"{codex_home / 'hooks.json'}:session_end:0:0"]["trusted_hash"] == \
            trust.trusted_hash("SessionEnd", None, data["hooks"]["SessionEnd"][0]["hooks"][0])
    assert sorted(p.name for p in codex_home.iterdir()) == [
        "config.toml", "config.toml.memrepo-uninstall", "hooks.json", "hooks.json.memrepo-uninstall"]  # no .bak


def test_install_codex_twice_changes_nothing_and_a_new_interpreter_replaces_the_old(codex_home: Path) -> None:
    codex.install("/opt/a/python3")
    first = ((codex_home / "hooks.json").read_text(), (codex_home / "config.toml").read_text())
    assert codex.install("/opt/a/python3")[1] is False
    assert ((codex_home / "hooks.json").read_text(), (codex_home / "config.toml").read_text()) == first
    codex.install("/opt/b/python3")
    text = (codex_home / "hooks.json").read_text()
    assert "/opt/a/python3" not in text and text.count(codex.SCRIPT_MARK) == len(codex.EVENTS)
    config = (codex_home / "config.toml").read_text()
    assert config.count("trusted_hash") == 1 + len(codex.EVENTS)


def test_uninstall_codex_leaves_the_user_s_files_as_they_were(codex_home: Path) -> None:
    codex.install()
    path, changed = codex.uninstall()
    assert changed
    assert json.loads((codex_home / "hooks.json").read_text()) == USER_HOOKS
    assert (codex_home / "config.toml").read_text().rstrip("\n") == USER_CONFIG.rstrip("\n")
    assert codex.uninstall()[1] is False


def test_install_codex_replaces_a_trust_entry_written_elsewhere_for_its_own_hooks(codex_home: Path) -> None:
    """Trusting memrepo's hooks in Codex's /hooks screen writes the same key among the user's
    tables: a second table for it would make config.toml invalid TOML."""
    key = f"{codex_home / 'hooks.json'}:stop:0:0"
    mine = USER_CONFIG.replace("[projects.", f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:old"\n\n[projects.')
    (codex_home / "config.toml").write_text(mine)
    codex.install("/opt/b/python3")
    after = (codex_home / "config.toml").read_text()
    assert after.count(f"[hooks.state.{json.dumps(key)}]") == 1 and "sha256:old" not in after
    if tomllib is not None:
        tomllib.loads(after)


@pytest.mark.skipif(tomllib is None, reason="no TOML parser in this Python")
def test_a_broken_config_toml_is_refused_untouched(codex_home: Path) -> None:
    (codex_home / "config.toml").write_text("model = \n[[[", encoding="utf-8")
    hooks_before = (codex_home / "hooks.json").read_text()
    proc = cli("install", "codex", CODEX_HOME=str(codex_home))
    assert proc.returncode != 0 and "config.toml" in proc.stderr and "nothing was changed" in proc.stderr
    assert (codex_home / "config.toml").read_text() == "model = \n[[[" and (codex_home / "hooks.json").read_text() == hooks_before


def test_a_broken_hooks_json_is_refused_untouched(codex_home: Path) -> None:
    (codex_home / "hooks.json").write_text("{oops", encoding="utf-8")
    proc = cli("install", "codex", CODEX_HOME=str(codex_home))
    assert proc.returncode != 0 and "hooks.json is not valid JSON" in proc.stderr
    assert (codex_home / "hooks.json").read_text() == "{oops" and (codex_home / "config.toml").read_text() == USER_CONFIG


def test_install_codex_from_the_cli_into_a_fresh_codex_home(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    proc = cli("install", "codex", CODEX_HOME=str(home))
    assert proc.returncode == 0, proc.stderr
    assert f"installed memrepo hooks in {home / 'hooks.json'}" in proc.stdout and "/hooks" in proc.stderr
    assert cli("install", "codex", CODEX_HOME=str(home)).stdout.startswith("already installed in")
    assert (home / "config.toml").read_text().startswith("[hooks.state.")
    assert cli("uninstall", "codex", CODEX_HOME=str(home)).stdout == \
        f"removed memrepo hooks: {home / 'hooks.json'} is gone, as before memrepo's install made it\n"
    assert not home.exists()  # the files install made, and the folder it made for them, are gone


# -- Gemini -------------------------------------------------------------------------------------------


GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "hooks": {"BeforeAgent": [{"matcher": "*", "hooks": [{"type": "command", "name": "mine", "command": "ctx.sh"}]}]},
                   "hooksConfig": {"disabled": []}}


@pytest.fixture
def gemini_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "gemini-cli-home"
    (base / ".gemini").mkdir(parents=True)
    (base / ".gemini" / "settings.json").write_text(json.dumps(GEMINI_SETTINGS), encoding="utf-8")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(base))
    return base / ".gemini"


def test_install_gemini_adds_its_hooks_and_keeps_the_rest(gemini_home: Path) -> None:
    path, changed = gemini.install("/opt/py/bin/python3")
    assert changed and path == str(gemini_home / "settings.json")
    data = json.loads((gemini_home / "settings.json").read_text())
    assert data["security"] == GEMINI_SETTINGS["security"] and data["hooksConfig"] == GEMINI_SETTINGS["hooksConfig"]
    before_agent = data["hooks"]["BeforeAgent"]
    assert before_agent[0] == GEMINI_SETTINGS["hooks"]["BeforeAgent"][0]
    ours = before_agent[1]["hooks"][0]
    assert ours == {"type": "command", "name": "memrepo-BeforeAgent", "timeout": 10000,
                    "command": f"/opt/py/bin/python3 -I -S {ENTRY['gemini']} BeforeAgent"}
    assert sorted(data["hooks"]) == sorted(gemini.EVENTS)
    assert gemini.install("/opt/py/bin/python3")[1] is False
    assert gemini.uninstall()[1] is True
    assert json.loads((gemini_home / "settings.json").read_text()) == GEMINI_SETTINGS
    assert gemini.uninstall()[1] is False


def test_install_gemini_honours_gemini_cli_home_from_the_cli(tmp_path: Path) -> None:
    base = tmp_path / "gh"
    proc = cli("install", "gemini", GEMINI_CLI_HOME=str(base))
    assert proc.returncode == 0, proc.stderr
    assert f"installed memrepo hooks in {base / '.gemini' / 'settings.json'}" in proc.stdout
    assert gemini.SCRIPT_MARK in (base / ".gemini" / "settings.json").read_text()


def test_a_gemini_settings_file_with_comments_is_refused_untouched(gemini_home: Path) -> None:
    """Gemini CLI allows comments in settings.json; rewriting it would lose them."""
    text = '{\n  // my settings\n  "model": {"name": "x", "url": "https://a/b//c /* not a comment */"} /* mine */\n}\n'
    (gemini_home / "settings.json").write_text(text, encoding="utf-8")
    proc = cli("install", "gemini")
    assert proc.returncode != 0 and "settings.json has comments" in proc.stderr and "not valid JSON" not in proc.stderr
    block = json.loads(proc.stderr[proc.stderr.index("{"):])  # the block to paste, as valid JSON
    assert block == {"hooks": gemini.hooks_block(sys.executable)}
    assert (gemini_home / "settings.json").read_text() == text


def test_a_commented_gemini_settings_file_is_read_as_gemini_reads_it(repo: str, tmp_path: Path) -> None:
    """Doctor reads it (comments allowed); uninstall does not rewrite it and says what to remove."""
    env = {"CODEX_HOME": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    settings = tmp_path / "g" / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"ui": {"theme": "x"} // mine\n}\n', encoding="utf-8")
    assert _doctor(repo, **env) == []  # no memrepo hooks there, nothing wrong either
    assert cli("uninstall", "gemini", **env).stdout.startswith("no memrepo hooks in")
    pasted = {"ui": {"theme": "x"}, "hooks": gemini.hooks_block(sys.executable)}  # the block, pasted by hand
    text = "// mine\n" + json.dumps(pasted, indent=2) + "\n"
    settings.write_text(text, encoding="utf-8")
    [check] = _doctor(repo, **env)
    assert check["ok"] and "4 memrepo hooks" in check["detail"]
    proc = cli("uninstall", "gemini", **env)
    assert proc.returncode == 1 and "has comments" in proc.stderr and "memrepo-*" in proc.stderr
    assert settings.read_text(encoding="utf-8") == text


def test_doctor_style_check_sees_gemini_hooks_turned_off(gemini_home: Path) -> None:
    gemini.install()
    assert gemini.disabled_reason() == ""
    data = json.loads((gemini_home / "settings.json").read_text())
    data["hooksConfig"] = {"enabled": False}
    (gemini_home / "settings.json").write_text(json.dumps(data))
    assert "hooksConfig.enabled is false" in gemini.disabled_reason()


# -- doctor -------------------------------------------------------------------------------------------


def _doctor(repo: str, **env: str) -> list[dict]:
    proc = cli("--repo", repo, "doctor", "--json", **env)
    return [c for c in json.loads(proc.stdout) if c["name"] in ("codex hooks", "gemini hooks")]


def test_doctor_says_nothing_of_agents_memrepo_is_not_installed_in(repo: str, tmp_path: Path) -> None:
    assert _doctor(repo, CODEX_HOME=str(tmp_path / "c"), GEMINI_CLI_HOME=str(tmp_path / "g")) == []


@pytest.mark.skipif(tomllib is None, reason="no TOML parser in this Python")
def test_doctor_sees_codex_hooks_that_codex_would_skip(repo: str, tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    assert cli("install", "codex", **env).returncode == 0
    [check] = _doctor(repo, **env)
    assert check["ok"] and "5 memrepo hooks" in check["detail"] and "trusted" in check["detail"]
    config = tmp_path / "c" / "config.toml"
    config.write_text(config.read_text().replace('trusted_hash = "sha256:', 'trusted_hash = "sha256:0', 1))
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "not trusted" in check["detail"] and "memrepo install codex" in check["fix"]
    hooks = tmp_path / "c" / "hooks.json"
    hooks.write_text(hooks.read_text().replace(sys.executable, "/gone/venv/bin/python"))
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "/gone/venv/bin/python" in check["detail"]


def test_doctor_sees_gemini_hooks_turned_off(repo: str, tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    assert cli("install", "gemini", **env).returncode == 0
    [check] = _doctor(repo, **env)
    assert check["ok"] and "4 memrepo hooks" in check["detail"]
    settings = tmp_path / "g" / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "hooksConfig": {"enabled": False}}))
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "hooksConfig.enabled is false" in check["detail"]


# -- packaging ----------------------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parent.parent


def test_the_gemini_extension_registers_what_the_settings_install_does() -> None:
    import memrepo

    manifest = json.loads((ROOT / "gemini-extension" / "gemini-extension.json").read_text())
    assert manifest["name"] == "memrepo" and manifest["version"] == memrepo.__version__
    hooks = json.loads((ROOT / "gemini-extension" / "hooks" / "hooks.json").read_text())["hooks"]
    assert list(hooks) == list(gemini.EVENTS)
    for event, groups in hooks.items():
        [handler] = groups[0]["hooks"]
        assert handler == {"type": "command", "name": f"memrepo-{event}", "command": f"memrepo-hook gemini {event}",
                           "timeout": gemini.TIMEOUT_MS}


def test_memrepo_hook_dispatches_to_the_agent_s_entry_and_fails_open(repo: str) -> None:
    script = Path(sys.executable).parent / "memrepo-hook"
    if not script.exists():
        pytest.skip("memrepo-hook is not installed in this environment (pip install -e . makes it)")
    env = dict(os.environ, MEMREPO_DIR=repo)
    for args in (["gemini", "BeforeAgent"], ["codex", "UserPromptSubmit"], ["claude", "UserPromptSubmit"], ["nope"], []):
        proc = subprocess.run([str(script), *args], input=b'{"prompt": "ok, go ahead", "session_id": "s"}',
                              capture_output=True, env=env, timeout=60)
        assert proc.returncode == 0 and proc.stdout == b"", (args, proc.stderr)
    agents = [json.loads(line).get("agent", "claude") for line in open(os.path.join(repo, "index", "recall-log.jsonl"))]
    assert agents == ["gemini", "codex", "claude"]


def test_doctor_sees_gemini_wired_in_twice(repo: str, tmp_path: Path) -> None:
    import shutil

    env = {"CODEX_HOME": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    shutil.copytree(ROOT / "gemini-extension", tmp_path / "g" / ".gemini" / "extensions" / "memrepo")
    [check] = _doctor(repo, **env)
    assert "the memrepo extension in" in check["detail"]
    assert cli("install", "gemini", **env).returncode == 0
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "twice" in check["detail"] and "memrepo uninstall gemini" in check["fix"]


# -- the Codex plugin ---------------------------------------------------------------------------------


def test_the_codex_plugin_registers_what_the_settings_install_does() -> None:
    import memrepo

    manifest = json.loads((ROOT / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "memrepo" and manifest["version"] == memrepo.__version__
    assert manifest["hooks"] == "./" + codex.PLUGIN_HOOKS
    hooks = json.loads((ROOT / codex.PLUGIN_HOOKS).read_text())["hooks"]
    assert {e: g[0]["hooks"][0]["timeout"] for e, g in hooks.items()} == codex.EVENTS
    for event, groups in hooks.items():
        assert groups[0]["hooks"][0]["command"] == f'sh "${{PLUGIN_ROOT}}/hooks/run" codex {event}'


def test_install_codex_plugin_trusts_the_plugin_s_hooks_only(codex_home: Path) -> None:
    proc = cli("install", "codex", "--plugin", CODEX_HOME=str(codex_home))
    assert proc.returncode == 0 and "trusted the hooks of memrepo@memrepo" in proc.stdout, proc.stderr
    assert json.loads((codex_home / "hooks.json").read_text()) == USER_HOOKS  # no hooks added
    config = (codex_home / "config.toml").read_text()
    assert config.startswith(USER_CONFIG) and config.count('[hooks.state."memrepo@memrepo:') == len(codex.EVENTS)
    if tomllib is not None:
        state = tomllib.loads(config)["hooks"]["state"]
        key = "memrepo@memrepo:hooks/codex.json:user_prompt_submit:0:0"
        handler = json.loads((ROOT / codex.PLUGIN_HOOKS).read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
        assert state[key]["trusted_hash"] == trust.trusted_hash("UserPromptSubmit", None, handler)
    again = cli("install", "codex", "--plugin", CODEX_HOME=str(codex_home))
    assert again.stdout.startswith("already trusted") and (codex_home / "config.toml").read_text() == config
    other = cli("install", "codex", "--plugin", "--marketplace", "team", CODEX_HOME=str(codex_home))
    assert "memrepo@team:hooks/codex.json:stop:0:0" in (codex_home / "config.toml").read_text(), other.stderr
    assert "memrepo@memrepo:" not in (codex_home / "config.toml").read_text()  # one plugin block, the newest
    assert cli("uninstall", "codex", CODEX_HOME=str(codex_home)).returncode == 0
    assert (codex_home / "config.toml").read_text().rstrip("\n") == USER_CONFIG.rstrip("\n")


@pytest.mark.skipif(tomllib is None, reason="no TOML parser in this Python")
def test_doctor_sees_the_codex_plugin_untrusted_or_wired_in_twice(repo: str, tmp_path: Path) -> None:
    env = {"CODEX_HOME": str(tmp_path / "c"), "GEMINI_CLI_HOME": str(tmp_path / "g")}
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.toml").write_text('[plugins."memrepo@memrepo"]\nenabled = true\n')
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "not trusted" in check["detail"] and "install codex --plugin" in check["fix"]
    assert cli("install", "codex", "--plugin", **env).returncode == 0
    [check] = _doctor(repo, **env)
    assert check["ok"] and "its 5 hooks trusted" in check["detail"]
    assert cli("install", "codex", **env).returncode == 0
    [check] = _doctor(repo, **env)
    assert not check["ok"] and "twice" in check["detail"]


def test_an_install_of_the_earlier_m_form_is_replaced(codex_home: Path, gemini_home: Path) -> None:
    """Hooks written as `python -I -m memrepo.agents.<agent>.entry EVENT` are still memrepo's."""
    old = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/old/python -I -m memrepo.agents.codex.entry Stop"}]}]}}
    (codex_home / "hooks.json").write_text(json.dumps(old))
    codex.install("/new/python")
    text = (codex_home / "hooks.json").read_text()
    assert "/old/python" not in text and text.count(codex.SCRIPT_MARK) == len(codex.EVENTS)
    old = {"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "/old/python -I -m memrepo.agents.gemini.entry AfterAgent"}]}]}}
    (gemini_home / "settings.json").write_text(json.dumps(old))
    gemini.install("/new/python")
    text = (gemini_home / "settings.json").read_text()
    assert "/old/python" not in text and text.count(gemini.SCRIPT_MARK) == len(gemini.EVENTS)
    assert gemini.uninstall()[1] and json.loads((gemini_home / "settings.json").read_text()) == {}


# -- exact installs: uninstall gives back what install found (issue 39; issue 38, part 9) ---------------


TRICKY_TOML = '''# my codex settings
model = "gpt-5"   # the good one
notes = """
# >>> memrepo: trust for memrepo's hooks in hooks.json (memrepo install codex; uninstall removes it)
[hooks.state."{key}"]
trusted_hash = "sha256:in-a-string"
# <<< memrepo
"""

[hooks.state."/elsewhere/hooks.json:user_prompt_submit:0:0"]
trusted_hash = "sha256:mine"
'''
PRIOR = {  # each with formatting json.dumps would not write
    "settings.json": '{\n    "model": "opus",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}',
    "hooks.json": '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]}}',
}
AGENT_FILES = {"claude": (".claude", ["settings.json"]), "codex": (".codex", ["hooks.json", "config.toml"]),
               "gemini": (".gemini", ["settings.json"])}


def _prior(home: Path, name: str) -> str:
    key = f"{home / '.codex' / 'hooks.json'}:stop:0:0"  # the key memrepo's Stop hook gets
    return TRICKY_TOML.replace("{key}", key) if name == "config.toml" else PRIOR[name]


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and folder under `folder`: its bytes (b"" for a folder) and mode."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode & 0o7777)
            for p in sorted(folder.rglob("*"))}


def _run(*args: str) -> str:
    from click.testing import CliRunner

    from memrepo.cli.main import cli as main

    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
@pytest.mark.parametrize("prior", [False, True], ids=["no-prior-file", "prior-file"])
def test_install_then_uninstall_gives_back_every_byte_and_mode(isolated_env: str, agent: str, prior: bool) -> None:
    home = Path(isolated_env)
    folder, names = AGENT_FILES[agent]
    if prior:
        (home / folder).mkdir(mode=0o750)
        for n, name in enumerate(names):
            (home / folder / name).write_text(_prior(home, name), encoding="utf-8")
            (home / folder / name).chmod([0o640, 0o604][n])
    before = _tree(home)
    _run("install", agent)
    for name in names:
        assert (home / folder / name).exists()
        if prior:  # the user's mode, kept while installed
            assert (home / folder / name).stat().st_mode & 0o777 == before[f"{folder}/{name}"][1]
    _run("uninstall", agent)
    assert _tree(home) == before  # no `{}` file, no .bak, no record, no folder left; modes as they were


def _edit(path: Path) -> None:
    """A person's edit between install and uninstall, in their own formatting, and a new mode."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        path.write_text('approval_policy = "never"  # added by hand\n' + text, encoding="utf-8")
    else:
        path.write_text(json.dumps({"theme": "dark", **json.loads(text)}, indent=4), encoding="utf-8")
    path.chmod(0o604)


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
@pytest.mark.parametrize("prior", [False, True], ids=["no-prior-file", "prior-file"])
def test_an_edit_between_install_and_uninstall_is_kept(isolated_env: str, agent: str, prior: bool) -> None:
    home = Path(isolated_env)
    folder, names = AGENT_FILES[agent]
    if prior:
        (home / folder).mkdir()
        for name in names:
            (home / folder / name).write_text(_prior(home, name), encoding="utf-8")
    _run("install", agent)
    for name in names:
        _edit(home / folder / name)
    _run("uninstall", agent)
    assert sorted(p.name for p in (home / folder).iterdir()) == sorted(names)  # no record, no .bak
    for name in names:
        path = home / folder / name
        after = path.read_text(encoding="utf-8")
        assert path.stat().st_mode & 0o777 == 0o604
        if name == "config.toml":
            original = _prior(home, name) if prior else ""
            assert after == 'approval_policy = "never"  # added by hand\n' + original  # the string and comments too
        else:
            assert json.loads(after) == {"theme": "dark", **(json.loads(_prior(home, name)) if prior else {})}


def test_a_toml_multi_line_string_holding_memrepo_s_marker_text_is_never_edited(isolated_env: str) -> None:
    """Issue 38, part 9: the string holds the markers of earlier installs and a table header with
    the very key memrepo's Stop hook gets; install and uninstall read it as the string it is."""
    home = Path(isolated_env)
    (home / ".codex").mkdir()
    config = home / ".codex" / "config.toml"
    config.write_text(_prior(home, "config.toml"), encoding="utf-8")
    (home / ".codex" / "hooks.json").write_text(PRIOR["hooks.json"], encoding="utf-8")
    _run("install", "codex")
    installed = config.read_text(encoding="utf-8")
    assert installed.startswith(_prior(home, "config.toml"))
    if tomllib is not None:
        state = tomllib.loads(installed)["hooks"]["state"]
        assert state[f"{home / '.codex' / 'hooks.json'}:stop:0:0"]["trusted_hash"] != "sha256:in-a-string"
    config.write_text(installed + "\n# a note of mine\n", encoding="utf-8")  # edited: uninstall must parse, not restore
    _run("uninstall", "codex")
    assert config.read_text(encoding="utf-8").startswith(_prior(home, "config.toml"))
    assert "# a note of mine" in config.read_text(encoding="utf-8") and "memrepo" not in config.read_text().split('"""')[-1]


def test_an_earlier_install_s_marked_block_is_replaced(codex_home: Path) -> None:
    """Installs before tomlkit wrote their tables between marker comments: the next install takes
    out the markers and the old tables, and uninstall leaves the user's file."""
    legacy = (USER_CONFIG + "\n" + codex.LEGACY_MARKERS[0] + "\n"
              f'[hooks.state.{json.dumps(str(codex_home / "hooks.json") + ":stop:0:0")}]\ntrusted_hash = "sha256:old"\n'
              + codex.LEGACY_MARKERS[2] + "\n")
    (codex_home / "config.toml").write_text(legacy, encoding="utf-8")
    codex.install("/opt/py/python3")
    text = (codex_home / "config.toml").read_text()
    assert not any(marker in text for marker in codex.LEGACY_MARKERS) and "sha256:old" not in text
    codex.uninstall()
    if tomllib is not None:
        assert tomllib.loads((codex_home / "config.toml").read_text()) == tomllib.loads(USER_CONFIG)


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
def test_the_install_message_names_the_file_and_the_commands_written(isolated_env: str, agent: str) -> None:
    home = Path(isolated_env)
    folder, names = AGENT_FILES[agent]
    out = _run("install", agent).splitlines()
    path = home / folder / names[0]
    assert out[0] == f"installed memrepo hooks in {path}:"
    hooks = json.loads(path.read_text())["hooks"]
    written = {event: " ".join([h["command"], *h.get("args", [])]) for event, groups in hooks.items()
               for h in groups[0]["hooks"]}
    assert out[1:1 + len(written)] == [f"  {event}: {cmd}" for event, cmd in written.items()]
    rest = out[1 + len(written):]
    if agent == "codex":
        assert rest.pop(0) == f"and trusted them in {home / folder / 'config.toml'} ({len(codex.EVENTS)} [hooks.state] tables)"
    for name in names:
        assert f"what uninstall gives back of {name} is kept in {home / folder / name}.memrepo-uninstall" in rest


def test_a_settings_file_that_is_a_link_stays_a_link(isolated_env: str) -> None:
    """Dotfiles often link ~/.claude/settings.json into a repository: written through, never replaced."""
    home = Path(isolated_env)
    target = home / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    target.write_text(PRIOR["settings.json"], encoding="utf-8")
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(target)
    before = _tree(home)
    _run("install", "claude")
    assert (home / ".claude" / "settings.json").is_symlink() and codex.SCRIPT_MARK not in target.read_text()
    assert claudeinstall.SCRIPT_MARK in target.read_text()
    _run("uninstall", "claude")
    assert _tree(home) == before and (home / ".claude" / "settings.json").is_symlink()


def test_an_edit_then_a_second_install_then_uninstall_keeps_the_edit(codex_home: Path) -> None:
    codex.install("/opt/a/python3")
    hooks = codex_home / "hooks.json"
    hooks.write_text(json.dumps({"theme": "dark", **json.loads(hooks.read_text())}), encoding="utf-8")
    codex.install("/opt/b/python3")  # memrepo's entries move to the new interpreter; the edit stays
    codex.uninstall()
    assert json.loads(hooks.read_text()) == {"theme": "dark", **USER_HOOKS}
    assert (codex_home / "config.toml").read_text() == USER_CONFIG  # untouched by the user: exact


@pytest.mark.parametrize("agent, name", [("codex", "config.toml"), ("codex", "hooks.json"), ("claude", "settings.json")])
def test_a_settings_file_that_is_not_utf8_is_refused_untouched(isolated_env: str, agent: str, name: str) -> None:
    from click.testing import CliRunner

    from memrepo.cli.main import cli as main

    folder = Path(isolated_env) / AGENT_FILES[agent][0]
    folder.mkdir()
    (folder / name).write_bytes(b'model = "caf\xe9"\n')
    before = _tree(Path(isolated_env))
    result = CliRunner().invoke(main, ["install", agent], catch_exceptions=False)
    assert result.exit_code == 1 and f"{folder / name} is not UTF-8 text" in result.output
    assert "save the file as UTF-8" in result.output and _tree(Path(isolated_env)) == before
