"""`memoryd install-service` / `uninstall-service`: a systemd user unit or a launchd agent that
runs this very install, with its settings in `$MEMORYD_HOME/config.toml` and its secrets in a
0600 env file beside it (never in the unit), then enabled and started by the service manager."""

from __future__ import annotations

import os
import platform
import plistlib
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.base.errors import ConfigError, ServiceManagerFailed
from memoryd.base.files import atomic_write
from memoryd.config import CONFIG_FILENAME, Settings
from memoryd.config_sources import load_settings

LAUNCHD_LABEL = "dev.memoryd.daemon"
SYSTEMD_UNIT_NAME = "memoryd.service"
SERVICE_ENV_FILENAME = "service.env"
# Environment variables that are secrets: the service gets them from the 0600 env file.
SECRET_ENV = ("ANTHROPIC_API_KEY", "MEMORYD_TOKEN")
SERVICE_MANAGER_TIMEOUT_SECONDS = 30


def memoryd_command() -> list[str]:
    """How to start this very install: the venv's python running the package."""
    return [sys.executable, "-m", "memoryd", "serve"]


def service_env_path(home: Path) -> Path:
    return home / SERVICE_ENV_FILENAME


def systemd_unit(settings: Settings) -> str:
    """A user unit: no After=default.target (it is WantedBy it: an ordering loop), and only
    options a user manager runs without user namespaces (no PrivateTmp, ProtectSystem, ...)."""
    exec_start = " ".join(shlex.quote(part) for part in memoryd_command())
    home = str(settings.home)
    return f"""[Unit]
Description=memoryd: local memory for coding agents

[Service]
Type=simple
ExecStart={exec_start}
Environment={_systemd_quote("MEMORYD_HOME=" + home)}
# Secrets (ANTHROPIC_API_KEY) live in this 0600 file, not in the unit; '-': it may be absent.
EnvironmentFile=-{_systemd_escape_path(str(service_env_path(settings.home)))}
Restart=on-failure
RestartSec=3
UMask=0077
NoNewPrivileges=true

[Install]
WantedBy=default.target
"""


def _systemd_quote(assignment: str) -> str:
    """One Environment= assignment, quoted so spaces and quotes in a path survive."""
    return '"' + assignment.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def _systemd_escape_path(path: str) -> str:
    return path.replace("%", "%%")


def launchd_plist(settings: Settings) -> str:
    """The agent's plist, built with plistlib (every string XML-escaped). launchd has no env
    file, so a one-line sh sources the 0600 secrets file (when present) and execs the daemon."""
    log = settings.home / "logs" / "memoryd.launchd.log"
    loader = 'set -a; [ -f "$0" ] && . "$0"; set +a; exec "$@"'
    data: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": ["/bin/sh", "-c", loader, str(service_env_path(settings.home)), *memoryd_command()],
        "EnvironmentVariables": {"MEMORYD_HOME": str(settings.home)},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "Umask": 0o077,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    return plistlib.dumps(data, sort_keys=False).decode("utf-8")


@dataclass
class Target:
    """Where the unit goes on this OS and the commands that enable, start and remove it."""

    system: str
    path: Path
    text: str
    enable: list[list[str]]
    disable: list[list[str]]


def target(settings: Settings, *, system: str | None = None, user_home: Path | None = None) -> Target:
    system = system or platform.system()
    user_home = user_home or Path(os.path.expanduser("~"))
    if system == "Darwin":
        path = user_home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        domain = f"gui/{os.getuid()}"
        return Target(
            "launchd",
            path,
            launchd_plist(settings),
            enable=[
                ["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"],
                ["launchctl", "bootstrap", domain, str(path)],
            ],
            disable=[["launchctl", "bootout", f"{domain}/{LAUNCHD_LABEL}"]],
        )
    path = user_home / ".config" / "systemd" / "user" / SYSTEMD_UNIT_NAME
    return Target(
        "systemd",
        path,
        systemd_unit(settings),
        enable=[
            ["systemctl", "--user", "daemon-reload"],
            ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT_NAME],
        ],
        disable=[
            ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT_NAME],
            ["systemctl", "--user", "daemon-reload"],
        ],
    )


# ------------------------------------------------------------------ settings the service must carry
def settings_lost_in_service(settings: Settings, env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Settings this shell gets from the environment that the service would not see: {section: {key: value}}.
    The service reads only MEMORYD_HOME's config.toml (and the secrets file)."""
    bare = load_settings({"MEMORYD_HOME": str(settings.home)}, home=settings.home)
    lost: dict[str, dict[str, Any]] = {}
    if settings.server.host != bare.server.host:
        lost.setdefault("server", {})["host"] = settings.server.host
    if settings.server.port != bare.server.port:
        lost.setdefault("server", {})["port"] = settings.server.port
    if settings.anthropic_base_url and not bare.llm.base_url:
        lost.setdefault("llm", {})["base_url"] = settings.anthropic_base_url
    if settings.llm_forced_off and bare.llm.enabled:
        lost.setdefault("llm", {})["enabled"] = False
    return lost


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def carry_settings(settings: Settings, lost: dict[str, dict[str, Any]]) -> list[str]:
    """Append the lost settings to config.toml as new tables; a table the file already has is
    the user's to edit, so that is refused with the exact lines to add."""
    path = settings.home / CONFIG_FILENAME
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    import tomllib

    existing = tomllib.loads(current) if current else {}
    clash = [section for section in lost if section in existing]
    lines = [
        f"[{section}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in values.items())
        for section, values in lost.items()
    ]
    if clash:
        raise ConfigError(
            f"this shell sets {', '.join(f'[{s}] ' + ', '.join(lost[s]) for s in clash)} through the environment, "
            "which the "
            f"service would not see; add these lines to {path} (the service reads only that file), then run the "
            "command again:\n" + "\n".join(lines)
        )
    text = current + ("\n" if current and not current.endswith("\n") else "") + "\n".join(lines)
    atomic_write(path, text)
    return [line.strip() for block in lines for line in block.splitlines() if "=" in line]


def write_secrets(home: Path, env: Mapping[str, str]) -> list[str]:
    """The secrets the service needs, in `$MEMORYD_HOME/service.env` (0600); removed when none are set."""
    path = service_env_path(home)
    names = [name for name in SECRET_ENV if env.get(name)]
    if not names:
        path.unlink(missing_ok=True)
        return []
    atomic_write(path, "".join(f"{name}={shlex.quote(env[name])}\n" for name in names), mode=0o600)
    return names


# ------------------------------------------------------------------ install / uninstall
NO_MANAGER_FIX = (  # where no user service manager runs
    "Run the daemon without a service: `memoryd setup` starts it in the background, or keep `memoryd serve` "
    "running in a terminal (`nohup memoryd serve >/dev/null 2>&1 &` outlives the terminal, not a reboot)"
)


NO_USER_MANAGER = "this login has no systemd user session, as in a container, WSL or a server without linger"


def manager_unavailable(system: str) -> str | None:
    """Why this user's service manager cannot be used here (a container, WSL, a server without a
    login session), or None when it answers: asked before anything is written."""
    if system == "launchd":
        return None if shutil.which("launchctl") else "launchctl is not on PATH"
    if shutil.which("systemctl") is None:
        return "systemctl is not on PATH"
    try:
        proc = subprocess.run(
            ["systemctl", "--user", "show-environment"],
            capture_output=True,
            text=True,
            timeout=SERVICE_MANAGER_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"systemctl --user could not be asked ({exc.__class__.__name__})"
    if proc.returncode != 0:  # e.g. "Failed to connect to bus: No medium found": said plainly, not in systemctl's words
        return f"no systemd user manager answers ({NO_USER_MANAGER})"
    return None


def _run(commands: list[list[str]], *, strict: bool = True, failed: list[str] | None = None) -> list[str]:
    """Run the service manager's commands in order; return those that succeeded. strict: a missing
    manager or a failure raises with its own words and the fix; else it goes to `failed` (stopping
    what is not running is fine)."""
    failed = [] if failed is None else failed
    ran = []
    for cmd in commands:
        if shutil.which(cmd[0]) is None:
            if not strict:
                failed.append(f"{shlex.join(cmd)}: {cmd[0]} is not on PATH")
                continue
            raise ServiceManagerFailed(
                f"{cmd[0]} is not on PATH, so the service cannot be enabled here; nothing is left written. "
                f"{NO_MANAGER_FIX}."
            )
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=SERVICE_MANAGER_TIMEOUT_SECONDS)
        said = (proc.stderr or proc.stdout).strip().splitlines()
        if proc.returncode == 0:
            ran.append(shlex.join(cmd))
        elif not strict:
            failed.append(f"{shlex.join(cmd)}: {said[-1] if said else f'exit {proc.returncode}'}")
        else:
            raise ServiceManagerFailed(
                f"`{shlex.join(cmd)}` failed ({said[-1] if said else f'exit {proc.returncode}'}); nothing is left "
                "written: "
                "fix that (systemd: a user manager must run, e.g. log in with a session or `loginctl enable-linger "
                "$USER`), "
                f"then run `memoryd install-service` again. Otherwise: {NO_MANAGER_FIX}."
            )
    return ran


def install_service(
    settings: Settings,
    *,
    dry_run: bool = False,
    system: str | None = None,
    user_home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Write the unit, carry the environment's settings into config.toml and its secrets into
    the 0600 env file, then enable and start it. With dry_run nothing is written or run."""
    env = os.environ if env is None else env
    t = target(settings, system=system, user_home=user_home)
    lost = settings_lost_in_service(settings, env)
    secrets = [name for name in SECRET_ENV if env.get(name)]
    result: dict[str, Any] = {
        "manager": t.system,
        "path": str(t.path),
        "unit": t.text,
        "dry_run": dry_run,
        "config_added": [f"[{s}] {k} = {_toml_value(v)}" for s, values in lost.items() for k, v in values.items()],
        "secrets_file": str(service_env_path(settings.home)) if secrets else None,
        "secrets": secrets,
        "commands": [shlex.join(c) for c in t.enable],
        "ran": [],
    }
    if dry_run:
        return result
    why = manager_unavailable(t.system)
    if why is not None:
        raise ServiceManagerFailed(
            f"{why}, so memoryd cannot run as a service here (a container or WSL has none; on a server with systemd, "
            f"a login session or `loginctl enable-linger $USER` starts one); nothing was written. {NO_MANAGER_FIX}."
        )
    with _undone_on_failure([settings.home / CONFIG_FILENAME, service_env_path(settings.home), t.path]):
        if lost:
            carry_settings(settings, lost)
        settings.home.mkdir(parents=True, exist_ok=True)
        write_secrets(settings.home, env)
        t.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(t.path, t.text)
        # launchd: bootout first (it fails when nothing is loaded), so a re-install reloads the plist.
        result["ran"] = (_run(t.enable[:1], strict=False) if t.system == "launchd" else []) + _run(
            t.enable[1:] if t.system == "launchd" else t.enable
        )
    return result


@contextmanager
def _undone_on_failure(paths: list[Path]) -> Iterator[None]:
    """A failed install leaves these files as they were: each put back, or removed when it is new,
    with the folders it made for them."""
    before = {path: path.read_bytes() if path.is_file() else None for path in paths}
    new_dirs = sorted({d for path in paths for d in path.parents if not d.exists()}, key=lambda d: -len(d.parts))
    try:
        yield
    except BaseException:
        for path, data in before.items():
            if data is None:
                path.unlink(missing_ok=True)
            elif not path.is_file() or path.read_bytes() != data:
                atomic_write(path, data)
        for folder in new_dirs:  # deepest first; one holding anything else stays
            with suppress(OSError):
                folder.rmdir()
        raise


def uninstall_service(
    settings: Settings, *, dry_run: bool = False, system: str | None = None, user_home: Path | None = None
) -> dict[str, Any]:
    """Stop and disable the service, then remove the unit and the secrets file."""
    t = target(settings, system=system, user_home=user_home)
    secrets = service_env_path(settings.home)
    result: dict[str, Any] = {
        "manager": t.system,
        "path": str(t.path),
        "dry_run": dry_run,
        "installed": t.path.exists(),
        "commands": [shlex.join(c) for c in t.disable],
        "ran": [],
        "failed": [],
        "removed": [],
    }
    if dry_run or not t.path.exists():
        return result
    result["ran"] = _run(t.disable[:1], strict=False, failed=result["failed"])
    for path in (t.path, secrets):
        if path.exists():
            path.unlink()
            result["removed"].append(str(path))
    result["ran"] += _run(t.disable[1:], strict=False, failed=result["failed"])
    return result
