"""`RecallService`: POST /v1/recall's core. Gates cheapest first, then the LLM side-query
(bounded by a deadline) or the local ranker, then truncation, headers and the session ledger."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.activity import Activity
from memoryd.base.errors import MemorydError
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.base.text import STEMMER
from memoryd.base.validation import check_session_id
from memoryd.config import RecallSettings
from memoryd.llm import LLMClient
from memoryd.recall.applies_index import AppliesIndex
from memoryd.recall.decide import NOT_CONFIDENT, Decision, context_items, decide
from memoryd.recall.dense import VECTORS_FILENAME, Encoder
from memoryd.recall.derived_cache import DERIVED_FILENAME, DerivedCache
from memoryd.recall.explain import Why, matched_words
from memoryd.recall.indexes import StoreIndexes
from memoryd.recall.inject import injection_text
from memoryd.recall.log import RecallLog
from memoryd.recall.model_route import ModelAsk, ModelRoute, model_not_needed
from memoryd.recall.recalled import RecalledMemory, RecallResult, shown
from memoryd.recall.refs import KEY_PREFIX, MemoryRef, Origin
from memoryd.recall.sessions import SessionLedger
from memoryd.recall.store_index import StoreIndex
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.model import MemoryHeader
from memoryd.transcripts.context import SessionContext

log = logging.getLogger(__name__)


@dataclass(kw_only=True, eq=False)
class RecallService:
    """Picks up to 5 memories per prompt that the session has not seen yet."""

    settings: RecallSettings
    stores: StoreRegistry
    llm: LLMClient
    state: StateDB  # the session ledger's and the recall log's tables
    metrics: Metrics
    now: Callable[[], datetime]
    is_watched: Callable[[Path], bool] | None = None
    home: Path | None = None  # where the dense vectors and derivations are cached (none: not cached)
    activity: Activity | None = None  # the recall log tells it of each recall (the web view's live page)
    # A line put before a recalled memory that names what the project no longer has (the stale checker).
    stale_caveat: Callable[[MemoryDir, str], str] = lambda store, filename: ""
    author_of: Callable[[Path, str], str] = lambda team_dir, filename: ""  # who wrote a team memory (the team part)

    def __post_init__(self) -> None:
        if STEMMER != "snowball":
            log.warning(
                "recall: PyStemmer is not installed; the local ranker uses a crude stemmer (pip install PyStemmer)"
            )

        def clock() -> float:
            return self.now().timestamp()

        self.ledger = SessionLedger(self.state, clock=clock)
        # what each recall gave and why (the web view's live page, `memoryd recall --explain`)
        self.recall_log: RecallLog | None = RecallLog(self.state, clock=clock, activity=self.activity)
        self.indexes = StoreIndexes(
            Encoder(self.settings.dense),
            is_watched=self.is_watched,
            vector_cache=self.home / VECTORS_FILENAME if self.home else None,
        )
        self.stores.on_write.append(self.indexes.written)  # indexed before the save answers; its vector comes after
        # what each memory applies to (issue 38), for prompts and tool calls; kept on disk: a restart reads it back
        self.applies = AppliesIndex(DerivedCache(self.home / DERIVED_FILENAME if self.home else None))
        # derived after saves in the background, not by a tool call
        self.indexes.keep_views(lambda store, item: self.applies.view(store, item, wait=True))
        self.model = ModelRoute(self.llm, self.settings)  # the side-query, off the critical path for hooks
        # Recalls computing at once. More only add threads that take turns on the GIL, and a save
        # holding a memory dir's lock waits behind all of them after every system call (issue 31).
        self._computing = threading.BoundedSemaphore(limits.RECALL_COMPUTING_AT_ONCE)
        # Prompts ranked, and how many of them the side-query would be asked about (with or without a model
        # backend: `_model_not_needed`), so a benchmark can report model calls per 100 prompts offline.
        self.prompts_ranked = self.model_wanted = 0
        self._counting = threading.Lock()

    def close(self) -> None:
        self.model.close()
        self.indexes.close()
        self.applies.close()
        if self.recall_log is not None:
            self.recall_log.close()

    def warm(self) -> None:
        """Load the dense model if installed, then index every known store and derive what each memory applies
        to (off the request path: what an earlier daemon derived is read back from the derived cache, the rest costs
        ~0.9 ms a memory); the embedding thread then gives their memories vectors."""
        self.indexes.encoder.load()
        self.indexes.start_dense()
        for store in self.stores.known():
            try:
                self.applies.view(store, self.indexes.refresh(store, wait=True), wait=True)
            except Exception:
                log.exception("could not index %s", store.path)

    def status(self) -> dict[str, Any]:
        return {
            "indexed_dirs": len(self.indexes),
            "indexed_memories": self.indexes.documents(),
            "sessions": self.ledger.count(),
            "llm": self.llm.enabled,
            "stemmer": STEMMER,
            "dense_model": self.indexes.encoder.status,
            "dense_pending": self.indexes.dense_pending(),
            "prompts_ranked": self.prompts_ranked,
            "model_wanted": self.model_wanted,
        }

    def mark_seen(self, session_id: str, memory_dir: str, filenames: list[str]) -> None:
        """Count memories the session already holds (read or written itself) as surfaced, so recall
        adds only new ones."""
        if set(filenames) - self.ledger.surfaced(session_id, memory_dir):
            self.ledger.record(session_id, memory_dir, sorted(filenames), 0)

    def recall(
        self,
        cwd: str,
        query: str,
        session_id: str,
        *,
        store: MemoryDir | None = None,
        max_chars: int | None = None,
        source: str = "rest",
        context: SessionContext | None = None,
        defer_model: bool = False,
    ) -> RecallResult:
        """`max_chars` (e.g. Claude Code's 10,000-char context cap): memories that would push the
        injection past it are left out and NOT counted as surfaced, so a later prompt can get them.
        `source` (hook | rest | mcp) names the door in the recall log; `context`: what the session is
        working on (its recent files and commands), from the transcript pipeline. `defer_model`: answer
        with the local choice at once and leave the model's to `model_followup` (a hook never waits)."""
        started = time.perf_counter()
        check_session_id(session_id)
        store = store or self.stores.for_cwd(cwd)  # resolved once: a cwd's memory dir reads settings and git files
        with self.indexes.serving(), self._computing:  # background embedding waits for it
            result = self._recall(cwd, query, session_id, store, max_chars, context, defer_model)
        if defer_model and self.llm.enabled:  # the prompt's async hook waits for this decision: say there is none
            memdir = str(store.path)
            if not self.model.prefetch.decided(session_id, memdir, query):
                self.model.prefetch.start(session_id, memdir, query, None)
        result.took_ms = round((time.perf_counter() - started) * 1000, 2)
        self.metrics.recalls.labels(result.method).inc()
        self.metrics.recall_latency.labels(result.method).observe(time.perf_counter() - started)
        if self.recall_log is not None:
            self.record(store, query, session_id, source, result)
        return result

    def surface_picked(
        self, store: MemoryDir, session_id: str, picked: list[str], whys: dict[str, Why], *, note: str = ""
    ) -> RecallResult:
        """Injection for memories chosen outside the prompt ranking (tool time), marked surfaced."""
        return self._surface(
            store,
            session_id,
            picked,
            {fn: w.score for fn, w in whys.items()},
            "local",
            "" if picked else "no memory applies to this act",
            self.ledger.bytes_used(session_id),
            limits.CLAUDE_CODE_CONTEXT_MAX_CHARS,
            whys,
            note=note,
            left_out=False,
        )

    def record(self, store: MemoryDir, query: str, session_id: str, source: str, result: RecallResult) -> None:
        """Log a recall (a prompt's, or one made at tool time); words matched are filled from the injected text
        where the ranker gave none."""
        texts = {m.filename: (m.name, m.description, m.content) for m in result.memories}
        result.why = [
            replace(w, terms=matched_words(query, texts[w.filename])) if not w.terms and w.filename in texts else w
            for w in result.why
        ]
        try:
            assert self.recall_log is not None
            self.recall_log.record(
                memory_dir=str(store.path),
                session_id=session_id,
                source=source,
                prompt=query,
                method=result.method,
                reason=result.reason,
                took_ms=result.took_ms,
                why=result.why,
                lexical_only=result.lexical_only,  # issue 52: whether it ranked with vectors, and how many were owed
                vectors_missing=result.vectors_missing,
            )
        except Exception:  # the log is for people; never fail the agent's prompt over it
            log.exception("could not record a recall in the recall log")

    def _recall(
        self,
        cwd: str,
        query: str,
        session_id: str,
        store: MemoryDir,
        max_chars: int | None,
        context: SessionContext | None = None,
        defer_model: bool = False,
    ) -> RecallResult:
        self.ledger.expire()
        used = self.ledger.bytes_used(session_id)
        # Gates, cheapest first (seeds: startMemoryPrefetch).
        if not re.search(r"\s", query.strip()):
            return RecallResult(budget_used_bytes=used, reason="single-word query")
        if used >= self.settings.session_budget_bytes:
            return RecallResult(
                budget_used_bytes=used, reason=f"session budget of {self.settings.session_budget_bytes:,} bytes spent"
            )
        sources = self._sources(store)
        if not sources:
            return RecallResult(budget_used_bytes=used, reason="no memory files")
        memdir = str(store.path)
        ranked: list[tuple[str, float]] = []
        injected: list[str] = []
        whys: dict[str, Why] = {}
        open_in: list[tuple[str, list[MemoryHeader], set[str]]] = []  # per source: key, headers, surfaced
        limit, pool = self.settings.max_memories, self.settings.side_query_candidates
        recent = context_items(context.paths, context.commands, cwd) if context is not None else []
        at_paths = context_items(context.paths, (), cwd) if context is not None else []  # the files it works on
        for origin, source in sources:  # the project's store, then its team folder, then the global one
            key = KEY_PREFIX[origin]  # candidates are keyed as the model's manifest names them (recall/refs.py)
            item = self.indexes.refresh(source)
            surfaced = self.ledger.surfaced(session_id, str(source.path))
            open_in.append((key, item.snapshot(), surfaced))
            decision = self._rank(item, query, surfaced, max(limit, pool) if self.llm.enabled else limit, recent)
            ranked += [(key + fn, score) for fn, score in decision.ranked]
            injected += [key + fn for fn in decision.injected]
            whys |= {key + fn: why for fn, why in decision.why.items()}
        if sources[0][0] == "personal":  # what the prompt names or is about, from the memories' applies_to
            injected = self._applies_picks(sources[0][1], query, at_paths, open_in[0][2], injected, ranked, whys)
        scores = dict(ranked)
        if len(sources) > 1:
            ranked.sort(key=lambda pair: -pair[1])
            injected.sort(key=lambda fn: -scores[fn])
        if any(headers for _, headers, _ in open_in) and not any(
            len(headers) > len(surfaced) or any(h.filename not in surfaced for h in headers)
            for _, headers, surfaced in open_in
        ):
            return RecallResult(
                method="local", budget_used_bytes=used, reason="every memory was already surfaced in this session"
            )

        method, reason, chosen = "local", "", injected[:limit]
        why_not = model_not_needed(injected, whys)
        with self._counting:
            self.prompts_ranked += 1
            self.model_wanted += not why_not
        if self.llm.enabled:
            ask = ModelAsk(session_id, memdir, query, ranked, open_in, limit, pool, recent, defer_model)
            method, reason, chosen = self.model.choose(ask, why_not, chosen, self._released)
        if not chosen and not reason:
            reason = NOT_CONFIDENT if whys else ""
        result = self._surface(store, session_id, chosen, scores, method, reason, used, max_chars, whys)
        result.lexical_only, result.vectors_missing = self.indexes.vectors_used([source for _, source in sources])
        return result

    def _applies_picks(
        self,
        own: MemoryDir,
        query: str,
        at_paths: list[str],
        surfaced: set[str],
        injected: list[str],
        ranked: list[tuple[str, float]],
        whys: dict[str, Why],
    ) -> list[str]:
        """The project store's memories whose applies_to the prompt, or a file the session works on, meets, added to
        the ranking's choice (`ranked` and `whys` extended in place): what the prompt names first, then the ranking's
        choice, the files' memories, the prompt's subjects."""
        item = self.indexes.refresh(own)
        picks = self.applies.prompt_picks(own, item, query, surfaced, bool(injected))
        at_work = self.applies.context_picks(own, item, at_paths, surfaced)
        for fn, why in picks.items():
            if fn not in injected:  # the ranking chose it already: its own rule says why
                whys[fn] = replace(
                    whys.get(fn) or Why(filename=fn, name="", score=0.0, injected=True), injected=True, rule=why.text()
                )
        for fn, why in at_work.items():
            whys.setdefault(fn, Why(filename=fn, name="", score=0.0, injected=True, rule=why.text()))
        had = {fn for fn, _ in ranked}
        added = [fn for fn in picks if fn not in injected] + list(at_work)
        ranked += [(fn, 0.0) for fn in dict.fromkeys(added) if fn not in had]
        named = [fn for fn, why in picks.items() if why.names_it and fn not in injected]
        return list(dict.fromkeys(named + injected + list(at_work) + list(picks)))

    def model_followup(
        self,
        cwd: str,
        session_id: str,
        *,
        prompt: str = "",
        wait: float,
        max_chars: int | None = None,
        source: str = "hook",
    ) -> RecallResult:
        """The model's pick for the session's last prompt, once it answered (waiting at most `wait` s, when few wait:
        `ModelPrefetch.take`), less what the session already holds: the second half of a hook's recall."""
        check_session_id(session_id)
        store = self.stores.for_cwd(cwd)
        taken = self.model.prefetch.take(session_id, str(store.path), prompt, wait)
        if taken is None:
            return RecallResult(reason="no model choice is waiting for this session")
        prompt, picks = taken
        started = time.perf_counter()
        with self._computing:
            held = {
                origin: self.ledger.surfaced(session_id, str(source_dir.path))
                for origin, source_dir in self._sources(store)
            }
            fresh = [k for k in picks if (ref := MemoryRef.of(k)).filename not in held.get(ref.origin, set())]
            used = self.ledger.bytes_used(session_id)
            reason = "the model's choice for this turn's prompt" if fresh else "the model chose nothing new"
            result = self._surface(store, session_id, fresh, {}, "llm", reason, used, max_chars)
        result.took_ms = round((time.perf_counter() - started) * 1000, 2)
        if self.recall_log is not None and result.memories:
            self.record(store, prompt, session_id, source, result)
        return result

    @contextmanager
    def _released(self) -> Iterator[None]:
        """This recall's compute slot, given up while a model call waits on the network."""
        self._computing.release()
        try:
            yield
        finally:
            self._computing.acquire()

    def _sources(self, store: MemoryDir) -> list[tuple[Origin, MemoryDir]]:
        """The stores recall searches: the project's, its team folder and the user's global
        memories, when they hold memories."""
        team = self.stores.team_for(store.path)
        candidates: list[tuple[Origin, MemoryDir]] = [("personal", store), ("team", team)]
        if self.stores.global_dir is not None:
            candidates.append(("global", self.stores.global_store()))
        return [(origin, s) for origin, s in candidates if s.has_memories()]

    def _source_of(self, store: MemoryDir, key: str) -> tuple[str, MemoryDir]:
        """A candidate key's file name and store."""
        ref = MemoryRef.of(key)
        if ref.origin == "global":
            return ref.filename, self.stores.global_store()
        return ref.filename, self.stores.team_for(store.path) if ref.origin == "team" else store

    def _rank(self, item: StoreIndex, query: str, exclude: set[str], k: int, context: list[str]) -> Decision:
        """The local ranking and its decision (recall/decide.py), on this store's indexes."""
        backend = self.indexes.encoder.backend
        return decide(
            item.index,
            item.dense if backend is not None else None,
            backend,
            query,
            context=context,
            exclude=exclude,
            k=k,
        )

    def _surface(
        self,
        store: MemoryDir,
        session_id: str,
        chosen: list[str],
        scores: dict[str, float],
        method: str,
        reason: str,
        used: int,
        max_chars: int | None = None,
        whys: dict[str, Why] | None = None,
        *,
        note: str = "",
        left_out: bool = True,
    ) -> RecallResult:
        """`note`: why these memories come now (tool time: the act they apply to), put before each header."""
        now = self.now().timestamp()
        whys = whys or {}
        memories: list[RecalledMemory] = []
        by_dir: dict[str, list[RecalledMemory]] = {}
        dropped: list[Why] = []
        for key in chosen:
            filename, source = self._source_of(store, key)
            recalled = self._recalled(source, key, filename, now, scores.get(key), note)
            if recalled is None:
                continue  # deleted or broken since it was ranked
            if (
                max_chars is not None
                and len(injection_text([(m.header, m.text) for m in [*memories, recalled]])) > max_chars
            ):
                dropped.append(
                    replace(
                        whys.get(key) or Why(filename=filename, name="", score=scores.get(key) or 0.0, injected=False),
                        filename=filename,
                        name=recalled.name,
                        injected=False,
                        rule="did not fit the context cap",
                    )
                )
                continue  # does not fit: a smaller one further down may
            memories.append(recalled)
            by_dir.setdefault(str(source.path), []).append(recalled)
        for path, picked in by_dir.items():
            used = self.ledger.record(
                session_id, path, [m.filename for m in picked], sum(len(m.content.encode("utf-8")) for m in picked)
            )
        if not memories and not reason:
            reason = "no memory matched the query"
        if left_out:
            dropped += self._left_out(store, chosen, scores, whys)
        return RecallResult(
            memories=memories,
            injection=injection_text([(m.header, m.text) for m in memories]),
            method=method,
            budget_used_bytes=used,
            reason=reason,
            scores={m.filename: m.score for m in memories if m.score is not None},
            why=[
                replace(
                    whys.get(m.key) or Why(filename=m.filename, name="", score=m.score or 0.0, injected=True),
                    filename=m.filename,
                    name=m.name,
                    injected=True,
                    rule=(whys.get(m.key) or Why("", "", 0.0, True)).rule or method,
                )
                for m in memories
            ]
            + dropped,
        )

    def _recalled(
        self, source: MemoryDir, key: str, filename: str, now: float, score: float | None, note: str
    ) -> RecalledMemory | None:
        """One chosen memory as the agent sees it (None: deleted or broken since it was ranked)."""
        try:
            memory = self.indexes.memory(source, filename)
        except MemorydError:
            return None
        ref = MemoryRef.of(key)
        author = self.author_of(source.path, filename) if ref.origin == "team" else ""
        stale = self.stale_caveat(source, filename)
        return shown(memory, ref.origin, now=now, score=score, note=note, stale=stale, author=author)

    def _left_out(
        self, store: MemoryDir, chosen: list[str], scores: dict[str, float], whys: dict[str, Why]
    ) -> list[Why]:
        """The best memories not given, for the recall log ("left out", with the rule that kept them out)."""
        out: list[Why] = []
        rest = sorted(((k, v) for k, v in scores.items() if k not in chosen), key=lambda kv: -kv[1])
        for key, score in rest[: limits.RECALL_LOG_LEFT_OUT]:
            filename, source = self._source_of(store, key)
            try:
                name = self.indexes.memory(source, filename).name
            except MemorydError:
                continue
            why = whys.get(key) or Why(filename=filename, name="", score=score, injected=False)
            out.append(replace(why, filename=filename, name=name, injected=False))
        return out
