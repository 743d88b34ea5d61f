"""`serve`: run the daemon under uvicorn on a pre-bound socket, until SIGTERM/SIGINT. `build_app` hands
the daemon's parts to the HTTP layer as `Services`, with the daemon's start and stop as the app's lifespan.

uvicorn turns SIGTERM into a graceful exit; the app's lifespan then stops the daemon's
parts in order (running jobs finish or are left queued for the next start).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import logging.handlers
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator

import uvicorn
from fastapi import FastAPI

from memoryd.api import Services, create_app
from memoryd.api.web.views import WebView
from memoryd.base.files import PRIVATE_FILE_MODE, make_private_dir
from memoryd.base.limits import LOG_DIRNAME, LOG_FILENAME
from memoryd.base.process import tune_malloc
from memoryd.base.secrets import redact_secrets
from memoryd.config import Settings
from memoryd.service.daemon import Daemon
from memoryd.service.runtime_file import (
    RUNTIME_FILENAME,
    HomeInUse,
    claim_home,
    remove_runtime_file,
    write_runtime_file,
)
from memoryd.transcripts.grep import search_transcripts

GIL_SWITCH_SECONDS = 0.001  # how long a busy thread keeps the GIL while a request thread waits for it
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
UVICORN_LOGGER = "uvicorn.error"  # uvicorn's name for its server log, errors or not
SERVER_LOGGER = "memoryd.server"


class RedactingFilter(logging.Filter):
    """Every log line passes `redact_secrets`: a secret or the API token never reaches a log."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_secrets(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class ServerLoggerName(logging.Filter):
    """uvicorn's own lines ("Started server process", "Shutting down") under memoryd's name, not `uvicorn.error`,
    which reads as an error on every start."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == UVICORN_LOGGER:
            record.name = SERVER_LOGGER
        return True


def configure_logging(settings: Settings) -> None:
    """stderr (journald/launchd capture it) plus a rotating file in $MEMORYD_HOME/logs (0600)."""
    level = getattr(logging, settings.server.log_level.upper(), logging.INFO)
    root = logging.getLogger()
    root.setLevel(level)
    formatter = logging.Formatter(LOG_FORMAT)
    stream = logging.StreamHandler(sys.stderr)
    stream.setFormatter(formatter)
    log_dir = settings.home / LOG_DIRNAME
    make_private_dir(log_dir)
    file_handler = logging.handlers.RotatingFileHandler(
        log_dir / LOG_FILENAME, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
    )
    file_handler.setFormatter(formatter)
    os.chmod(log_dir / LOG_FILENAME, PRIVATE_FILE_MODE)
    for handler in (stream, file_handler):
        handler.addFilter(RedactingFilter())
        handler.addFilter(ServerLoggerName())
    root.handlers = [stream, file_handler]
    logging.getLogger("uvicorn.access").setLevel(logging.WARNING)  # request lines at DEBUG only
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)  # "Running job ... executed successfully": noise


class _Server(uvicorn.Server):
    """uvicorn's server, minus re-raising SIGTERM after the graceful shutdown: memoryd exits 0
    (and removes daemon.json) when asked to stop, as service managers expect."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def bind_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit TCP_NODELAY: without it a keep-alive request waits ~40 ms for a delayed ACK.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def tune_interpreter() -> None:
    """Keep requests answered while a worker is CPU-bound (a big transcript being read): a request thread
    waits for the GIL up to one switch interval per hand-over (CPython's 5 ms default, several per
    request), and a full collection that walks every imported object holds it for 100+ ms."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_SECONDS))
    gc.collect()
    gc.freeze()  # what start-up built (modules, app, settings) lives as long as the process: never rescan it


def services_of(daemon: Daemon) -> Services:
    """The daemon's parts as the HTTP layer takes them: one field per service, the web view's as one `WebView`."""
    settings = daemon.settings
    web = WebView(
        stores=daemon.stores,
        dream=daemon.dream,
        review=daemon.review,
        stale=daemon.stale,
        extraction=daemon.extraction,
        session_memory=daemon.session_memory,
        recall_log=daemon.recall.recall_log,
        activity=daemon.activity,
        meter=daemon.meter,
        llm=daemon.llm,
        model=settings.llm.model,
        read_only=settings.memory.read_only,
        clock=daemon.clock,
    )
    return Services(
        token=daemon.token,
        host=settings.server.host,
        metrics=daemon.metrics,
        clock=daemon.clock,
        stores=daemon.stores,
        turns=daemon.turns,
        hooks=daemon.hooks,
        extraction=daemon.extraction,
        dream=daemon.dream,
        recall=daemon.recall,
        review=daemon.review,
        stale=daemon.stale,
        team=daemon.team,
        backfill=daemon.backfill,
        session_memory=daemon.session_memory,
        status=daemon.status,
        transcript_search=functools.partial(search_transcripts, settings.transcript_roots, ripgrep=daemon.ripgrep),
        web=web,
    )


def build_app(daemon: Daemon) -> FastAPI:
    """The app over the daemon's parts; its lifespan starts the daemon and stops it (tests and
    benches serve this too)."""
    return create_app(services_of(daemon), start=daemon.start, stop=daemon.stop)


def serve(settings: Settings) -> int:
    os.umask(0o077)  # everything the daemon creates (state, logs, backups, memories) is private to the user
    # A client that goes away mid-answer (a closed browser tab on the live page's event stream) must
    # cost that connection an EPIPE, never the daemon its life: the CLI restores SIGPIPE's default
    # for `memoryd show | head`, and the daemon died of it (the flaky browser tests: exit code -13).
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    tune_malloc()
    try:  # before the log, state.db or daemon.json is touched: they are the running daemon's
        home_lock = claim_home(settings.home)
    except HomeInUse as exc:
        print(f"memoryd: {exc}", file=sys.stderr)
        return 1
    try:
        return _serve_claimed(settings)
    finally:
        os.close(home_lock)


def _serve_claimed(settings: Settings) -> int:
    """`serve` once this process holds its home."""
    configure_logging(settings)
    log = logging.getLogger("memoryd")
    try:
        sock = bind_socket(settings.server.host, settings.server.port)
    except OSError as exc:
        log.error(
            "cannot listen on %s:%s (%s); is memoryd already running (memoryd status)? Otherwise set "
            "MEMORYD_PORT to a free port.",
            settings.server.host,
            settings.server.port,
            exc.strerror,
        )
        return 1
    host, port = sock.getsockname()[:2]
    daemon = Daemon(settings)
    app = build_app(daemon)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=10)
    server = _Server(config)
    write_runtime_file(settings.home, host, port, started_at=daemon.status.started_at)
    # uvicorn re-raises SIGTERM after a graceful shutdown, so clean up in the daemon's stop, not a finally.
    daemon.on_stop(lambda: remove_runtime_file(settings.home))
    if settings.server.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning(
            "listening on %s: other machines can reach memoryd (the token still protects it)", settings.server.host
        )
    log.info("listening on http://%s:%s (token in %s)", host, port, settings.home / "token")
    tune_interpreter()
    try:
        server.run(sockets=[sock])
    finally:
        remove_runtime_file(settings.home)
    return 0


__all__ = ["serve", "build_app", "services_of", "RUNTIME_FILENAME"]
