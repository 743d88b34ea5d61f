"""Service unit text for `memoryd install-service`: a systemd user unit or a launchd agent."""

from __future__ import annotations

import os
import platform
import shlex
import sys
from pathlib import Path
from typing import Any

from memoryd.config import Settings

LAUNCHD_LABEL = "dev.memoryd.daemon"
SYSTEMD_UNIT_NAME = "memoryd.service"


def memoryd_command() -> list[str]:
    """How to start this very install: the venv's python running the package."""
    return [sys.executable, "-m", "memoryd", "serve"]


def systemd_unit(settings: Settings) -> str:
    exec_start = " ".join(shlex.quote(part) for part in memoryd_command())
    return f"""[Unit]
Description=memoryd: local memory for coding agents
After=default.target

[Service]
Type=simple
ExecStart={exec_start}
Environment=MEMORYD_HOME={settings.home}
Restart=on-failure
RestartSec=3
# memoryd binds 127.0.0.1 and keeps everything under MEMORYD_HOME.
NoNewPrivileges=true
PrivateTmp=true

[Install]
WantedBy=default.target
"""


def launchd_plist(settings: Settings) -> str:
    args = "\n".join(f"        <string>{part}</string>" for part in memoryd_command())
    log = settings.home / "logs" / "memoryd.launchd.log"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{LAUNCHD_LABEL}</string>
    <key>ProgramArguments</key>
    <array>
{args}
    </array>
    <key>EnvironmentVariables</key>
    <dict>
        <key>MEMORYD_HOME</key>
        <string>{settings.home}</string>
    </dict>
    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <dict>
        <key>SuccessfulExit</key>
        <false/>
    </dict>
    <key>StandardOutPath</key>
    <string>{log}</string>
    <key>StandardErrorPath</key>
    <string>{log}</string>
</dict>
</plist>
"""


def install_service(settings: Settings, *, dry_run: bool = False, system: str | None = None, home: Path | None = None) -> dict[str, Any]:
    """Write the unit for this OS and say how to enable it (nothing is written with dry_run)."""
    system = system or platform.system()
    home = home or Path(os.path.expanduser("~"))
    if system == "Darwin":
        path = home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        text = launchd_plist(settings)
        enable = f"launchctl bootstrap gui/$(id -u) {path}"
    else:
        path = home / ".config" / "systemd" / "user" / SYSTEMD_UNIT_NAME
        text = systemd_unit(settings)
        enable = "systemctl --user daemon-reload && systemctl --user enable --now memoryd"
    if not dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    verb = "would write" if dry_run else "wrote"
    message = f"{verb} {path}\nenable it with:\n  {enable}"
    if dry_run:
        message = f"{message}\n\n--- {path.name} ---\n{text}"
    return {"path": str(path), "written": not dry_run, "enable_command": enable, "unit": text, "message": message}
