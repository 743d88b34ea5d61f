"""Daily-log mode (spec §1; seeds' KAIROS): extraction appends timestamped bullets to
`memory/logs/YYYY/MM/YYYY-MM-DD.md` (local date) instead of topic files; the dream distils them.
MEMORY.md is never touched here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import InvalidMemory
from memoryd.store.memdir import MemoryDir
from memoryd.store.model import MemoryDraft


def daily_log_path(memory_dir: Path, day: date) -> Path:
    """`<memory_dir>/logs/YYYY/MM/YYYY-MM-DD.md`, the seeds' getAutoMemDailyLogPath layout."""
    return memory_dir / limits.DAILY_LOGS_DIRNAME / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"


def append_daily_log(
    store: MemoryDir, entry: str, *, now: datetime, tz: tzinfo | None = None, source: str = "daily-log"
) -> Path:
    """Append one `- HH:MM entry` bullet to the log of `now`'s local date, through the store's one write path."""
    text = entry.strip()
    if not text:
        raise InvalidMemory("daily-log entry is empty: pass the fact to log.")
    if len(text.encode("utf-8")) > limits.MEMORY_BODY_MAX_BYTES:
        raise InvalidMemory(f"daily-log entry is over {limits.MEMORY_BODY_MAX_BYTES} bytes: log a shorter summary.")
    local = now.astimezone(tz)  # tz=None → the machine's local zone; rollover happens at local midnight
    relpath = daily_log_path(Path(), local.date()).as_posix()
    first, *rest = text.splitlines()
    bullet = f"- {local:%H:%M} {first}\n" + "".join(f"  {line}\n" if line.strip() else "\n" for line in rest)

    def build(prior: str | None) -> str:
        existing = prior if prior is not None else f"# {local:%Y-%m-%d}\n\n"
        return (existing if existing.endswith("\n") else existing + "\n") + bullet

    return store.write_aux(relpath, build, fields={"entry": text}, source=source)


def format_candidate(name: str, type_: str, description: str, body: str) -> str:
    """One extracted memory as a log entry: `[type] name: description` then the body."""
    head = f"[{type_}] {' '.join(name.split())}: {' '.join(description.split())}"
    body = body.strip()
    return f"{head}\n{body}" if body and body != description.strip() else head


@dataclass(kw_only=True, eq=False)
class DailyLog:
    """What extraction calls instead of `MemoryDir.save` when a project is in daily-log mode."""

    now: Callable[[], datetime]
    tz: tzinfo | None = None

    def append(self, store: MemoryDir, entry: str) -> Path:
        return append_daily_log(store, entry, now=self.now(), tz=self.tz)

    def append_candidate(self, store: MemoryDir, cand: MemoryDraft, day: date | None = None) -> Path:
        """Extraction's `on_daily_log(store, candidate, day)` hook; `day` is ignored (the clock decides)."""
        return self.append(store, format_candidate(cand.name, cand.type, cand.description, cand.body))

    def logs(self, store: MemoryDir) -> list[Path]:
        """Every daily log of a memory dir, oldest first."""
        return sorted((store.path / limits.DAILY_LOGS_DIRNAME).glob("*/*/*.md"))
