"""`memoryd serve` as a real subprocess: CRUD, token file, MEMORYD_TOKEN, SIGTERM, truncation edges; and what
building the daemon does (nothing but build)."""

from __future__ import annotations

import json
import logging
import signal
import socket
import stat
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.config import Settings
from memoryd.service.daemon import Daemon
from memoryd.team.service import TEAM_HOME_DIRNAME
from memoryd.team.state import STATE_FILENAME
from tests.support.servers import DaemonProcess, daemon_env, loopback_request

# End-to-end (the daemon as a subprocess: signals, a second serve, its runtime file):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e


def test_subprocess_crud_and_token_file(shared_daemon: DaemonProcess, project: Path) -> None:
    daemon_process, home = shared_daemon, shared_daemon.home
    assert stat.S_IMODE((home / "token").stat().st_mode) == 0o600
    assert loopback_request("GET", daemon_process.url + "/v1/memories", params={"cwd": str(project)}).status_code == 401
    with daemon_process.client() as c:
        r = c.post(
            "/v1/memories",
            json={"cwd": str(project), "name": "Colons: ok", "description": "d: e", "type": "reference", "body": "b"},
        )
        assert r.status_code == 201, r.text
        fn = r.json()["filename"]
        path = Path(r.json()["path"])
        assert path.is_file() and path.parent.parent.parent.parent == home
        assert c.get(f"/v1/memories/{fn}", params={"cwd": str(project)}).json()["name"] == "Colons: ok"
        assert c.get("/v1/status").json()["mode"] == "offline"
        assert c.delete(f"/v1/memories/{fn}", params={"cwd": str(project)}).status_code == 204
        assert not path.exists()
        assert c.get("/docs").status_code == 200 and "text/plain" in c.get("/metrics").headers["content-type"]


def test_sigterm_exits_zero_and_removes_runtime_file(daemon_process: DaemonProcess, home: Path) -> None:
    daemon_process.start()
    assert (home / "daemon.json").exists()
    assert daemon_process.terminate() == 0
    assert not (home / "daemon.json").exists()


def test_second_serve_on_one_home_is_refused_and_leaves_the_first_findable(
    daemon_process: DaemonProcess, home: Path
) -> None:
    """Issue 41 item 5: a second daemon on the same MEMORYD_HOME (two writers of one state.db) refuses to
    start, naming the first; the first's daemon.json survives the second's exit."""
    daemon_process.start()
    first = json.loads((home / "daemon.json").read_text())
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "serve", "--port", "0"],
        env=daemon_process.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    line = done.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"pid {first['pid']}" in line and f"http://{first['host']}:{first['port']}" in line
    assert json.loads((home / "daemon.json").read_text()) == first
    assert loopback_request("GET", daemon_process.url + "/v1/health").status_code == 200


def test_a_daemon_removes_only_the_daemon_json_it_wrote(daemon_process: DaemonProcess, home: Path) -> None:
    daemon_process.start()
    runtime = home / "daemon.json"
    other = {**json.loads(runtime.read_text()), "pid": 1, "port": 1}  # another daemon's address
    runtime.write_text(json.dumps(other))
    assert daemon_process.terminate() == 0
    assert json.loads(runtime.read_text()) == other


@pytest.fixture(scope="module")
def overridden(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One daemon started with both MEMORYD_TOKEN and MEMORYD_MEMORY_DIR set (a start is ~1.5 s of CPU);
    each test below looks at one of them."""
    root = tmp_path_factory.mktemp("overridden")
    home, target = root / "h", root / "custom-memory"
    proc = DaemonProcess(home=home, env=daemon_env(home, MEMORYD_TOKEN="env-token-123", MEMORYD_MEMORY_DIR=str(target)))
    try:
        yield proc.start()
    finally:
        proc.kill()


def test_memoryd_token_overrides_file(overridden: DaemonProcess, project: Path) -> None:
    home = overridden.home
    url = overridden.url + "/v1/memories"
    assert (
        loopback_request(
            "GET", url, params={"cwd": str(project)}, headers={"Authorization": "Bearer env-token-123"}
        ).status_code
        == 200
    )
    file_token = (home / "token").read_text().strip() if (home / "token").exists() else "none"
    assert (
        loopback_request(
            "GET", url, params={"cwd": str(project)}, headers={"Authorization": f"Bearer {file_token}"}
        ).status_code
        == 401
    )


def test_memoryd_memory_dir_override(overridden: DaemonProcess, project: Path) -> None:
    target = Path(overridden.env["MEMORYD_MEMORY_DIR"])
    with overridden.client() as c:
        r = c.post(
            "/v1/memories", json={"cwd": str(project), "name": "n", "description": "d", "type": "user", "body": "b"}
        )
        assert Path(r.json()["path"]).parent == target.resolve()


def test_index_truncation_edges_over_http(shared_daemon: DaemonProcess, project: Path) -> None:
    with shared_daemon.client() as c:
        for i in range(limits.INDEX_MAX_LINES):
            assert (
                c.post(
                    "/v1/memories",
                    json={"cwd": str(project), "name": f"m{i:03d}", "description": "d", "type": "project", "body": "b"},
                ).status_code
                == 201
            )
        idx = c.get("/v1/index", params={"cwd": str(project)}).json()
        assert (idx["truncated"], idx["lines"]) == (False, 200)
        c.post(
            "/v1/memories",
            json={"cwd": str(project), "name": "m200", "description": "d", "type": "project", "body": "b"},
        )
        idx = c.get("/v1/index", params={"cwd": str(project)}).json()
        assert idx["truncated"] is True and "200 lines" in idx["content"]
        raw = Path(idx["memory_dir"], "MEMORY.md").read_text()
        assert len(raw.splitlines()) == 201  # the file keeps everything; only the served copy is cut


def test_forty_concurrent_http_saves_lose_nothing(shared_daemon: DaemonProcess, project: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def save(args: tuple[int, str]) -> int:
        i, name = args
        with shared_daemon.client() as c:
            return c.post(
                "/v1/memories",
                json={
                    "cwd": str(project),
                    "name": name,
                    "description": f"d{i}",
                    "type": "project",
                    "body": f"body {i}",
                },
            ).status_code

    with ThreadPoolExecutor(40) as pool:
        distinct = list(pool.map(save, [(i, f"memory {i}") for i in range(40)]))
        same = list(pool.map(save, [(i, "one name") for i in range(40)]))
    assert sorted(distinct) == [201] * 40
    assert same.count(201) == 1 and same.count(200) == 39
    with shared_daemon.client() as c:
        listed = c.get("/v1/memories", params={"cwd": str(project)}).json()
        index = c.get("/v1/index", params={"cwd": str(project)}).json()
    files = {m["filename"] for m in listed["memories"]}
    assert len(files) == 41 and listed["invalid"] == []
    on_disk = {p.name for p in Path(index["memory_dir"]).glob("*.md")} - {"MEMORY.md"}
    assert on_disk == files
    linked = {
        line.split("](", 1)[1].split(")", 1)[0] for line in index["content"].splitlines() if line.startswith("- [")
    }
    assert linked == files


def test_a_client_gone_mid_answer_never_kills_the_daemon(shared_daemon: DaemonProcess) -> None:
    """The CLI restores SIGPIPE's default (`memoryd show | head`); `serve` must ignore it, or a write
    to a connection its client dropped (a closed tab on the live event stream) kills the daemon
    (exit code -13, the flaky browser tests)."""
    assert shared_daemon.proc is not None
    status = Path(f"/proc/{shared_daemon.proc.pid}/status").read_text()
    ignored = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
    assert ignored & (1 << (signal.SIGPIPE - 1)), "the daemon does not ignore SIGPIPE"
    host, port = shared_daemon.url.removeprefix("http://").split(":")
    for _ in range(20):  # ask for a long answer, then reset the connection before reading it
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(
                f"GET /openapi.json HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer "
                f"{shared_daemon.token}\r\n\r\n".encode()
            )
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    assert shared_daemon.proc.poll() is None
    assert loopback_request("GET", shared_daemon.url + "/v1/health", timeout=5).status_code == 200


def test_building_the_daemon_reads_no_team_folder(settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    """Construction only builds and wires (#40): the team folders are read when the daemon starts."""
    state = settings.home / TEAM_HOME_DIRNAME / "some-project" / STATE_FILENAME
    state.parent.mkdir(parents=True)
    state.write_text("{not json", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="memoryd.team.service"):
        daemon = Daemon(settings)
        assert "team state" not in caplog.text
        daemon.start()
        try:
            assert "team state" in caplog.text and "is unreadable" in caplog.text
        finally:
            daemon.stop()
