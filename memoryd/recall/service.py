"""`RecallService`: POST /v1/recall's core. Gates cheapest first, then the LLM side-query
(bounded by a deadline) or the local ranker, then truncation, headers and the session ledger."""

from __future__ import annotations

import concurrent.futures
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from memoryd.config import RecallSettings
from memoryd.errors import InvalidRequest, MemorydError
from memoryd.llm import LLMClient
from memoryd.metrics import Metrics
from memoryd.recall.dense import FUSION_DEPTH, rrf
from memoryd.recall.indexes import StoreIndex, StoreIndexes
from memoryd.recall.inject import age_days, header_for, injection_text, truncate_content
from memoryd.recall.select import select_with_llm
from memoryd.recall.sessions import SessionLedger
from memoryd.recall.text import STEMMER
from memoryd.store import MemoryDir, StoreRegistry

log = logging.getLogger(__name__)
SDK_TIMEOUT_MARGIN_SECONDS = 0.5


@dataclass
class RecalledMemory:
    filename: str
    name: str
    type: str
    description: str
    content: str
    header: str
    age_days: int
    score: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"filename": self.filename, "name": self.name, "type": self.type, "description": self.description,
                "content": self.content, "header": self.header, "age_days": self.age_days}


@dataclass
class RecallResult:
    memories: list[RecalledMemory] = field(default_factory=list)
    injection: str = ""
    method: str = "skipped"  # llm | local | skipped
    budget_used_bytes: int = 0
    reason: str = ""  # why skipped, or why the LLM was not used
    scores: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Spec §9's answer, plus `reason` and `scores` for people and the CLI."""
        return {"memories": [m.as_dict() for m in self.memories], "injection": self.injection, "method": self.method,
                "budget_used_bytes": self.budget_used_bytes, "reason": self.reason, "scores": self.scores}


class RecallService:
    """Picks up to 5 memories per prompt that the session has not seen yet."""

    def __init__(self, *, settings: RecallSettings, stores: StoreRegistry, llm: LLMClient, ledger: SessionLedger, metrics: Metrics, now: Callable[[], datetime],
                 is_watched: Callable[[Path], bool] | None = None) -> None:
        self.settings = settings
        self.stores = stores
        self.llm = llm
        self.ledger = ledger
        self.metrics = metrics
        self.now = now
        self.indexes = StoreIndexes(is_watched=is_watched)
        # A line put before a recalled memory that names what the project no longer has (set by the daemon).
        self.stale_caveat: Callable[[MemoryDir, str], str] = lambda store, filename: ""
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-llm")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def warm(self) -> None:
        """Load the dense model if installed, then index every known store (off the request path)."""
        self.indexes.encoder.load()
        for store in self.stores.known():
            try:
                self.indexes.refresh(store)
            except Exception:
                log.exception("could not index %s", store.path)

    def status(self) -> dict[str, Any]:
        return {"indexed_dirs": len(self.indexes), "indexed_memories": self.indexes.documents(),
                "sessions": self.ledger.count(), "llm": self.llm.enabled, "stemmer": STEMMER,
                "dense_model": self.indexes.encoder.status}

    def recall(self, cwd: str, query: str, session_id: str, *, store: MemoryDir | None = None, max_chars: int | None = None) -> RecallResult:
        """`max_chars` (e.g. Claude Code's 10,000-char context cap): memories that would push the
        injection past it are left out and NOT counted as surfaced, so a later prompt can get them."""
        started = time.perf_counter()
        result = self._recall(cwd, query, session_id, store, max_chars)
        self.metrics.recalls.labels(result.method).inc()
        self.metrics.recall_latency.labels(result.method).observe(time.perf_counter() - started)
        return result

    def _recall(self, cwd: str, query: str, session_id: str, store: MemoryDir | None, max_chars: int | None) -> RecallResult:
        if not session_id.strip():
            raise InvalidRequest("session_id is empty: pass the agent's session id so recall does not repeat memories.")
        self.ledger.expire()
        store = store or self.stores.for_cwd(cwd)
        used = self.ledger.bytes_used(session_id)
        # Gates, cheapest first (seeds: startMemoryPrefetch).
        if not re.search(r"\s", query.strip()):
            return RecallResult(budget_used_bytes=used, reason="single-word query")
        if used >= self.settings.session_budget_bytes:
            return RecallResult(budget_used_bytes=used, reason=f"session budget of {self.settings.session_budget_bytes:,} bytes spent")
        if not store.has_memories():
            return RecallResult(budget_used_bytes=used, reason="no memory files")

        memdir = str(store.path)
        item = self.indexes.refresh(store)
        surfaced = self.ledger.surfaced(session_id, memdir)
        candidates = [h for h in item.headers if h.filename not in surfaced]
        if not candidates:
            return RecallResult(method="local", budget_used_bytes=used, reason="every memory was already surfaced in this session")
        limit = self.settings.max_memories
        pool = self.settings.side_query_candidates
        ranked = self._rank(item, query, surfaced, max(limit, pool) if self.llm.enabled else limit)
        scores = dict(ranked)

        method, reason, chosen = "local", "", [fn for fn, _ in ranked[:limit]]
        if self.llm.enabled:
            if len(candidates) > pool:  # bounded prompt: the local ranker pre-selects
                by_name = {h.filename: h for h in candidates}
                picked = [by_name[fn] for fn, _ in ranked if fn in by_name][:pool]
                seen = {h.filename for h in picked}
                picked += [h for h in candidates if h.filename not in seen][: pool - len(picked)]
                candidates = picked
            llm_choice, reason = self._side_query(query, candidates, limit)
            if llm_choice is not None:
                method, chosen = "llm", llm_choice

        return self._surface(store, session_id, chosen, scores, method, reason, used, max_chars)

    def _rank(self, item: StoreIndex, query: str, exclude: set[str], k: int) -> list[tuple[str, float]]:
        """BM25F alone, or fused with the dense model's ranking when the extra is loaded."""
        encoder = self.indexes.encoder
        if not encoder.ready or not item.dense.vectors:
            return item.index.rank(query, exclude=exclude, k=k)
        lexical = [fn for fn, _ in item.index.rank(query, exclude=exclude, k=FUSION_DEPTH)]
        dense = item.dense.rank(encoder.encode([query])[0], exclude=exclude)
        return [(fn, round(score, 4)) for fn, score in rrf(lexical, dense)[:k]]

    def _side_query(self, query: str, candidates: list[Any], limit: int) -> tuple[list[str] | None, str]:
        """The LLM's choice, or (None, why) when it failed or missed the deadline."""
        deadline = self.settings.deadline_seconds
        # the SDK's own timeout ends the worker soon after; a margin keeps the wait below the one that fires
        future = self._pool.submit(select_with_llm, self.llm, query, candidates, limit=limit, timeout=deadline + SDK_TIMEOUT_MARGIN_SECONDS)
        try:
            return future.result(timeout=deadline), ""
        except concurrent.futures.TimeoutError:
            future.cancel()
            return None, f"LLM side-query missed the {deadline:g} s deadline; local ranking served"
        except MemorydError as exc:
            return None, f"LLM side-query failed ({exc.code}); local ranking served"
        except Exception as exc:  # never fail the agent's prompt over recall
            log.warning("recall side-query crashed: %s", exc.__class__.__name__)
            return None, "LLM side-query failed; local ranking served"

    def _surface(self, store: MemoryDir, session_id: str, chosen: list[str], scores: dict[str, float], method: str, reason: str, used: int,
                 max_chars: int | None = None) -> RecallResult:
        now = self.now().timestamp()
        memories: list[RecalledMemory] = []
        for filename in chosen:
            try:
                memory = self.indexes.memory(store, filename)
            except MemorydError:
                continue  # deleted or broken since it was ranked
            days = age_days(memory.mtime, now)
            stale = self.stale_caveat(store, filename)
            recalled = RecalledMemory(
                filename=filename, name=memory.name, type=memory.type, description=memory.description,
                content=truncate_content(memory.body), header=(f"{stale}\n\n" if stale else "") + header_for(str(memory.path), days), age_days=days,
                score=scores.get(filename),
            )
            if max_chars is not None and len(injection_text([(m.header, m.content) for m in [*memories, recalled]])) > max_chars:
                continue  # does not fit: a smaller one further down may
            memories.append(recalled)
        if memories:
            spent = sum(len(m.content.encode("utf-8")) for m in memories)
            used = self.ledger.record(session_id, str(store.path), [m.filename for m in memories], spent)
        elif not reason:
            reason = "no memory matched the query"
        return RecallResult(
            memories=memories,
            injection=injection_text([(m.header, m.content) for m in memories]),
            method=method,
            budget_used_bytes=used,
            reason=reason,
            scores={m.filename: m.score for m in memories if m.score is not None},
        )


def build_recall(settings: Any, *, stores: StoreRegistry, llm: LLMClient, state: Any, metrics: Metrics, now: Callable[[], datetime],
                 is_watched: Callable[[Path], bool] | None = None) -> RecallService:
    """The daemon's recall part, from its settings."""
    if STEMMER != "snowball":
        log.warning("recall: PyStemmer is not installed; the local ranker uses a crude stemmer (pip install PyStemmer)")
    ledger = SessionLedger(state, clock=lambda: now().timestamp())
    return RecallService(settings=settings.recall, stores=stores, llm=llm, ledger=ledger, metrics=metrics, now=now, is_watched=is_watched)
