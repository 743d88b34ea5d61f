#!/usr/bin/env python3
"""The coding-recall dev set scored in-process on memoryd's own ranking code (`recall.decide`),
for fast experiments; `bench/recall_bench.py` scores the same set through the daemon's HTTP API.

    .venv/bin/python bench/coding_eval.py [--split dev|test|all] [--context] [--dense off] [--by-repo]

Metrics (bench/coding/README.md): recall@5 on tasks with relevant rules (share of their rules
injected), precision of everything injected, silence on tasks no rule applies to, foreign
silence (another repository's tasks asked of this store), memories injected per prompt.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.recall.decide import Decision, decide  # noqa: E402
from memoryd.recall.dense import Backend, DenseIndex, Encoder, embed_text, text_digest  # noqa: E402
from memoryd.recall.ranker import LexicalIndex, analyse  # noqa: E402
from memoryd.recall.vector_cache import VectorCache  # noqa: E402

DATA = ROOT / "bench" / "coding" / "data"


def load_repos(split: str = "all", data: Path = DATA) -> list[dict[str, Any]]:
    repos = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(data.glob("*.json"))]
    return [r for r in repos if split == "all" or r["split"] == split]


@dataclass
class Store:
    """One repository's memories in memoryd's indexes (no daemon, no files)."""

    repo: dict[str, Any]
    index: LexicalIndex = field(default_factory=LexicalIndex)
    dense: DenseIndex = field(default_factory=DenseIndex)


def build(repo: dict[str, Any], backend: Backend | None, cache: VectorCache) -> Store:
    store = Store(repo)
    for m in repo["memories"]:
        store.index.put(analyse(m["filename"], m["name"], m["description"], m["body"]))
    if backend is not None:
        texts = [(m["filename"], embed_text(m["name"], m["description"])) for m in repo["memories"]]
        digests = [text_digest(t) for _, t in texts]
        have = cache.get_many(backend.key, digests)
        todo = [(fn, t, d) for (fn, t), d in zip(texts, digests) if d not in have]
        if todo:
            vectors = backend.passages([t for _, t, _ in todo])
            cache.put_many(backend.key, [(d, v) for (_, _, d), v in zip(todo, vectors)])
            have.update({d: v for (_, _, d), v in zip(todo, vectors)})
        store.dense.put_many([(fn, d, have[d], None) for (fn, _), d in zip(texts, digests)])
    return store


def query_of(task: dict[str, Any], context: bool) -> tuple[str, list[str]]:
    """The prompt, and the session context (the files the task touches, as if read in the last turns)."""
    return task["prompt"], (task.get("files", []) if context else [])


def score(
    stores: list[Store], backend: Backend | None, *, context: bool = False, ranker: Callable[..., Decision] = decide
) -> dict[str, Any]:
    qcache: dict[str, Any] = {}

    def ask(store: Store, task: dict[str, Any]) -> list[str]:
        prompt, ctx = query_of(task, context)
        vec = None
        if backend is not None:
            vec = qcache.get(prompt)
            if vec is None:
                vec = qcache[prompt] = backend.query(prompt)
        if backend is not None and ctx:
            pass  # the query vector is the prompt's alone
        d = ranker(store.index, store.dense if backend else None, backend, prompt, k=5, query_vector=vec, context=ctx)
        return [fn for fn, _ in d.chosen]

    return tally(
        [store.repo for store in stores], lambda repo, task: ask(next(st for st in stores if st.repo is repo), task)
    )


def tally(repos: list[dict[str, Any]], ask: Callable[[dict[str, Any], dict[str, Any]], list[str]]) -> dict[str, Any]:
    """Every repository's own tasks asked of its store, and every other repository's tasks too (foreign);
    `ask(repo, task)` answers the dataset filenames injected."""
    per_repo: dict[str, dict[str, Any]] = {}
    totals = {
        "rel_tasks": 0.0,
        "recall_sum": 0.0,
        "injected": 0.0,
        "hits": 0.0,
        "none_tasks": 0.0,
        "none_silent": 0.0,
        "foreign": 0.0,
        "foreign_silent": 0.0,
        "prompts": 0.0,
    }
    for repo in repos:
        t = dict.fromkeys(totals, 0.0)
        for task in repo["tasks"]:
            got = ask(repo, task)
            rel = set(task["relevant"])
            t["prompts"] += 1
            t["injected"] += len(got)
            t["hits"] += len(rel & set(got))
            if rel:
                t["rel_tasks"] += 1
                t["recall_sum"] += len(rel & set(got)) / len(rel)
            else:
                t["none_tasks"] += 1
                t["none_silent"] += not got
        for other in repos:
            if other is repo:
                continue
            for task in other["tasks"]:
                t["foreign"] += 1
                t["foreign_silent"] += not ask(repo, task)
        per_repo[repo["repo"]] = metrics(t)
        for key in totals:
            totals[key] += t[key]
    return {"all": metrics(totals), "by_repo": per_repo}


def metrics(t: dict[str, float]) -> dict[str, Any]:
    div = lambda a, b: round(a / b, 3) if b else None  # noqa: E731
    return {
        "recall@5": div(t["recall_sum"], t["rel_tasks"]),
        "precision": div(t["hits"], t["injected"]),
        "silence": div(t["none_silent"], t["none_tasks"]),
        "foreign_silence": div(t["foreign_silent"], t["foreign"]),
        "per_prompt": div(t["injected"], t["prompts"]),
        "tasks": int(t["prompts"]),
        "tasks_with_rules": int(t["rel_tasks"]),
    }


def locomo(backend: Backend | None, cache: VectorCache, ranker: Callable[..., Decision] = decide) -> dict[str, Any]:
    """The LoCoMo dev split (read from ../shared/bench, never copied): recall@5 and the other-store injection rate."""
    data = next(
        (
            d / "shared" / "bench" / "recall_dev.jsonl"
            for d in (ROOT.parent, ROOT.parent.parent)
            if (d / "shared").is_dir()
        ),
        None,
    )
    if data is None or not data.exists():
        return {}
    convs = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    stores = [build({"repo": c["conv_id"], "memories": c["memories"], "tasks": []}, backend, cache) for c in convs]
    rec, other = [], []
    for conv, store in zip(convs, stores):
        for q in conv["queries"]:
            for target in stores:
                vec = backend.query(q["q"]) if backend is not None else None
                got = [
                    fn
                    for fn, _ in ranker(
                        target.index, target.dense if backend else None, backend, q["q"], k=5, query_vector=vec
                    ).chosen
                ]
                if target is store:
                    rec.append(len(set(got) & set(q["relevant"])) / len(q["relevant"]))
                else:
                    other.append(bool(got))
    return {"recall@5": round(sum(rec) / len(rec), 3), "other_store_injected": round(sum(other) / len(other), 3)}


def fit(stores: list[Store], backend: Backend, *, context: bool = True) -> tuple[float, ...]:
    """Fit the confidence rule's logistic weights on these stores' tasks (own tasks: a candidate is
    positive when labelled relevant; other repositories' tasks: every candidate is negative)."""
    import numpy as np

    xs: list[tuple[float, ...]] = []
    ys: list[float] = []
    for store in stores:
        for other in stores:
            for task in other.repo["tasks"]:
                prompt, ctx = query_of(task, context)
                d = decide(store.index, store.dense, backend, prompt, context=ctx, k=5)
                for fn, x in d.features.items():
                    xs.append(x)
                    ys.append(float(other is store and fn in task["relevant"]))
    X, y = np.array(xs), np.array(ys)
    mu, sd = X[:, 1:].mean(axis=0), X[:, 1:].std(axis=0) + 1e-9
    Z = np.hstack([X[:, :1], (X[:, 1:] - mu) / sd])
    w = np.zeros(Z.shape[1])
    for _ in range(50):  # Newton's method with a small ridge: converges in a few steps
        p = 1 / (1 + np.exp(-Z @ w))
        H = (Z * (p * (1 - p))[:, None]).T @ Z + 1e-3 * np.eye(len(w))
        w -= np.linalg.solve(H, Z.T @ (p - y) + 1e-3 * w)
    raw = np.concatenate([[w[0] - float(np.sum(w[1:] * mu / sd))], w[1:] / sd])  # back to the features' own units
    return tuple(round(float(v), 4) for v in raw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="dev")
    ap.add_argument("--context", action="store_true", help="the task's files as session context")
    ap.add_argument("--dense", default="auto")
    ap.add_argument("--by-repo", action="store_true")
    ap.add_argument("--locomo", action="store_true", help="also the LoCoMo dev floor")
    ap.add_argument(
        "--fit", action="store_true", help="print the confidence rule's weights fitted on this split (with context)"
    )
    args = ap.parse_args()
    encoder = Encoder(args.dense)
    encoder.load()
    backend = encoder.backend
    with tempfile.TemporaryDirectory() as tmp:
        cache = VectorCache(Path(tempfile.gettempdir()) / "memoryd-coding-vectors.sqlite")
        stores = [build(r, backend, cache) for r in load_repos(args.split)]
        if args.fit and backend is not None:
            print("CONFIDENCE_WEIGHTS =", fit(stores, backend))
            return
        out = score(stores, backend, context=args.context)
        if args.locomo:
            out["locomo"] = locomo(backend, cache)
        del tmp
    print(json.dumps(out if args.by_repo else {k: v for k, v in out.items() if k != "by_repo"}, indent=1))


if __name__ == "__main__":
    main()
