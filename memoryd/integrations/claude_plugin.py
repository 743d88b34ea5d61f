"""memoryd's Claude Code plugin (`plugin/` in the repository, listed by `.claude-plugin/marketplace.json`):
is it enabled, and the `claude plugin` commands that add, install and remove it.

The plugin's hooks run `memoryd hook claude-code` (`memoryd.cli.hook`); the settings-file hooks of
`memoryd hooks --install` are the other way in, and the two must never both answer one event.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Mapping

PLUGIN_NAME = "memoryd"
MARKETPLACE_NAME = "memoryd"  # `name` in .claude-plugin/marketplace.json
PLUGIN_ID = f"{PLUGIN_NAME}@{MARKETPLACE_NAME}"


def _settings_files(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    from memoryd.integrations.claude_code import settings_path

    return [settings_path(scope, cwd, dict(env)) for scope in ("user", "project", "local")]  # type: ignore[arg-type]


def plugin_enabled(cwd: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The settings files that enable a `memoryd@…` plugin (from any marketplace), nearest last."""
    env = os.environ if env is None else env
    found = []
    for path in _settings_files(cwd, env):
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            continue
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(enabled, dict) and any(k.split("@", 1)[0] == PLUGIN_NAME and v for k, v in enabled.items()):
            found.append(str(path))
    return found


def marketplace_root() -> Path | None:
    """The repository folder holding `.claude-plugin/marketplace.json` when memoryd runs from a clone
    (or an editable install); None for a wheel install, which must name the repository instead."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / ".claude-plugin" / "marketplace.json").is_file() else None


def install_commands(claude: str, source: str) -> list[list[str]]:
    """`claude plugin` commands that add the marketplace at `source` (a folder, git URL or owner/repo) and install the plugin."""
    return [[claude, "plugin", "marketplace", "add", source], [claude, "plugin", "install", PLUGIN_ID]]


def uninstall_commands(claude: str) -> list[list[str]]:
    return [[claude, "plugin", "uninstall", PLUGIN_ID], [claude, "plugin", "marketplace", "remove", MARKETPLACE_NAME]]
