"""The local ranker: field-weighted BM25 (BM25F) over name, description and body, with
phrase (bigram) boosts, date matching and pseudo-relevance feedback.

Per-memory work (reading, tokenising) is done once per file version and kept in an inverted
index; a query touches only the postings of its own terms, so it ranks every memory in the
store in a few milliseconds.
"""

from __future__ import annotations

import math
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from memoryd.recall.text import date_keys, terms

# Field weights and BM25 parameters (standard values; weights favour the curated fields).
FIELD_WEIGHTS = {"name": 1.0, "description": 1.0, "body": 1.0}  # the body repeats the description, which already weights it
K1 = 1.2
B = 0.75
BIGRAM_WEIGHT = 0.0  # per matched adjacent query-term pair, times the pair's mean idf
DATE_WEIGHT = 1.0  # per date key (year / year-month) shared by query and memory
PRF_DOCS = 0  # pseudo-relevance feedback: top documents read
PRF_TERMS = 8  # expansion terms added
PRF_WEIGHT = 0.3  # their weight relative to an original query term


@dataclass
class Doc:
    """One memory as the ranker sees it."""

    filename: str
    key: tuple[int, int]
    tf: Counter[str]
    length: float
    bigrams: frozenset[tuple[str, str]]
    dates: frozenset[str] = field(default_factory=frozenset)


def analyse(filename: str, key: tuple[int, int], name: str, description: str, body: str, extra_dates: str = "") -> Doc:
    """Tokenise one memory into a weighted term-frequency vector (BM25F pseudo-document)."""
    tf: Counter[str] = Counter()
    bigrams: set[tuple[str, str]] = set()
    length = 0.0
    for fld, text in (("name", name), ("description", description), ("body", body)):
        w = FIELD_WEIGHTS[fld]
        toks = terms(text)
        for t in toks:
            tf[t] += w
        length += w * len(toks)
        bigrams.update(zip(toks, toks[1:]))
    dates = date_keys(f"{name}\n{description}\n{body}\n{extra_dates}")
    return Doc(filename, key, tf, length, frozenset(bigrams), frozenset(dates))


class LexicalIndex:
    """An inverted index over a set of Docs, updated incrementally."""

    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.postings: dict[str, dict[str, float]] = defaultdict(dict)
        self.total_length = 0.0
        self.lock = threading.RLock()

    def __len__(self) -> int:
        return len(self.docs)

    def put(self, doc: Doc) -> None:
        with self.lock:
            self.remove(doc.filename)
            self.docs[doc.filename] = doc
            self.total_length += doc.length
            for term, f in doc.tf.items():
                self.postings[term][doc.filename] = f

    def remove(self, filename: str) -> None:
        with self.lock:
            old = self.docs.pop(filename, None)
            if old is None:
                return
            self.total_length -= old.length
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

    def _bm25(self, weights: dict[str, float], exclude: frozenset[str] | set[str]) -> dict[str, float]:
        avg = self.total_length / max(1, len(self.docs))
        scores: dict[str, float] = defaultdict(float)
        for term, qw in weights.items():
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = self.idf(term)
            for fn, f in plist.items():
                if fn in exclude:
                    continue
                norm = K1 * (1 - B + B * self.docs[fn].length / avg)
                scores[fn] += qw * idf * f * (K1 + 1) / (f + norm)
        return scores

    def rank(self, query: str, *, exclude: frozenset[str] | set[str] = frozenset(), k: int = 10) -> list[tuple[str, float]]:
        """The k best memories for a query, best first, with their scores (> 0 only)."""
        q_terms = terms(query)
        if not q_terms:
            return []
        with self.lock:
            weights: dict[str, float] = Counter(q_terms)  # type: ignore[assignment]
            scores = self._bm25(weights, exclude)
            if not scores:
                return []
            # phrase boost: adjacent query terms adjacent in the memory
            pairs = [p for p in zip(q_terms, q_terms[1:]) if p[0] != p[1]]
            if pairs:
                pair_idf = {p: (self.idf(p[0]) + self.idf(p[1])) / 2 for p in pairs}
                for fn in scores:
                    bg = self.docs[fn].bigrams
                    scores[fn] += BIGRAM_WEIGHT * sum(v for p, v in pair_idf.items() if p in bg)
            # dates named in the query (years, months of a year)
            q_dates = date_keys(query)
            if q_dates:
                for fn, doc in self.docs.items():
                    if fn not in exclude and q_dates & doc.dates:
                        scores[fn] += DATE_WEIGHT * len(q_dates & doc.dates)
            # pseudo-relevance feedback: add the strongest terms of the top documents
            if PRF_DOCS and PRF_TERMS:
                top = sorted(scores.items(), key=lambda kv: -kv[1])[:PRF_DOCS]
                expansion: Counter[str] = Counter()
                for fn, _ in top:
                    doc = self.docs[fn]
                    norm = sum(doc.tf.values()) or 1.0
                    for t, f in doc.tf.items():
                        if t not in weights:
                            expansion[t] += f / norm * self.idf(t)
                extra = dict(expansion.most_common(PRF_TERMS))
                if extra:
                    top_w = max(extra.values())
                    more = self._bm25({t: PRF_WEIGHT * v / top_w for t, v in extra.items()}, exclude)
                    for fn, s in more.items():
                        scores[fn] += s
            best = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
        return [(fn, round(s, 4)) for fn, s in best if s > 0]
