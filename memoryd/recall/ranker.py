"""The local ranker: field-weighted BM25 (BM25F) over name, description and body, Snowball
stemming, date matching (years, months of a year) and a boost for memories whose subject is a
name the query mentions. Measured on the dev split and dropped for not helping (within noise or
worse): bigram phrase boosts, pseudo-relevance feedback, MMR diversity, heavier name weights.

Per-memory work (reading, tokenising) is done once per file version and kept in a compact
inverted index (typed arrays, scored with numpy); a query touches only the postings of its own
terms, so it ranks 20,000 memories in a few milliseconds. A changed memory costs O(its terms):
the old version is a tombstone until a compaction, which runs when the dead outnumber the live.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from array import array
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memoryd.base.text import date_keys, query_terms, stem, terms

# Field weights and BM25 parameters (standard values; weights favour the curated fields).
FIELD_WEIGHTS = {
    "name": 1.0,
    "description": 1.0,
    "body": 1.0,
}  # the body repeats the description, which already weights it
K1 = 1.2
B = 0.75
DATE_WEIGHT = 1.0  # per date key (year / year-month) shared by query and memory
ENTITY_BOOST = 0.3  # relative boost when a capitalised query name is the memory's subject (its name's first word)
# Minimum relevance (issue 17): something fits only when one of the top memories matches at least
# this share of the query's IDF mass (terms absent from the store count at full IDF), or this much
# IDF outright (about three uncommon words, so long prompts are not silenced by their length).
# Dev split: recall@5 0.762 -> 0.732, off-topic prompts injected 0.88 -> 0.11 (bench/RESULTS.md).
MIN_MATCH_SHARE = 0.35
MIN_MATCH_IDF = 12.0
FIT_PRIOR_DOCS = 200
FIT_DEPTH = 5  # how many of the best memories the rule looks at
# The index's tail is folded into its base at this many postings, or at 1/FOLD_SHARE of the base's, if more:
# a bulk build folds ~25 times in all (+0.3 s at 20,000 memories), a save's ~50 words rarely.
FOLD_MIN_POSTINGS = 4_096
FOLD_SHARE = 4
# The tombstones of deleted memories are dropped once they outnumber a quarter of the live ones: their slots and
# postings grow until then (at 5,000 memories under churn up to ~4 MB when it waited for as many dead as live,
# ~1 MB now; a compaction costs ~8 ms at 5,000, ~50 ms at 20,000, under the index's lock; issue 42's soak).
COMPACT_MIN_DEAD = 1_024
COMPACT_DEAD_SHARE = 4


@dataclass
class Doc:
    """One memory as the ranker sees it."""

    filename: str
    tf: dict[str, float]
    length: float
    dates: frozenset[str] = field(default_factory=frozenset)
    subject: str = ""


def analyse(filename: str, name: str, description: str, body: str, extra_dates: str = "") -> Doc:
    """Tokenise one memory into a weighted term-frequency vector (BM25F pseudo-document)."""
    tf: dict[str, float] = defaultdict(float)  # field-weighted counts
    length = 0.0
    for fld, text in (("name", name), ("description", description), ("body", body)):
        w = FIELD_WEIGHTS[fld]
        toks = terms(text)
        for t in toks:
            tf[t] += w
        length += w * len(toks)
    dates = date_keys(f"{name}\n{description}\n{body}\n{extra_dates}")
    head = terms(name)
    return Doc(filename, tf, length, frozenset(dates), head[0] if head else "")


class LexicalIndex:
    """An inverted index over a set of Docs, updated incrementally. Doc ids are slots that are never
    reused until a compaction; `alive` masks the tombstones of removed or replaced versions."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._slot: dict[str, int] = {}  # filename -> live doc id
        self._names: list[str | None] = []  # doc id -> filename (None: tombstone)
        self._subject: list[str] = []
        self._length = array("d")
        self._alive = bytearray()
        self._term_id: dict[str, int] = {}
        # Postings, term id -> its doc ids (ascending) and field-weighted counts, in two parts. The base: every
        # term's postings end to end in one array (`_base_off[tid]` to `_base_off[tid + 1]`; counts as float16:
        # sums of the field weights, whole numbers, exact to 2,048). The tail: what came since, per term, in typed
        # arrays, folded into the base once it holds a quarter as many (`_fold`). Two typed arrays per word were
        # ~300 bytes of objects and slack before its postings (issue 42: 14 MB at 20,000 memories, now 7).
        self._base_docs: np.ndarray = np.zeros(0, dtype=np.int32)
        self._base_tf: np.ndarray = np.zeros(0, dtype=np.float16)
        self._base_off: np.ndarray = np.zeros(1, dtype=np.int64)
        self._tail: dict[int, tuple[array[int], array[float]]] = {}
        self._tail_postings = 0
        self._df_seen: tuple[int, dict[int, int]] = (-1, {})
        self._by_date: dict[str, set[int]] = defaultdict(set)
        self.total_length = 0.0
        self._version = 0
        self._norm_version = -1
        self._norm: np.ndarray = np.zeros(0)

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, filename: object) -> bool:
        return filename in self._slot

    def filenames(self) -> list[str]:
        with self.lock:
            return list(self._slot)

    def put(self, doc: Doc) -> None:
        with self.lock:
            self.remove(doc.filename)
            did = len(self._names)
            self._slot[doc.filename] = did
            self._names.append(doc.filename)
            self._subject.append(doc.subject)
            self._length.append(doc.length)
            self._alive.append(1)
            for term, f in doc.tf.items():
                tid = self._term_id.get(term)
                if tid is None:
                    tid = self._term_id[term] = len(self._term_id)
                tail = self._tail.get(tid)
                if tail is None:
                    tail = self._tail[tid] = (array("i"), array("f"))
                tail[0].append(did)
                tail[1].append(f)
            self._tail_postings += len(doc.tf)
            if self._tail_postings >= max(FOLD_MIN_POSTINGS, len(self._base_docs) // FOLD_SHARE):
                self._fold()
            for key in doc.dates:
                self._by_date[key].add(did)
            self.total_length += doc.length
            self._version += 1

    def remove(self, filename: str) -> None:
        with self.lock:
            did = self._slot.pop(filename, None)
            if did is None:
                return
            self._alive[did] = 0
            self._names[did] = None
            self.total_length -= self._length[did]
            self._version += 1
            if len(self._names) - len(self._slot) > max(COMPACT_MIN_DEAD, len(self._slot) // COMPACT_DEAD_SHARE):
                self._compact()

    def _fold(self) -> None:
        """Put the tail's postings into the base, after each term's own (their doc ids are newer): O(index)."""
        terms_n = len(self._term_id)
        base_counts = np.zeros(terms_n, dtype=np.int64)
        held = len(self._base_off) - 1
        base_counts[:held] = np.diff(self._base_off)
        tids = np.fromiter(self._tail, dtype=np.int64, count=len(self._tail))
        lens = np.fromiter((len(d) for d, _ in self._tail.values()), dtype=np.int64, count=len(self._tail))
        off = np.zeros(terms_n + 1, dtype=np.int64)
        counts = base_counts.copy()
        counts[tids] += lens
        np.cumsum(counts, out=off[1:])
        docs = np.empty(int(off[-1]), dtype=self._doc_id_type())
        tf = np.empty(int(off[-1]), dtype=np.float16)
        if held:  # each base posting moves by how much the terms before its own grew
            at = np.arange(len(self._base_docs)) + np.repeat(off[:held] - self._base_off[:-1], base_counts[:held])
            docs[at], tf[at] = self._base_docs, self._base_tf
        if len(tids):  # each term's tail right after its base postings
            starts = np.repeat(off[tids] + base_counts[tids] - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            at = np.arange(int(lens.sum())) + starts
            docs[at] = np.concatenate([np.frombuffer(d, dtype=np.int32) for d, _ in self._tail.values()])
            tf[at] = np.concatenate([np.frombuffer(f, dtype=np.float32) for _, f in self._tail.values()])
        self._base_docs, self._base_tf, self._base_off = docs, tf, off
        self._tail, self._tail_postings = {}, 0

    def _compact(self) -> None:
        """Drop the tombstones: renumber the live docs and filter every posting list (O(index))."""
        self._fold()
        alive = np.frombuffer(bytes(self._alive), dtype=np.uint8).astype(bool)
        new_id = np.cumsum(alive) - 1
        keep = alive[self._base_docs]
        owner = np.repeat(np.arange(len(self._base_off) - 1), np.diff(self._base_off))[keep]
        self._base_docs = new_id[self._base_docs[keep]].astype(self._doc_id_type())
        self._base_tf = self._base_tf[keep]
        counts = np.bincount(owner, minlength=len(self._base_off) - 1)
        live = [i for i, a in enumerate(self._alive) if a]
        self._names = [self._names[i] for i in live]
        self._subject = [self._subject[i] for i in live]
        self._length = array("d", (self._length[i] for i in live))
        self._alive = bytearray(b"\x01" * len(live))
        self._slot = {fn: i for i, fn in enumerate(self._names) if fn is not None}
        remap = {old: new for new, old in enumerate(live)}
        self._by_date = defaultdict(
            set, {k: kept for k, v in self._by_date.items() if (kept := {remap[d] for d in v if d in remap})}
        )
        self._drop_dead_terms(counts)

    def _doc_id_type(self) -> type[np.integer[Any]]:
        """The base's doc ids in 16 bits while every slot number fits (at 20,000 memories 1.8 MB instead of
        3.6; issue 42); the tail's are 32-bit, and a fold picks again."""
        return np.uint16 if len(self._names) <= np.iinfo(np.uint16).max + 1 else np.int32

    def _drop_dead_terms(self, counts: np.ndarray) -> None:
        """Forget the words no live memory holds any more (issue 31: a store whose memories come and
        go, each with a new number or name, grew its vocabulary, and RSS, without end). Called after
        the postings were filtered to the live docs, with each term's count of them."""
        held = counts > 0
        self._base_off = np.concatenate(([0], np.cumsum(counts[held]))).astype(np.int64)
        if held.all():
            return
        new_tid = np.cumsum(held) - 1
        self._term_id = {term: int(new_tid[tid]) for term, tid in self._term_id.items() if held[tid]}

    def _docs(self, tid: int) -> np.ndarray:
        """A term's doc ids, ascending (called under the lock; a tail's buffer is copied, never left exported)."""
        base = self._base_docs[self._base_off[tid] : self._base_off[tid + 1]] if tid + 1 < len(self._base_off) else None
        tail = self._tail.get(tid)
        if tail is None:
            return base if base is not None else np.zeros(0, dtype=np.int32)
        return np.concatenate((base, np.frombuffer(tail[0], dtype=np.int32)) if base is not None else (tail[0],))

    def _tfs(self, tid: int) -> np.ndarray:
        """A term's field-weighted counts, in `_docs`'s order, as float64."""
        base = self._base_tf[self._base_off[tid] : self._base_off[tid + 1]] if tid + 1 < len(self._base_off) else None
        tail = self._tail.get(tid)
        parts = ([base] if base is not None else []) + ([np.frombuffer(tail[1], dtype=np.float32)] if tail else [])
        return np.concatenate(parts).astype(np.float64) if parts else np.zeros(0)

    def _df(self, tid: int) -> int:
        """Live documents holding a term (called under the lock; the view of the arrays ends here)."""
        version, seen = self._df_seen
        if version != self._version:
            seen = {}
            self._df_seen = (self._version, seen)
        n = seen.get(tid)
        if n is None:
            ids = self._docs(tid)
            alive = np.frombuffer(self._alive, dtype=np.uint8)
            n = seen[tid] = int(alive[ids].sum()) if len(ids) else 0
            del ids, alive
        return n

    def _holds(self, tid: int, did: int) -> bool:
        """Whether doc `did` holds term `tid` (postings are sorted by doc id)."""
        tail = self._tail.get(tid)
        if tail is not None and tail[0][0] <= did:
            i = bisect.bisect_left(tail[0], did)
            return i < len(tail[0]) and tail[0][i] == did
        if tid + 1 >= len(self._base_off):
            return False
        docs = self._base_docs[self._base_off[tid] : self._base_off[tid + 1]]
        if not len(docs) or did > docs[-1]:  # newer than the base (and maybe past its 16-bit ids)
            return False
        i = int(np.searchsorted(docs, did))
        return i < len(docs) and int(docs[i]) == did

    @property
    def vocabulary(self) -> int:
        """How many distinct words the index holds."""
        return len(self._term_id)

    def idf(self, term: str) -> float:
        tid = self._term_id.get(term)
        n = self._df(tid) if tid is not None else 0
        big_n = len(self._slot)
        return math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))

    def fit_idf(self, term: str) -> float:
        """IDF as if FIT_PRIOR_DOCS more memories lacked the term: in a store of three memories a
        word they all share still says what they are about."""
        tid = self._term_id.get(term)
        n = self._df(tid) if tid is not None else 0
        return math.log(1.0 + (len(self._slot) + FIT_PRIOR_DOCS - n + 0.5) / (n + 0.5))

    def _norms(self) -> np.ndarray:
        """BM25's per-document length factor, recomputed only when the collection changed."""
        if self._norm_version != self._version:
            avg = self.total_length / max(1, len(self._slot))
            lengths = np.frombuffer(self._length, dtype=np.float64)
            self._norm = K1 * (1 - B + B * lengths / (avg or 1.0))
            self._norm_version = self._version
        return self._norm

    def fits(self, q_terms: set[str], filenames: list[str]) -> bool:
        """Whether any of these memories matches enough of the query to be worth injecting."""
        if not q_terms:
            return False  # only common words: nothing can fit
        idf, held = self.matches(q_terms, filenames)
        need = min(MIN_MATCH_SHARE * sum(idf.values()), MIN_MATCH_IDF)
        return any(sum(idf[t] for t in held[fn]) >= need for fn in filenames)

    def matches(self, q_terms: set[str], filenames: list[str]) -> tuple[dict[str, float], dict[str, list[str]]]:
        """The query terms' IDF (terms absent from the store at full IDF), and per memory the query
        terms it holds: what a memory matched, for the silence rules and for people."""
        out: dict[str, list[str]] = {}
        with self.lock:  # a compaction renumbers the words: ids and counts are read together
            idf = {t: self.fit_idf(t) for t in q_terms}
            tids = {t: tid for t in q_terms if (tid := self._term_id.get(t)) is not None}
            for fn in filenames:
                slot = self._slot.get(fn)
                out[fn] = [] if slot is None else sorted(t for t, tid in tids.items() if self._holds(tid, slot))
        return idf, out

    def present(self, idf: dict[str, float]) -> float:
        """The share of a query's IDF mass (`matches`) whose terms occur anywhere in the store:
        another project's task names things this store has never heard of."""
        total = sum(idf.values())
        with self.lock:
            held = sum(w for t, w in idf.items() if (tid := self._term_id.get(t)) is not None and self._df(tid) > 0)
        return held / total if total else 0.0

    def _bm25(self, q_terms: list[str]) -> np.ndarray | None:
        """BM25 scores of every doc id (None: no query word in the index). Called under the lock,
        and its views of the posting arrays end with it: a view alive after the lock made the next
        `put` fail half-way (BufferError: the index broken for good, issue 31's failed soak)."""
        norm = self._norms()
        scores = np.zeros(len(self._names))
        hit = False
        for term, qw in Counter(q_terms).items():
            tid = self._term_id.get(term)
            if tid is None or not self._df(tid):
                continue
            hit = True
            ids, tf = self._docs(tid), self._tfs(tid)
            scores[ids] += qw * self.idf(term) * (K1 + 1) * tf / (tf + norm[ids])
        return scores if hit else None

    def rank(
        self, query: str, *, exclude: frozenset[str] | set[str] = frozenset(), k: int = 10, gate: bool = True
    ) -> list[tuple[str, float]]:
        """The k best memories for a query, best first, with their scores (> 0 only); nothing
        when no memory fits (`gate=False` ranks regardless, for callers that filter themselves)."""
        q_terms = terms(query)  # common words still order the ranking; they never decide that something fits
        if not q_terms:
            return []
        with self.lock:
            if not self._slot:
                return []
            scores = self._bm25(q_terms)
            if scores is None:
                return []
            scores *= np.frombuffer(self._alive, dtype=np.uint8)
            # dates named in the query (years, months of a year)
            for key in date_keys(query):
                for did in self._by_date.get(key, ()):
                    if self._alive[did]:
                        scores[did] += DATE_WEIGHT
            if ENTITY_BOOST:
                entities = {stem(w.lower()) for w in re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]+", query.strip())}
                if entities:
                    boost = np.fromiter((s in entities for s in self._subject), dtype=bool, count=len(self._subject))
                    scores[boost] *= 1.0 + ENTITY_BOOST
            for fn in exclude:
                slot = self._slot.get(fn)
                if slot is not None:
                    scores[slot] = 0.0
            positive = np.flatnonzero(scores > 0)
            if len(positive) > k:
                kth = -np.partition(-scores[positive], k - 1)[k - 1]
                positive = positive[scores[positive] >= kth]  # ties at the cut are sorted by name below
            # a positive score is a live doc, so its name is set
            best = sorted(((self._names[i] or "", float(scores[i])) for i in positive), key=lambda kv: (-kv[1], kv[0]))[
                :k
            ]
            if gate and not self.fits(set(query_terms(query)), [fn for fn, _ in best[:FIT_DEPTH]]):
                return []
        return [(fn, round(s, 4)) for fn, s in best]
