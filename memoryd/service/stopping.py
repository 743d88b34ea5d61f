"""Stopping the daemon of a home from another process, for `memoryd stop`, `memoryd setup` (a daemon of another
version is restarted) and `memoryd uninstall`: SIGTERM the process that holds the home's daemon.lock, never a
pid daemon.json merely names (issue 52: that was a `sleep`), then wait until it has let go of the lock.

It does NOT stop a service: a stopped service's manager would start it again; units.py disables it first.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.base.process import pid_alive
from memoryd.service.runtime_file import lock_holder, read_runtime_file, remove_stale_runtime_file

STOP_TIMEOUT_SECONDS = 15.0  # running jobs finish or are re-queued on SIGTERM
STOP_POLL_SECONDS = 0.1


@dataclass(frozen=True, kw_only=True)
class Stopped:
    """What stopping found: the pid it signalled (None: no daemon ran), whether that process is gone, and a
    stale daemon.json it removed instead of signalling anything."""

    pid: int | None
    gone: bool
    why: str = ""
    code: str = ""  # why not, for scripts: starting, permission_denied, stop_timeout
    stale: dict[str, Any] | None = None


def running_version(home: Path) -> tuple[int, str] | None:
    """(pid, version) of the daemon serving `home`: the lock holder, its version from daemon.json; None when none."""
    pid = lock_holder(home)
    if not pid:
        return None
    running = read_runtime_file(home) or {}
    return pid, str(running.get("version") or "unknown")


def stop_daemon(home: Path, *, timeout: float = STOP_TIMEOUT_SECONDS) -> Stopped:
    """SIGTERM the daemon holding `home`'s lock and wait until the lock is free and the process gone."""
    deadline = time.monotonic() + timeout
    pid = lock_holder(home)
    while pid == 0 and time.monotonic() < deadline:  # starting: its pid is not written yet
        time.sleep(STOP_POLL_SECONDS)
        pid = lock_holder(home)
    if pid is None:
        return Stopped(pid=None, gone=True, stale=remove_stale_runtime_file(home))
    if pid == 0:
        return Stopped(
            pid=None, gone=False, why="memoryd is still starting; run the command again in a moment", code="starting"
        )
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended meanwhile: the wait below sees the lock free
    except PermissionError:
        return Stopped(
            pid=pid,
            gone=False,
            why=f"pid {pid} belongs to another user; stop it as that user",
            code="permission_denied",
        )
    while time.monotonic() < deadline:
        if lock_holder(home) is None and not pid_alive(pid):
            return Stopped(pid=pid, gone=True)
        time.sleep(STOP_POLL_SECONDS)
    return Stopped(
        pid=pid,
        gone=False,
        why=f"pid {pid} did not exit within {timeout:g} s; look at its log, or `kill -9 {pid}` as a last resort",
        code="stop_timeout",
    )
