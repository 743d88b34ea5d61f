"""`$MEMORYD_HOME/daemon.json`: where the running daemon listens. Kept apart from `daemon.py`
so the CLI finds the daemon without importing the whole daemon (fast `memoryd` commands)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memoryd import __version__

RUNTIME_FILENAME = "daemon.json"


def write_runtime_file(home: Path, host: str, port: int, *, started_at: float) -> Path:
    """`$MEMORYD_HOME/daemon.json`: where the running daemon listens, for the CLI."""
    path = home / RUNTIME_FILENAME
    path.write_text(
        json.dumps({"pid": os.getpid(), "host": host, "port": port, "version": __version__, "started_at": started_at}),
        encoding="utf-8",
    )
    return path


def read_runtime_file(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((home / RUNTIME_FILENAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    pid = data.get("pid")
    if not isinstance(pid, int):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return data
