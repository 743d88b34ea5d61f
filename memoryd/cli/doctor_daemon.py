"""`memoryd doctor`'s checks of the daemon itself: it answers as this home's memoryd, its token file is
private, the installed service runs the daemon that answers, and its home has disk room."""

from __future__ import annotations

import os
import platform
import re
import shutil
import stat
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from memoryd.base.errors import ApiError, DaemonNotRunning, NotMemoryd
from memoryd.cli.doctor_context import Check, Context
from memoryd.config import CONFIG_FILENAME
from memoryd.service.auth import token_path
from memoryd.service.units import LAUNCHD_LABEL, SYSTEMD_UNIT_NAME, target

MIN_FREE_BYTES = 500 * 1024 * 1024
SERVICE_QUERY_TIMEOUT_SECONDS = 10


def check_daemon(ctx: Context) -> Check:
    """Something answers at the daemon's address, with our token, and it serves this home."""
    if isinstance(ctx.status_error, NotMemoryd):
        port = urlsplit(ctx.client.base_url).port
        return Check(
            "daemon",
            False,
            f"another program answers on port {port} ({ctx.client.base_url}) and did not prove it is this home's "
            "memoryd; nothing was sent to it",
            f"stop the program on port {port}, or give memoryd another port: set [server] port in "
            f"{ctx.settings.home / CONFIG_FILENAME} (or MEMORYD_PORT), then start memoryd again",
        )
    if isinstance(ctx.status_error, DaemonNotRunning):
        return Check(
            "daemon",
            False,
            f"nothing answers at {ctx.client.base_url}",
            f"start it: {ctx.how_to_start()}",
        )
    if isinstance(ctx.status_error, ApiError):
        e = ctx.status_error
        if e.status == 401 and not ctx.client.has_token:
            fix = "this home has no token: run doctor with the daemon's MEMORYD_HOME, or set MEMORYD_TOKEN"
        elif e.status == 401:
            fix = "the token does not match: restart the daemon, or unset MEMORYD_TOKEN"
        else:
            fix = "look at the daemon's log"
        return Check("daemon", False, f"{ctx.client.base_url} answered {e.status} ({e.code})", fix)
    assert ctx.status is not None
    home = ctx.status.get("home")
    if home != str(ctx.settings.home):
        return Check(
            "daemon",
            False,
            f"the daemon at {ctx.client.base_url} serves {home}, not {ctx.settings.home}",
            "set MEMORYD_HOME to the daemon's home, or stop that daemon (memoryd stop) and start this one",
        )
    return Check(
        "daemon",
        True,
        f"running at {ctx.client.base_url} (pid {ctx.status.get('pid')}, version {ctx.status.get('version')})",
    )


def check_token(ctx: Context) -> Check:
    settings = ctx.settings
    tp = token_path(settings.home)
    if settings.token_override:
        return Check("token", True, "MEMORYD_TOKEN is set (value not shown)")
    if not tp.exists():
        return Check("token", False, f"{tp} does not exist", "start the daemon once: it creates the token")
    perms = stat.S_IMODE(tp.stat().st_mode)
    return Check("token", perms == 0o600, f"{tp} mode {perms:o}", "" if perms == 0o600 else f"chmod 600 {tp}")


def _service_pid(system: str) -> tuple[bool | None, int | None, str]:
    """(active, main pid, what the manager said) from systemctl or launchctl; active is None
    when the manager cannot be asked at all."""
    if system == "launchd":
        cmd = ["launchctl", "print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}"]
    else:
        cmd = ["systemctl", "--user", "show", "--property=ActiveState,MainPID", SYSTEMD_UNIT_NAME]
    if shutil.which(cmd[0]) is None:
        return None, None, f"{cmd[0]} is not on PATH"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=SERVICE_QUERY_TIMEOUT_SECONDS)
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        return None, None, f"`{' '.join(cmd)}` failed: {said[-1] if said else f'exit {proc.returncode}'}"
    if system == "launchd":
        state = re.search(r"^\s*state = (\S+)", proc.stdout, re.M)
        pid = re.search(r"^\s*pid = (\d+)", proc.stdout, re.M)
        return (
            bool(state and state.group(1) == "running"),
            int(pid.group(1)) if pid else None,
            f"state {state.group(1) if state else 'unknown'}",
        )
    props = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    main_pid = int(props.get("MainPID", "0") or 0)
    return props.get("ActiveState") == "active", main_pid or None, f"{props.get('ActiveState', 'unknown')}"


def check_service(ctx: Context) -> Check:
    """The service is installed, active, and its process is the daemon that answers."""
    t = target(
        ctx.settings,
        system="Darwin" if platform.system() == "Darwin" else "Linux",
        user_home=Path(ctx.env.get("HOME") or Path.home()),
    )
    restart = (
        "launchctl kickstart -k gui/$(id -u)/" + LAUNCHD_LABEL
        if t.system == "launchd"
        else "systemctl --user restart memoryd"
    )
    pid = ctx.status.get("pid") if ctx.status else None
    if not t.path.exists():
        if pid is not None:
            keep = (
                "`memoryd install-service` keeps it running"
                if ctx.no_manager() is None
                else "no user service manager here: `memoryd setup` starts it again"
            )
            return Check(
                "service",
                True,
                f"no service installed; the daemon (pid {pid}) runs without one and stops with its session ({keep})",
            )
        return Check("service", False, f"no service installed ({t.path}) and no daemon answering", ctx.how_to_start())
    active, main_pid, said = _service_pid(t.system)
    if active is None:
        manager = (
            "no systemd user manager answers (log in with a session, or `loginctl enable-linger $USER`)"
            if t.system == "systemd"
            else "launchctl does not answer"
        )
        return Check(
            "service",
            False,
            f"{t.path} is installed but its state is unknown ({said})",
            f"{manager}; or remove it (memoryd uninstall-service) and keep `memoryd serve` running",
        )
    if not active:
        logs = (
            "journalctl --user -u memoryd"
            if t.system == "systemd"
            else str(ctx.settings.home / "logs" / "memoryd.launchd.log")
        )
        return Check(
            "service",
            False,
            f"{t.path} is installed but the service is not running ({said})",
            f"{restart}; if it stops again, read {logs}",
        )
    if pid is None:
        return Check(
            "service",
            False,
            f"the service runs (pid {main_pid}) but does not answer at {ctx.client.base_url}",
            f"{restart}; check [server] port in {ctx.settings.home / 'config.toml'}",
        )
    if main_pid != pid:
        return Check(
            "service",
            False,
            f"the service runs pid {main_pid}, but pid {pid} answers at {ctx.client.base_url} (a `memoryd serve` in a "
            "terminal?)",
            f"stop the other daemon (kill {pid}), then {restart}",
        )
    return Check("service", True, f"{t.system} service active, pid {main_pid} is the daemon answering")


def check_disk(ctx: Context) -> Check:
    home = ctx.settings.home
    free = shutil.disk_usage(home if home.exists() else Path.home()).free
    return Check(
        "disk",
        free >= MIN_FREE_BYTES,
        f"{free / 1e9:.1f} GB free under {home}",
        "" if free >= MIN_FREE_BYTES else "free some disk space",
    )
