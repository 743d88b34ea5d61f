"""`SyncReport`: what one team sync did, file by file, and the form of it that is shown and kept (each file
once, a name carrying a secret redacted)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from memoryd.base.secrets import redact_name


@dataclass
class SyncReport:
    """What one sync did, by file; the names of the seeds' tengu_team_mem_* events."""

    pulled: list[str] = field(default_factory=list)  # changed here because a member changed them
    removed: list[str] = field(default_factory=list)  # deleted here because a member deleted them
    pushed: list[str] = field(default_factory=list)  # local changes (deletes included) now on the remote
    merged: list[str] = field(default_factory=list)  # changed on both sides, merged
    conflicts: list[str] = field(default_factory=list)  # changed on both sides, both versions kept for review
    secret_skipped: list[dict[str, Any]] = field(default_factory=list)  # {filename, findings}: never committed
    entries_capped: list[str] = field(default_factory=list)  # new memories past max_entries: kept local
    push_suppressed: dict[str, list[str]] = field(default_factory=dict)  # reason (rate|size) → files kept local
    kept_local: list[str] = field(
        default_factory=list
    )  # incoming changes not written: edited here meanwhile or refused
    refused: list[dict[str, str]] = field(
        default_factory=list
    )  # {filename, reason}: a link or not a regular file here; never read
    invalid: list[dict[str, str]] = field(
        default_factory=list
    )  # {filename, reason}: a member's file memoryd may not read (an alias bomb, issue 52); never written here
    commit: str | None = None
    pushed_ok: bool = False

    def redacted(self) -> SyncReport:
        """The report as it is shown and kept in the team state file: each file once, though a push that lost a
        race merges (and reports) again; a name carrying a secret redacted."""
        shown: dict[str, Any] = {
            key: _unique([_redacted(i) for i in value]) if isinstance(value, list) else value
            for key, value in asdict(self).items()
        }
        return SyncReport(**shown)


def _redacted(item: Any) -> Any:
    if isinstance(item, str):
        return redact_name(item)
    if isinstance(item, dict) and isinstance(item.get("filename"), str):
        return {**item, "filename": redact_name(item["filename"])}
    return item


def _unique(items: list[Any]) -> list[Any]:
    out, seen = [], set()
    for item in items:
        if repr(item) not in seen:
            seen.add(repr(item))
            out.append(item)
    return out
