"""`MemorydClient`: the API's client for the CLI, the MCP server and tests.

Built on the standard library's http.client, not httpx: `memoryd` commands that only call the
daemon start in well under 150 ms, and importing httpx alone takes about 100 ms. Each new connection
first asks the program there to prove it holds the token (base/identity.py); only then is the token
sent, so a program that took memoryd's port never sees it.
"""

from __future__ import annotations

import http.client
import json as _json
import os
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack
from urllib.parse import quote, urlencode, urlsplit

from memoryd.base import limits
from memoryd.base.bounded_http import AnswerTooLarge, BoundedConnection
from memoryd.base.errors import ApiError, DaemonNotRunning, NotMemoryd
from memoryd.base.identity import CHALLENGE_HEADER, PROOF_HEADER, is_proof, new_challenge, proves
from memoryd.service.auth import read_token
from memoryd.service.runtime_file import read_runtime_file

if TYPE_CHECKING:
    from memoryd.config import Settings


def home_from_env(env: Mapping[str, str] | None = None) -> Path:
    """`$MEMORYD_HOME`, else ~/.memoryd (what `load_settings` uses, without loading settings)."""
    env = os.environ if env is None else env
    return Path(env.get("MEMORYD_HOME") or limits.DEFAULT_HOME).expanduser()


def daemon_url(settings: Settings) -> str:
    """The running daemon's address from `daemon.json`, else the configured one."""
    runtime = read_runtime_file(settings.home)
    if runtime:
        return f"http://{runtime['host']}:{runtime['port']}"
    host = settings.server.host
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{settings.server.port}"


def _scope(scope: str) -> dict[str, str]:
    """The `scope` field a request carries: none for the project's own store (the default)."""
    return {} if scope == "project" else {"scope": scope}


# What a client without a token says when the program at the address answers like memoryd: it cannot check
# the proof, so it sends nothing (issue #52: a save's text went to whatever answered).
NO_TOKEN = (
    "the program at {url} answers like memoryd, but this home has no token to check it with ($MEMORYD_HOME/token is "
    "missing), so nothing was sent to it: run this with the daemon's MEMORYD_HOME, or set MEMORYD_TOKEN."
)


class Sent(TypedDict, total=False):
    """What a request carries beyond its method and path (each part optional; a None param is left out)."""

    params: Mapping[str, Any] | None
    json: Any
    headers: Mapping[str, str] | None


class MemorydClient:
    """Each call (`request`) ends within `timeout` seconds, connection and identity proof included, and reads at
    most CLIENT_ANSWER_MAX_BYTES; whatever answers, the caller gets an answer or one MemorydError."""

    def __init__(self, base_url: str, token: str | None, *, timeout: float = limits.CLIENT_CALL_SECONDS) -> None:
        self.base_url = base_url.rstrip("/")
        parts = urlsplit(self.base_url)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._token = token
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.timeout = timeout
        self._conn: BoundedConnection | None = None

    @classmethod
    def from_settings(cls, settings: Settings, *, timeout: float = limits.CLIENT_CALL_SECONDS) -> MemorydClient:
        return cls(daemon_url(settings), read_token(settings.home, settings.token_override), timeout=timeout)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, *, timeout: float = limits.CLIENT_CALL_SECONDS
    ) -> MemorydClient:
        """The daemon named by `$MEMORYD_HOME/daemon.json`; only when it is absent are the
        settings loaded for the configured address (so a running daemon is reached fast)."""
        env = os.environ if env is None else env
        home = home_from_env(env)
        runtime = read_runtime_file(home)
        if runtime:
            url = f"http://{runtime['host']}:{runtime['port']}"
        else:
            from memoryd.config_sources import load_settings

            url = daemon_url(load_settings(env, home=home))
        return cls(url, read_token(home, env.get("MEMORYD_TOKEN", "")), timeout=timeout)

    @property
    def has_token(self) -> bool:
        """Whether this client has a token to check the daemon's proof with (without one it sends nothing)."""
        return bool(self._token)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> MemorydClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self, deadline: float) -> tuple[BoundedConnection, bool]:
        """The kept-alive connection (reused: True), or a new one whose program proved it is this home's
        memoryd; refused → DaemonNotRunning."""
        if self._conn is not None:
            return self._conn, True
        conn = BoundedConnection(self._host, self._port)
        proof_seconds = min(deadline - time.monotonic(), limits.CLIENT_PROOF_SECONDS)
        conn.allow(time.monotonic() + proof_seconds, limits.CLIENT_PROOF_MAX_BYTES)
        try:
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (ConnectionRefusedError, socket.gaierror, TimeoutError, OSError) as exc:
            conn.close()
            raise DaemonNotRunning(self.base_url) from exc
        self._prove(conn, proof_seconds)
        self._conn = conn
        return conn, False

    def _prove(self, conn: BoundedConnection, seconds: float) -> None:
        """Make the program on this connection prove it holds our token before anything else is sent on it:
        the token, and any request's body. Nothing it answers is quoted, only its status code."""
        challenge = new_challenge()
        try:
            peer_host, peer_port = conn.sock.getpeername()[:2]
            conn.request("GET", "/v1/health", headers={CHALLENGE_HEADER: challenge})
            response = conn.getresponse()
            response.read()
        except TimeoutError as exc:
            conn.close()
            raise NotMemoryd(self.base_url, f"it did not answer within {seconds:.2g} s") from exc
        except AnswerTooLarge as exc:
            conn.close()
            raise NotMemoryd(self.base_url, f"its answer passed {limits.CLIENT_PROOF_MAX_BYTES // 1024} KB") from exc
        except (http.client.HTTPException, OSError) as exc:
            conn.close()
            raise NotMemoryd(self.base_url, f"it did not answer HTTP: {exc.__class__.__name__}") from exc
        presented = response.getheader(PROOF_HEADER, "")
        if self._token and proves(self._token, challenge, peer_host, peer_port, presented):
            return
        conn.close()
        if not self._token and is_proof(presented):
            raise ApiError(401, "unauthorized", NO_TOKEN.format(url=self.base_url))
        raise NotMemoryd(self.base_url, f"it answered HTTP {response.status}")

    def _exchange(
        self, method: str, target: str, body: bytes | None, headers: dict[str, str]
    ) -> tuple[int, str, bytes, str]:
        deadline = time.monotonic() + self.timeout
        for attempt in range(2):
            conn, reused = self._connection(deadline)
            conn.allow(deadline, limits.CLIENT_ANSWER_MAX_BYTES)
            try:
                conn.request(method, target, body=body, headers=headers)
                response = conn.getresponse()
                return response.status, response.getheader("Content-Type", ""), response.read(), response.reason
            except TimeoutError as exc:
                self.close()
                raise ApiError(
                    504,
                    "daemon_timeout",
                    f"memoryd at {self.base_url} did not answer within {self.timeout:g} s; "
                    "it may be busy: try again, or check it with `memoryd status`.",
                ) from exc
            except AnswerTooLarge as exc:
                self.close()
                raise ApiError(
                    502,
                    "answer_too_large",
                    f"memoryd at {self.base_url} answered more than {limits.CLIENT_ANSWER_MAX_BYTES // 2**20} MB; "
                    "ask for less (a smaller --limit or page).",
                ) from exc
            except (http.client.HTTPException, OSError) as exc:
                self.close()
                if not reused or attempt:  # a kept-alive connection the daemon closed is retried once
                    raise ApiError(
                        502,
                        "daemon_unreachable",
                        f"memoryd at {self.base_url} dropped the connection ({exc.__class__.__name__}); "
                        "check it with `memoryd status`.",
                    ) from exc
        raise AssertionError("unreachable")

    def request(self, method: str, path: str, **send: Unpack[Sent]) -> Any:
        query = {k: v for k, v in (send.get("params") or {}).items() if v is not None}
        target = path + ("?" + urlencode(query) if query else "")
        headers = {**(send.get("headers") or {}), **self._headers}
        body = None
        if (json := send.get("json")) is not None:
            body = _json.dumps(json).encode("utf-8")
            headers["Content-Type"] = "application/json"
        status, content_type, content, reason = self._exchange(method, target, body, headers)
        if status >= 400:
            try:
                err = _json.loads(content)["error"]
                raise ApiError(status, err["code"], err["message"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(status, "http_error", content.decode("utf-8", "replace")[:200] or reason) from None
        if status == 204 or not content:
            return None
        if content_type.startswith("application/json"):
            return _json.loads(content)
        return content.decode("utf-8", "replace")

    def answer(self, method: str, path: str, **send: Unpack[Sent]) -> dict[str, Any]:
        """`request` for the endpoints that answer a JSON object."""
        data: dict[str, Any] = self.request(method, path, **send)
        return data

    # --- endpoints ---------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.answer("GET", "/v1/health")

    def status(self) -> dict[str, Any]:
        return self.answer("GET", "/v1/status")

    def index(self, cwd: str | Path) -> dict[str, Any]:
        return self.answer("GET", "/v1/index", params={"cwd": str(cwd)})

    def prompt(self, cwd: str | Path) -> dict[str, Any]:
        return self.answer("GET", "/v1/prompt", params={"cwd": str(cwd)})

    def list_memories(self, cwd: str | Path, type_: str | None = None, *, scope: str = "project") -> dict[str, Any]:
        params = {"cwd": str(cwd)} | ({"type": type_} if type_ else {}) | _scope(scope)
        return self.answer("GET", "/v1/memories", params=params)

    def get_memory(self, cwd: str | Path, filename: str, *, scope: str = "project") -> dict[str, Any]:
        params = {"cwd": str(cwd)} | _scope(scope)
        return self.answer("GET", f"/v1/memories/{quote(filename, safe='')}", params=params)

    def save_memory(
        self,
        cwd: str | Path,
        *,
        name: str,
        description: str,
        type_: str,
        body: str,
        team: bool = False,
        scope: str = "project",
        applies_to: dict[str, list[str]] | None = None,
    ) -> dict[str, Any]:
        """`applies_to`: the paths, commands and tools the memory applies to (None keeps the file's own)."""
        path = "/v1/team/memories" if team else "/v1/memories"
        fields = {"cwd": str(cwd), "name": name, "description": description, "type": type_, "body": body}
        extra = {"applies_to": applies_to} if applies_to is not None else {}
        return self.answer("POST", path, json=fields | _scope(scope) | extra)

    def delete_memory(self, cwd: str | Path, filename: str, *, team: bool = False, scope: str = "project") -> None:
        base = "/v1/team/memories" if team else "/v1/memories"
        self.request("DELETE", f"{base}/{quote(filename, safe='')}", params={"cwd": str(cwd)} | _scope(scope))

    def recall(self, cwd: str | Path, query: str, session_id: str, *, source: str = "rest") -> dict[str, Any]:
        return self.answer(
            "POST", "/v1/recall", json={"cwd": str(cwd), "query": query, "session_id": session_id, "source": source}
        )

    def recall_log(
        self, *, cwd: str | Path | None = None, session_id: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        params = {k: str(v) for k, v in (("cwd", cwd), ("session", session_id), ("limit", limit)) if v is not None}
        return self.answer("GET", "/v1/recall/log", params=params)

    def metrics(self) -> str:
        return str(self.request("GET", "/metrics"))

    def turn_end(
        self, *, session_id: str, transcript_path: str, cwd: str | Path, last_assistant_message: str | None = None
    ) -> dict[str, Any]:
        body = {"session_id": session_id, "transcript_path": str(transcript_path), "cwd": str(cwd)}
        if last_assistant_message is not None:
            body["last_assistant_message"] = last_assistant_message
        return self.answer("POST", "/v1/events/turn-end", json=body)

    def job(self, job_id: str) -> dict[str, Any]:
        return self.answer("GET", f"/v1/jobs/{job_id}")

    def grep(
        self,
        q: str,
        *,
        cwd: str | Path | None = None,
        limit: int | None = None,
        regex: bool = False,
        ignore_case: bool = False,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"q": q, "regex": str(regex).lower(), "ignore_case": str(ignore_case).lower()}
        if cwd is not None:
            params["cwd"] = str(cwd)
        if limit is not None:
            params["limit"] = limit
        return self.answer("GET", "/v1/transcripts/search", params=params)

    def session_memory(self, session_id: str) -> dict[str, Any]:
        return self.answer("GET", f"/v1/sessions/{session_id}/memory")

    # --- team memory ---
    def team_init(self, cwd: str | Path, remote: str, branch: str) -> dict[str, Any]:
        return self.answer("POST", "/v1/team/init", json={"cwd": str(cwd), "remote": remote, "branch": branch})

    def team_sync(self, cwd: str | Path, *, accept_rewrite: bool = False) -> dict[str, Any]:
        return self.answer("POST", "/v1/team/sync", json={"cwd": str(cwd), "accept_rewrite": accept_rewrite})

    def team_status(self, cwd: str | Path) -> dict[str, Any]:
        return self.answer("GET", "/v1/team/status", params={"cwd": str(cwd)})

    def team_memories(self, cwd: str | Path) -> dict[str, Any]:
        return self.answer("GET", "/v1/team/memories", params={"cwd": str(cwd)})
