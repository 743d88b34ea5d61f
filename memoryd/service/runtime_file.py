"""`$MEMORYD_HOME/daemon.json`: where the running daemon listens, and `daemon.lock`: the daemon's claim on
its home (one daemon, one writer of state.db). Kept apart from `daemon.py` so the CLI finds the daemon
without importing the whole daemon (fast `memoryd` commands); the write side imports its helpers late."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memoryd.base import limits

RUNTIME_FILENAME = limits.RUNTIME_FILENAME
HOME_LOCK_FILENAME = "daemon.lock"
RUNTIME_FILE_MAX_BYTES = 4096


class HomeInUse(Exception):
    """Another daemon holds this MEMORYD_HOME: a second one would be a second writer of its state.db."""


def claim_home(home: Path) -> int:
    """Lock `home` for this process's life (keep the fd open; the kernel lets go when it dies, even by
    kill -9) and note this pid in the lock file. HomeInUse says which daemon holds it."""
    from memoryd.base.files import make_private_dir, try_lock

    make_private_dir(home)
    fd = try_lock(home / HOME_LOCK_FILENAME)
    if fd is None:
        raise HomeInUse(_holder(home))
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _holder(home: Path) -> str:
    """One line naming the daemon that holds `home` (its pid from the lock file, its address from daemon.json)."""
    pid = _lock_pid(home)
    runtime = _written(home)
    where = (
        f"listening on http://{runtime['host']}:{runtime['port']}"
        if runtime and runtime.get("pid") == pid
        else "still starting"
    )
    who = f"another memoryd (pid {pid}, {where})" if pid else f"another memoryd (it holds {home / HOME_LOCK_FILENAME})"
    return (
        f"{who} already serves MEMORYD_HOME={home} (one daemon per home: one writer of its state.db); "
        "use that one, stop it first (memoryd stop), or give this one its own MEMORYD_HOME."
    )


def _written(home: Path) -> dict[str, Any] | None:
    """daemon.json as written, whoever wrote it and whether it still runs (None: absent or unreadable)."""
    from memoryd.base.files import read_small_nofollow

    try:
        raw, _ = read_small_nofollow(home / RUNTIME_FILENAME, RUNTIME_FILE_MAX_BYTES)
        data = json.loads(raw or b"")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_runtime_file(home: Path, host: str, port: int, *, started_at: float) -> Path:
    """`$MEMORYD_HOME/daemon.json`: where the running daemon listens, for the CLI (written whole, atomically)."""
    from memoryd.base.files import atomic_write
    from memoryd.version import version  # here, not at import: every CLI command imports this module

    path = home / RUNTIME_FILENAME
    atomic_write(
        path,
        json.dumps({"pid": os.getpid(), "host": host, "port": port, "version": version(), "started_at": started_at}),
    )
    return path


def remove_runtime_file(home: Path) -> None:
    """Remove daemon.json only when this process wrote it: a daemon that exits never takes away the
    address of another one that runs (every new session would be told memoryd is not running)."""
    written = _written(home)
    if written is not None and written.get("pid") == os.getpid():
        (home / RUNTIME_FILENAME).unlink(missing_ok=True)


def lock_holder(home: Path) -> int | None:
    """The pid of the daemon holding `home`'s daemon.lock (0: held, its pid not written yet), None when no process
    holds it: what `memoryd stop` signals, never a pid daemon.json merely names (issue 52: it SIGTERMed a `sleep`)."""
    from memoryd.base.files import try_lock

    if not (home / HOME_LOCK_FILENAME).exists():
        return None
    try:
        fd = try_lock(home / HOME_LOCK_FILENAME)
    except OSError:  # a link or unreadable: no daemon can hold it either
        return None
    if fd is not None:
        os.close(fd)
        return None
    return _lock_pid(home) or 0


def _lock_pid(home: Path) -> int | None:
    from memoryd.base.files import read_small_nofollow

    try:
        raw, _ = read_small_nofollow(home / HOME_LOCK_FILENAME, RUNTIME_FILE_MAX_BYTES)
        return int((raw or b"").strip())
    except (OSError, ValueError):
        return None


def remove_stale_runtime_file(home: Path) -> dict[str, Any] | None:
    """daemon.json as it was left by a daemon that no longer holds the lock, now removed (None: none, or a daemon
    holds the lock). Done holding the lock, so a daemon starting meanwhile keeps the file it writes."""
    from memoryd.base.files import try_lock

    try:
        fd = try_lock(home / HOME_LOCK_FILENAME)
    except OSError:
        return None
    if fd is None:
        return None
    try:
        written = _written(home)
        if written is not None:
            (home / RUNTIME_FILENAME).unlink(missing_ok=True)
        return written
    finally:
        os.close(fd)


def read_runtime_file(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((home / RUNTIME_FILENAME).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict):
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
