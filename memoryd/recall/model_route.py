"""The model's say in a prompt's recall (the seeds' memory prefetch): skipped when the local ranking settles it,
started in the background for a hook, else asked within a deadline; a late answer serves the session's next prompt."""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from typing import Any

from memoryd.base.errors import MemorydError
from memoryd.config import RecallSettings
from memoryd.llm import LLMClient
from memoryd.recall.decide import MODEL_FLOOR, MODEL_SURE
from memoryd.recall.explain import Why
from memoryd.recall.prefetch import ModelPrefetch
from memoryd.recall.select import select_with_llm
from memoryd.store.model import MemoryHeader

log = logging.getLogger(__name__)
SDK_TIMEOUT_MARGIN_SECONDS = 0.5
LATE_ANSWER_SECONDS = 15.0  # how long a side-query may run past the deadline to be kept for the next prompt
LATE_ANSWERS_KEPT = 256  # sessions whose late side-query answer waits for their next prompt


@dataclass(frozen=True)
class ModelAsk:
    """What a prompt's recall hands the model step: the session and store, the prompt, the local ranking with each
    store's headers and what the session holds, and how many to choose from and give."""

    session_id: str
    memdir: str
    query: str
    ranked: list[tuple[str, float]]
    open_in: list[tuple[str, list[MemoryHeader], set[str]]]
    limit: int
    pool: int
    recent: list[str]
    defer_model: bool


def model_not_needed(injected: list[str], whys: dict[str, Why]) -> str:
    """Why the side-query is skipped when the local candidates leave nothing to decide: no candidate is anywhere
    near the confidence floor (clearly silent), or every injected memory is a close match the rule is sure of
    (clearly sure). "" when the model should choose."""
    conf = [w.confidence for w in whys.values() if w.confidence is not None]
    if not injected and (not conf or max(conf) < MODEL_FLOOR):
        return "local ranking is clearly silent; the model was not asked"
    if injected and all(
        whys[fn].rule == "close match" and (whys[fn].confidence or 0.0) >= MODEL_SURE for fn in injected if fn in whys
    ):
        return "local ranking is sure; the model was not asked"
    return ""


class ModelRoute:
    """The side-query's threads, the hooks' prefetched answers and the late answers kept for a next prompt."""

    def __init__(self, llm: LLMClient, settings: RecallSettings) -> None:
        self.llm, self.settings = llm, settings
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-llm")
        self.prefetch = ModelPrefetch(self._pool)  # the hooks' side-queries, handed over later in the turn
        self._late: dict[tuple[str, str], list[str]] = {}  # (session, memdir) → picks that came after the deadline
        self._late_lock = threading.Lock()

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def choose(
        self, ask: ModelAsk, why_not: str, local: list[str], released: Callable[[], AbstractContextManager[None]]
    ) -> tuple[str, str, list[str]]:
        """(method, reason, chosen) once the model had its say; `released` frees the recall's compute slot while
        the model call waits on the network."""
        method, reason, chosen = "local", "", local
        headers = {
            key + h.filename: (h if not key else replace(h, filename=key + h.filename))
            for key, hs, surfaced in ask.open_in
            for h in hs
            if h.filename not in surfaced
        }  # not surfaced yet, in any of the stores
        late = [fn for fn in self._take_late(ask.session_id, ask.memdir) if fn in headers]
        candidates = [headers[fn] for fn, _ in ask.ranked if fn in headers][: ask.pool]
        if why_not:
            reason = why_not
        elif ask.defer_model:  # the seeds' prefetch: the local choice now, the model's later in this turn
            self._start_prefetch(ask, candidates)
            reason = "local choice served at once; the model's follows in this turn"
        else:  # the model chooses among the local ranker's candidates only (precision, never noise), maybe none
            with released():
                llm_choice, reason = self._side_query(ask.query, candidates, ask.limit, (ask.session_id, ask.memdir))
            if llm_choice is not None:
                method, chosen = "llm", llm_choice
        if late:  # the previous prompt's answer, kept for this one: it goes first
            method, chosen = "llm", list(dict.fromkeys(late + chosen))[: ask.limit]
            reason = "; ".join(filter(None, [reason, "includes the model's late answer to the previous prompt"]))
        return method, reason, chosen

    def _start_prefetch(self, ask: ModelAsk, candidates: list[Any]) -> None:
        """Start the side-query for this prompt in the background (its pick: `RecallService.model_followup`)."""
        timeout = max(self.settings.deadline_seconds, LATE_ANSWER_SECONDS)
        self.prefetch.start(
            ask.session_id,
            ask.memdir,
            ask.query,
            lambda: select_with_llm(
                self.llm, ask.query, candidates, limit=ask.limit, timeout=timeout, recent=ask.recent
            ),
        )

    def _take_late(self, session_id: str, memdir: str) -> list[str]:
        with self._late_lock:
            return self._late.pop((session_id, memdir), [])

    def _keep_late(self, key: tuple[str, str], future: concurrent.futures.Future[list[str]]) -> None:
        """A side-query that missed the deadline but then answered: its picks wait for the session's next prompt."""
        if future.cancelled() or future.exception() is not None or not future.result():
            return
        with self._late_lock:
            self._late[key] = future.result()
            while len(self._late) > LATE_ANSWERS_KEPT:
                self._late.pop(next(iter(self._late)))

    def _side_query(
        self, query: str, candidates: list[Any], limit: int, key: tuple[str, str] | None = None
    ) -> tuple[list[str] | None, str]:
        """The LLM's choice, or (None, why) when it failed or missed the deadline (a late answer is
        kept under `key`)."""
        deadline = self.settings.deadline_seconds
        # the SDK's own timeout ends the worker soon after; a margin keeps the wait below the one that fires
        # the worker may outlive the deadline (up to LATE_ANSWER_SECONDS) so a late answer can serve the next prompt
        future = self._pool.submit(
            select_with_llm,
            self.llm,
            query,
            candidates,
            limit=limit,
            timeout=max(deadline + SDK_TIMEOUT_MARGIN_SECONDS, LATE_ANSWER_SECONDS),
        )
        try:
            return future.result(timeout=deadline), ""
        except concurrent.futures.TimeoutError:
            if key is not None and not future.cancel():
                future.add_done_callback(lambda f: self._keep_late(key, f))
            return (
                None,
                f"LLM side-query missed the {deadline:g} s deadline; local ranking served (a late "
                f"answer is kept for the next prompt)",
            )
        except MemorydError as exc:
            return None, f"LLM side-query failed ({exc.code}); local ranking served"
        except Exception as exc:  # never fail the agent's prompt over recall
            log.warning("recall side-query crashed: %s", exc.__class__.__name__)
            return None, "LLM side-query failed; local ranking served"
