"""One injected clock: every part of a daemon stamps, ages and gates on the clock it was built
with, so a test moves time for all of them at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memoryd.base.clock import ManualClock, SystemClock
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings
from tests.support.transcripts import new_session

T0 = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)


def test_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(T0)
    assert clock.now() == T0 and clock.time() == T0.timestamp()
    before = clock.monotonic()
    assert clock.advance(timedelta(hours=2)) == T0 + timedelta(hours=2)
    assert clock.monotonic() - before >= 7200  # monotonic time moves with every advance
    clock.set(T0)
    assert clock.now() == T0 and clock.monotonic() - before >= 7200  # a jump back moves wall time only
    with pytest.raises(ValueError, match="set()"):
        clock.advance(-1)
    with pytest.raises(ValueError, match="timezone-aware"):
        ManualClock(datetime(2026, 1, 1))
    assert SystemClock().now().tzinfo is not None


def test_every_part_stamps_with_the_daemons_clock(home: Path, project: Path) -> None:
    clock = ManualClock(T0)
    daemon = Daemon(make_settings(home), clock=clock)  # not started: nothing runs in the background
    try:
        store = daemon.stores.for_cwd(str(project))
        saved = store.save(name="Use pnpm", description="Always use pnpm for installs", type="feedback", body="pnpm")
        session = new_session(daemon.settings.transcript_roots[0], str(project))
        session.user("hello")
        job = daemon.extraction.get_job(daemon.turns.turn_end(session.session_id, str(session.path), str(project)))
        assert job.created_at == T0.timestamp()  # the extraction queue
        daemon.transcripts.pipeline.advance(session.path)
        cursor = daemon.state.query_one("SELECT updated_at FROM transcript_files")
        assert cursor is not None and cursor["updated_at"] == T0.timestamp()  # the transcript cursors
        assert daemon.meter.today() == "2026-03-04"  # the token meter's day
        item = daemon.review.propose(store, name="Tabs", description="Tabs in Go", type="feedback", body="tabs")
        assert item is not None and daemon.review.get(item).created_at == T0.timestamp()  # the review queue

        clock.advance(timedelta(days=1, minutes=5))
        run_id = daemon.dream.run(str(project), force=True)
        daemon.dream.wait()
        run = daemon.dream.runs(str(project))[0]
        assert (
            run.run_id == run_id and run.started_at == (T0 + timedelta(days=1, minutes=5)).isoformat()
        )  # the run records
        gates = {g.name: g for g in daemon.dream.gates.check(store)}
        assert gates["time"].value == 0 and not gates["time"].passes  # the lock's mtime is the clock's, so 0 h since
        clock.advance(timedelta(hours=24))
        assert {g.name: g for g in daemon.dream.gates.check(store)}["time"].passes  # 24 h later on the clock alone

        assert daemon.status.report()["uptime_seconds"] >= 2 * 86400  # the status' uptime
        assert saved.memory.filename in {h.filename for h in store.all_headers()}
    finally:
        daemon.stop()
        daemon.state.close()
