#!/usr/bin/env python3
"""Fit the matcher's weights (logistic regression over the inputs of `memoryd.relevance.match`) and choose
its ONE abstention threshold by leave-one-repository-out cross-validation; write
memoryd/relevance/data/weights.json. scikit-learn is needed here only, never by the daemon.

    .venv/bin/python bench/relevance_fit.py [--dense auto|off] [--write]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from relevance_common import CODING, ROOT, Dense, build, events, foreign_tasks, judged, load  # noqa: E402

from memoryd.relevance.match import Weights, input_names  # noqa: E402

WEIGHTS = ROOT / "memoryd" / "relevance" / "data" / "weights.json"
C = 0.5  # the regularisation's inverse strength (L2)
THRESHOLDS = np.round(np.arange(0.05, 0.95, 0.01), 2)
MAX_PER_EVENT = {"prompt": 5, "command": 2, "edit": 2}  # the daemon's caps (settings.max_memories, tool time)
TARGET = {"silence": 0.80, "foreign_silence": 0.92}  # a threshold must keep these when any can


@dataclass
class Rows:
    """Every candidate pair of every event: its store, task, whether the task is the store's own, the event's
    channel, the memory, the inputs and the label."""

    store: list[str]
    task: list[str]
    own: list[bool]
    event: list[int]
    channel: list[str]
    memory: list[str]
    x: np.ndarray
    y: np.ndarray
    tasks: dict[tuple[str, str], tuple[bool, frozenset[str]]]  # (store, task) -> (own, relevant)


def collect(repos: list[dict[str, Any]], dense: Dense | None, foreign: list[dict[str, Any]] | None = None) -> Rows:
    names = input_names()
    cols: dict[str, list[Any]] = {k: [] for k in ("store", "task", "own", "event", "channel", "memory")}
    xs: list[list[float]] = []
    ys: list[float] = []
    tasks: dict[tuple[str, str], tuple[bool, frozenset[str]]] = {}
    pool = foreign if foreign is not None else repos
    for repo in pool:
        for task in repo["tasks"]:
            task["repo"] = repo["repo"]
    for repo in repos:
        st = build(repo, dense)
        asked = [(t, True) for t in repo["tasks"]] + [(t, False) for t in foreign_tasks(pool, repo)]
        for task, own in asked:
            key = task["id"] if own else f"foreign:{task['repo']}:{task['id']}"
            tasks[(repo["repo"], key)] = (own, frozenset(task["relevant"]) if own else frozenset())
            for i, act in enumerate(events(task)):
                trace: dict[str, dict[str, float]] = {}
                judged(st, act, dense, None, trace)
                for fn, x in trace.items():
                    for k, v in (("store", repo["repo"]), ("task", key), ("own", own), ("event", i)):
                        cols[k].append(v)
                    cols["channel"].append(act.channel)
                    cols["memory"].append(fn)
                    xs.append([x.get(n, 0.0) for n in names])
                    ys.append(float(own and fn in task["relevant"]))
    return Rows(**cols, x=np.array(xs), y=np.array(ys), tasks=tasks)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=2000)
    model.fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


def delivered(rows: Rows, p: np.ndarray, threshold: float) -> dict[tuple[str, str], set[str]]:
    """Per task, the memories any of its events got (each event its best at the threshold, up to its cap)."""
    by_event: dict[tuple[str, str, int], list[tuple[float, str, str]]] = {}
    for i in np.flatnonzero(p >= threshold):
        by_event.setdefault((rows.store[i], rows.task[i], rows.event[i]), []).append(
            (float(p[i]), rows.memory[i], rows.channel[i])
        )
    out: dict[tuple[str, str], set[str]] = {k: set() for k in rows.tasks}
    for (s, t, _), got in by_event.items():
        got.sort(reverse=True)
        out[(s, t)] |= {fn for _, fn, _ in got[: MAX_PER_EVENT[got[0][2]]]}
    return out


def metrics(rows: Rows, got: dict[tuple[str, str], set[str]]) -> dict[str, float | None]:
    rec, hits, inj, none, silent, foreign, fsilent = [], 0, 0, 0, 0, 0, 0
    for key, (own, rel) in rows.tasks.items():
        g = got.get(key, set())
        if not own:
            foreign += 1
            fsilent += not g
            continue
        inj += len(g)
        hits += len(g & rel)
        if rel:
            rec.append(len(g & rel) / len(rel))
        else:
            none += 1
            silent += not g
    div = lambda a, b: round(a / b, 3) if b else None  # noqa: E731
    return {
        "recall": div(sum(rec), len(rec)),
        "precision": div(hits, inj),
        "silence": div(silent, none),
        "foreign_silence": div(fsilent, foreign),
        "tasks": len(rec) + none,
    }


def choose(table: dict[float, dict[str, float | None]]) -> float:
    """The threshold with the best F1 of recall and precision among those keeping silence and foreign silence
    at their targets; when none does, the best mean of the four."""

    def f1(m: dict[str, float | None]) -> float:
        r, p = m["recall"] or 0.0, m["precision"] or 0.0
        return 2 * r * p / (r + p) if r + p else 0.0

    ok = [t for t, m in table.items() if all((m[k] or 0.0) >= v for k, v in TARGET.items())]
    if ok:
        return max(ok, key=lambda t: (f1(table[t]), -t))
    return max(
        table, key=lambda t: sum(table[t][k] or 0.0 for k in ("recall", "precision", "silence", "foreign_silence"))
    )


def cross_validate(rows: Rows) -> tuple[np.ndarray, float, dict[float, dict[str, float | None]]]:
    """Leave one repository out: each store's pairs (its own tasks and the foreign ones asked of it) get
    probabilities from weights fitted on every other repository; then one threshold for all."""
    store = np.array(rows.store)
    origin = np.array([t.split(":")[1] if t.startswith("foreign:") else s for s, t in zip(rows.store, rows.task)])
    p = np.zeros(len(rows.y))
    for s in sorted(set(rows.store)):
        test = store == s
        # trained without any pair of the held-out repository: its store's, nor its tasks asked of another store
        coef, b = fit(rows.x[~test & (origin != s)], rows.y[~test & (origin != s)])
        p[test] = 1 / (1 + np.exp(-(rows.x[test] @ coef + b)))
    table = {float(t): metrics(rows, delivered(rows, p, float(t))) for t in THRESHOLDS}
    return p, choose(table), table


def weights_of(coef: np.ndarray, intercept: float, threshold: float) -> Weights:
    return Weights(
        {n: round(float(c), 5) for n, c in zip(input_names(), coef) if abs(c) > 1e-6}, round(intercept, 5), threshold
    )


def training(dense: Dense | None) -> list[dict[str, Any]]:
    """The repositories the weights are fitted on: the corpus's cross-validation split and bench/coding dev."""
    corpus = [r for r in load() if r.get("split", "cv") == "cv"]
    coding = [r for r in load(CODING) if r["split"] == "dev"]
    return corpus + coding


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dense", default="auto")
    ap.add_argument("--write", action="store_true", help="write memoryd/relevance/data/weights.json")
    args = ap.parse_args()
    dense = Dense(args.dense) if args.dense != "off" else None
    repos = training(dense)
    rows = collect(repos, dense)
    _, threshold, table = cross_validate(rows)
    print(f"{len(repos)} repositories, {len(rows.y)} pairs, {int(rows.y.sum())} positive; CV threshold {threshold}")
    print(json.dumps(table[threshold]))
    coef, b = fit(rows.x, rows.y)
    w = weights_of(coef, b, threshold)
    print(json.dumps(w.coef, indent=0))
    if args.write:
        WEIGHTS.write_text(
            json.dumps(
                {
                    "coef": w.coef,
                    "intercept": w.intercept,
                    "threshold": w.threshold,
                    "fitted_on": [r["repo"] for r in repos],
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
