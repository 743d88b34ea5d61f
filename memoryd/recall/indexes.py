"""One `LexicalIndex` per memory directory, kept in step with the files by (mtime_ns, size).

Each file is read once per version (one read, frontmatter parsed on a fast path) and tokenised;
writes through `MemoryDir` and the watcher's events name the file, so a new or changed memory
costs O(1), never a rebuild. A big change (first sight of a store, a bulk copy) is applied by a
background thread in batches while requests rank with the index as it stands: no request waits
on a build, nor on a vector (the embedding thread's, recall/embedding.py). Big stores
(>= `watched_sweep_min_files`) are also swept in the background.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memoryd.base import limits
from memoryd.base.files import ABSENT, key_now
from memoryd.base.process import release_freed_memory
from memoryd.recall.dense import Encoder
from memoryd.recall.embedding import DenseUpkeep
from memoryd.recall.ranker import LexicalIndex, analyse
from memoryd.recall.store_index import Signature, StoreIndex, count_files, sweep
from memoryd.recall.vector_cache import VectorCache
from memoryd.recall.view_keeper import ViewKeeper
from memoryd.store import MemoryDir
from memoryd.store.headers import read_memory
from memoryd.store.memdir import WriteEvent
from memoryd.store.model import Memory

log = logging.getLogger(__name__)
INLINE_MAX_CHANGES = 256  # more changed files than this are applied in the background
WATCHED_SAFETY_SWEEP_SECONDS = 60.0  # a watched store: its events name the files; a sweep only catches missed ones
BATCH = 256  # files parsed outside the lock, then put in under it
DIRTY_STAT_MAX = 4_096  # named files a request checks by stat (~3 µs each) before deciding what to re-read


class StoreIndexes(DenseUpkeep):
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
        # A store the watcher follows, or one this big, is swept in the background (at most once per
        # WATCHED_SAFETY_SWEEP_SECONDS, or RECALL_WATCHED_SWEEP_SECONDS unwatched: a sweep of 20,000 files costs ~50 ms,
        # of 200 ~1 ms, 15 % of a recall whose vector is cached); writes and watcher events reach it at once by name.
        self.watched_sweep_min_files = limits.RECALL_WATCHED_SWEEP_MIN_FILES
        self.sweeps = 0
        self.reads = 0  # memory files read and tokenised (a new or changed file costs one)
        self._items: dict[Path, StoreIndex] = {}
        self._lock = threading.Lock()
        self._dense_write = threading.Lock()  # the embedding thread and the write path both put vectors
        self._writes = 0  # numbers the saves whose vector is owed
        self._serving = 0  # requests being answered: no helper lane takes a text meanwhile (or, without lanes,
        # the embedding thread starts no batch)
        self._last_request = 0.0  # monotonic time the last request ended
        self._last_write = 0.0  # monotonic time of the last save through a store
        self._released_at = 0  # `embedded` when the model's pages were last handed back
        self._idle_released_at = 0.0  # monotonic time they were last handed back for want of requests
        self.model_releases = 0  # hand-backs of the model's pages (after a burst of embedding, or idle)
        self._lane_pool = None  # the embedding thread's helper lanes, started at its first batch that has any
        self._idle = threading.Condition()
        self._request = threading.local()  # per request thread: the stores it swept (`serving`)
        # what others derive from an index (what each memory applies to), brought up to date after saves off the
        # request path (issue 52)
        self._view_keepers: list[Callable[[MemoryDir, StoreIndex], object]] = []
        self._views = ViewKeeper(keep=lambda store: [keep(store, self.refresh(store)) for keep in self._view_keepers])

    def keep_views(self, keep: Callable[[MemoryDir, StoreIndex], object]) -> None:
        """Call `keep(store, index)` on a background thread after saves to the store (a few a second at most)."""
        self._view_keepers.append(keep)

    def close(self) -> None:
        self._views.close()
        super().close()

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
        # Reads never wait on writes (issue 52): what saves and hand edits left without a vector is ranked lexically
        # until the embedding thread, woken here, gives it one. A request paying them waited 18-23 s under a stream.
        big = len(item.files) >= self.watched_sweep_min_files
        watched = self.is_watched(store.path)  # its events name each changed file within milliseconds
        if item.built and (big or watched) and not wait:  # a safety net for missed events, off the request path
            every = WATCHED_SAFETY_SWEEP_SECONDS if watched else limits.RECALL_WATCHED_SWEEP_SECONDS
            if time.monotonic() - item.swept_at >= every:
                self._start_background(store, item)
        elif wait or not self._swept_in_this_request(item):
            self._sync(store, item, wait=wait)
        if self.encoder.ready and (item.owed or item.dense_synced != item._changes):
            self._dense_wake.set()
        return item

    def vectors_used(self, stores: list[MemoryDir]) -> tuple[bool, int]:
        """What a ranking of these stores had of the vectors, for the recall log: (none at all: lexical only, how many
        memories it found lexically only, their vectors still owed). A read never waits for them (issue 52)."""
        if self.encoder.backend is None:
            return True, 0
        items = [self._item(store) for store in stores]
        return not any(len(item.dense) for item in items), sum(self.vectors_missing(item) for item in items)

    def vectors_missing(self, item: StoreIndex) -> int:
        """How many of the index's memories a ranking now meets without their current vector (found lexically
        only): those saves left owed, or when the embedding thread is behind the index, every one it has to do."""
        with item.lock:
            if item.dense_synced == item._changes:
                return len(item.owed)
            headers = list(item.by_name.items())
        return sum(1 for fn, h in headers if not item.dense.holds(fn, h))

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
            if self._view_keepers:  # and what is derived from it, before a tool call comes to need it
                self._views.due(store)
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
        through the store, so their vectors are owed to the embedding thread (`pay_owed`)."""
        for i in range(0, len(changed), BATCH):
            self._apply_batch(store, item, changed[i : i + BATCH], gone if i == 0 else None, owed)
        if not changed and gone:
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
        item.built = False
        item.generation += 1

    @staticmethod
    def _drop(item: StoreIndex, filename: str) -> None:
        item.index.remove(filename)
        item.files.pop(filename, None)
        item.by_name.pop(filename, None)

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
        owed: the embedding thread pays it 50 ms later; until then a recall finds it lexically and says so in
        the recall log. Neither the save (issue 42) nor a read (issue 52) waits for the model."""
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
        if self._view_keepers and event.op == "write":
            self._views.due(event.store)

    def _mark(self, item: StoreIndex, filename: str) -> None:
        """After a write through MemoryDir or a watcher event: the next request re-reads that file."""
        with item.lock:
            item.dirty.add(filename)
