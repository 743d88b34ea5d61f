"""`MemorydClient`: a typed httpx client for the API, used by the CLI, hooks and tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from memoryd.auth import read_token
from memoryd.config import Settings
from memoryd.errors import ApiError, DaemonNotRunning
from memoryd.runtime import read_runtime_file


def daemon_url(settings: Settings) -> str:
    """The running daemon's address from `daemon.json`, else the configured one."""
    runtime = read_runtime_file(settings.home)
    if runtime:
        return f"http://{runtime['host']}:{runtime['port']}"
    host = settings.server.host
    return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{settings.server.port}"


class MemorydClient:
    def __init__(self, base_url: str, token: str | None, *, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    @classmethod
    def from_settings(cls, settings: Settings, *, timeout: float = 10.0) -> "MemorydClient":
        return cls(daemon_url(settings), read_token(settings.home, settings.token_override), timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "MemorydClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise DaemonNotRunning(self.base_url) from exc
        if response.status_code >= 400:
            try:
                err = response.json()["error"]
                raise ApiError(response.status_code, err["code"], err["message"])
            except (ValueError, KeyError, TypeError):
                raise ApiError(response.status_code, "http_error", response.text[:200] or response.reason_phrase) from None
        if response.status_code == 204 or not response.content:
            return None
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

    # --- endpoints ---------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self.request("GET", "/v1/health")

    def status(self) -> dict[str, Any]:
        return self.request("GET", "/v1/status")

    def index(self, cwd: str | Path) -> dict[str, Any]:
        return self.request("GET", "/v1/index", params={"cwd": str(cwd)})

    def prompt(self, cwd: str | Path) -> dict[str, Any]:
        return self.request("GET", "/v1/prompt", params={"cwd": str(cwd)})

    def list_memories(self, cwd: str | Path, type_: str | None = None) -> dict[str, Any]:
        params = {"cwd": str(cwd)} | ({"type": type_} if type_ else {})
        return self.request("GET", "/v1/memories", params=params)

    def get_memory(self, cwd: str | Path, filename: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/memories/{quote(filename, safe='')}", params={"cwd": str(cwd)})

    def save_memory(self, cwd: str | Path, *, name: str, description: str, type_: str, body: str, team: bool = False) -> dict[str, Any]:
        path = "/v1/team/memories" if team else "/v1/memories"
        return self.request("POST", path, json={"cwd": str(cwd), "name": name, "description": description, "type": type_, "body": body})

    def delete_memory(self, cwd: str | Path, filename: str, *, team: bool = False) -> None:
        base = "/v1/team/memories" if team else "/v1/memories"
        self.request("DELETE", f"{base}/{quote(filename, safe='')}", params={"cwd": str(cwd)})

    def recall(self, cwd: str | Path, query: str, session_id: str) -> dict[str, Any]:
        return self.request("POST", "/v1/recall", json={"cwd": str(cwd), "query": query, "session_id": session_id})

    def metrics(self) -> str:
        return self.request("GET", "/metrics")

    def turn_end(self, *, session_id: str, transcript_path: str, cwd: str | Path, last_assistant_message: str | None = None) -> dict[str, Any]:
        body = {"session_id": session_id, "transcript_path": str(transcript_path), "cwd": str(cwd)}
        if last_assistant_message is not None:
            body["last_assistant_message"] = last_assistant_message
        return self.request("POST", "/v1/events/turn-end", json=body)

    def job(self, job_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/jobs/{job_id}")

    def grep(self, q: str, *, cwd: str | Path | None = None, limit: int | None = None, regex: bool = False, ignore_case: bool = False) -> dict[str, Any]:
        params: dict[str, Any] = {"q": q, "regex": str(regex).lower(), "ignore_case": str(ignore_case).lower()}
        if cwd is not None:
            params["cwd"] = str(cwd)
        if limit is not None:
            params["limit"] = limit
        return self.request("GET", "/v1/transcripts/search", params=params)

    def session_memory(self, session_id: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/sessions/{session_id}/memory")

    # --- team memory ---
    def team_init(self, cwd: str | Path, remote: str, branch: str) -> dict[str, Any]:
        return self.request("POST", "/v1/team/init", json={"cwd": str(cwd), "remote": remote, "branch": branch})

    def team_sync(self, cwd: str | Path, *, accept_rewrite: bool = False) -> dict[str, Any]:
        return self.request("POST", "/v1/team/sync", json={"cwd": str(cwd), "accept_rewrite": accept_rewrite})

    def team_status(self, cwd: str | Path) -> dict[str, Any]:
        return self.request("GET", "/v1/team/status", params={"cwd": str(cwd)})

    def team_memories(self, cwd: str | Path) -> dict[str, Any]:
        return self.request("GET", "/v1/team/memories", params={"cwd": str(cwd)})
