"""`memoryd doctor`: each check tests what it names (the service runs *this* daemon, the hooks
reach it with its token, the roots are watched) and says how to fix what fails.

Every check is one function of a `Context` in `CHECKS`; a new check is a function and a line (in
doctor_daemon.py, doctor_claude_code.py or doctor_engines.py, by what it checks).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from memoryd.base.errors import ApiError, DaemonNotRunning
from memoryd.cli.doctor_claude_code import check_hooks, check_memory_dir
from memoryd.cli.doctor_context import Check, Context
from memoryd.cli.doctor_daemon import check_daemon, check_disk, check_service, check_token
from memoryd.cli.doctor_engines import check_grep, check_llm, check_recall, check_transcript_roots
from memoryd.client import MemorydClient
from memoryd.config import Settings


def check_version(ctx: Context) -> list[Check]:
    """The daemon runs the installed version: one started before an upgrade runs the old code from memory."""
    from memoryd.version import version

    theirs = ctx.status.get("version") if ctx.status else None
    if theirs is None or theirs == version():
        return []
    return [
        Check(
            "version",
            False,
            f"the daemon (pid {ctx.status.get('pid') if ctx.status else '?'}) runs memoryd {theirs}, but memoryd "
            f"{version()} is installed: it was started before an upgrade",
            "memoryd setup (restarts the daemon on the installed version)",
        )
    ]


# In the order they print; each returns one Check or a list of them.
CHECKS: list[Callable[[Context], Check | list[Check]]] = [
    check_daemon,
    check_version,
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
