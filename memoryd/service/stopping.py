"""Stopping the daemon of a home from another process, for `memoryd setup` (a daemon of another version is
restarted) and `memoryd uninstall`: SIGTERM the pid daemon.json names, then wait for it to let go.

It does NOT stop a service: a stopped service's manager would start it again; units.py disables it first.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from memoryd.service.runtime_file import read_runtime_file

STOP_TIMEOUT_SECONDS = 15.0  # running jobs finish or are re-queued on SIGTERM (the same wait as `memoryd stop`)
STOP_POLL_SECONDS = 0.1


@dataclass(frozen=True, kw_only=True)
class Stopped:
    """What stopping found: the pid it signalled (None: no daemon ran) and whether that process is gone."""

    pid: int | None
    gone: bool
    why: str = ""


def running_version(home: Path) -> tuple[int, str] | None:
    """(pid, version) of the daemon serving `home`, from its daemon.json; None when none runs."""
    running = read_runtime_file(home)
    if running is None:
        return None
    return int(running["pid"]), str(running.get("version") or "unknown")


def stop_daemon(home: Path, *, timeout: float = STOP_TIMEOUT_SECONDS) -> Stopped:
    """SIGTERM the daemon serving `home` and wait until its daemon.json is gone (it removes it as it exits)."""
    running = read_runtime_file(home)
    if running is None:
        return Stopped(pid=None, gone=True)
    pid = int(running["pid"])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return Stopped(pid=pid, gone=True)
    except PermissionError:
        return Stopped(pid=pid, gone=False, why=f"pid {pid} belongs to another user; stop it as that user")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if read_runtime_file(home) is None:
            return Stopped(pid=pid, gone=True)
        time.sleep(STOP_POLL_SECONDS)
    return Stopped(pid=pid, gone=False, why=f"pid {pid} did not exit within {timeout:g} s; look at its log")
