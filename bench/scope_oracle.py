#!/usr/bin/env python3
"""How far issue 49's maintainers'-scopes target (pair recall >= 0.80 at precision >= 0.80) is from what a rule's
prose can give, and whether it can stand beside foreign silence >= 0.92, on the corpus's CV split (the frozen split
is not read here). Offline, every edit of a task (as bench/relevance_daemon.py plays it) against every memory:

- `derived`: memoryd's derived reach (`applies_derive.derive`, `applies_match.meeting`) with no per-call cap: the
  ceiling of what the hook door, which gives at most two memories a tool call, can reach;
- `oracle`: the maintainers' own globs as the matcher (what a perfect prose-to-glob reading would give), and the
  greedy subset of them that keeps foreign silence at 0.92 (rules whose globs few foreign tasks meet first).

Foreign silence counts edits only (a foreign task is silent when none of its edits meets any scoped memory of the
store), so it is an estimate of the daemon's task-level figure. Writes bench/results/scope_oracle.json.

    .venv/bin/python bench/scope_oracle.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from corpus.build import glob_match  # noqa: E402
from relevance_bench import scored, tally  # noqa: E402
from relevance_daemon import FOREIGN_TASKS, foreign, load_corpus, task_events  # noqa: E402

from memoryd.relevance.applies_derive import derive  # noqa: E402
from memoryd.relevance.applies_match import meeting  # noqa: E402

FOREIGN_SILENCE_TARGET = 0.92
OUT = HERE / "results" / "scope_oracle.json"

Meets = Callable[[str, dict[str, Any]], bool]  # (memory filename, an Edit event of `task_events`) -> met


def edits(task: dict[str, Any]) -> list[dict[str, Any]]:
    return task_events(task)[1:]


def figures(repos: list[dict[str, Any]], meets_of: Callable[[dict[str, Any]], Meets]) -> dict[str, Any]:
    """Own tasks' (rule, task) pairs and foreign tasks' edit silence, for one way of meeting an edit."""
    scopes = scored(repos)
    cases, far, silent = [], 0, 0
    for repo in repos:
        meets, scoped = meets_of(repo), scopes[repo["repo"]]
        for task in repo["tasks"]:
            got = {fn for e in edits(task) for fn in scoped if meets(fn, e)}
            cases.append((True, set(task["relevant"]) & scoped.keys(), got, got))
        for _, task in foreign(load_corpus(), repo, "tasks", FOREIGN_TASKS):
            far += 1
            silent += not any(meets(fn, e) for e in edits(task) for fn in scoped)
    out = tally(cases)
    return {k: out[k] for k in ("pair_recall", "precision", "silence")} | {
        "foreign_edit_silence": round(silent / far, 3)
    }


def derived_meets(repo: dict[str, Any]) -> Meets:
    reach = {m["filename"]: derive(m["name"], m["description"], m["body"], m["type"]) for m in repo["memories"]}
    return lambda fn, e: meeting(reach[fn], "Edit", e["path"], "", e["content"]) is not None


def oracle_meets(repo: dict[str, Any]) -> Meets:
    globs = scored([repo])[repo["repo"]]
    return lambda fn, e: any(glob_match(g, e["path"]) for g in globs[fn])


def _globs_meet(globs: list[str], task: dict[str, Any]) -> bool:
    return any(glob_match(g, e["path"]) for g in globs for e in edits(task))


def greedy_oracle(repos: list[dict[str, Any]]) -> dict[str, Any]:
    """The maintainers' globs of the rules that buy the most own pairs per foreign task they break, while foreign
    silence stays at the target."""
    scopes = scored(repos)
    gain: dict[tuple[str, str], int] = {}
    noisy: dict[tuple[str, str], set[int]] = {}
    want = far = 0
    for repo in repos:
        scoped = scopes[repo["repo"]]
        far_tasks = foreign(load_corpus(), repo, "tasks", FOREIGN_TASKS)
        far += len(far_tasks)
        want += sum(len(set(t["relevant"]) & scoped.keys()) for t in repo["tasks"])
        for fn, globs in scoped.items():
            key = (repo["repo"], fn)
            gain[key] = sum(1 for t in repo["tasks"] if fn in t["relevant"] and _globs_meet(globs, t))
            noisy[key] = {i for i, (_, t) in enumerate(far_tasks) if _globs_meet(globs, t)}
    broken: dict[str, set[int]] = {}
    got, left = 0, {k for k, g in gain.items() if g}
    while left:
        key = max(left, key=lambda k: gain[k] / (len(noisy[k] - broken.get(k[0], set())) + 0.01))
        left.discard(key)
        would = sum(len(v) for v in broken.values()) + len(noisy[key] - broken.get(key[0], set()))
        if 1 - would / far >= FOREIGN_SILENCE_TARGET:
            broken.setdefault(key[0], set()).update(noisy[key])
            got += gain[key]
    return {
        "pair_recall": round(got / want, 3),
        "foreign_edit_silence": round(1 - sum(len(v) for v in broken.values()) / far, 3),
    }


def main() -> int:
    repos = [r for r in load_corpus() if r.get("split", "cv") == "cv"]
    out = {
        "split": "cv",
        "derived_uncapped": figures(repos, derived_meets),
        "oracle_all": figures(repos, oracle_meets),
        "oracle_greedy_at_target": greedy_oracle(repos),
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
