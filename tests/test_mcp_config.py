"""`memoryd mcp --print-config CLIENT`: each block parses in its client's format and starts a
server that answers (run the way the client would run it)."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memoryd.cli import main
from tests.support.servers import daemon_env

JSON_CLIENTS = ("claude-desktop", "cursor", "gemini")


def print_config(client: str, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(["mcp", "--print-config", client]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(f"# {client}: ")  # where it goes, kept off stdout so stdout pastes as is
    return captured.out, captured.err


def entries(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    found = [json.loads(print_config(client, capsys)[0])["mcpServers"]["memoryd"] for client in JSON_CLIENTS]
    return found + [tomllib.loads(print_config("codex", capsys)[0])["mcp_servers"]["memoryd"]]


def test_each_block_parses_and_starts_a_working_server(
    home: Path, project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_HOME", str(home))
    found = entries(capsys)
    assert all(e == found[0] for e in found), found
    entry = found[0]
    assert entry["command"] == sys.executable and entry["args"] == ["-m", "memoryd", "mcp"]
    assert entry["env"] == {"MEMORYD_HOME": str(home)}

    async def scenario() -> None:
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"], env={**daemon_env(home), **entry["env"]}, cwd=str(project)
        )
        async with Client(params) as client:
            assert "memory_save" in {t.name for t in (await client.list_tools()).tools}

    anyio.run(scenario)


def test_no_env_block_without_memoryd_home(capsys: pytest.CaptureFixture[str]) -> None:
    assert all("env" not in entry for entry in entries(capsys))


def test_claude_code_block_is_a_command(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORYD_HOME", str(home))
    out, _ = print_config("claude-code", capsys)
    assert (
        out.strip() == f"claude mcp add --scope user memoryd -e MEMORYD_HOME={home} -- {sys.executable} -m memoryd mcp"
    )


def test_unknown_client_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["mcp", "--print-config", "vim"])
    assert exited.value.code == 2 and "invalid choice: 'vim'" in capsys.readouterr().err
