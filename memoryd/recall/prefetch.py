"""The model's side-query off the critical path (the seeds' memory prefetch): a prompt's hook answers at once
with the local choice and starts the side-query; its pick is handed over later in the same turn (Claude Code's
async hook, or the next tool call's answer), never holding the prompt."""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memoryd.base import limits

PENDING_KEPT = 256  # sessions whose side-query waits to be handed over
PENDING_TTL_SECONDS = 600.0  # a pick nobody took within this long is dropped (the turn is long over)
DECISION_WAIT_SECONDS = 5.0  # how long the async hook waits for the prompt's own hook to decide (they start together)


@dataclass(frozen=True)
class Pending:
    """One session's side-query in flight: the prompt it answers, and the model's future pick (candidate keys);
    no future when the prompt's recall decided the model was not needed."""

    prompt: str
    future: concurrent.futures.Future[list[str]] | None
    started: float


class ModelPrefetch:
    """Side-queries by (session, memory dir): a newer prompt's replaces an older one's, each is taken once."""

    def __init__(
        self,
        pool: concurrent.futures.ThreadPoolExecutor,
        clock: Callable[[], float] = time.monotonic,
        waiters: int = limits.RECALL_MODEL_FOLLOWUP_WAITERS,
    ):
        self._pool = pool
        self._clock = clock
        # Callers waiting at once, each on a server worker thread: the rest take what is ready without waiting, so
        # waiting hooks never starve other sessions' requests (issue 52: 45 held a prompt hook 16.9 s).
        self._waiters = threading.BoundedSemaphore(waiters)
        self._pending: dict[tuple[str, str], Pending] = {}
        self._lock = threading.Condition()
        self.started = 0  # side-queries started, for "model calls per 100 prompts"

    def start(self, session_id: str, memdir: str, prompt: str, ask: Callable[[], list[str]] | None) -> None:
        """The prompt's recall decided: `ask` the model in the background, or (None) that it need not be asked."""
        future = self._pool.submit(ask) if ask is not None else None
        with self._lock:
            self.started += future is not None
            old = self._pending.pop((session_id, memdir), None)
            self._pending[(session_id, memdir)] = Pending(prompt, future, self._clock())
            self._expire()
            self._lock.notify_all()
        if old is not None and old.future is not None:
            old.future.cancel()

    def take(self, session_id: str, memdir: str, prompt: str, wait: float) -> tuple[str, list[str]] | None:
        """(prompt, the model's pick) once it answered within `wait` s (0 when `waiters` callers wait already);
        None when the prompt's recall did not ask the model, it failed, or it is still running (then it stays
        pending for a later call). An empty `prompt` takes whatever is pending (a tool call's answer); a prompt's
        async hook first waits for that prompt's own hook to decide, since Claude Code starts both at once."""
        waits = wait > 0 and self._waiters.acquire(blocking=False)
        try:
            return self._take(session_id, memdir, prompt, wait if waits else 0.0)
        finally:
            if waits:
                self._waiters.release()

    def _take(self, session_id: str, memdir: str, prompt: str, wait: float) -> tuple[str, list[str]] | None:
        deadline = self._clock() + min(wait, DECISION_WAIT_SECONDS)
        with self._lock:
            while (pending := self._pending.get((session_id, memdir))) is None or (prompt and pending.prompt != prompt):
                left = deadline - self._clock()
                if left <= 0 or not self._lock.wait(left):
                    return None
        if pending.future is None:
            with self._lock:
                if self._pending.get((session_id, memdir)) is pending:
                    del self._pending[(session_id, memdir)]
            return None
        try:
            picks = pending.future.result(timeout=wait)
        except concurrent.futures.TimeoutError:
            return None
        except Exception:  # the model failed: the local choice stands
            picks = []
        with self._lock:
            if self._pending.get((session_id, memdir)) is not pending:
                return None  # another call took it (or a newer prompt replaced it) meanwhile
            del self._pending[(session_id, memdir)]
        return pending.prompt, picks

    def decided(self, session_id: str, memdir: str, prompt: str) -> bool:
        with self._lock:
            pending = self._pending.get((session_id, memdir))
            return pending is not None and pending.prompt == prompt

    def _expire(self) -> None:
        cutoff = self._clock() - PENDING_TTL_SECONDS
        for key in [k for k, p in self._pending.items() if p.started < cutoff]:
            self._cancel(self._pending.pop(key))
        while len(self._pending) > PENDING_KEPT:
            self._cancel(self._pending.pop(next(iter(self._pending))))

    @staticmethod
    def _cancel(pending: Pending) -> None:
        if pending.future is not None:
            pending.future.cancel()
