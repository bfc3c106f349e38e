"""Running the real Codex CLI and Gemini CLI offline, against fake model APIs on 127.0.0.1.

Both CLIs are pinned in tests/e2e/agents/<name>/package.json and installed once into a cache
outside the repo by tests/e2e/install_cli.sh. The settings that keep each CLI offline (every
request to the fake, no telemetry, no plugin sync, no update check) are the ones measured with
strace in CODEX-NOTES.md §1 and GEMINI-NOTES.md §1.

Each run gets a home of its own (`AgentHome`); `memrepo install codex|gemini` is run into it
by the test, the way a user would, so the hooks under test are the installed ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from e2e import harness
from e2e.harness import GIT_IDENTITY_ENV, _run_tree

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 240
_PASSTHROUGH_ENV = ("LANG", "LC_ALL", "TZ", "TMPDIR", "SYSTEMROOT")


def version(name: str) -> str:
    pkg = {"codex": "@openai/codex", "gemini": "@google/gemini-cli"}[name]
    return json.loads((HERE / "agents" / name / "package.json").read_text())["dependencies"][pkg]


def binary(name: str) -> str:
    """The pinned CLI's path (installed on first use), or skip / fail as `harness.binary` does."""
    return harness.binary(name, f"{name} CLI {version(name)}")


@dataclass
class AgentHome:
    """A user's home for one agent: HOME, the agent's config dir, and the environment to run in."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: os.environ[k] for k in _PASSTHROUGH_ENV if k in os.environ}
        # The interpreter running the tests (memrepo installed) comes first, as on a user's PATH.
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH") or os.defpath])
        env.update(GIT_IDENTITY_ENV)
        env.update({"HOME": str(self.home), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
                    "PYTHONDONTWRITEBYTECODE": "1"})
        if extra:
            env.update(extra)
        return env


# -- Codex CLI ------------------------------------------------------------------------------------


CODEX_KEY_ENV = "FAKE_OPENAI_KEY"


def codex_home(root: Path, base_url: str) -> AgentHome:
    """A home whose $CODEX_HOME/config.toml talks only to the fake at `base_url` (CODEX-NOTES.md §1)."""
    home = AgentHome(root)
    (home.home / ".codex").mkdir(parents=True, exist_ok=True)
    (home.home / ".codex" / "config.toml").write_text(f'''model = "gpt-fake"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake"
base_url = "{base_url}/v1"
env_key = "{CODEX_KEY_ENV}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false

[analytics]
enabled = false
''', encoding="utf-8")
    return home


def codex_env(home: AgentHome, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return home.env({"CODEX_HOME": str(home.home / ".codex"), CODEX_KEY_ENV: "sk-fake-dummy", **(extra or {})})


def run_codex(home: AgentHome, prompt: str, cwd: Path, *, env_extra: Mapping[str, str] | None = None,
              resume: str | None = None, extra_args: Sequence[str] = (), timeout: float = RUN_TIMEOUT,
              codex: str | None = None) -> subprocess.CompletedProcess[str]:
    """`codex exec --skip-git-repo-check [resume <session>] <prompt>` with stdin from /dev/null
    (`codex`: the binary, when the caller has it already)."""
    cmd = [codex or binary("codex"), "exec", "--skip-git-repo-check", *extra_args]
    cmd += ["resume", resume, prompt] if resume else [prompt]
    return _run_tree(cmd, cwd, codex_env(home, env_extra), timeout)


# -- Gemini CLI -----------------------------------------------------------------------------------


def gemini_home(root: Path) -> AgentHome:
    """A home whose settings keep Gemini CLI offline but for the fake (GEMINI-NOTES.md §1)."""
    home = AgentHome(root)
    (home.home / ".gemini").mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "ide": {"enabled": False},
        "model": {"name": "gemini-2.5-flash"},
    }
    (home.home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return home


def gemini_env(home: AgentHome, base_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return home.env({"GEMINI_CLI_HOME": str(home.home), "GEMINI_API_KEY": "dummy-gemini-key",
                     "GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_CLI_NO_RELAUNCH": "true", **(extra or {})})


def run_gemini(home: AgentHome, prompt: str, cwd: Path, base_url: str, *, env_extra: Mapping[str, str] | None = None,
               extra_args: Sequence[str] = (), timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """`gemini -p <prompt>` (stdin /dev/null: a piped stdin is glued to the prompt)."""
    cmd = [binary("gemini"), *extra_args, "-p", prompt]
    return _run_tree(cmd, cwd, gemini_env(home, base_url, env_extra), timeout)


# -- memrepo inside those homes ---------------------------------------------------------------------


def memrepo(env: Mapping[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m memrepo ARGS` in an agent's environment (its config-dir variables set)."""
    proc = subprocess.run([sys.executable, "-m", "memrepo", *args], env=dict(env), cwd=cwd, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"memrepo {' '.join(args)}: {proc.stdout}\n{proc.stderr}"
    return proc
