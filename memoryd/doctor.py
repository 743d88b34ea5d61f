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


def _claude_memory_checks(settings: Settings, cwd: str) -> list[Check]:
    """Where memory lives, which dialect, native memory on/off, context once or twice, an old store to import."""
    from memoryd.integrations.claude_memory import location_report

    info = location_report(settings, cwd)
    if "error" in info:
        return [Check("memory dir", False, info["error"], "run doctor from your project directory")]
    where = "Claude Code's own memory dir" if info["same_as_claude_code"] else "memoryd's own dir"
    checks = [
        Check("memory dir", True, f"{cwd} → {info['memory_dir']} ({where}; dialect {info['dialect']}; memory_base = {info['memory_base']!r})"),
        Check("native memory", True, f"Claude Code's auto memory is {'on' if info['native_memory'] else 'off'} ({info['native_reason']})"),
        Check("context", not info["fix"], f"MEMORY.md reaches the model {info['context']}", info["fix"]),
    ]
    if info["old_store"]:
        old = info["old_store"]
        checks.append(Check("old memoryd store", False, f"{old['memories']} memories in {old['path']} are not in {info['memory_dir']}", old["fix"]))
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
    checks.extend(_claude_memory_checks(settings, cwd))
    missing = [str(r) for r in settings.transcript_roots if not r.is_dir()]
    checks.append(Check("transcript roots", not missing, f"missing: {', '.join(missing)}" if missing else ", ".join(map(str, settings.transcript_roots)),
                        "run Claude Code once (it creates ~/.claude/projects) or fix [transcripts] roots" if missing else ""))
    if status is not None:
        mode = status.get("mode")
        failures = sum(v.get("failures", 0) for v in (status.get("llm_usage") or {}).get("by_purpose", {}).values())
        ok = not (mode == "llm" and failures)
        checks.append(Check("llm", ok, f"mode {mode}" + (f", {failures} failed LLM call(s) today" if failures else ""),
                            "" if ok else "check ANTHROPIC_API_KEY (memoryd falls back to offline meanwhile)"))
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if key:
        looks = key.startswith("sk-ant-")
        checks.append(Check("api key", looks, f"ANTHROPIC_API_KEY is set ({len(key)} chars, value not shown)", "" if looks else "the key should start with sk-ant-"))
    checks.append(_grep_check(settings))
    free = shutil.disk_usage(settings.home if settings.home.exists() else Path.home()).free
    checks.append(Check("disk", free >= MIN_FREE_BYTES, f"{free / 1e9:.1f} GB free under {settings.home}", "" if free >= MIN_FREE_BYTES else "free some disk space"))
    return checks
