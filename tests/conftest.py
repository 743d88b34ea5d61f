"""Shared fixtures: real daemons (in-thread or subprocess), real temp dirs, a scripted LLM."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.cache import TEST_CACHE

if (
    TYPE_CHECKING
):  # imported where used: pytest-xdist's controller loads this file too, and starts its workers only after
    from memoryd.base.clock import Clock
    from memoryd.config import Settings
    from memoryd.service.daemon import Daemon
    from tests.support.messages_api import ScriptedMessagesAPI
    from tests.support.servers import DaemonProcess, ThreadedServer


def _cache_bytecode() -> None:
    """With PYTHONDONTWRITEBYTECODE set, every Python the tests start (workers, ~40 daemons, ~200 CLI runs) compiled
    memoryd from source again (~0.4 s of CPU a daemon start), and pytest rewrote every test module's asserts again:
    this run and the processes it starts keep bytecode in the test cache instead, never beside the sources."""
    if not (sys.flags.dont_write_bytecode or os.environ.get("PYTHONDONTWRITEBYTECODE")) or os.environ.get(
        "PYTHONPYCACHEPREFIX"
    ):
        return  # bytecode is cached as Python does by default, or where the user said
    prefix = str(TEST_CACHE / "pycache")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


_cache_bytecode()


@pytest.fixture(autouse=True)
def _user_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty HOME: memory_base = "auto" must never reach the real ~/.claude."""
    user_home = tmp_path_factory.mktemp("user-home")
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return user_home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "memoryd-home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory that is a git repo (a `.git` dir is all resolution needs)."""
    path = tmp_path / "work" / "project"
    (path / ".git").mkdir(parents=True)
    return path


def make_settings(home: Path, **env: str) -> Settings:
    from memoryd.config_sources import load_settings

    # the embedding model is off unless a test turns it on (dense recall tests: tests/test_recall_dense.py)
    base = {"MEMORYD_HOME": str(home), "MEMORYD_RECALL_DENSE": os.environ.get("MEMORYD_RECALL_DENSE", "off")}
    base.update(env)
    settings = load_settings(base, home=home)
    settings.transcripts.roots = [str(home / "transcripts")]
    return settings


@pytest.fixture
def settings(home: Path) -> Settings:
    return make_settings(home)


class LiveDaemon:
    """A Daemon served by uvicorn in a thread, with an authenticated httpx client."""

    def __init__(self, daemon: Daemon, server: ThreadedServer) -> None:
        from tests.support.servers import loopback_client

        self.daemon = daemon
        self.server = server
        self.url = server.url
        self.client = loopback_client(server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=10)

    def close(self) -> None:
        self.client.close()


@contextmanager
def serve(daemon: Daemon) -> Iterator[LiveDaemon]:
    """Serve a Daemon with uvicorn in a thread (the app's lifespan starts and stops it)."""
    from memoryd.server import build_app
    from tests.support.servers import ThreadedServer

    with ThreadedServer(build_app(daemon)) as server:
        ld = LiveDaemon(daemon, server)
        try:
            yield ld
        finally:
            ld.close()


@contextmanager
def serve_env(env: dict[str, str]) -> Iterator[tuple[LiveDaemon, dict[str, str]]]:
    """The daemon `memoryd serve` builds from `env` (its MEMORYD_HOME, config.toml and keys), served in a
    thread instead of a subprocess (~1.5 s of CPU to start); yields it and, for CLI runs that should reach
    it, `env` with its port (the CLI reads the token from MEMORYD_HOME as usual)."""
    from memoryd.config_sources import load_settings
    from memoryd.service.daemon import Daemon
    from tests.support.clock import SteppingClock

    with serve(Daemon(load_settings(env), clock=SteppingClock())) as live:
        yield live, {**env, "MEMORYD_PORT": live.url.rsplit(":", 1)[1]}


@pytest.fixture
def live(settings: Settings) -> Iterator[LiveDaemon]:
    from memoryd.service.daemon import Daemon
    from tests.support.clock import SteppingClock

    with serve(Daemon(settings, clock=SteppingClock())) as ld:  # the machine's time, which a test may step ahead
        yield ld


@contextmanager
def serve_isolated(tmp_path_factory: pytest.TempPathFactory, clock: Clock) -> Iterator[LiveDaemon]:
    """A daemon on `clock` in a home of its own, built in an empty HOME without the user's settings (what the
    function fixtures set up for each test), for fixtures wider than a test: they are set up before those."""
    from memoryd.service.daemon import Daemon

    root = tmp_path_factory.mktemp("module-live")
    (root / "user").mkdir()
    (root / "memoryd-home").mkdir()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(root / "user"))
        for key in list(os.environ):
            if key.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE_CONFIG_DIR")):
                env.delenv(key)
        with serve(Daemon(make_settings(root / "memoryd-home"), clock=clock)) as ld:
            yield ld


@pytest.fixture(scope="module")
def module_live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveDaemon]:
    """One in-thread daemon for a module's tests that each keep to their own `project` and leave the daemon as they
    found it (like `shared_daemon`): a start and a stop (~0.6 s, mostly the stop waiting out the recall views'
    settle) once a module instead of once a test."""
    from tests.support.clock import SteppingClock

    with serve_isolated(tmp_path_factory, SteppingClock()) as ld:
        yield ld


def save_memory(
    live: LiveDaemon, cwd: Path, name: str, description: str, body: str = "", type_: str = "project"
) -> str:
    """Save through the API and return the filename memoryd chose."""
    r = live.client.post(
        "/v1/memories",
        json={"cwd": str(cwd), "name": name, "description": description, "type": type_, "body": body or description},
    )
    assert r.status_code in (200, 201), r.text
    return str(r.json()["filename"])


def recall_api(live: LiveDaemon, cwd: Path, query: str, session: str = "s1") -> dict:  # type: ignore[type-arg]
    r = live.client.post("/v1/recall", json={"cwd": str(cwd), "query": query, "session_id": session})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def recall_apart(live: LiveDaemon, cwd: Path, query: str, session: str = "s1") -> dict:  # type: ignore[type-arg]
    """recall_api in a session of `cwd`'s own, for tests on a shared daemon (module_live): a session's budget and
    what it surfaced are the daemon's, not the project's."""
    return recall_api(live, cwd, query, session=f"{session}-{hashlib.sha256(str(cwd).encode()).hexdigest()[:16]}")


@pytest.fixture
def messages_api() -> Iterator[ScriptedMessagesAPI]:
    from tests.support.messages_api import ScriptedMessagesAPI

    with ScriptedMessagesAPI() as api:
        yield api


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the test, so a fixture can tell in its teardown that the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture
def daemon_process(home: Path, request: pytest.FixtureRequest) -> Iterator[DaemonProcess]:
    from tests.support.servers import DaemonProcess, daemon_env

    proc = DaemonProcess(home=home, env=daemon_env(home))
    try:
        yield proc
    finally:
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:  # a daemon gone mid-test says why in its own output
            exited = proc.proc.poll() if proc.proc is not None else None
            log = proc.log_path.read_text(errors="replace")[-8000:] if proc.log_path.is_file() else "(no log)"
            print(f"--- the daemon subprocess (exit code {exited}) wrote:\n{log}")
        proc.kill()


@pytest.fixture(scope="session")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    """One `memoryd serve` subprocess (~1.5 s of CPU to start) per worker, for the tests of any module that
    each keep to their own `project` (so their own memory dir) and leave the daemon, its home and its
    HOME as they found them; its `home` is the MEMORYD_HOME for CLI runs."""
    from tests.support.servers import DaemonProcess, daemon_env

    root = tmp_path_factory.mktemp("shared-daemon")
    (root / "user").mkdir()
    home = root / "memoryd-home"
    proc = DaemonProcess(home=home, env=daemon_env(home, HOME=str(root / "user"))).start()  # never the real ~/.claude
    try:
        yield proc
    finally:
        proc.kill()


@pytest.fixture(autouse=True)
def _no_user_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's memoryd or Anthropic settings."""
    for key in list(os.environ):
        if key.startswith(("MEMORYD_", "ANTHROPIC_")):
            monkeypatch.delenv(key, raising=False)


# Single tests that take many seconds (cold mypy, many CLI subprocesses). Run first, so that with
# pytest-xdist's workers they overlap the many short tests instead of ending the run on one worker.
LONG_TESTS = (
    "tests/test_typing.py",
    "tests/test_doctor.py",
    "tests/test_import_export.py",
    "tests/test_cli_contract.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_TESTS))  # stable: the rest keep their order
