"""Daily-log mode: local-midnight rollover, concurrent appends, secrets, and extraction wiring."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from memoryd.base.clock import ManualClock
from memoryd.base.errors import InvalidMemory, SecretDetected
from memoryd.config import ProjectSettings, Settings
from memoryd.service.daemon import Daemon
from memoryd.store.daily_log import DailyLog, append_daily_log, daily_log_path
from memoryd.store.memdir import MemoryDir

EST = timezone(timedelta(hours=-5))


def test_rollover_at_local_midnight(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    store = MemoryDir(mem)
    before = datetime(2026, 3, 1, 4, 59, 59, tzinfo=UTC)  # 23:59:59 on Feb 28 in UTC-5
    at = datetime(2026, 3, 1, 5, 0, 0, tzinfo=UTC)  # 00:00:00 on Mar 1 in UTC-5
    p1 = append_daily_log(store, "late fact", now=before, tz=EST)
    p2 = append_daily_log(store, "early fact", now=at, tz=EST)
    assert p1 == mem / "logs" / "2026" / "02" / "2026-02-28.md"
    assert p2 == mem / "logs" / "2026" / "03" / "2026-03-01.md"
    assert p1.read_text() == "# 2026-02-28\n\n- 23:59 late fact\n"
    assert p2.read_text() == "# 2026-03-01\n\n- 00:00 early fact\n"


def test_machine_local_zone_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        path = append_daily_log(MemoryDir(tmp_path), "x fact", now=datetime(2026, 12, 31, 15, 0, tzinfo=UTC))
        assert path == daily_log_path(tmp_path, datetime(2027, 1, 1).date())
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_multiline_entry_is_one_indented_bullet(tmp_path: Path) -> None:
    now = datetime(2026, 1, 5, 12, 30, tzinfo=EST)
    path = append_daily_log(
        MemoryDir(tmp_path), "[feedback] use pnpm: not npm\nbecause lockfile\n\nis pnpm", now=now, tz=EST
    )
    assert path.read_text().endswith("- 12:30 [feedback] use pnpm: not npm\n  because lockfile\n\n  is pnpm\n")


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    now = datetime(2026, 1, 5, 12, 0, tzinfo=EST)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(25):
                append_daily_log(MemoryDir(tmp_path), f"entry-{n}-{i}", now=now, tz=EST)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    lines = daily_log_path(tmp_path, now.date()).read_text().splitlines()
    assert lines[0] == "# 2026-01-05" and sorted(lines[2:]) == sorted(
        f"- 12:00 entry-{n}-{i}" for n in range(8) for i in range(25)
    )


def test_secrets_and_empty_refused_nothing_written(tmp_path: Path) -> None:
    now = datetime(2026, 1, 5, 12, 0, tzinfo=EST)
    append_daily_log(MemoryDir(tmp_path), "kept fact", now=now, tz=EST)
    with pytest.raises(SecretDetected):
        append_daily_log(MemoryDir(tmp_path), "the key is AKIAIOSFODNN7EXAMPLE ok", now=now, tz=EST)
    with pytest.raises(InvalidMemory):
        append_daily_log(MemoryDir(tmp_path), "  \n ", now=now, tz=EST)
    assert daily_log_path(tmp_path, now.date()).read_text() == "# 2026-01-05\n\n- 12:00 kept fact\n"


def test_extraction_in_daily_log_mode_appends_and_never_touches_index(settings: Settings, project: Path) -> None:
    settings.projects[str(project)] = ProjectSettings(mode="daily-log")
    fixed = datetime(2026, 4, 2, 9, 15, tzinfo=UTC)
    daemon = Daemon(settings, clock=ManualClock(fixed))
    daemon.daily_log = DailyLog(now=daemon.clock.now, tz=UTC)
    daemon.extraction.on_daily_log = daemon.daily_log.append_candidate
    store = daemon.stores.for_cwd(str(project))
    assert daemon.modes.mode_for(store) == "daily-log"
    from memoryd.extract.offline import Candidate

    written, refused, _ = daemon.extraction._apply(
        store, [Candidate(name="pnpm", type="feedback", description="use pnpm", body="lockfile is pnpm")]
    )
    assert written == ["logs:pnpm"] and refused == []
    log = store.path / "logs" / "2026" / "04" / "2026-04-02.md"
    assert "- 09:15 [feedback] pnpm: use pnpm\n  lockfile is pnpm\n" in log.read_text()
    assert not (store.path / "MEMORY.md").exists() and store.list() == []
