"""The reliability probes' harness: a real daemon in a temporary home, and the held/tried count of each probe."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.servers import DaemonProcess, daemon_env


@dataclass
class Item:
    """One probe's score: how often it was tried, how often it held, and what broke."""

    name: str
    tried: int = 0
    held: int = 0
    failures: list[str] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)  # what a probe measured (RSS, latencies), for the JSON

    def check(self, ok: bool, what: str) -> None:
        self.tried += 1
        self.held += int(ok)
        if not ok:
            self.failures.append(what)


class Harness:
    """A daemon subprocess in a temporary home with its own project, restartable after a kill."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.roots = self.home / "transcripts"
        self.project = base / "work" / "project"
        (self.project / ".git").mkdir(parents=True)
        self.home.mkdir(parents=True)
        (self.home / "config.toml").write_text(f'[transcripts]\nroots = ["{self.roots}"]\n')
        (base / "user").mkdir()
        self.env = daemon_env(self.home, HOME=str(base / "user"))  # never the real ~/.claude (memory_base = "auto")
        self.proc = DaemonProcess(home=self.home, env=self.env).start()

    def restart(self) -> None:
        self.proc.kill()
        self.proc = DaemonProcess(home=self.home, env=self.env).start()

    def client(self) -> httpx.Client:
        return self.proc.client(timeout=30)

    def rss_mb(self) -> float:
        assert self.proc.proc is not None
        status = Path(f"/proc/{self.proc.proc.pid}/status").read_text().splitlines()
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) / 1024

    def cli(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memoryd", *args],
            env={**self.env, "MEMORYD_PORT": self.proc.url.rsplit(":", 1)[1]},
            cwd=cwd or self.project,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def memory_dir(self) -> Path:
        with self.client() as c:
            return Path(c.get("/v1/index", params={"cwd": str(self.project)}).json()["memory_dir"])

    def save(self, c: httpx.Client, name: str, description: str, body: str) -> httpx.Response:
        return c.post(
            "/v1/memories",
            json={"cwd": str(self.project), "name": name, "description": description, "type": "feedback", "body": body},
        )

    def turn_end(self, c: httpx.Client, writer: Any) -> dict[str, Any]:
        job_id = c.post(
            "/v1/events/turn-end",
            json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(self.project)},
        ).json()["job_id"]
        deadline = time.monotonic() + 30
        while (job := c.get(f"/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        return dict(job)
