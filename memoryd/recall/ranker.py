"""The local ranker: field-weighted BM25 (BM25F) over name, description and body, Snowball
stemming, date matching (years, months of a year) and a boost for memories whose subject is a
name the query mentions. Measured on the dev split and dropped for not helping (within noise or
worse): bigram phrase boosts, pseudo-relevance feedback, MMR diversity, heavier name weights.

Per-memory work (reading, tokenising) is done once per file version and kept in an inverted
index; a query touches only the postings of its own terms, so it ranks every memory in the
store in a few milliseconds.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from memoryd.recall.text import date_keys, query_terms, stem, terms

# Field weights and BM25 parameters (standard values; weights favour the curated fields).
FIELD_WEIGHTS = {"name": 1.0, "description": 1.0, "body": 1.0}  # the body repeats the description, which already weights it
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
    """An inverted index over a set of Docs, updated incrementally."""

    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.postings: dict[str, dict[str, float]] = defaultdict(dict)
        self.total_length = 0.0
        self.lock = threading.RLock()
        self._version = 0
        self._norm_version = -1
        self._norm: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self.docs)

    def put(self, doc: Doc) -> None:
        with self.lock:
            self.remove(doc.filename)
            self.docs[doc.filename] = doc
            self.total_length += doc.length
            self._version += 1
            for term, f in doc.tf.items():
                self.postings[term][doc.filename] = f

    def remove(self, filename: str) -> None:
        with self.lock:
            old = self.docs.pop(filename, None)
            if old is None:
                return
            self.total_length -= old.length
            self._version += 1
            for term in old.tf:
                plist = self.postings.get(term)
                if plist is not None:
                    plist.pop(filename, None)
                    if not plist:
                        del self.postings[term]

    def idf(self, term: str) -> float:
        n = len(self.postings.get(term, ()))
        big_n = len(self.docs)
        return math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))

    def fit_idf(self, term: str) -> float:
        """IDF as if FIT_PRIOR_DOCS more memories lacked the term: in a store of three memories a
        word they all share still says what they are about."""
        n = len(self.postings.get(term, ()))
        return math.log(1.0 + (len(self.docs) + FIT_PRIOR_DOCS - n + 0.5) / (n + 0.5))

    def _norms(self) -> dict[str, float]:
        """BM25's per-document length factor, recomputed only when the collection changed."""
        if self._norm_version != self._version:
            avg = self.total_length / max(1, len(self.docs))
            self._norm = {fn: K1 * (1 - B + B * d.length / avg) for fn, d in self.docs.items()}
            self._norm_version = self._version
        return self._norm

    def _bm25(self, weights: dict[str, float], exclude: frozenset[str] | set[str]) -> dict[str, float]:
        norm = self._norms()
        scores: dict[str, float] = defaultdict(float)
        for term, qw in weights.items():
            plist = self.postings.get(term)
            if not plist:
                continue
            w = qw * self.idf(term) * (K1 + 1)
            for fn, f in plist.items():
                scores[fn] += w * f / (f + norm[fn])
        for fn in exclude:
            scores.pop(fn, None)
        return scores

    def fits(self, q_terms: set[str], filenames: list[str]) -> bool:
        """Whether any of these memories matches enough of the query to be worth injecting."""
        if not q_terms:
            return False  # only common words: nothing can fit
        idf = {t: self.fit_idf(t) for t in q_terms}
        need = min(MIN_MATCH_SHARE * sum(idf.values()), MIN_MATCH_IDF)
        return any(sum(w for t, w in idf.items() if t in self.docs[fn].tf) >= need for fn in filenames)

    def rank(self, query: str, *, exclude: frozenset[str] | set[str] = frozenset(), k: int = 10, gate: bool = True) -> list[tuple[str, float]]:
        """The k best memories for a query, best first, with their scores (> 0 only); nothing
        when no memory fits (`gate=False` ranks regardless, for callers that filter themselves)."""
        q_terms = terms(query)  # common words still order the ranking; they never decide that something fits
        if not q_terms:
            return []
        with self.lock:
            weights: dict[str, float] = Counter(q_terms)  # type: ignore[assignment]
            scores = self._bm25(weights, exclude)
            if not scores:
                return []
            # dates named in the query (years, months of a year)
            q_dates = date_keys(query)
            if q_dates:
                for fn, doc in self.docs.items():
                    if fn not in exclude and q_dates & doc.dates:
                        scores[fn] += DATE_WEIGHT * len(q_dates & doc.dates)
            if ENTITY_BOOST:
                entities = {stem(w.lower()) for w in re.findall(r"(?<!^)(?<![.?!] )\b[A-Z][a-z]+", query.strip())}
                if entities:
                    for fn in scores:
                        if self.docs[fn].subject in entities:
                            scores[fn] *= 1.0 + ENTITY_BOOST
            best = heapq.nsmallest(k, scores.items(), key=lambda kv: (-kv[1], kv[0]))
            if gate and not self.fits(set(query_terms(query)), [fn for fn, _ in best[:FIT_DEPTH]]):
                return []
        return [(fn, round(s, 4)) for fn, s in best if s > 0]

