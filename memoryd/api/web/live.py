"""The live activity page's data: recent events as display items, and the server-sent event stream
that carries new ones. The stream is a /ui path (the session cookie admits it) and refuses a request
sent from any other origin, even another port of this host (same site, so the cookie goes along)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import StreamingResponse

from memoryd.api.web import views
from memoryd.api.web.views import WebView
from memoryd.base import limits
from memoryd.base.activity import RECALL, Event
from memoryd.base.errors import Forbidden

FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})  # Sec-Fetch-Site of a request another origin's page made


def check_same_origin(request: Request) -> None:
    """Refuse a read of the stream that another origin's page started (EventSource sends Origin only cross-origin)."""
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    origin = request.headers.get("origin")
    if (origin is not None and origin != own) or request.headers.get("sec-fetch-site", "") in FOREIGN_FETCH_SITES:
        raise Forbidden(f"the live activity stream is for the memoryd web view itself ({own}); open {own}/ui/activity.")


def item(event: Event, titles: dict[str, str]) -> dict[str, Any]:
    """What the `_event.html` fragment shows of one event."""
    key = f"{event.kind}-{event.data.get('id') or event.data.get('job_id') or event.data.get('run_id') or event.seq}"
    return {
        "kind": event.kind,
        "dom_id": f"ev-{key}",
        "at": event.at,
        "memory_dir": event.memory_dir,
        "pid": views.project_id(Path(event.memory_dir)),
        "project": titles.get(event.memory_dir, Path(event.memory_dir).parent.name),
        "data": event.data,
    }


def recent(web: WebView, project: views.Project | None) -> list[dict[str, Any]]:
    """The last recalls (from the recall log, which outlives a restart) with the extractions and dream runs kept in
    memory."""
    memory_dir = str(project.store.path) if project else None
    recalls = (
        web.recall_log.entries(memory_dir=memory_dir, limit=limits.RECALL_LOG_DEFAULT_LIMIT) if web.recall_log else []
    )
    events = [Event(0, RECALL, e.at, e.memory_dir, e.as_dict()) for e in recalls]
    events += [e for e in web.activity.recent(memory_dir) if e.kind != RECALL]
    titles = web.titles()
    return [item(e, titles) for e in sorted(events, key=lambda e: -e.at)[: limits.ACTIVITY_KEPT]]


def sse(event_id: int, name: str, data: str) -> str:
    """One server-sent event; every line of `data` gets its own `data:` field."""
    return f"id: {event_id}\nevent: {name}\n" + "".join(f"data: {line}\n" for line in data.splitlines() or [""]) + "\n"


def stream(web: WebView, memory_dir: str | None, *, render: Callable[[dict[str, Any]], str]) -> StreamingResponse:
    """New events as they are published (a heartbeat comment keeps an idle stream open); ends when the daemon stops."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=limits.ACTIVITY_SUBSCRIBER_QUEUE)

    def put(event: Event | None) -> None:
        if queue.full() and event is not None:
            return  # a page this far behind loses events, never the daemon's memory
        queue.put_nowait(event)

    def deliver(event: Event | None) -> None:  # on the publisher's thread
        if event is None or memory_dir is None or event.memory_dir == memory_dir:
            try:
                loop.call_soon_threadsafe(put, event)
            except RuntimeError:  # the server's loop is closed: nobody is listening
                pass

    unsubscribe = web.activity.subscribe(deliver)

    async def events() -> AsyncIterator[str]:
        titles: dict[str, str] = {}
        try:
            yield "retry: 2000\n: connected\n\n"
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), limits.ACTIVITY_HEARTBEAT_SECONDS)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if event is None:
                    return
                if event.memory_dir not in titles:
                    titles = await asyncio.to_thread(web.titles)
                yield sse(event.seq, "activity", render(item(event, titles)))
        finally:
            unsubscribe()

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    )
