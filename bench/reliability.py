#!/usr/bin/env python3
"""Hostile input and crashes against a real daemon subprocess: each probe is tried several
times and counted as held or not. Prints one line per item, writes JSON, exits 1 when any
probe did not hold (tests/test_reliability.py runs it in CI).

    .venv/bin/python bench/reliability.py [--dream-kills 5] [--giant-line-mb 50] [--json bench/results/reliability.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402
from tests.support.transcripts import new_session  # noqa: E402

PROSE_PASSWORD = "4jI0SB7A0!94bxuQCxx7"
HOSTILE_LINES = [
    '{"type":"user","message":"oops"}', '{"type":"user","message":["a"]}', '{"type":"attachment","attachment":"x"}',
    '{"a":' + "[" * 5000 + "]" * 5000 + "}", '{"a":' + "9" * 4400 + "}", "[1,2]", '{"type":"assistant","message":{"content":[{"type":"tool_use","name":5,"input":[]}]}}',
]


@dataclass
class Item:
    name: str
    tried: int = 0
    held: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        self.tried += 1
        self.held += int(ok)
        if not ok:
            self.failures.append(what)


class Harness:
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

    def memory_dir(self) -> Path:
        with self.client() as c:
            return Path(c.get("/v1/index", params={"cwd": str(self.project)}).json()["memory_dir"])

    def save(self, c: httpx.Client, name: str, description: str, body: str) -> httpx.Response:
        return c.post("/v1/memories", json={"cwd": str(self.project), "name": name, "description": description, "type": "feedback", "body": body})

    def turn_end(self, c: httpx.Client, writer: Any) -> dict[str, Any]:
        job_id = c.post("/v1/events/turn-end", json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(self.project)}).json()["job_id"]
        deadline = time.monotonic() + 30
        while (job := c.get(f"/v1/jobs/{job_id}").json())["status"] in ("queued", "running"):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        return dict(job)


def probe_symlinks(h: Harness) -> Item:
    item = Item("symlinks never followed")
    with h.client() as c:
        h.save(c, "Deploy day", "We deploy on Tuesdays", "Tuesdays.")
        folder = h.memory_dir()
        (folder / "user_tok.md").symlink_to(h.home / "token")
        (folder / "user_passwd.md").symlink_to("/etc/passwd")
        for name in ("user_tok.md", "user_passwd.md"):
            r = c.get(f"/v1/memories/{name}", params={"cwd": str(h.project)})
            item.check(r.status_code >= 400 and h.proc.token not in r.text and "root:" not in r.text, f"GET {name} -> {r.status_code}")
        answer = c.post("/v1/recall", json={"cwd": str(h.project), "query": "token passwd root deploy", "session_id": "s-sym"}).text
        item.check(h.proc.token not in answer and "root:x" not in answer, "recall injected a link's target")
        item.check("tok" not in (folder / "MEMORY.md").read_text(), "MEMORY.md lists a link")
        for link in ("user_tok.md", "user_passwd.md"):
            (folder / link).unlink()
    return item


def probe_secrets(h: Harness) -> Item:
    item = Item("no secret through a side door")
    writer = new_session(h.roots, str(h.project))
    writer.user(f"remember that the staging db password is {PROSE_PASSWORD}")
    writer.assistant("Noted.")
    with h.client() as c:
        job = h.turn_end(c, writer)
        item.check(PROSE_PASSWORD not in json.dumps(job), "job record")
    for path in [*h.home.rglob("*"), *h.memory_dir().rglob("*")]:
        if path.is_file() and not path.is_symlink() and h.roots not in path.parents:
            item.check(PROSE_PASSWORD.encode() not in path.read_bytes() and PROSE_PASSWORD not in path.name, str(path.relative_to(h.base)))
    with sqlite3.connect(h.home / "state.db") as db:
        item.check(PROSE_PASSWORD not in "\n".join(db.iterdump()), "state.db")
    return item


def probe_hosts(h: Harness) -> Item:
    item = Item("foreign Host / Origin refused")
    with h.client() as c:
        for host in ("evil.com", "evil.com:7377", "127.0.0.1.evil.com", "localhost.evil.com"):
            r = c.get("/v1/status", headers={"Host": host})
            item.check(r.status_code == 403, f"Host {host} -> {r.status_code}")
        r = c.post("/v1/memories", headers={"Origin": "https://evil.com"},
                   json={"cwd": str(h.project), "name": "x", "description": "d", "type": "user", "body": "b"})
        item.check(r.status_code == 403, f"Origin evil -> {r.status_code}")
    return item


def probe_hostile_lines(h: Harness) -> Item:
    item = Item("hostile transcript lines never wedge a session")
    writer = new_session(h.roots, str(h.project))
    with h.client() as c:
        for line in HOSTILE_LINES:
            writer.raw(line + "\n")
            writer.user(f"Remember: rule number {item.tried} is to keep commits small.")
            job = h.turn_end(c, writer)
            item.check(job.get("status") == "done", f"after {line[:40]!r}: {job.get('status')} {job.get('reason')}")
    return item


def probe_bad_inputs(h: Harness) -> Item:
    item = Item("bad input answers 4xx, nothing changes")
    folder = h.memory_dir()
    before = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    long_cwd = str(h.base / ("x" * 300))
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", "/v1/memories", {"cwd": long_cwd, "name": "n", "description": "d", "type": "user", "body": "b"}),
        ("POST", "/v1/memories", {"cwd": str(h.project), "name": "bad \ud800 name", "description": "d", "type": "user", "body": "b"}),
        ("POST", "/v1/memories", {"cwd": str(h.project), "name": "n", "description": "d", "type": "user", "body": "bad \ud800 body"}),
        ("POST", "/v1/events/turn-end", {"session_id": "s1", "transcript_path": str(h.roots / "a\x00b.jsonl"), "cwd": str(h.project)}),
        ("POST", "/v1/events/turn-end", {"session_id": "s1", "transcript_path": str(h.roots), "cwd": str(h.project)}),
        ("POST", "/v1/events/turn-end", {"session_id": "my session", "transcript_path": str(h.roots / "x.jsonl"), "cwd": str(h.project)}),
        ("DELETE", "/v1/memories/user_missing.md", {}),
    ]
    with h.client() as c:
        for method, path, body in cases:
            raw = json.dumps(body).encode("utf-8", "surrogatepass")
            try:
                r = c.request(method, path, content=raw if body else None, params={"cwd": str(h.project)} if method == "DELETE" else None,
                              headers={"content-type": "application/json"})
                item.check(400 <= r.status_code < 500, f"{method} {path} {str(body)[:60]} -> {r.status_code}")
            except httpx.HTTPError as exc:
                item.check(False, f"{method} {path} {str(body)[:60]} -> {exc.__class__.__name__}")
    after = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    item.check(before == after, "the memory dir changed")
    return item


def probe_dream_kills(h: Harness, trials: int, rng: random.Random) -> Item:
    item = Item("kill -9 during a dream loses nothing")
    for trial in range(trials):
        with h.client() as c:
            for i in range(12):
                h.save(c, f"pnpm rule {trial}-{i}", "Always use pnpm for installs, never npm", f"body {trial} {i}")
        folder = h.memory_dir()
        before = {p.name: p.read_text() for p in folder.glob("*.md") if p.name != "MEMORY.md"}
        with h.client() as c:
            run_id = c.post("/v1/dream/run", json={"cwd": str(h.project)}).json()["run_id"]
        time.sleep(rng.uniform(0.0, 0.15))
        h.restart()  # kill -9, then start again
        with h.client() as c:
            run = next(r for r in c.get("/v1/dream/runs", params={"cwd": str(h.project)}).json()["runs"] if r["run_id"] == run_id)
            after = {p.name: p.read_text() for p in folder.glob("*.md") if p.name != "MEMORY.md"}
            listed = {m["filename"] for m in c.get("/v1/memories", params={"cwd": str(h.project), "limit": 100}).json()["memories"]}
            index = (folder / "MEMORY.md").read_text()
        ok = run["status"] in ("failed", "done") and (after == before if run["status"] == "failed" else True)
        ok = ok and all(name in index for name in listed)
        item.check(ok, f"trial {trial}: run {run['status']}, files {'same' if after == before else 'changed'}")
        with h.client() as c:  # the next trial starts from a consolidated store
            for name in listed:
                c.delete(f"/v1/memories/{name}", params={"cwd": str(h.project)})
    return item


def probe_giant_line(h: Harness, giant_mb: int) -> Item:
    item = Item(f"a {giant_mb} MB line: bounded RSS, health answers")
    writer = new_session(h.roots, str(h.project))
    health: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=h.proc.url, timeout=10) as client:
            while not stop.is_set():
                t = time.perf_counter()
                client.get("/v1/health")
                health.append((time.perf_counter() - t) * 1000)
                time.sleep(0.02)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    with writer.path.open("w") as fh:
        fh.write('{"type":"user","message":{"role":"user","content":"' + "y" * (giant_mb << 20) + '"}}\n')
    writer.user("Remember: the line above was huge.")
    with h.client() as c:
        job = h.turn_end(c, writer)
        status = c.get("/v1/status").json()["transcripts"]
    stop.set()
    poller.join()
    assert h.proc.proc is not None
    rss = int(next(line for line in Path(f"/proc/{h.proc.proc.pid}/status").read_text().splitlines() if line.startswith("VmRSS")).split()[1]) / 1024
    item.check(job.get("status") == "done", f"job {job.get('status')}")
    item.check(status["oversized_lines"] >= 1, "oversized line not counted")
    item.check(rss <= 150, f"RSS {rss:.0f} MB")
    item.check(max(health) < 1000, f"/v1/health max {max(health):.0f} ms")
    return item


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dream-kills", type=int, default=5)
    parser.add_argument("--giant-line-mb", type=int, default=50)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "reliability.json"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    items: list[Item] = []
    with tempfile.TemporaryDirectory() as d:
        h = Harness(Path(d))
        try:
            probes: list[Callable[[], Item]] = [
                lambda: probe_symlinks(h), lambda: probe_secrets(h), lambda: probe_hosts(h), lambda: probe_hostile_lines(h),
                lambda: probe_bad_inputs(h), lambda: probe_dream_kills(h, args.dream_kills, rng), lambda: probe_giant_line(h, args.giant_line_mb),
            ]
            for probe in probes:
                items.append(probe())
        finally:
            h.proc.kill()
    print("reliability: tried / held")
    for it in items:
        print(f"  {it.name:50s} {it.held:3d} / {it.tried:<3d} {'ok' if it.held == it.tried else 'FAILED: ' + '; '.join(it.failures[:3])}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([it.__dict__ for it in items], indent=2))
    print(f"wrote {out}")
    return 0 if all(it.held == it.tried for it in items) else 1


if __name__ == "__main__":
    raise SystemExit(main())
