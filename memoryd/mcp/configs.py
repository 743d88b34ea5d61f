"""`memoryd mcp --print-config CLIENT`: the exact block each agent needs to start `memoryd mcp`."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable

SERVER_KEY = "memoryd"


def mcp_command() -> list[str]:
    """How to start this very install's stdio server: the venv's python running the package (no PATH needed)."""
    return [sys.executable, "-m", "memoryd", "mcp"]


def _env() -> dict[str, str]:
    """Carry a non-default MEMORYD_HOME, so the server finds the daemon this shell uses."""
    home = os.environ.get("MEMORYD_HOME")
    return {"MEMORYD_HOME": home} if home else {}


def _server_entry() -> dict[str, object]:
    command, *args = mcp_command()
    return {"command": command, "args": args} | ({"env": _env()} if _env() else {})


def _json_block() -> str:
    return json.dumps({"mcpServers": {SERVER_KEY: _server_entry()}}, indent=2)


def claude_code() -> str:
    env = "".join(f" -e {k}={shlex.quote(v)}" for k, v in _env().items())
    # The name goes before -e: `-e` takes several values and would swallow it.
    return f"claude mcp add --scope user {SERVER_KEY}{env} -- {shlex.join(mcp_command())}"


def codex() -> str:
    command, *args = mcp_command()
    lines = [f"[mcp_servers.{SERVER_KEY}]", f"command = {json.dumps(command)}", f"args = {json.dumps(args)}"]
    if _env():
        lines.append("env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in _env().items()) + " }")
    return "\n".join(lines)


# client -> (where the block goes, the block)
CLIENTS: dict[str, tuple[str, Callable[[], str]]] = {
    "claude-code": ("run in a shell (then `claude mcp list` shows memoryd)", claude_code),
    "claude-desktop": ("merge into claude_desktop_config.json (Settings > Developer > Edit Config)", _json_block),
    "cursor": ("merge into ~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project)", _json_block),
    "codex": ("append to ~/.codex/config.toml", codex),
    "gemini": ("merge into ~/.gemini/settings.json (or .gemini/settings.json in a project)", _json_block),
}


def print_config(client: str) -> tuple[str, str]:
    """(where it goes, the block) for one client."""
    where, render = CLIENTS[client]
    return where, render()
