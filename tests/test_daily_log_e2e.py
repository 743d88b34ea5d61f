"""Daily-log mode end to end: turn end → extraction appends to today's log (MEMORY.md untouched)
→ Auto-Dream distils the log into a topic file and the index."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from memoryd.config import ProjectSettings, Settings
from memoryd.server import build_app
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon
from tests.support.servers import ThreadedServer
from tests.support.transcripts import new_session


def test_daily_log_then_dream_distils(settings: Settings, project: Path) -> None:
    settings.projects[str(project)] = ProjectSettings(mode="daily-log")
    daemon = Daemon(settings)
    with ThreadedServer(build_app(daemon)) as server:
        live = LiveDaemon(daemon, server)
        try:
            s = new_session(settings.transcript_roots[0], str(project))
            s.user("Remember: always use pnpm, never npm, because our lockfile is pnpm-lock.yaml.")
            s.assistant("Understood, pnpm it is.")
            r = live.client.post(
                "/v1/events/turn-end",
                json={"session_id": s.session_id, "transcript_path": str(s.path), "cwd": str(project)},
            )
            assert r.status_code in (200, 202), r.text
            store = daemon.stores.for_cwd(str(project))
            today = datetime.now().astimezone()
            log = store.path / "logs" / f"{today:%Y}" / f"{today:%m}" / f"{today:%Y-%m-%d}.md"
            deadline = time.monotonic() + 15
            while not log.exists():
                assert time.monotonic() < deadline, "extraction did not append to the daily log"
                time.sleep(0.05)
            assert "pnpm" in log.read_text()
            assert store.list() == [] and not (store.path / "MEMORY.md").exists()
            r = live.client.post("/v1/dream/run", json={"cwd": str(project)})
            assert r.status_code in (200, 202), r.text
            run_id = r.json()["run_id"]
            deadline = time.monotonic() + 20
            while True:
                runs = live.client.get("/v1/dream/runs", params={"cwd": str(project)}).json()["runs"]
                run = next((x for x in runs if x["run_id"] == run_id), None)
                if run and run["status"] != "running":
                    break
                assert time.monotonic() < deadline, "dream did not finish"
                time.sleep(0.05)
            assert run["status"] == "done", run
            memories = live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
            assert any("pnpm" in (m["description"] + m["name"]).lower() for m in memories), memories
            assert "pnpm" in (store.path / "MEMORY.md").read_text().lower()
        finally:
            live.close()
