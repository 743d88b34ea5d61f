"""What `memoryd setup` (or the user, from `memoryd mcp --print-config claude-code`) put into Claude Code, found and
taken out for `memoryd uninstall`: the plugin and its marketplace, settings-file hooks, the user-scope MCP server.

Claude Code's own CLI removes what it recorded (its plugin and MCP files are its own); memoryd edits only the
settings files whose hooks it wrote, through the same code that wrote them (integrations/claude_code.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from memoryd.integrations.claude_code import Scope, installed_scopes, settings_path, uninstall_hooks
from memoryd.integrations.claude_plugin import MARKETPLACE_NAME, PLUGIN_ID, uninstall_commands
from memoryd.integrations.settings_files import read_settings
from memoryd.mcp.configs import SERVER_KEY

CLAUDE_CLI_TIMEOUT_SECONDS = 120
PLUGINS_DIRNAME = "plugins"
INSTALLED_PLUGINS = "installed_plugins.json"  # Claude Code's record of installed plugins, under ~/.claude/plugins/
KNOWN_MARKETPLACES = "known_marketplaces.json"
USER_STATE_FILENAME = ".claude.json"  # Claude Code's user state: `claude mcp add --scope user` servers live here
NOT_THERE = ("not found", "no mcp server named")  # what `claude` says when asked to remove what it does not have


@dataclass(frozen=True, kw_only=True)
class Removal:
    """One thing to take out of Claude Code: what it is, where it was found, and the `claude` command that removes
    it (None: memoryd removes it itself)."""

    what: str
    where: str
    command: list[str] | None = None
    settings_file: Path | None = None


def _claude_dir(env: Mapping[str, str]) -> Path:
    return settings_path("user", Path.cwd(), dict(env)).parent


def _user_state(env: Mapping[str, str]) -> Path:
    """`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json` when that is set."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser() / USER_STATE_FILENAME
    return Path(env.get("HOME") or Path.home()) / USER_STATE_FILENAME


def _names(data: Any, *keys: str) -> set[str]:
    """The keys of the object at data[keys[0]][keys[1]]... (an empty set when any level is not an object)."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return set(data) if isinstance(data, dict) else set()


def plugin_removals(claude: str, env: Mapping[str, str]) -> list[Removal]:
    """The memoryd plugin and its marketplace, where Claude Code's files record them."""
    base = _claude_dir(env)
    user = read_settings(base / "settings.json")
    plugins = read_settings(base / PLUGINS_DIRNAME / INSTALLED_PLUGINS)
    markets = read_settings(base / PLUGINS_DIRNAME / KNOWN_MARKETPLACES)
    plugin_cmd, market_cmd = uninstall_commands(claude)
    found = []
    if PLUGIN_ID in _names(plugins, "plugins") | _names(user, "enabledPlugins"):
        found.append(Removal(what=f"the plugin {PLUGIN_ID}", where=str(base / PLUGINS_DIRNAME), command=plugin_cmd))
    if MARKETPLACE_NAME in set(markets) | _names(user, "extraKnownMarketplaces"):
        found.append(Removal(what=f"the marketplace {MARKETPLACE_NAME}", where=str(base), command=market_cmd))
    return found


def mcp_removal(claude: str, env: Mapping[str, str]) -> Removal | None:
    """The user-scope MCP server `claude mcp add --scope user memoryd ...` wrote, when it runs memoryd."""
    path = _user_state(env)
    server = (read_settings(path).get("mcpServers") or {}).get(SERVER_KEY)
    if not isinstance(server, dict) or "memoryd" not in " ".join(
        map(str, [server.get("command"), *server.get("args", [])])
    ):
        return None
    return Removal(
        what=f"the MCP server {SERVER_KEY}",
        where=str(path),
        command=[claude, "mcp", "remove", "--scope", "user", SERVER_KEY],
    )


def hook_removals(cwd: Path, env: Mapping[str, str]) -> list[Removal]:
    """Settings files holding memoryd's hooks (`hooks --install` or setup): the user's and this project's."""
    paths = [settings_path(cast("Scope", scope), cwd, dict(env)) for scope in installed_scopes(cwd, dict(env))]
    return [Removal(what="memoryd's hooks", where=str(path), settings_file=path) for path in paths]


def remove(removal: Removal, env: Mapping[str, str]) -> str | None:
    """Take one thing out; None when done, else what went wrong in its own words."""
    if removal.settings_file is not None:
        uninstall_hooks(removal.settings_file)  # only memoryd's entries; the file as first found stays as a backup
        return None
    assert removal.command is not None
    try:
        proc = subprocess.run(
            removal.command,
            capture_output=True,
            text=True,
            timeout=CLAUDE_CLI_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
            env=dict(env),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{' '.join(removal.command)}` could not run ({exc.__class__.__name__})"
    said = (proc.stderr or proc.stdout).strip()
    if proc.returncode == 0 or any(gone in said.lower() for gone in NOT_THERE):
        return None
    last = said.splitlines()[-1] if said else f"exit {proc.returncode}"
    return f"`{' '.join(removal.command)}` failed ({last})"
