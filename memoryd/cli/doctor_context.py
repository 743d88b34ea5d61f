"""What every `memoryd doctor` check reads (`Context`: settings, client, project, the daemon's status) and
returns (`Check`: a name, ok, what was found and how to fix it)."""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memoryd.client import MemorydClient
from memoryd.config import Settings
from memoryd.service.units import manager_unavailable

if TYPE_CHECKING:
    from memoryd.cli.results import CheckResult


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_dict(self) -> CheckResult:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


@dataclass
class Context:
    """What every check may read: the settings, the client, the project, and the daemon's status."""

    settings: Settings
    client: MemorydClient
    cwd: str
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    status: dict[str, Any] | None = None
    status_error: Exception | None = None
    _no_manager: list[str | None] = field(default_factory=list)

    def no_manager(self) -> str | None:
        """Why no user service manager can run memoryd here (asked once), or None when one answers."""
        if not self._no_manager:
            self._no_manager.append(manager_unavailable("launchd" if platform.system() == "Darwin" else "systemd"))
        return self._no_manager[0]

    def how_to_start(self) -> str:
        """The command that starts the daemon on this machine: the service only where a user service manager answers."""
        if self.no_manager() is None:
            return "memoryd install-service (or memoryd serve in a terminal)"
        return (
            "memoryd setup (no user service manager here: it starts the daemon in the background), or memoryd "
            "serve in a terminal"
        )
