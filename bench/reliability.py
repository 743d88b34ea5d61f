#!/usr/bin/env python3
"""Hostile input and crashes against a real daemon subprocess: each probe is tried several
times and counted as held or not. Prints one line per item and the held/failed totals, writes
JSON, exits 1 when any probe did not hold (tests/test_reliability.py runs it in CI).

The second round (issue 31) adds: YAML alias bombs at every door (memory dir, import, team
sync), links and secret names in team sync, a cloned repo's settings choosing the memory dir,
kill -9 inside a review approval, import bombs, framing, Origin ports and split secrets.

    .venv/bin/python bench/reliability.py [--dream-kills 5] [--review-kills 3] [--giant-line-mb 50] [--only input] [--json FILE]
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from reliability_clients import CLIENT_PROBES  # noqa: E402  (issue 52: a stranger on the port vs the clients)
from reliability_files import FILE_PROBES  # noqa: E402  (issue 41 items 5, 7, 8: bench/reliability_files.py)
from reliability_harness import Harness, Item  # noqa: E402
from reliability_identity import probe_identity  # noqa: E402
from reliability_input import INPUT_PROBES  # noqa: E402  (issue 41: inputs a person or a cloned repo controls)
from reliability_r4 import R4_PROBES  # noqa: E402  (issue 52: bench/reliability_r4.py)
from reliability_reads import READS_PROBES  # noqa: E402  (issue 52: reads never wait on writes)

from tests.support.bombs import RepeatedBytes  # noqa: E402
from tests.support.servers import DaemonProcess  # noqa: E402
from tests.support.transcripts import new_session  # noqa: E402

# Probe groups by issue, run after round two's probes (before the settings-trust probe, which creates ~/.claude).
ISSUE_GROUPS: dict[str, list[Callable[[Harness], Item]]] = {
    "input": INPUT_PROBES,
    "r4": R4_PROBES,
    "clients": CLIENT_PROBES,
    "reads": READS_PROBES,
}

PROSE_PASSWORD = "4jI0SB7A0!94bxuQCxx7"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
# 9 levels of 9 aliases (~387 million strings once a value becomes text): issue 31's 361 bytes → 5 GB.
ALIAS_BOMB = (
    "---\nname: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))
    + "description: *i\ntype: user\n---\nbody\n"
)
GOOD_NOTE = "---\nname: {name}\ndescription: {name} imports fine\ntype: user\n---\nThe {name} note.\n"
HOSTILE_LINES = [
    '{"type":"user","message":"oops"}',
    '{"type":"user","message":["a"]}',
    '{"type":"attachment","attachment":"x"}',
    '{"a":' + "[" * 5000 + "]" * 5000 + "}",
    '{"a":' + "9" * 4400 + "}",
    "[1,2]",
    '{"type":"assistant","message":{"content":[{"type":"tool_use","name":5,"input":[]}]}}',
]


def probe_symlinks(h: Harness) -> Item:
    item = Item("symlinks never followed")
    with h.client() as c:
        h.save(c, "Deploy day", "We deploy on Tuesdays", "Tuesdays.")
        folder = h.memory_dir()
        (folder / "user_tok.md").symlink_to(h.home / "token")
        (folder / "user_passwd.md").symlink_to("/etc/passwd")
        for name in ("user_tok.md", "user_passwd.md"):
            r = c.get(f"/v1/memories/{name}", params={"cwd": str(h.project)})
            item.check(
                r.status_code >= 400 and h.proc.token not in r.text and "root:" not in r.text,
                f"GET {name} -> {r.status_code}",
            )
        answer = c.post(
            "/v1/recall", json={"cwd": str(h.project), "query": "token passwd root deploy", "session_id": "s-sym"}
        ).text
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
            item.check(
                PROSE_PASSWORD.encode() not in path.read_bytes() and PROSE_PASSWORD not in path.name,
                str(path.relative_to(h.base)),
            )
    with sqlite3.connect(h.home / "state.db") as db:
        item.check(PROSE_PASSWORD not in "\n".join(db.iterdump()), "state.db")
    return item


def probe_hosts(h: Harness) -> Item:
    item = Item("foreign Host / Origin refused")
    with h.client() as c:
        for host in ("evil.com", "evil.com:7377", "127.0.0.1.evil.com", "localhost.evil.com"):
            r = c.get("/v1/status", headers={"Host": host})
            item.check(r.status_code == 403, f"Host {host} -> {r.status_code}")
        r = c.post(
            "/v1/memories",
            headers={"Origin": "https://evil.com"},
            json={"cwd": str(h.project), "name": "x", "description": "d", "type": "user", "body": "b"},
        )
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
        (
            "POST",
            "/v1/memories",
            {"cwd": str(h.project), "name": "bad \ud800 name", "description": "d", "type": "user", "body": "b"},
        ),
        (
            "POST",
            "/v1/memories",
            {"cwd": str(h.project), "name": "n", "description": "d", "type": "user", "body": "bad \ud800 body"},
        ),
        (
            "POST",
            "/v1/events/turn-end",
            {"session_id": "s1", "transcript_path": str(h.roots / "a\x00b.jsonl"), "cwd": str(h.project)},
        ),
        ("POST", "/v1/events/turn-end", {"session_id": "s1", "transcript_path": str(h.roots), "cwd": str(h.project)}),
        (
            "POST",
            "/v1/events/turn-end",
            {"session_id": "my session", "transcript_path": str(h.roots / "x.jsonl"), "cwd": str(h.project)},
        ),
        ("DELETE", "/v1/memories/user_missing.md", {}),
    ]
    with h.client() as c:
        for method, path, body in cases:
            raw = json.dumps(body).encode("utf-8", "surrogatepass")
            try:
                r = c.request(
                    method,
                    path,
                    content=raw if body else None,
                    params={"cwd": str(h.project)} if method == "DELETE" else None,
                    headers={"content-type": "application/json"},
                )
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
            run = next(
                r
                for r in c.get("/v1/dream/runs", params={"cwd": str(h.project)}).json()["runs"]
                if r["run_id"] == run_id
            )
            after = {p.name: p.read_text() for p in folder.glob("*.md") if p.name != "MEMORY.md"}
            listed = {
                m["filename"]
                for m in c.get("/v1/memories", params={"cwd": str(h.project), "limit": 100}).json()["memories"]
            }
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
    rss = (
        int(
            next(
                line
                for line in Path(f"/proc/{h.proc.proc.pid}/status").read_text().splitlines()
                if line.startswith("VmRSS")
            ).split()[1]
        )
        / 1024
    )
    item.check(job.get("status") == "done", f"job {job.get('status')}")
    item.check(status["oversized_lines"] >= 1, "oversized line not counted")
    item.check(rss <= 150, f"RSS {rss:.0f} MB")
    item.check(max(health) < 1000, f"/v1/health max {max(health):.0f} ms")
    return item


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=x", "-c", "user.email=x@x", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def push_with_plain_git(remote: Path, clone: Path, files: dict[str, str]) -> None:
    """What any member who can push may do: commit files to the team branch without memoryd."""
    if not clone.exists():
        git("clone", "-q", "-b", "memory", str(remote), str(clone))
    git("pull", "-q", cwd=clone)
    for name, text in files.items():
        (clone / name).write_text(text)
    git("add", ".", cwd=clone)
    git("commit", "-qm", "member change", cwd=clone)
    git("push", "-q", "origin", "memory", cwd=clone)


def probe_alias_bomb(h: Harness) -> Item:
    item = Item("YAML alias bomb: refused, cheap, listed invalid")
    folder = h.memory_dir()
    rss = h.rss_mb()
    (folder / "user_bomb.md").write_text(ALIAS_BOMB)
    with h.client() as c:
        for what, call in (
            ("list", lambda: c.get("/v1/memories", params={"cwd": str(h.project)})),
            (
                "recall",
                lambda: c.post("/v1/recall", json={"cwd": str(h.project), "query": "lol bomb", "session_id": "s-bomb"}),
            ),
            ("get", lambda: c.get("/v1/memories/user_bomb.md", params={"cwd": str(h.project)})),
            (
                "mcp",
                lambda: c.post(
                    "/mcp",
                    json={
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "memory_search", "arguments": {"cwd": str(h.project), "query": "lol"}},
                    },
                    headers={"accept": "application/json, text/event-stream"},
                ),
            ),
        ):
            t = time.perf_counter()
            r = call()
            ms = (time.perf_counter() - t) * 1000
            item.check(
                ms < 2000 and "lol, lol" not in r.text and "'lol'" not in r.text,
                f"{what}: {ms:.0f} ms, {r.status_code}",
            )
        invalid = {f["filename"]: f["error"] for f in c.get("/v1/status").json()["invalid_files"].get(str(folder), [])}
        item.check("anchor or alias" in invalid.get("user_bomb.md", ""), "not listed invalid with its reason")
    item.check(h.rss_mb() - rss < 100, f"RSS {rss:.0f} → {h.rss_mb():.0f} MB")
    (folder / "user_bomb.md").unlink()
    return item


def probe_import(h: Harness) -> Item:
    item = Item("import: sized before read, one bad file skipped")
    source = h.base / "import-src"
    source.mkdir()
    (source / "bomb.md").write_text(ALIAS_BOMB)
    (source / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (source / "huge.md").write_bytes(b"x" * (50 << 20))
    (source / "fine.md").write_text(GOOD_NOTE.format(name="fine"))
    archive = h.base / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("memory/user_big.md")
        info.size = 600 << 20
        tar.addfile(info, io.BufferedReader(RepeatedBytes(info.size), 1 << 20))
        data = GOOD_NOTE.format(name="archived").encode()
        info = tarfile.TarInfo("memory/user_archived.md")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    for src, wanted in ((source, {"saved": 1, "invalid": 3}), (archive, {"saved": 1, "invalid": 1})):
        code = (
            "import runpy, sys\nsys.argv = ['memoryd', *sys.argv[1:]]\ntry:\n    runpy.run_module('memoryd', run_name='__main__')\n"
            "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n    print('RSS', int(hwm.split()[1]) // 1024, file=sys.stderr)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, "import", "--cwd", str(h.project), "--from", str(src), "--json"],
            env={**h.env, "MEMORYD_PORT": h.proc.url.rsplit(":", 1)[1]},
            capture_output=True,
            text=True,
            timeout=300,
        )
        rss = int(done.stderr.rsplit("RSS ", 1)[1].split()[0]) if "RSS " in done.stderr else -1
        try:
            counts = json.loads(done.stdout)["counts"]
        except ValueError:
            counts = {"error": done.stderr[-200:]}
        item.check(counts == wanted, f"{src.name}: {counts}")
        item.check(
            0 < rss < 200,
            f"{src.name}: CLI peak RSS {rss} MB ({archive.stat().st_size // 1024} KB archive inflating to 600 MB)",
        )
    return item


def probe_team(h: Harness) -> Item:
    item = Item("team sync: no links, no secret names, no bombs")
    remote = h.base / "team.git"
    git("init", "--bare", "-q", str(remote))
    with h.client() as c:
        r = c.post("/v1/team/init", json={"cwd": str(h.project), "remote": str(remote)})
        item.check(r.status_code == 200, f"team init {r.status_code}")
        team = h.memory_dir() / "team"
        c.post(
            "/v1/team/memories",
            json={
                "cwd": str(h.project),
                "name": "CI",
                "description": "CI runs on every push",
                "type": "project",
                "body": "GitHub Actions.",
            },
        )
        secret_file = h.base / "user" / "id_rsa"
        secret_file.write_text("PRECIOUS-PRIVATE-KEY\n")
        (team / "user_passwd.md").symlink_to("/etc/passwd")
        (team / "user_key.md").symlink_to(secret_file)
        os.mkfifo(team / "user_fifo.md")
        (team / f"user_{GITHUB_TOKEN}.md").write_text(GOOD_NOTE.format(name="harmless"))
        t = time.perf_counter()
        report = c.post("/v1/team/sync", json={"cwd": str(h.project)}).json()
        item.check(time.perf_counter() - t < 30, "sync stalled (a FIFO read?)")
        history = git("--git-dir", str(remote), "log", "-p", "--all", "--format=%an %s%n%b")
        item.check("root:" not in history and "PRECIOUS" not in history, "a link's target reached the remote")
        item.check(
            GITHUB_TOKEN not in history
            and GITHUB_TOKEN not in git("--git-dir", str(remote), "ls-tree", "-r", "--name-only", "memory"),
            "a secret file name reached the remote",
        )
        item.check(GITHUB_TOKEN not in json.dumps(report), "the sync report echoes a secret name")
        item.check(GITHUB_TOKEN not in (team / "MEMORY.md").read_text(), "MEMORY.md lists a secret name")
        recall = c.post(
            "/v1/recall", json={"cwd": str(h.project), "query": "harmless imports fine", "session_id": "s-team"}
        ).text
        item.check(GITHUB_TOKEN not in recall, "recall injected a secret name")
        # A member pushes an alias bomb and a secret-named file with plain git.
        push_with_plain_git(
            remote,
            h.base / "clone",
            {"user_bomb.md": ALIAS_BOMB, f"reference_{GITHUB_TOKEN}.md": GOOD_NOTE.format(name="pushed")},
        )
        rss = h.rss_mb()
        t = time.perf_counter()
        report = c.post("/v1/team/sync", json={"cwd": str(h.project)}).json()
        ms = (time.perf_counter() - t) * 1000
        item.check(
            ms < 10_000 and h.rss_mb() - rss < 100, f"bomb sync {ms:.0f} ms, RSS {rss:.0f} → {h.rss_mb():.0f} MB"
        )
        item.check(
            not (team / "user_bomb.md").exists() and not (team / f"reference_{GITHUB_TOKEN}.md").exists(),
            "a hostile file was written here",
        )
        for link in ("user_passwd.md", "user_key.md", "user_fifo.md", f"user_{GITHUB_TOKEN}.md"):
            (team / link).unlink()
    return item


def probe_settings_trust(h: Harness) -> Item:
    item = Item("a cloned repo cannot choose the memory dir")
    user = h.base / "user"
    (user / ".claude").mkdir(exist_ok=True)
    ssh = user / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "id_ed25519").write_text("key\n")
    repo = h.base / "cloned"
    git("init", "-q", str(repo))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": "~/.ssh"}))
    git("add", "-f", ".", cwd=repo)
    git("commit", "-qm", "settings", cwd=repo)
    done = h.cli(
        "save",
        "--cwd",
        str(repo),
        "-t",
        "project",
        "-n",
        "Cloned",
        "-d",
        "a save in a cloned repo",
        "-b",
        "body",
        cwd=repo,
    )
    item.check(done.returncode == 0, f"save failed: {done.stderr[-200:]}")
    item.check(
        sorted(p.name for p in ssh.iterdir()) == ["id_ed25519"],
        f"~/.ssh now holds {sorted(p.name for p in ssh.iterdir())}",
    )
    # A trusted autoMemoryDirectory that is a link is refused.
    (h.base / "real-mem").mkdir()
    (user / "mem").symlink_to(h.base / "real-mem", target_is_directory=True)
    (user / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/mem"}))
    other = h.base / "other"
    (other / ".git").mkdir(parents=True)
    done = h.cli(
        "save", "--cwd", str(other), "-t", "project", "-n", "Linked", "-d", "through a link", "-b", "body", cwd=other
    )
    item.check(
        done.returncode != 0 and not any((h.base / "real-mem").iterdir()),
        f"a linked memory dir was used: {done.returncode}",
    )
    (user / ".claude" / "settings.json").unlink()
    return item


def probe_review_kills(h: Harness, trials: int) -> Item:
    item = Item("kill -9 inside a review approval")
    project = h.base / "review-project"
    (project / ".git").mkdir(parents=True)
    config = h.home / "config.toml"
    plain = config.read_text()
    config.write_text(plain + f'\n[projects."{project}"]\nreview = true\n')
    h.restart()
    for trial in range(trials):
        writer = new_session(h.roots, str(project))
        writer.user(f"Remember: always run the linter before pushing, rule {trial} of the team.")
        writer.assistant("Understood.")
        with h.client() as c:
            job_id = c.post(
                "/v1/events/turn-end",
                json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(project)},
            ).json()["job_id"]
            deadline = time.monotonic() + 30
            while c.get(f"/v1/jobs/{job_id}").json()["status"] in ("queued", "running") and time.monotonic() < deadline:
                time.sleep(0.05)
            items = c.get("/v1/review", params={"cwd": str(project)}).json()["items"]
        if not items:
            item.check(False, f"trial {trial}: nothing proposed")
            continue
        item_id = items[0]["item_id"]
        h.proc.kill()
        h.proc = DaemonProcess(home=h.home, env={**h.env, "MEMORYD_TEST_CRASH_AT": "review-approve-written"}).start()
        with h.client() as c:
            try:
                c.post(f"/v1/review/{item_id}/approve")
            except httpx.HTTPError:
                pass
        died = h.proc.proc is not None and h.proc.proc.wait(timeout=10) == -9
        h.proc = DaemonProcess(home=h.home, env=h.env).start()
        with h.client() as c:
            approved = {
                i["item_id"]: i
                for i in c.get("/v1/review", params={"cwd": str(project), "status": "approved"}).json()["items"]
            }
            listed = {m["filename"] for m in c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]}
            rejected = c.post(f"/v1/review/{item_id}/reject").status_code
        ok = died and item_id in approved and approved[item_id]["filename"] in listed and rejected == 404
        item.check(ok, f"trial {trial}: killed {died}, approved {item_id in approved}, reject {rejected}")
    config.write_text(plain)
    h.restart()
    return item


def probe_browser_doors(h: Harness) -> Item:
    item = Item("no framing, Origin port checked, split secrets refused")
    with h.client() as c:
        for path in ("/ui", "/ui/login"):
            r = c.get(path, follow_redirects=False)
            item.check(
                r.headers.get("x-frame-options") == "DENY"
                and "frame-ancestors 'none'" in r.headers.get("content-security-policy", ""),
                f"{path} may be framed",
            )
        port = int(h.proc.url.rsplit(":", 1)[1])
        for origin in ("http://127.0.0.1:3000", f"http://localhost:{port + 1}", f"https://127.0.0.1:{port}"):
            for path, body in (
                ("/v1/memories", {"cwd": str(h.project), "name": "o", "description": "d", "type": "user", "body": "b"}),
                ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                ("/ui/logout", {}),
            ):
                r = c.post(path, json=body, headers={"Origin": origin})
                item.check(r.status_code == 403, f"Origin {origin} on {path} -> {r.status_code}")
        r = c.post(
            "/v1/memories",
            json={"cwd": str(h.project), "name": "o", "description": "d", "type": "user", "body": "b"},
            headers={"Origin": f"http://127.0.0.1:{port}"},
        )
        item.check(r.status_code in (200, 201), f"the daemon's own origin refused: {r.status_code}")
        c.delete(f"/v1/memories/{r.json().get('filename', 'x')}", params={"cwd": str(h.project)})
        for form in (
            " ".join(GITHUB_TOKEN),
            GITHUB_TOKEN[:20] + "\n" + GITHUB_TOKEN[20:],
            " ".join(GITHUB_TOKEN[i : i + 4] for i in range(0, len(GITHUB_TOKEN), 4)),
        ):
            r = h.save(c, "split", "a split token", f"the token:\n{form}\n")
            item.check(r.status_code == 422, f"split secret saved: {r.status_code}")
    return item


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dream-kills", type=int, default=5)
    parser.add_argument("--review-kills", type=int, default=3)
    parser.add_argument("--giant-line-mb", type=int, default=50)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--json", default=None, help="default: bench/results/reliability[-<only>].json")
    parser.add_argument(
        "--only",
        choices=["all", *ISSUE_GROUPS],
        default="all",
        help="input: issue 41's input probes only; r4, clients, reads: issue 52's server, client and read-while-writing probes",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    items: list[Item] = []
    with tempfile.TemporaryDirectory() as d:
        h = Harness(Path(d))
        try:
            probes: list[Callable[[], Item]] = [
                lambda: probe_symlinks(h),
                lambda: probe_secrets(h),
                lambda: probe_hosts(h),
                lambda: probe_identity(h),
                lambda: probe_hostile_lines(h),
                lambda: probe_bad_inputs(h),
                lambda: probe_dream_kills(h, args.dream_kills, rng),
                lambda: probe_giant_line(h, args.giant_line_mb),
                lambda: probe_alias_bomb(h),
                lambda: probe_import(h),
                lambda: probe_team(h),
                lambda: probe_browser_doors(h),
                lambda: probe_review_kills(h, args.review_kills),
                # --- round three, files memoryd shares with people (issue 41 items 5, 7, 8) ---
                *(functools.partial(probe, h) for probe in FILE_PROBES),
                # --- end of round three, files ---
                lambda: probe_settings_trust(
                    h
                ),  # last: it creates ~/.claude, which moves memory dirs (memory_base = "auto")
            ]
            # issue 41, inputs a person or a cloned repo controls (bench/reliability_input.py): before the
            # settings-trust probe, which creates ~/.claude
            groups = {name: [functools.partial(p, h) for p in found] for name, found in ISSUE_GROUPS.items()}
            later = [probe for name in ISSUE_GROUPS for probe in groups[name]]
            probes = groups[args.only] if args.only in groups else probes[:-1] + later + probes[-1:]
            for probe in probes:
                items.append(probe())
        finally:
            h.proc.kill()
    print("reliability: held / tried")
    for it in items:
        print(
            f"  {it.name:55s} {it.held:3d} / {it.tried:<3d} {'ok' if it.held == it.tried else 'FAILED: ' + '; '.join(it.failures[:3])}"
        )
        if it.figures:
            print("      " + ", ".join(f"{k} {v}" for k, v in it.figures.items()))
    held, tried = sum(it.held for it in items), sum(it.tried for it in items)
    print(f"probes: {held} held, {tried - held} failed, of {tried}")
    out = Path(
        args.json or ROOT / "bench" / "results" / f"reliability{'' if args.only == 'all' else '-' + args.only}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([it.__dict__ for it in items], indent=2))
    print(f"wrote {out}")
    return 0 if all(it.held == it.tried for it in items) else 1


if __name__ == "__main__":
    raise SystemExit(main())
