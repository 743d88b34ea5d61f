"""A scripted Anthropic Messages API on 127.0.0.1 for tests: the real SDK (and the real
Claude Code CLI) talk to it through their base URL. It records every request and answers
from a queue of `Reply`s, or from a handler, streaming (SSE) when the request asks to.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from tests.support.servers import ThreadedServer

# On a scripted 5xx: the server asks for the retry at once, so a test of what follows a failed call does not sit out
# memoryd's 0.5-1 s first backoff (the backoff itself: tests/test_llm_backends.py, which keeps the header off).
RETRY_NOW = {"retry-after": "0"}


@dataclass
class Reply:
    """One scripted answer: text, or an HTTP error status, or a raw (garbage) body; after `delay` s.

    `tool_input` answers with a tool_use block instead, for the request's first tool (how
    structured output arrives); `tool_use` = (name, input) calls a named tool. `headers` go on
    the response (e.g. retry-after on a 429).
    """

    text: str = "ok"
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    tool_input: dict[str, Any] | None = None
    tool_use: tuple[str, dict[str, Any]] | None = None
    headers: dict[str, str] | None = None


class ScriptedMessagesAPI:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.replies: deque[Reply] = deque()
        self.handler: Callable[[dict[str, Any]], Reply] | None = None
        self.default = Reply()
        self._lock = threading.Lock()
        self._closing = False
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()  # scripted delays in progress
        self.app = self._build_app()
        self._server: ThreadedServer | None = None
        self.url = ""

    # --- scripting -------------------------------------------------------------
    def push(self, *replies: Reply | str) -> None:
        for r in replies:
            self.replies.append(Reply(text=r) if isinstance(r, str) else r)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.handler is not None:
            return self.handler(body)
        return self.default

    def texts_sent(self) -> list[str]:
        """Every text block of every recorded request (system + messages), for assertions."""
        out: list[str] = []
        for body in self.requests:
            system = body.get("system")
            if isinstance(system, str):
                out.append(system)
            elif isinstance(system, list):
                out.extend(b.get("text", "") for b in system if isinstance(b, dict))
            for message in body.get("messages", []):
                content = message.get("content")
                if isinstance(content, str):
                    out.append(content)
                elif isinstance(content, list):
                    for block in content:
                        if isinstance(block, dict):
                            if block.get("type") == "text":
                                out.append(block.get("text", ""))
                            elif block.get("type") == "tool_result":
                                inner = block.get("content")
                                out.append(inner if isinstance(inner, str) else json.dumps(inner))
        return out

    async def _delay(self, seconds: float) -> bool:
        """Sleep a scripted delay; False when the API closed meanwhile."""
        done = asyncio.Event()
        waiter = (asyncio.get_running_loop(), done)
        with self._lock:
            if self._closing:
                return False
            self._waiting.add(waiter)
        try:
            await asyncio.wait_for(done.wait(), seconds)
            return False
        except TimeoutError:
            return True
        finally:
            with self._lock:
                self._waiting.discard(waiter)

    # --- server ----------------------------------------------------------------
    def __enter__(self) -> ScriptedMessagesAPI:
        self._server = ThreadedServer(self.app).__enter__()
        self.url = self._server.url
        return self

    def __exit__(self, *exc: object) -> None:
        # A reply scripted to hang ends now with a 503, so no teardown waits out its delay.
        with self._lock:
            self._closing = True
            waiting = list(self._waiting)
        for loop, done in waiting:
            loop.call_soon_threadsafe(done.set)
        if self._server is not None:
            self._server.__exit__(*exc)

    def _build_app(self) -> FastAPI:
        app = FastAPI()
        api = self

        @app.post("/v1/messages")
        async def messages(request: Request) -> Response:
            body = await request.json()
            with api._lock:
                api.requests.append(body)
                api.headers.append(dict(request.headers))
            # a tool's result closes the turn: answered here, so scripts need not know about it
            # (unless a handler scripts the whole conversation, tool results included)
            reply = (
                Reply(text="Done.") if _ends_with_tool_result(body) and api.handler is None else api.next_reply(body)
            )
            if reply.delay and not await api._delay(reply.delay):
                return JSONResponse(
                    {"type": "error", "error": {"type": "api_error", "message": "the scripted API is closing"}},
                    status_code=503,
                )
            if reply.status != 200:
                return JSONResponse(
                    {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}},
                    status_code=reply.status,
                    headers=reply.headers,
                )
            if reply.raw_body is not None:
                return Response(reply.raw_body, media_type="application/json")
            if body.get("stream"):
                return StreamingResponse(_sse(body, reply), media_type="text/event-stream")
            return JSONResponse(_message(body, reply))

        @app.post("/v1/messages/count_tokens")
        async def count_tokens(request: Request) -> dict[str, int]:
            body = await request.body()
            return {"input_tokens": max(1, len(body) // 4)}

        @app.api_route("/{path:path}", methods=["GET", "POST", "HEAD"])
        async def anything(path: str) -> JSONResponse:
            return JSONResponse({}, status_code=200)

        return app


def _ends_with_tool_result(body: dict[str, Any]) -> bool:
    turns = [m for m in body.get("messages") or [] if m.get("role") != "system"]  # newer models take system turns
    last = (turns or [{}])[-1].get("content")
    return isinstance(last, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last)


def _content(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.tool_use is not None:
        name, arguments = reply.tool_use
        return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": arguments}
    if reply.tool_input is None:
        return {"type": "text", "text": reply.text}
    names = [t.get("name", "tool") for t in body.get("tools") or []]
    name = next((n for n in names if n != "DeferredToolPlaceholder"), "tool")  # the CLI lists a placeholder first
    return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:24]}", "name": name, "input": reply.tool_input}


def _message(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-test"),
        "content": [_content(body, reply)],
        "stop_reason": "end_turn" if reply.tool_input is None and reply.tool_use is None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
    }


async def _sse(body: dict[str, Any], reply: Reply) -> AsyncIterator[bytes]:
    msg = _message(body, reply)
    start = {
        **msg,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
    }

    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    yield event("message_start", {"type": "message_start", "message": start})
    block = msg["content"][0]
    if block["type"] == "tool_use":
        yield event(
            "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {**block, "input": {}}}
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        yield event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        )
        delta = {"type": "text_delta", "text": reply.text}
    yield event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield event("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        },
    )
    yield event("message_stop", {"type": "message_stop"})
