"""One `LexicalIndex` per memory directory, kept in step with the files by (mtime_ns, size).

Each file is read once per version (one read, frontmatter parsed on a fast path) and tokenised;
writes through `MemoryDir` and the watcher's events name the file, so a new or changed memory
costs O(1), never a rebuild. A big change (first sight of a store, a bulk copy) is applied by a
background thread in batches while requests rank with the index as it stands: no request waits
on a build. Big stores (>= `watched_sweep_min_files`) are also swept in the background.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.files import ABSENT, key_now
from memoryd.base.process import lower_priority, release_freed_memory
from memoryd.recall.dense import EMBED_BATCH, ENGINE_THREADS, Backend, Encoder, VectorCache, embed_text, text_digest
from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.recall.store_index import Signature, StoreIndex, count_files, sweep
from memoryd.store import MemoryDir
from memoryd.store.headers import read_memory
from memoryd.store.memdir import WriteEvent
from memoryd.store.model import Memory

log = logging.getLogger(__name__)
INLINE_MAX_CHANGES = 256  # more changed files than this are applied in the background
WATCHED_SAFETY_SWEEP_SECONDS = 60.0  # a watched big store: its events name the files; a sweep only catches missed ones
BATCH = 256  # files parsed outside the lock, then put in under it
DIRTY_STAT_MAX = 4_096  # named files a request checks by stat (~3 µs each) before deciding what to re-read
REQUEST_EMBED_MAX = 4  # memories a request embeds itself (changed by hand since the last one; ~25 ms each)
YIELD_MAX_SECONDS = 0.5  # the embedding thread waits at most this long for requests to finish before a batch
BUSY_SECONDS = (
    2.0  # within this long of a request, batches are small: a request meets at most one short batch in flight
)
CACHE_CHUNK = 512  # vectors read from the cache at a time
BUSY_BATCH = 2  # memories per engine call while requests come (~30 ms on two threads instead of ~120)
EMBED_NICE = 10  # the embedding thread's (and its engine threads') niceness: a request's thread wins the cores
WRITE_GRACE_SECONDS = 0.05  # the thread pays a save's vector this long after it: the save's answer goes out first
RELEASE_AFTER = 64  # memories embedded since the last hand-back of the model's mapped pages, the thread idle


class StoreIndexes:
    """The local ranker's indexes, by memory dir."""

    def __init__(
        self,
        encoder: Encoder | None = None,
        *,
        is_watched: Callable[[Path], bool] | None = None,
        vector_cache: Path | None = None,
    ) -> None:
        self.encoder = encoder or Encoder()
        self.vector_cache = VectorCache(vector_cache)
        self.embedded = 0  # memories embedded by the model (a vector found in the cache costs none)
        self._dense_wake = threading.Event()
        self._dense_thread: threading.Thread | None = None
        self._closed = False
        self.is_watched = is_watched or (lambda path: False)
        # A store this big is swept in the background, at most once per RECALL_WATCHED_SWEEP_SECONDS
        # (a sweep of 20,000 files costs ~50 ms); writes and watcher events reach it at once by name.
        self.watched_sweep_min_files = limits.RECALL_WATCHED_SWEEP_MIN_FILES
        self.sweeps = 0
        self.reads = 0  # memory files read and tokenised (a new or changed file costs one)
        self._items: dict[Path, StoreIndex] = {}
        self._lock = threading.Lock()
        self._dense_write = threading.Lock()  # the embedding thread and the write path both put vectors
        self._owed_lock = threading.Lock()  # one payer of saved memories' vectors at a time (thread or request)
        self._writes = 0  # numbers the saves whose vector is owed
        self._serving = 0  # requests being answered: the embedding thread waits for none before a batch
        self._last_request = 0.0  # monotonic time the last request ended
        self._last_write = 0.0  # monotonic time of the last save through a store
        self._released_at = 0  # `embedded` when the model's pages were last handed back
        self._idle = threading.Condition()
        self._request = threading.local()  # per request thread: the stores it swept (`serving`)

    def __len__(self) -> int:
        return len(self._items)

    def documents(self) -> int:
        with self._lock:
            return sum(len(i.index) for i in self._items.values())

    def _item(self, store: MemoryDir) -> StoreIndex:
        with self._lock:
            item = self._items.get(store.path)
            if item is not None:
                return item
            item = self._items[store.path] = StoreIndex()
        store.on_change.append(lambda s, filename: self._mark(item, filename))
        return item

    def refresh(self, store: MemoryDir, *, wait: bool = False) -> StoreIndex:
        """The store's index, brought up to date as far as that is cheap; a big change goes to a
        background pass and the index is served as it stands (`wait=True` waits for it)."""
        item = self._item(store)
        with item.lock:
            dirty, item.dirty = item.dirty, set()
            if len(dirty) <= DIRTY_STAT_MAX:  # what the write path already put in is not read again
                dirty = {fn for fn in dirty if item.files.get(fn, ABSENT) != key_now(store.path / fn)}
        if len(dirty) > INLINE_MAX_CHANGES and not wait:  # a bulk copy: a background sweep picks it up
            if item.built:
                self._start_background(store, item)
            dirty = set()
        if dirty:
            self._apply(store, item, [store.path / fn for fn in dirty])
            if len(dirty) <= REQUEST_EMBED_MAX:  # a hand edit or two: ranked with its vector, like a save
                self.embed_now(item, sorted(dirty))
        self.pay_owed(item)
        big = len(item.files) >= self.watched_sweep_min_files
        if item.built and big and not wait:  # a safety net for missed events, off the request path
            every = WATCHED_SAFETY_SWEEP_SECONDS if self.is_watched(store.path) else limits.RECALL_WATCHED_SWEEP_SECONDS
            if time.monotonic() - item.swept_at >= every:
                self._start_background(store, item)
        elif wait or not self._swept_in_this_request(item):
            self._sync(store, item, wait=wait)
        if self.encoder.ready and item.dense_synced != item._changes:
            self._dense_wake.set()
        return item

    def _swept_in_this_request(self, item: StoreIndex) -> bool:
        """Whether the request this thread serves has swept this store already (a recall refreshes its store
        for the ranking, then for what the prompt names: one stat of each file is enough, ~0.5 ms at 200)."""
        swept: set[int] | None = getattr(self._request, "swept", None)
        if swept is None:
            return False
        seen = id(item) in swept
        swept.add(id(item))
        return seen

    def _sync(self, store: MemoryDir, item: StoreIndex, *, wait: bool) -> None:
        """Sweep now; apply the changes inline when few, else in the background."""
        if item.building and not wait:
            return
        if not item.built and not wait and count_files(store.path) > INLINE_MAX_CHANGES:
            self._start_background(store, item)  # even the first sweep (stat of every file) is off the request
            return
        generation = item.generation
        signature = sweep(store.path)
        self.sweeps += 1
        changed, gone = self._diff(item, signature)
        if len(changed) <= INLINE_MAX_CHANGES or wait:
            self._apply(store, item, changed, gone)
            self._built(item, generation)
        else:
            self._start_background(store, item, (changed, gone))

    def _diff(self, item: StoreIndex, signature: Signature) -> tuple[list[str], list[str]]:
        with item.lock:
            files = item.files
            gone = [fn for fn in files if fn not in signature]
            changed = [fn for fn, sig in signature.items() if files.get(fn) != sig]
        return changed, gone

    def _start_background(
        self, store: MemoryDir, item: StoreIndex, work: tuple[list[str], list[str]] | None = None
    ) -> None:
        with item.lock:
            if item.building:
                return
            item.building = True
        threading.Thread(target=self._background, args=(store, item, work), name="recall-index", daemon=True).start()

    def _background(self, store: MemoryDir, item: StoreIndex, work: tuple[list[str], list[str]] | None) -> None:
        try:
            generation = item.generation
            if work is None:
                signature = sweep(store.path)
                self.sweeps += 1
                work = self._diff(item, signature)
            changed, gone = work
            self._apply(store, item, changed, gone)
            self._built(item, generation)
            if self.encoder.ready:  # what it put in needs vectors: no request may come to say so
                self._dense_wake.set()
            release_freed_memory()  # a big build's file texts and token lists are freed now: hand their pages back
        except Exception:
            log.exception("recall: indexing %s failed", store.path)
        finally:
            with item.lock:
                item.building = False

    @staticmethod
    def _built(item: StoreIndex, generation: int) -> None:
        """A full pass is done, unless the index was started over meanwhile (then it holds only
        what came after, and the next refresh builds it again)."""
        with item.lock:
            if item.generation == generation:
                item.built, item.swept_at = True, time.monotonic()

    def _apply(
        self,
        store: MemoryDir,
        item: StoreIndex,
        changed: list[str] | list[Path],
        gone: list[str] | None = None,
        *,
        owed: bool = False,
    ) -> None:
        """Read and tokenise the changed files (outside the lock), then put them in, by batches
        (bounded peak memory; a concurrent request waits for one batch at most). `owed`: saved
        through the store, so their vectors are owed to the next recall (`pay_owed`)."""
        for i in range(0, len(changed), BATCH):
            self._apply_batch(store, item, changed[i : i + BATCH], gone if i == 0 else None, owed)
        if not changed:
            self._apply_batch(store, item, [], gone, owed)

    def _apply_batch(
        self,
        store: MemoryDir,
        item: StoreIndex,
        changed: list[str] | list[Path],
        gone: list[str] | None,
        owed: bool = False,
    ) -> None:
        parsed = []
        for entry in changed:
            path = entry if isinstance(entry, Path) else store.path / entry
            got = read_memory(path) if path.name != limits.INDEX_FILENAME else None
            self.reads += 1
            doc = analyse(path.name, got[0].name, got[0].description, got[1]) if got else None
            parsed.append((path.name, got, doc))
        with item.lock:
            in_step = item.dense_synced == item._changes  # the embedding thread has nothing else to catch up on
            try:
                for fn in gone or ():
                    self._drop(item, fn)
                for fn, got, doc in parsed:
                    if got is None or doc is None:
                        self._drop(item, fn)
                        continue
                    header, _, sig = got
                    header, sig = store.shared_header(fn, sig, header)
                    item.index.put(doc)
                    item.files[fn], item.by_name[fn] = sig, header
                    # hashed again when the embedding thread asks (never, with the model off)
                    item.digests.pop(fn, None)
            except Exception:
                log.exception(
                    "recall: updating the index of %s failed half-way; rebuilding it from the files", store.path
                )
                self._forget(item)
            item._changes += 1
            if owed and self.encoder.ready:
                for fn, got, _ in parsed:
                    if got is not None:
                        self._writes += 1
                        item.owed[fn] = self._writes
                if in_step:  # the owed vectors are all the thread would find: no sweep of the store for them
                    item.dense_synced = item._changes

    @staticmethod
    def _forget(item: StoreIndex) -> None:
        """Start the index over (the next refresh builds it from the files): a put or remove that
        failed half-way leaves its arrays out of step, and every later query would fail (issue 31)."""
        item.index = LexicalIndex()
        item.files.clear()
        item.by_name.clear()
        item.digests.clear()
        item.built = False
        item.generation += 1

    @staticmethod
    def _drop(item: StoreIndex, filename: str) -> None:
        item.index.remove(filename)
        item.files.pop(filename, None)
        item.by_name.pop(filename, None)
        item.digests.pop(filename, None)

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
        self.vector_cache.close()

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Around a request: background embedding starts no batch while one is being answered, and each
        store is swept for hand edits once in it."""
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
        """Before paying a save's vector: let the save answer first (the GIL and the cores are its)."""
        while not self._closed and (wait := self._last_write + WRITE_GRACE_SECONDS - time.monotonic()) > 0:
            time.sleep(wait)

    def _dense_loop(self) -> None:
        lower_priority(EMBED_NICE)  # before the engine starts this thread's workers: they inherit it
        while not self._closed:
            self._dense_wake.wait()
            self._dense_wake.clear()
            with self._lock:
                items = list(self._items.values())
            for item in items:
                try:
                    self.sync_dense(item)
                except Exception:
                    log.exception("recall: embedding memories failed")
            self._release_model()

    def _release_model(self) -> None:
        """Going idle after embedding many texts (a bulk copy, a burst of saves), which touched most of
        the model's weights: hand their pages back; requests map again only what they read."""
        backend = self.encoder.backend
        if backend is not None and self.embedded - self._released_at >= RELEASE_AFTER:
            self._released_at = self.embedded
            backend.release()
            release_freed_memory()

    def dense_pending(self) -> int:
        """Indexed memories without a current vector (0 when the model is off)."""
        if not self.encoder.ready:
            return 0
        with self._lock:
            items = list(self._items.values())
        return sum(len(self._stale(item)) if item.dense_synced != item._changes else len(item.owed) for item in items)

    @staticmethod
    def _stale(item: StoreIndex) -> list[tuple[str, str, bytes]]:
        """Memories whose vector is missing or of an older text; hashed outside the lock (20,000: ~40 ms)."""
        with item.lock:
            unhashed = [(fn, h) for fn, h in item.by_name.items() if fn not in item.digests]
        hashed = {fn: text_digest(embed_text(h.name, h.description)) for fn, h in unhashed}
        with item.lock:
            for fn, value in hashed.items():
                if item.by_name.get(fn) is not None and fn not in item.digests:
                    item.digests[fn] = value
            stale = [(fn, item.by_name.get(fn), d) for fn, d in item.digests.items() if item.dense.digest(fn) != d]
        return [(fn, embed_text(h.name, h.description), d) for fn, h, d in stale if h is not None]

    def sync_dense(self, item: StoreIndex) -> None:
        """Give every memory of the store a vector for its current text: from the cache, else
        embedded (by batches, off the request path); drop the vectors of deleted memories."""
        backend = self.encoder.backend
        if backend is None:
            return
        while item.owed and not self._closed:  # what saves left, first: the next recall would pay it itself
            self._yield_to_writers()
            self._yield_to_requests()
            self.pay_owed(item, at_most=self._batch_size())
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
            cached = self.vector_cache.get_many(backend.key, [d for _, _, d in chunk])
            with self._dense_write:
                item.dense.put_many([(fn, d, cached[d]) for fn, _, d in chunk if d in cached])
            todo += [(fn, text, d) for fn, text, d in chunk if d not in cached]
            del cached
        if len(stale) > CACHE_CHUNK:
            release_freed_memory()  # their small blocks are free now: hand the pages back
        i = 0
        while i < len(todo):
            if self._closed:
                return
            self._yield_to_requests()
            size = self._batch_size()
            batch, i = todo[i : i + size], i + size
            vectors = self._passages(backend, [text for _, text, _ in batch])
            self.embedded += len(batch)
            with self._dense_write, item.lock:  # a save may have embedded a newer text meanwhile
                item.dense.put_many(
                    [(fn, d, v) for (fn, _, d), v in zip(batch, vectors, strict=True) if item.digests.get(fn) == d]
                )
            self.vector_cache.put_many(backend.key, [(d, v) for (_, _, d), v in zip(batch, vectors, strict=True)])
        item.dense_synced = version  # changes since then wake the thread again

    def _batch_size(self) -> int:
        """Embedding on one core in short batches while a request is answered, instead of waiting for it, was
        tried: paired in one process at 20,000 (bench/embed_paired.py) it embedded fewer (9.5 and 13.8/s
        against 12.5 and 15.6) and slowed recalls (p50 113-124 ms against 82-105): not kept (issue 42)."""
        return BUSY_BATCH if time.monotonic() - self._last_request < BUSY_SECONDS else EMBED_BATCH

    @staticmethod
    def _passages(backend: Backend, texts: list[str]) -> Any:
        """The engine's passage vectors of `texts` on both cores (the engine's team size is per calling
        thread: a request's thread runs its prompt's on one)."""
        backend.team(ENGINE_THREADS)
        return backend.passages(texts)

    def memory(self, store: MemoryDir, filename: str) -> Memory:
        """A memory read from the store (five per request at most: the index keeps no bodies)."""
        return store.get(filename)

    def refresh_needed(self, store: MemoryDir) -> bool:
        """Whether the next request has something to re-read (never indexed, or files named since)."""
        item = self._item(store)
        with item.lock:
            return not item.built or bool(item.dirty)

    def building(self, store: MemoryDir) -> bool:
        item = self._item(store)
        with item.lock:
            return item.building and not item.built

    def written(self, event: WriteEvent) -> None:
        """A write through a MemoryDir (API, CLI, extraction, dream, team, review): the file is put
        in the lexical index on the writer's thread (~0.3 ms to read and tokenise) and its vector is
        owed: the embedding thread pays it at once, and the next recall pays what is still owed
        before it ranks, so it ranks the memory as it will minutes later. The save does not wait
        for the model (one embedding was 25-30 ms of a 30-47 ms lone save, issue 42)."""
        if event.op == "secret_refused" or "/" in event.filename or not event.filename.endswith(".md"):
            return
        self._last_write = time.monotonic()
        item = self._item(event.store)
        with item.lock:
            current = item.files.get(event.filename, ABSENT) == key_now(event.store.path / event.filename)
        if not current:
            self._apply(event.store, item, [event.filename], owed=event.op == "write")
        elif event.op == "write" and self.encoder.ready:
            with item.lock:
                self._writes += 1
                item.owed[event.filename] = self._writes
        if item.owed:
            self._dense_wake.set()

    def pay_owed(self, item: StoreIndex, *, at_most: int | None = None) -> None:
        """Put the vectors saves left owed (all of them, or `at_most`): one payer at a time, so a
        recall waits for the thread's batch in flight instead of embedding the same text again."""
        if not item.owed:
            return
        with self._owed_lock:
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
                if header is not None:
                    text = embed_text(header.name, header.description)
                    digest = text_digest(text)
                    item.digests[fn] = digest
                    if item.dense.digest(fn) != digest:
                        todo.append((fn, text, digest))
        if not todo:
            return
        cached = self.vector_cache.get_many(backend.key, [d for _, _, d in todo])
        missing = [(fn, text, d) for fn, text, d in todo if d not in cached]
        if missing:
            vectors = self._passages(backend, [text for _, text, _ in missing])
            self.embedded += len(missing)
            cached.update((d, v) for (_, _, d), v in zip(missing, vectors, strict=True))
            self.vector_cache.put_many(backend.key, [(d, cached[d]) for _, _, d in missing])
        with self._dense_write:
            item.dense.put_many([(fn, d, cached[d]) for fn, _, d in todo])

    def _mark(self, item: StoreIndex, filename: str) -> None:
        """After a write through MemoryDir or a watcher event: the next request re-reads that file."""
        with item.lock:
            item.dirty.add(filename)
