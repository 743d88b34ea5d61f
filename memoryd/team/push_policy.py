"""Which local changes a team sync holds back from the remote for now: a secret in the file or its name, the
hourly push rate, the team folder's entry cap and the push size budget (`[team]` settings), a file refused unread."""

from __future__ import annotations

from pathlib import Path

from memoryd.base.secrets import find_secrets, name_secrets, redact_name
from memoryd.config import TeamSettings
from memoryd.team.report import SyncReport


def push_exclusions(
    changed: list[str],
    live: dict[str, bytes],
    base: dict[str, str],
    theirs: dict[str, str],
    refused: dict[str, str],
    report: SyncReport,
    settings: TeamSettings,
    pushes_last_hour: int,
    folder: Path,
) -> dict[str, str]:
    """Local changes that must not be pushed now: file → secret | cap | rate | size (each reported in `report`),
    and the files `refused` unread: neither pushed nor deleted on the remote, never overwritten here."""
    excluded: dict[str, str] = {}
    for name in changed:
        if name in live:
            findings = name_secrets(name) + find_secrets(live[name].decode("utf-8", "replace"), field=redact_name(name))
            if findings:
                excluded[name] = "secret"
                report.secret_skipped.append({"filename": name, "findings": [f.describe() for f in findings[:5]]})
    if pushes_last_hour >= settings.max_pushes_per_hour:
        rest = [n for n in changed if n not in excluded]
        excluded.update(dict.fromkeys(rest, "rate"))
        if rest:
            report.push_suppressed["rate"] = rest

    def mtime(name: str) -> float:
        try:
            return (folder / name).stat().st_mtime
        except FileNotFoundError:
            return 0.0

    added = sorted(
        (n for n in changed if n in live and n not in base and n not in theirs and n not in excluded), key=mtime
    )
    deleted = {n for n in changed if n not in live and n not in excluded}
    count = len((set(theirs) - deleted) | set(added))
    while count > settings.max_entries and added:
        name = added.pop()  # the newest additions wait
        excluded[name] = "cap"
        report.entries_capped.append(name)
        count -= 1
    budget = settings.max_push_bytes
    for name in sorted((n for n in changed if n not in excluded), key=mtime):
        size = len(live.get(name, b""))
        if size > budget:
            excluded[name] = "size"
            report.push_suppressed.setdefault("size", []).append(name)
        else:
            budget -= size
    excluded.update(dict.fromkeys(refused, "refused"))
    return excluded
