"""`memoryd doctor`: each check says ok or what is wrong and how to fix it."""

from __future__ import annotations

import os
import platform
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.auth import token_path
from memoryd.client import ApiError, DaemonNotRunning, MemorydClient
from memoryd.config import Settings
from memoryd.integrations.claude_code import installed_scopes
from memoryd.store.paths import resolve_memory_dir
from memoryd.units import LAUNCHD_LABEL, SYSTEMD_UNIT_NAME

MIN_FREE_BYTES = 500 * 1024 * 1024


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def _grep_check(settings: Settings) -> Check:
    """Which engine transcript searches get; the built-in scanner works, only slower."""
    from memoryd.transcripts.grep import Ripgrep

    setting = settings.transcripts.ripgrep
    rg = Ripgrep.discover(setting)
    if rg is not None:
        return Check("grep", True, f"ripgrep: {rg.binary} ({rg.version})")
    if setting == "off":
        return Check("grep", True, "built-in scanner ([transcripts] ripgrep = \"off\")")
    if setting != "auto":
        return Check("grep", False, f"[transcripts] ripgrep = {setting!r} is not an executable file", "point it at rg, or set it to \"auto\"")
    return Check("grep", True, "built-in scanner: no rg found (`pip install ripgrep==14.1.0` or your system's ripgrep makes transcript searches 6-12x faster)")


def _llm_checks(settings: Settings, status: dict[str, Any] | None) -> list[Check]:
    """What the daemon's LLM really is (backend, model, login, last call, spend), never "ok" beside a contradiction."""
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if status is None or "llm" not in status:
        wanted = settings.llm_backend
        return [Check("llm", True, f"[llm] backend = {wanted!r} (the daemon is not running: nothing more to check)")]
    llm: dict[str, Any] = status["llm"]
    checks: list[Check] = []
    backend, model, last = llm.get("backend"), llm.get("model"), llm.get("last_call") or {}
    spend = f"{llm.get('tokens_today', 0):,} tokens today" + (f" of {llm['daily_cap']:,}" if llm.get("daily_cap") else "")
    if backend == "off":
        wanted = settings.llm_backend
        ok = wanted in ("auto", "off")  # offline by choice, or auto found nothing: both work, with the offline paths
        checks.append(Check("llm", ok, f"offline: {llm.get('why_offline', '')}",
                            "" if ok else "fix the setting named above, or set [llm] backend = \"off\""))
    else:
        detail = f"{backend}, model {model}, {spend}"
        if llm.get("signed_in") is False:
            checks.append(Check("llm", False, f"{detail}; `claude` is not signed in", "run `claude` once and /login (or set [llm] backend = \"off\")"))
        elif llm.get("tokens_today", 0) and llm.get("daily_cap") and llm["tokens_today"] >= llm["daily_cap"]:
            checks.append(Check("llm", False, f"{detail}: the daily cap is reached, memoryd runs offline until 00:00 UTC", "raise [llm] daily_token_cap to allow more"))
        elif last.get("outcome") not in (None, "ok"):
            checks.append(Check("llm", False, f"{detail}; last call ({last.get('purpose')}, {last.get('at')}) failed: {last.get('detail')}",
                                "memoryd uses its offline paths meanwhile; see the error above for what to change"))
        else:
            last_text = f"; last call ok ({last.get('purpose')}, {last.get('at')})" if last else "; no call yet"
            signed = ", signed in" + (f" ({llm['auth_method']})" if llm.get("auth_method") else "") if llm.get("signed_in") else ""
            checks.append(Check("llm", True, detail + signed + last_text))
    if key and backend == "anthropic":
        looks = key.startswith("sk-ant-")
        checks.append(Check("api key", looks, f"ANTHROPIC_API_KEY is set ({len(key)} chars, value not shown)", "" if looks else "the key should start with sk-ant-"))
    return checks


def run_checks(settings: Settings, client: MemorydClient, cwd: str) -> list[Check]:
    checks: list[Check] = []
    status: dict[str, Any] | None = None
    try:
        status = client.status()
        checks.append(Check("daemon", True, f"running at {client.base_url} (pid {status.get('pid')})"))
    except DaemonNotRunning:
        checks.append(Check("daemon", False, f"nothing answers at {client.base_url}", "start it: memoryd serve (or memoryd install-service)"))
    except ApiError as exc:
        checks.append(Check("daemon", False, f"answered {exc.status} ({exc.code})", "the token does not match: restart the daemon or unset MEMORYD_TOKEN"))
    tp = token_path(settings.home)
    if settings.token_override:
        checks.append(Check("token", True, "MEMORYD_TOKEN is set (value not shown)"))
    elif not tp.exists():
        checks.append(Check("token", False, f"{tp} does not exist", "start the daemon once: it creates the token"))
    else:
        perms = stat.S_IMODE(tp.stat().st_mode)
        checks.append(Check("token", perms == 0o600, f"{tp} mode {perms:o}", "" if perms == 0o600 else f"chmod 600 {tp}"))
    unit = Path.home() / ("Library/LaunchAgents/" + LAUNCHD_LABEL + ".plist" if platform.system() == "Darwin" else ".config/systemd/user/" + SYSTEMD_UNIT_NAME)
    checks.append(Check("service", unit.exists(), f"{unit} {'installed' if unit.exists() else 'not installed'}", "" if unit.exists() else "memoryd install-service"))
    scopes = installed_scopes(Path(cwd))
    checks.append(Check("claude-code hooks", bool(scopes), f"installed in: {', '.join(scopes)}" if scopes else "not installed", "" if scopes else "memoryd hooks --install"))
    try:
        memory_dir = resolve_memory_dir(cwd, env_override=settings.memory_dir_override, config_dir=settings.memory.memory_dir, memory_base=settings.memory_base)
        checks.append(Check("memory dir", True, f"{cwd} → {memory_dir}"))
    except Exception as exc:
        checks.append(Check("memory dir", False, str(exc), "run doctor from your project directory"))
    missing = [str(r) for r in settings.transcript_roots if not r.is_dir()]
    checks.append(Check("transcript roots", not missing, f"missing: {', '.join(missing)}" if missing else ", ".join(map(str, settings.transcript_roots)),
                        "run Claude Code once (it creates ~/.claude/projects) or fix [transcripts] roots" if missing else ""))
    checks.extend(_llm_checks(settings, status))
    checks.append(_grep_check(settings))
    free = shutil.disk_usage(settings.home if settings.home.exists() else Path.home()).free
    checks.append(Check("disk", free >= MIN_FREE_BYTES, f"{free / 1e9:.1f} GB free under {settings.home}", "" if free >= MIN_FREE_BYTES else "free some disk space"))
    return checks
