#!/usr/bin/env python3
"""Old against new on the same data and through the same door: main's memoryd (a worktree of main) and this
tree's, each played by bench/relevance_daemon.py; beside them the fitted matcher's leave-one-repository-out
figures (bench/relevance_fit.py --json). A channel moves to the fitted matcher only where it is at least as good
as old on every figure of that channel. Writes bench/results/relevance_bench.json.

    git worktree add --detach /tmp/rel-main main
    .venv/bin/python bench/relevance_bench.py --old /tmp/rel-main [--reuse]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus.build import glob_match  # noqa: E402
from relevance_daemon import load_corpus  # noqa: E402

RESULTS = HERE / "results"
FIT = RESULTS / "relevance_fit.json"
UNIVERSAL = frozenset({"*", "**", "**/*", "/**", "./**", "**/**", "*.*", "**/*.*"})


def div(a: float, b: float) -> float | None:
    return round(a / b, 3) if b else None


def scored(repos: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """Per store, the memories with a maintainer scope (universal and unscoped ones are ignored, never negative)."""
    return {
        r["repo"]: {
            m["filename"]: m["scope"]
            for m in r["memories"]
            if m.get("scope") and not m.get("universal") and not UNIVERSAL & set(m["scope"])
        }
        for r in repos
    }


Case = tuple[bool, set[str], set[str], set[str]]  # (own, wanted, got here, held: got here or earlier in the session)


def tally(cases: Iterable[Case]) -> dict[str, float | None]:
    """Recall (of what is held by then) over cases wanting some, precision of what each got, silence over own
    cases wanting none, foreign silence, and the (rule, case) pairs' micro recall."""
    rec: list[float] = []
    hits = inj = none = silent = far = far_silent = want = held_hits = 0
    for own, wanted, got, held in cases:
        if not own:
            far += 1
            far_silent += not got
            continue
        inj += len(got)
        hits += len(got & wanted)
        want += len(wanted)
        held_hits += len(held & wanted)
        if wanted:
            rec.append(len(held & wanted) / len(wanted))
        else:
            none += 1
            silent += not got
    return {
        "recall": div(sum(rec), len(rec)),
        "precision": div(hits, inj),
        "silence": div(silent, none),
        "foreign_silence": div(far_silent, far),
        "pair_recall": div(held_hits, want),
        "cases": len(rec) + none,
    }


def corpus_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Task level (every event of a task), the prompt alone (task labels), and each edit alone (the memories whose
    scope holds that edit's path), per split; foreign commands' silence."""
    repos = {r["repo"]: r for r in load_corpus()}
    scopes = scored(list(repos.values()))
    tasks = {(r["repo"], t["id"]): t for r in repos.values() for t in r["tasks"]}
    out: dict[str, Any] = {}
    for split in ("cv", "frozen"):
        keep = [x for x in rows if repos[x["store"]].get("split", "cv") == split]
        by_task: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for x in keep:
            if x["channel"] != "command":
                by_task.setdefault((x["store"], x["origin"], x["task"]), []).append(x)
        task_cases, prompt_cases, edit_cases = [], [], []
        for (store, origin, tid), evs in by_task.items():
            own, sc = store == origin, scopes[store]
            wanted = set(tasks[(origin, tid)]["relevant"]) & sc.keys() if own else set()
            got_all = {fn for e in evs for fn in e["injected"] if fn in sc}
            task_cases.append((own, wanted, got_all, got_all))
            held: set[str] = set()
            for e in evs:
                got = {fn for fn in e["injected"] if fn in sc}
                held |= got
                if e["channel"] == "prompt":
                    prompt_cases.append((own, wanted, got, got))
                else:
                    at = {fn for fn, g in sc.items() if own and any(glob_match(p, e["path"]) for p in g)}
                    edit_cases.append((own, at, got, set(held)))
        cmd = [
            (False, set(), got, got)
            for x in keep
            if x["channel"] == "command"
            for got in [{fn for fn in x["injected"] if fn in scopes[x["store"]]}]
        ]
        out[split] = {
            "task": tally(task_cases),
            "prompt": tally(prompt_cases),
            "edit": tally(edit_cases),
            "command": tally(cmd),
        }
    return out


def moments_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """bench/moments as bench/moments_bench.py counts it (delivered: this event or an earlier one of its session
    injected it), overall and per channel."""
    out: dict[str, Any] = {}
    for channel in ("all", "prompt", "edit", "command", "tool"):
        own_hits: list[float] = []
        inj = right = none = silent = far = far_silent = 0
        held: dict[tuple[str, int], set[str]] = {}
        labelled: dict[tuple[str, int], set[str]] = {}
        for r in rows:
            labelled.setdefault((r["project"], r["session"]), set()).update(r["applies"])
        for r in rows:
            key = (r["project"], r["session"])
            held.setdefault(key, set()).update(r["injected"])
            mine = channel == "all" or r["channel"] == channel or (channel == "tool" and r["channel"] != "prompt")
            if not mine:
                continue
            if r["project"] != "calcom":
                far += 1
                far_silent += not r["injected"]
                continue
            inj += len(r["injected"])
            right += len(set(r["injected"]) & labelled[key])
            if r["applies"]:
                own_hits.append(len(set(r["applies"]) & held[key]) / len(r["applies"]))
            else:
                none += 1
                silent += not r["injected"]
        out[channel] = {
            "hits": div(sum(own_hits), len(own_hits)),
            "precision": div(right, inj),
            "quiet": div(silent, none),
            "quiet_other": div(far_silent, far),
        }
    return out


def guard_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The guard bench's acts as relevance sees them, per channel: hits (a violating act got the memory it
    breaks), precision of what came, quiet (a compliant act got nothing)."""
    out: dict[str, Any] = {}
    for ch in ("command", "edit"):
        mine = [r for r in rows if r["channel"] == ch]
        bad = [r for r in mine if r["violates"]]
        ok = [r for r in mine if not r["violates"]]
        inj = sum(len(r["injected"]) for r in mine)
        right = sum(r["violates"] in r["injected"] for r in bad)
        out[ch] = {
            "hits": div(right, len(bad)),
            "precision": div(right, inj),
            "quiet": div(sum(not r["injected"] for r in ok), len(ok)),
        }
    return out


def figures(played: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"dense_model": played.get("dense_model")}
    if "corpus" in played:
        out["corpus"] = corpus_figures(played["corpus"])
    if "moments" in played:
        out["moments"] = moments_figures(played["moments"])
    if "guard" in played:
        out["guard"] = guard_figures(played["guard"])
    for k in ("coding", "locomo"):
        if k in played:
            out[k] = played[k]
    return out


def flat(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def play(src: Path, out: Path, parts: str) -> dict[str, Any]:
    cmd = [sys.executable, str(HERE / "relevance_daemon.py"), "--src", str(src), "--out", str(out), "--parts", parts]
    subprocess.run(cmd, check=True)
    return dict(json.loads(out.read_text(encoding="utf-8")))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=Path, default=Path("/tmp/rel-main"), help="a worktree of main")
    ap.add_argument("--parts", default="corpus,moments,guard,coding,locomo")
    ap.add_argument("--reuse", action="store_true", help="score the last played rows again (/tmp/rel-{old,new}.json)")
    ap.add_argument("--runs", default="old,new", help="old: main's daemon; new: this tree's")
    args = ap.parse_args()
    runs = {"old": (args.old, Path("/tmp/rel-old.json")), "new": (HERE.parent, Path("/tmp/rel-new.json"))}
    res: dict[str, Any] = {}
    for name, (src, path) in runs.items():
        if name not in args.runs.split(","):
            continue
        played = json.loads(path.read_text(encoding="utf-8")) if args.reuse else play(src, path, args.parts)
        res[name] = figures(played)
    if FIT.exists():
        res["fitted_cv"] = json.loads(FIT.read_text(encoding="utf-8"))
    cols = list(res)
    table = {k: [flat(res[c]).get(k) for c in cols] for k in flat(res[cols[0]])}
    for k, v in flat(res.get("fitted_cv", {})).items():
        table.setdefault(k, [None] * (len(cols) - 1) + [v])
    print(f"{'figure':58} " + " ".join(f"{c:>10}" for c in cols))
    for k, vals in table.items():
        if k.endswith(".cases") or k == "dense_model":
            continue
        print(f"{k:58} " + " ".join(f"{'' if v is None else v!s:>10}" for v in vals))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "relevance_bench.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
