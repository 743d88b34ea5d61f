"""kill -9 during saves, many times: nothing acknowledged is lost, no temp file is left, and after
the restart MEMORY.md points at exactly the memories on disk."""

from __future__ import annotations

import os
import random
import threading
import time
from pathlib import Path

import httpx
import pytest

from memoryd.base.files import TEMP_DIRNAME
from tests.support.servers import DaemonProcess, daemon_env

TRIALS = 4


def _saver(proc: DaemonProcess, cwd: Path, prefix: str, acked: dict[str, str], stop: threading.Event) -> None:
    with proc.client(timeout=5) as c:
        i = 0
        while not stop.is_set():
            body = f"fact {prefix}-{i}"
            try:
                r = c.post(
                    "/v1/memories",
                    json={
                        "cwd": str(cwd),
                        "name": f"{prefix} {i}",
                        "description": f"crash trial {prefix} {i}",
                        "type": "project",
                        "body": body,
                    },
                )
            except httpx.HTTPError:
                return  # the daemon died mid-request: not acknowledged
            if r.status_code in (200, 201):
                acked[r.json()["filename"]] = body
            i += 1


@pytest.mark.e2e
def test_kill_9_during_saves_loses_nothing_acknowledged(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir()
    rng = random.Random(23)
    acked: dict[str, str] = {}
    memory_dir: Path | None = None
    threads: list[threading.Thread] = []
    for trial in range(TRIALS):
        proc = DaemonProcess(home=home, env=daemon_env(home))
        proc.start()
        try:
            with proc.client() as c:
                memory_dir = Path(c.get("/v1/index", params={"cwd": str(cwd)}).json()["memory_dir"])
                _check(c, cwd, memory_dir, acked)  # what the last trial acknowledged survived its kill
            stop = threading.Event()
            threads = [
                threading.Thread(target=_saver, args=(proc, cwd, f"t{trial}w{w}", acked, stop)) for w in range(3)
            ]
            for t in threads:
                t.start()
            threading.Event().wait(rng.uniform(0.1, 0.5))
            _wait_for_a_temp_file(memory_dir)  # a write is under way: its temp file exists, its rename has not happened
        finally:
            proc.kill()  # SIGKILL, mid-save
            stop.set()
            for t in threads:
                t.join(timeout=10)
    assert memory_dir is not None and len(acked) >= TRIALS * 3, "the saves ran"
    proc = DaemonProcess(home=home, env=daemon_env(home))
    proc.start()
    try:
        with proc.client() as c:
            _check(c, cwd, memory_dir, acked)
    finally:
        proc.kill()


def _wait_for_a_temp_file(memory_dir: Path, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(e.name.startswith(".tmp-") for e in os.scandir(memory_dir / TEMP_DIRNAME)):
                return
        except FileNotFoundError:
            pass


def _check(c: httpx.Client, cwd: Path, memory_dir: Path, acked: dict[str, str]) -> None:
    listed = c.get("/v1/memories", params={"cwd": str(cwd)}).json()
    on_disk = {m["filename"] for m in listed["memories"]}
    assert listed["invalid"] == []
    for filename, body in acked.items():
        assert filename in on_disk, f"acknowledged {filename} lost"
        assert c.get(f"/v1/memories/{filename}", params={"cwd": str(cwd)}).json()["body"] == body
    assert not list(memory_dir.rglob(".tmp-*")), "a crash's temp files are removed at start"
    index = c.get("/v1/index", params={"cwd": str(cwd)}).json()["content"] if on_disk else ""
    pointed = (
        {
            line.split("](", 1)[1].split(")", 1)[0]
            for line in (memory_dir / "MEMORY.md").read_text().splitlines()
            if line.startswith("- [")
        }
        if on_disk
        else set()
    )
    assert pointed == on_disk, (
        f"index and files differ: missing {sorted(on_disk - pointed)[:5]}, extra {sorted(pointed - on_disk)[:5]}"
    )
    assert index is not None
