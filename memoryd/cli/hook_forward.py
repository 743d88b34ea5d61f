"""`memoryd hook claude-code`: one Claude Code hook event from stdin to this user's daemon, its answer to stdout.

It runs on every tool call, so it imports only the standard library's C parts (no json, re or
http.client) and reads no settings. Before it sends the token it makes whatever answers on memoryd's
port prove it holds this home's token (`memoryd.base.identity`); a program that cannot gets nothing,
and nothing it says reaches the agent. It always exits 0 and gives up within the event's budget.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

from memoryd.base.identity import CHALLENGE_HEADER, PROOF_HEADER, new_challenge, proves
from memoryd.base.limits import (
    CLIENT_PROOF_MAX_BYTES,
    DEFAULT_HOME,
    HOOK_ANSWER_MAX_BYTES,
    RUNTIME_FILENAME,
    TOKEN_FILENAME,
)
from memoryd.integrations.hook_protocol import (
    AWAIT_MODEL_BUDGET,
    AWAIT_MODEL_QUERY,
    DOWN_NOTE,
    HOOK_EVENTS,
    HOOK_PATH,
    RECALL_EVENTS,
    RECALL_OFF_NOTE,
    RECALL_SWITCH,
    SESSION_ENV_HEADER,
    SESSION_ENV_VARS,
    STRANGER_NOTE,
    recall_off,
)

# A hook event is a few KB (the prompt, paths); anything far larger is not one.
MAX_EVENT_BYTES = 4 * 1024 * 1024
RECV_BYTES = 65536
HEX_DIGITS = b"0123456789abcdefABCDEF"
EVENT_KEY = b'"hook_event_name"'


class NotMemoryd(Exception):
    """Something answered on the port but did not prove it is this home's memoryd."""


def event_name(body: bytes) -> str:
    """The event's `hook_event_name`, without a JSON parser: in JSON text the quoted key can only be a key
    (a quote inside a string is always escaped)."""
    at = body.find(EVENT_KEY)
    if at < 0:
        return ""
    rest = body[at + len(EVENT_KEY) :].lstrip(b" \t\r\n")
    if not rest.startswith(b":"):
        return ""
    rest = rest[1:].lstrip(b" \t\r\n")
    if not rest.startswith(b'"'):
        return ""
    end = rest.find(b'"', 1)
    return rest[1:end].decode("ascii", "replace") if end > 0 else ""


def _field(text: str, key: str) -> str:
    """A scalar of the flat JSON object that memoryd writes as `daemon.json` (no nesting, no escapes)."""
    at = text.find(f'"{key}"')
    if at < 0:
        return ""
    value = text[at + len(key) + 2 :].lstrip(" \t\r\n:").lstrip(" \t\r\n")
    if value.startswith('"'):
        return value[1 : value.find('"', 1)]
    end = min((i for i in (value.find(","), value.find("}")) if i >= 0), default=len(value))
    return value[:end].strip()


def daemon_address(home: str) -> tuple[str, int] | None:
    """Where `daemon.json` says the daemon listens; None when there is none (no daemon started)."""
    try:
        with open(os.path.join(home, RUNTIME_FILENAME), encoding="utf-8") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    host, port = _field(text, "host"), _field(text, "port")
    return (host or "127.0.0.1", int(port)) if port.isdigit() else None


def read_token(home: str, env: dict[str, str] | os._Environ[str]) -> str:
    if env.get("MEMORYD_TOKEN"):
        return env["MEMORYD_TOKEN"]
    try:
        with open(os.path.join(home, TOKEN_FILENAME), encoding="utf-8") as fh:
            return fh.read(1024).strip()
    except OSError:
        return ""


class _Wire:
    """One connection, every send and read within the event's deadline (a socket's timeout is per read, and a
    program dripping a byte every 0.5 s never trips it) and every answer within its byte limit (issue #52)."""

    def __init__(self, sock: _socket.socket, deadline: float) -> None:
        self.sock, self.deadline = sock, deadline
        self.data = b""  # read but not yet taken
        self.budget = 0  # bytes the answer being read may still take
        self.heard = False  # the program sent something

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the hook's deadline passed")
        return left

    def send(self, data: bytes) -> None:
        self.sock.settimeout(self._left())
        self.sock.sendall(data)

    def more(self) -> bool:
        """Read what comes next into `data`; False at the end of the stream."""
        self.sock.settimeout(self._left())
        chunk = self.sock.recv(RECV_BYTES)
        self.budget -= len(chunk)
        if self.budget < 0:
            raise AnswerTooLarge
        self.heard = self.heard or bool(chunk)
        self.data += chunk
        return bool(chunk)


class AnswerTooLarge(Exception):
    """An answer passed its byte limit."""


def _response(wire: _Wire, max_bytes: int) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response of at most `max_bytes`, head included: status, headers (lower-case names), body."""
    wire.budget = max_bytes - len(wire.data)
    while b"\r\n\r\n" not in wire.data:
        if not wire.more():
            raise NotMemoryd("no HTTP answer")
    head, _, wire.data = wire.data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise NotMemoryd("no HTTP answer")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = headers.get("content-length", "")
    if length.isdigit():
        want = int(length)
        if want > max_bytes:
            raise AnswerTooLarge
        while len(wire.data) < want and wire.more():
            pass
        body, wire.data = wire.data[:want], wire.data[want:]
        return int(parts[1]), headers, body
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return int(parts[1]), headers, _chunked(wire)
    body, wire.data = wire.data, b""
    return int(parts[1]), headers, body


def _chunked(wire: _Wire) -> bytes:
    body = b""
    while True:
        while b"\r\n" not in wire.data:
            if not wire.more():
                return body
        size_line, _, wire.data = wire.data.partition(b"\r\n")
        size_text = size_line.split(b";")[0].strip() or b"0"
        if not all(c in HEX_DIGITS for c in size_text):
            raise NotMemoryd("no HTTP answer")
        size = int(size_text, 16)
        if size == 0:
            return body
        while len(wire.data) < size + 2:
            if not wire.more():
                return body + wire.data[:size]
        body, wire.data = body + wire.data[:size], wire.data[size + 2 :]


def forward(
    body: bytes, address: tuple[str, int], token: str, session_env: str, timeout: float, target: str = HOOK_PATH
) -> bytes:
    """Prove the daemon on one connection, then send it the event with the token; its answer's body. All of it
    ends within `timeout` seconds."""
    sock = _socket.socket(_socket.AF_INET6 if ":" in address[0] else _socket.AF_INET, _socket.SOCK_STREAM)
    wire = _Wire(sock, time.monotonic() + timeout)
    try:
        sock.settimeout(timeout)
        sock.connect(address)
        sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
        peer_host, peer_port = sock.getpeername()[:2]
        host = f"{address[0]}:{address[1]}" if ":" not in address[0] else f"[{address[0]}]:{address[1]}"
        _prove(wire, host, token, peer_host, peer_port)
        request = (
            f"POST {target} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            f"{SESSION_ENV_HEADER}: {session_env}\r\nConnection: close\r\n\r\n"
        )
        wire.send(request.encode("latin-1", "replace") + body)
        try:
            status, _, answer = _response(wire, HOOK_ANSWER_MAX_BYTES)
        except AnswerTooLarge:
            return b""
        return answer if status == 200 else b""
    finally:
        sock.close()


def _prove(wire: _Wire, host: str, token: str, peer_host: str, peer_port: int) -> None:
    """The program on `wire` proves it holds `token`, or NotMemoryd: also when it answers past the proof's size,
    or has not finished answering by the deadline."""
    challenge = new_challenge()
    stranger = NotMemoryd(f"{peer_host}:{peer_port}")
    wire.send(f"GET /v1/health HTTP/1.1\r\nHost: {host}\r\n{CHALLENGE_HEADER}: {challenge}\r\n\r\n".encode())
    try:
        _, headers, _ = _response(wire, CLIENT_PROOF_MAX_BYTES)
    except AnswerTooLarge:
        raise stranger from None
    except TimeoutError:
        if wire.heard:  # it answered, but not as memoryd does within the deadline
            raise stranger from None
        raise
    if not token or not proves(token, challenge, peer_host, peer_port, headers.get(PROOF_HEADER.lower(), "")):
        raise stranger


def _context(event: str, text: str) -> str:
    """A hook answer carrying `text` (no JSON encoder loaded: the notes are plain ASCII without quotes)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{{"hookSpecificOutput": {{"hookEventName": "{event}", "additionalContext": "{escaped}"}}}}'


def answer_hook(body: bytes, env: dict[str, str] | os._Environ[str], await_model: bool = False) -> str | None:
    """What to print for one event: the daemon's answer, a note at SessionStart when there is none, or nothing.
    `await_model`: the prompt's async hook, which waits for the model's pick (it never reaches a note)."""
    event = event_name(body)
    if event not in HOOK_EVENTS or (await_model and event != "UserPromptSubmit"):
        return None
    max_time, _, answer_read = HOOK_EVENTS[event]
    target = HOOK_PATH
    if await_model:
        max_time, target = AWAIT_MODEL_BUDGET[0], f"{HOOK_PATH}?{AWAIT_MODEL_QUERY}"
    at_start = event == "SessionStart"
    if event in RECALL_EVENTS and recall_off(env.get(RECALL_SWITCH)):
        return _context(event, RECALL_OFF_NOTE) if at_start else None
    home = os.path.expanduser(env.get("MEMORYD_HOME") or DEFAULT_HOME)
    address = daemon_address(home)
    if address is None:
        return _context(event, DOWN_NOTE) if at_start else None
    session_env = ";".join(f"{name}={env.get(name, '')}" for name in SESSION_ENV_VARS)
    try:
        answer = forward(body, address, read_token(home, env), session_env, max_time, target)
    except NotMemoryd as exc:
        return _context(event, STRANGER_NOTE.format(address=exc)) if at_start else None
    except OSError:  # refused, reset, timed out: the daemon is not there
        return _context(event, DOWN_NOTE) if at_start else None
    text = answer.decode("utf-8", "replace").strip()
    return text if answer_read and text not in ("", "{}") else None


def main(await_model: bool = False) -> int:
    """Fail open: a hook must never stall or fail the agent's turn."""
    try:
        answer = answer_hook(sys.stdin.buffer.read(MAX_EVENT_BYTES), os.environ, await_model)
    except Exception as exc:
        print(f"memoryd hook: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return 0
    if answer:
        sys.stdout.write(answer + "\n")
    return 0
