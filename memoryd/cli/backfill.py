"""`memoryd backfill [--since 30d] [--project DIR]`: mine transcripts that predate memoryd."""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

from memoryd.cli.output import EXIT_OK, EXIT_USAGE, client_of, common, emit, fail

POLL_SECONDS = 0.5
_SINCE = re.compile(r"^(\d+(?:\.\d+)?)([dhw]?)$")
_UNIT_DAYS = {"": 1.0, "d": 1.0, "h": 1 / 24, "w": 7.0}


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser("backfill", help="extract memories from existing transcripts (with a progress bar)"), cwd=False
    )
    p.add_argument("--since", default="30d", help="only transcripts touched in this window: 30d, 12h, 2w (default 30d)")
    p.add_argument(
        "--project", default=None, help="only this project's transcripts (a directory inside it); default: all"
    )
    p.add_argument("--no-wait", action="store_true", help="queue the jobs and return")
    p.set_defaults(func=cmd_backfill)


def since_days(text: str) -> float | None:
    m = _SINCE.match(text.strip().lower())
    return float(m.group(1)) * _UNIT_DAYS[m.group(2)] if m and float(m.group(1)) > 0 else None


def cmd_backfill(args: argparse.Namespace) -> int:
    days = since_days(args.since)
    if days is None:
        return fail(args, f"--since {args.since!r} is not a duration: use e.g. 30d, 12h or 2w.", EXIT_USAGE, "usage")
    import os

    body: dict[str, Any] = {"since_days": days, "cwd": os.path.abspath(args.project) if args.project else None}
    with client_of(args) as c:
        started = c.request("POST", "/v1/backfill", json=body)
        if args.no_wait or started["jobs_queued"] == 0:
            emit(
                args,
                started,
                f"{started['transcripts']} transcript(s), {started['jobs_queued']} extraction job(s) queued",
            )
            return EXIT_OK
        progress = _wait(c, started["jobs_queued"], quiet=args.json or not sys.stderr.isatty())
    emit(
        args,
        {**started, "progress": progress},
        f"backfill done: {progress['done']} extracted, {progress['skipped']} skipped, {progress['failed']} failed",
    )
    return EXIT_OK


def _wait(c: Any, queued: int, *, quiet: bool) -> dict[str, Any]:
    """Poll the daemon until the backfill jobs are finished, with a progress bar on a terminal."""
    if quiet:
        while (p := c.request("GET", "/v1/backfill"))["active"]:
            time.sleep(POLL_SECONDS)
        return dict(p)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("backfill"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
    ) as bar:
        task = bar.add_task("jobs", total=queued)
        while True:
            p = c.request("GET", "/v1/backfill")
            bar.update(task, total=max(queued, p["total"]), completed=p["finished"])
            if not p["active"]:
                return dict(p)
            time.sleep(POLL_SECONDS)
