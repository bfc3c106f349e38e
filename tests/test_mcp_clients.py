"""`memrepo install cursor|vscode|claude-desktop|windsurf`: the MCP server entry in each client's
own config file, exact and reversible (uninstall restores bytes and mode, or deletes what it made)."""

from __future__ import annotations

import json
import os
import stat
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from memrepo.agents import mcp_clients
from memrepo.cli.main import cli

CLIENTS = ["cursor", "vscode", "claude-desktop", "windsurf"]
OTHER = b'{\n    "mcpServers": {"other": {"command": "other-server"}},\n    "servers": {"other": {"command": "x"}}, "theme": 1\n}'


def run(repo: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("client", CLIENTS)
def test_install_into_a_new_file_and_uninstall_deletes_it_and_its_folders(repo: str, isolated_env: str,
                                                                          client: str) -> None:
    path = mcp_clients.config_path(client)
    assert path.startswith(isolated_env + os.sep)
    before = sorted(os.listdir(isolated_env))
    assert "added memrepo mcp to" in run(repo, "install", client).output
    data = json.loads(read(path))
    key = "servers" if client == "vscode" else "mcpServers"
    want = {"command": sys.executable, "args": ["-m", "memrepo", "--repo", repo, "mcp"]}
    assert data == {key: {"memrepo": {"type": "stdio", **want} if client == "vscode" else want}}
    assert "already in" in run(repo, "install", client).output
    assert "deleted" in run(repo, "uninstall", client).output
    assert not os.path.exists(path) and not os.path.exists(path + mcp_clients.SUFFIX)
    assert sorted(os.listdir(isolated_env)) == before


@pytest.mark.parametrize("client", CLIENTS)
def test_uninstall_restores_an_existing_files_bytes_and_mode(repo: str, client: str) -> None:
    path = mcp_clients.config_path(client)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(OTHER)
    os.chmod(path, 0o600)
    run(repo, "install", client)
    data = json.loads(read(path))
    key = "servers" if client == "vscode" else "mcpServers"
    assert sorted(data[key]) == ["memrepo", "other"] and data["theme"] == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert "restored" in run(repo, "uninstall", client).output
    assert read(path) == OTHER and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert not os.path.exists(path + mcp_clients.SUFFIX)


def test_a_file_changed_since_install_loses_only_the_memrepo_entry(repo: str) -> None:
    path = mcp_clients.config_path("cursor")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as fh:
        fh.write(OTHER)
    run(repo, "install", "cursor")
    data = json.loads(read(path))
    data["mcpServers"]["added-later"] = {"command": "later"}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    assert "it changed since install; the rest is kept" in run(repo, "uninstall", "cursor").output
    assert sorted(json.loads(read(path))["mcpServers"]) == ["added-later", "other"]
    assert "no memrepo entry" in run(repo, "uninstall", "cursor").output


def test_a_second_install_with_another_repository_keeps_the_first_original(repo: str, tmp_path: Any) -> None:
    path = mcp_clients.config_path("windsurf")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as fh:
        fh.write(OTHER)
    run(repo, "install", "windsurf")
    other = os.path.join(str(tmp_path), "team")
    from memrepo.store import repoinit

    repoinit.init(other)
    run(other, "install", "windsurf")
    assert json.loads(read(path))["mcpServers"]["memrepo"]["args"][3] == other
    run(repo, "uninstall", "windsurf")
    assert read(path) == OTHER


@pytest.mark.parametrize("client,text", [("vscode", b"// my servers\n{}"), ("claude-desktop", b"[1, 2]"),
                                         ("cursor", b'{"mcpServers": []}')])
def test_a_file_memrepo_cannot_read_is_left_alone(repo: str, client: str, text: bytes) -> None:
    path = mcp_clients.config_path(client)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(text)
    result = run(repo, "install", client, code=1)
    assert "fix" in result.output
    assert read(path) == text and not os.path.exists(path + mcp_clients.SUFFIX)
