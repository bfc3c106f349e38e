"""Drive the memrepo Codex plugin end to end inside a network namespace of its own.

A Codex plugin's hooks load only with Codex's plugins feature on, and that feature syncs the
curated plugin marketplace from github.com at every start (CODEX-NOTES.md §7). So this script
runs under `unshare -n` (loopback only) with the fake OpenAI API in the same namespace:

    unshare -n sh -c 'ip link set lo up && exec python codex_plugin_netns.py SPEC OUT'

SPEC is a JSON file: {"codex", "plugin_src", "memory_repo", "root", "prompts"}. The script
adds the plugin the way a user does (`codex plugin marketplace add`, `codex plugin add`,
`memrepo install codex --plugin`), runs `codex exec` once per prompt, and writes OUT:
{"steps": [{"cmd", "rc", "stderr"}], "seen": [text the model saw, one per prompt]}.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from e2e import agents  # noqa: E402
from e2e.fake_openai import FakeOpenAIAPI, input_text  # noqa: E402


def main(spec_path: str, out_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    steps: list[dict[str, object]] = []
    seen: list[str] = []
    with FakeOpenAIAPI("Use the vault command from the note.") as api:
        home = agents.codex_home(Path(spec["root"]), api.base_url)
        config = home.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace("plugins = false", "plugins = true"))
        env = agents.codex_env(home, {"MEMREPO_DIR": spec["memory_repo"]})
        for cmd in ([spec["codex"], "plugin", "marketplace", "add", spec["plugin_src"]],
                    [spec["codex"], "plugin", "add", "memrepo@memrepo"],
                    [sys.executable, "-m", "memrepo", "install", "codex", "--plugin"]):
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
            steps.append({"cmd": cmd[1:4], "rc": proc.returncode, "stderr": proc.stderr[-2000:]})
            if proc.returncode != 0:
                break
        else:
            work = Path(spec["root"]) / "project"
            work.mkdir(exist_ok=True)
            for prompt in spec["prompts"]:
                api.clear()
                proc = agents.run_codex(home, prompt, work, env_extra={"MEMREPO_DIR": spec["memory_repo"]},
                                        codex=spec["codex"])
                steps.append({"cmd": ["exec", prompt], "rc": proc.returncode, "stderr": proc.stderr[-2000:]})
                seen.append("\n".join(input_text(r.body) for r in api.requests))
    Path(out_path).write_text(json.dumps({"steps": steps, "seen": seen}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
