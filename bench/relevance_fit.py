#!/usr/bin/env python3
"""Fit the matcher's weights (logistic regression over `memoryd.relevance.match`'s inputs) and choose ONE
threshold per channel (prompt, edit, command) by leave-one-project-out CV; its figures are written in
bench/relevance_bench.py's shapes (bench/results/relevance_fit.json) so they sit beside old's.

Labels are per event: an edit is positive for a memory iff the memory's hidden scope holds THAT edit's path; a
prompt iff the memory is relevant to the task; a Bash line as bench/moments labels it. Memories with no scope
(universal, agent-requested, manual) are left out, never negative. Commands of other repositories asked of a
store are foreign negatives. scikit-learn is needed here only.

    .venv/bin/python bench/relevance_fit.py [--dense auto|off] [--write]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from coding_eval import load_repos  # noqa: E402
from corpus.build import glob_match  # noqa: E402
from relevance_bench import FIT, corpus_figures, guard_figures, moments_figures, scored, tally  # noqa: E402
from relevance_common import ROOT, Dense, Store, build, judged  # noqa: E402
from relevance_daemon import (  # noqa: E402
    FOREIGN_COMMANDS,
    FOREIGN_TASKS,
    GUARD_CHANNELS,
    foreign,
    group,
    guard_event,
    guard_projects,
    load_corpus,
    task_events,
)

from memoryd.relevance.match import input_names  # noqa: E402
from memoryd.relevance.memory import Act, command_act, edit_act, prompt_act  # noqa: E402

WEIGHTS = ROOT / "memoryd" / "relevance" / "data" / "weights.json"
C = 0.5  # the regularisation's inverse strength (L2)
GRID = [round(float(t), 2) for t in np.arange(0.1, 0.96, 0.05)]  # thresholds tried per channel
CAP = {"prompt": 5, "command": 2, "edit": 2}  # the daemon's caps per event (settings.max_memories, tool time)
TARGET = {"silence": 0.80, "foreign_silence": 0.92}
PER_CHANNEL = True  # one model per channel (the inputs are the same; the weights are the channel's own)
PAIRS = Path("/tmp/memoryd-relevance-pairs.pickle")  # the collected pairs, for --reuse (features unchanged)


@dataclass
class Event:
    """One act of one session asked of one store, with its candidates' rows and its labels."""

    fold: str
    store: str
    origin: str
    session: str
    channel: str
    path: str
    wanted: frozenset[str]
    rows: list[int] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Pairs:
    events: list[Event] = field(default_factory=list)
    x: list[list[float]] = field(default_factory=list)
    y: list[float] = field(default_factory=list)
    memory: list[str] = field(default_factory=list)
    event: list[int] = field(default_factory=list)


def add(p: Pairs, st: Store, act: Act, ev: Event, keep: set[str] | None, dense: Dense | None) -> None:
    """The event's candidates as rows (only the memories in `keep`, when given)."""
    trace: dict[str, dict[str, float]] = {}
    judged(st, act, dense, None, trace)
    names = input_names()
    for fn, x in trace.items():
        if keep is not None and fn not in keep:
            continue
        ev.rows.append(len(p.y))
        p.x.append([x.get(n, 0.0) for n in names])
        p.y.append(float(fn in ev.wanted))
        p.memory.append(fn)
        p.event.append(len(p.events))
    p.events.append(ev)


def corpus_pairs(p: Pairs, dense: Dense | None) -> None:
    repos = load_corpus()
    scopes = scored(repos)
    tasks = {(r["repo"], t["id"]): t for r in repos for t in r["tasks"]}
    for repo in repos:
        name, st, sc = repo["repo"], build(repo, dense), scopes[repo["repo"]]
        fold = group(name) if repo.get("split", "cv") == "cv" else "frozen:" + name
        asked = [(name, t) for t in repo["tasks"]] + foreign(repos, repo, "tasks", FOREIGN_TASKS)
        for origin, task in asked:
            own = origin == name
            rel = frozenset(tasks[(origin, task["id"])]["relevant"]) & sc.keys() if own else frozenset()
            for ev in task_events(task):
                if "prompt" in ev:
                    e = Event(fold, name, origin, task["id"], "prompt", "", rel)
                    add(p, st, prompt_act(ev["prompt"]), e, set(sc), dense)
                    continue
                at = frozenset(fn for fn, g in sc.items() if own and any(glob_match(q, ev["path"]) for q in g))
                e = Event(fold, name, origin, task["id"], "edit", ev["path"], at)
                add(p, st, edit_act(ev["path"], ev["content"]), e, set(sc), dense)
        for origin, cmd in foreign(repos, repo, "commands", FOREIGN_COMMANDS):
            e = Event(fold, name, origin, "", "command", "", frozenset())
            add(p, st, command_act(cmd["command"]), e, set(sc), dense)


def moments_pairs(p: Pairs, dense: Dense | None) -> None:
    """bench/moments: calcom's rules and sessions (its own project), twenty's sessions asked of them."""
    own = json.loads((HERE / "moments" / "calcom.json").read_text(encoding="utf-8"))
    other = json.loads((HERE / "moments" / "twenty.json").read_text(encoding="utf-8"))
    mems = [m | {"filename": m["key"]} for m in own["memories"]]
    st = build({"repo": "calcom", "memories": mems, "tasks": []}, dense)
    for project, data in (("calcom", own), ("twenty", other)):
        for i, s in enumerate(data["sessions"]):
            for ev in s["events"]:
                meta = {"set": "moments", "project": project, "session": i, "applies": ev.get("applies", [])}
                meta["event"] = ev.get("prompt") or ev.get("command") or ev.get("path", "")
                if "prompt" in ev:
                    act, ch = prompt_act(ev["prompt"]), "prompt"
                elif ev.get("tool") == "Bash":
                    act, ch = command_act(ev["command"]), "command"
                else:
                    act, ch = edit_act(ev["path"], ev.get("content", "")), "edit"
                e = Event("calcom", "calcom", project, f"{project}:{i}", ch, ev.get("path", ""), frozenset())
                e.wanted, e.meta = frozenset(ev.get("applies", [])), meta | {"channel": ch}
                add(p, st, act, e, None, dense)


def coding_pairs(p: Pairs, dense: Dense | None) -> None:
    """bench/coding's DEV repositories (never its test split): each task's prompt (a commit subject) labelled with
    the rules it needs; universal rules are left out (never negative). Each repository its own fold."""
    for repo in load_repos("dev"):
        fold = "coding:" + repo["repo"]
        st = build(repo | {"tasks": []}, dense)
        keep = {m["filename"] for m in repo["memories"] if not m.get("universal")}
        for t in repo["tasks"]:
            wanted = frozenset(t["relevant"]) & keep
            meta = {"set": "coding", "project": repo["repo"]}
            e = Event(fold, fold, fold, t["id"], "prompt", "", wanted, meta=meta)
            add(p, st, prompt_act(t["prompt"]), e, keep, dense)


def guard_pairs(p: Pairs) -> None:
    """The guard bench's dev acts (bench/guard/projects.json): a violating act is positive for the memory it breaks, a compliant
    one negative for every memory; each project its own fold, each act its own session."""
    for proj in guard_projects():
        mems = [m | {"filename": m["key"]} for m in proj["memories"]]
        st = build({"repo": proj["id"], "memories": mems, "tasks": []}, None)
        for i, a in enumerate(proj["acts"]):
            if a["tool"] not in GUARD_CHANNELS:
                continue
            ev, ch = guard_event(a), GUARD_CHANNELS[a["tool"]]
            act = command_act(ev["command"]) if ch == "command" else edit_act(ev["path"], ev["content"])
            wanted = frozenset([a["violates"]] if a["violates"] else [])
            meta = {"set": "guard", "project": proj["id"], "channel": ch, "violates": a["violates"]}
            e = Event(proj["id"], proj["id"], proj["id"], f"guard:{i}", ch, ev.get("path", ""), wanted, meta=meta)
            add(p, st, act, e, None, None)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=3000)
    model.fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


def cross_validate(p: Pairs, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each fold's pairs (its store's, and its tasks asked of other stores) scored by weights fitted without it:
    one model per channel (a channel with no positive left to train on falls back to the model of all)."""
    ev_fold = np.array([p.events[i].fold for i in p.event])
    origin = np.array([group(p.events[i].origin) if p.events[i].origin != "twenty" else "calcom" for i in p.event])
    channel = np.array([p.events[i].channel for i in p.event])
    prob = np.zeros(len(y))
    for f in sorted(set(ev_fold)):
        test = ev_fold == f
        train = ~test & (origin != f) & ~np.char.startswith(ev_fold.astype(str), "frozen:")
        for ch in ("prompt", "edit", "command"):
            here = test & (channel == ch)
            if not here.any():
                continue
            mine = train & (channel == ch) if PER_CHANNEL else train
            coef, b = (
                fit(x[mine], y[mine]) if y[mine].any() and (~y[mine].astype(bool)).any() else fit(x[train], y[train])
            )
            prob[here] = 1 / (1 + np.exp(-(x[here] @ coef + b)))
    return prob


def deliver(p: Pairs, prob: np.ndarray, th: dict[str, float]) -> list[list[str]]:
    """Per event, what the daemon would inject: its best at the channel's threshold, up to the channel's cap,
    none already injected earlier in the session."""
    held: dict[tuple[str, str, str], set[str]] = {}
    out: list[list[str]] = []
    for ev in p.events:
        seen = held.setdefault((ev.store, ev.origin, ev.session), set())
        best = sorted(((prob[i], p.memory[i]) for i in ev.rows if prob[i] >= th[ev.channel]), reverse=True)
        got = [fn for _, fn in best if fn not in seen][: CAP[ev.channel]]
        seen.update(got)
        out.append(got)
    return out


def figures(p: Pairs, got: list[list[str]]) -> dict[str, Any]:
    """The figures bench/relevance_bench.py prints for old and new, from what each event got."""
    rows, moments, guard, coding = [], [], [], []
    for ev, g in zip(p.events, got):
        if ev.meta and ev.meta.get("set", "moments") == "moments":
            moments.append(ev.meta | {"injected": g})
        elif ev.meta.get("set") == "guard":
            guard.append(ev.meta | {"injected": g})
        elif ev.meta.get("set") == "coding":
            coding.append((True, set(ev.wanted), set(g), set(g)))
        else:
            rows.append(
                {"store": ev.store, "origin": ev.origin, "task": ev.session, "channel": ev.channel, "path": ev.path}
                | {"injected": g}
            )
    out = {"corpus": corpus_figures(rows), "moments": moments_figures(moments), "guard": guard_figures(guard)}
    return out | {"coding_dev_prompt": tally(coding)}


def channel_figures(p: Pairs, got: list[list[str]], ch: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One channel's corpus CV figures (each event its own case) and the guard bench's figures of it: fast, for
    the threshold sweep."""
    cases, held = [], dict[tuple[str, str, str], set[str]]()
    for ev, g in zip(p.events, got):
        seen = held.setdefault((ev.store, ev.origin, ev.session), set())
        seen.update(g)
        if ev.channel == ch and not ev.meta and not ev.fold.startswith("frozen:"):
            cases.append((ev.origin == ev.store, set(ev.wanted), set(g), set(seen)))
    guard = [ev.meta | {"injected": g} for ev, g in zip(p.events, got) if ev.meta.get("set") == "guard"]
    return tally(cases), guard_figures(guard).get(ch, {})


def task_figures(p: Pairs, got: list[list[str]]) -> dict[str, float | None]:
    """The corpus CV split at the task level (every event of a task), fast: the threshold search's objective."""
    by_task: dict[tuple[str, str, str], tuple[bool, set[str], set[str]]] = {}
    for ev, g in zip(p.events, got):
        if ev.meta or ev.fold.startswith("frozen:") or ev.channel == "command":
            continue
        own, wanted, have = by_task.setdefault((ev.store, ev.origin, ev.session), (ev.origin == ev.store, set(), set()))
        if ev.channel == "prompt":
            wanted |= ev.wanted
        have.update(g)
    return tally((own, w, h, h) for own, w, h in by_task.values())


def choose(p: Pairs, prob: np.ndarray) -> dict[str, float]:
    """One threshold per channel. Prompt and edit together: the best F1 of task recall and precision among pairs
    keeping task silence and foreign silence at their targets (else the best sum of the four); the command
    channel alone: the guard bench's command hits and precision, keeping its compliant acts quiet and corpus
    commands' foreign silence at target."""
    # every score of a pair at target is above 1, every other below
    best, th = -1.0, {"prompt": 0.5, "edit": 0.5, "command": 0.5}
    for tp in GRID:
        for te in GRID:
            f = task_figures(p, deliver(p, prob, th | {"prompt": tp, "edit": te}))
            r, pr = f["recall"] or 0.0, f["precision"] or 0.0
            ok = all((f[k] or 0.0) >= v for k, v in TARGET.items())
            four = r + pr + (f["silence"] or 0.0) + (f["foreign_silence"] or 0.0)
            score = 1.0 + (2 * r * pr / (r + pr) if r + pr else 0.0) if ok else four / 4  # any pair at target first
            if score > best:
                best, th["prompt"], th["edit"] = score, tp, te
    best = -1.0
    for t in GRID:
        c, m = channel_figures(p, deliver(p, prob, th | {"command": t}), "command")
        r, pr = m["hits"] or 0.0, m["precision"] or 0.0
        ok = (c["foreign_silence"] or 0.0) >= TARGET["foreign_silence"] and (m["quiet"] or 0.0) >= TARGET["silence"]
        score = (2 * r * pr / (r + pr) if r + pr else 0.0) + (1.0 if ok else 0.0)
        if score > best:
            best, th["command"] = score, t
    return th


OLD = HERE / "relevance_old.json"  # old's moments and guard figures per channel (bench/relevance.md)
MARGIN = 0.02  # the most the fitted matcher may lose against old on any of them (the landing rule)


def landing(fig: dict[str, Any]) -> dict[str, list[str]]:
    """Per channel, the moments and guard figures on which the fitted matcher loses more than MARGIN to old:
    a channel moves only when this is empty (bench/relevance.md, "Choosing a policy per channel")."""
    old = json.loads(OLD.read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for ch in ("prompt", "edit", "command"):
        out[ch] = [
            f"{part}.{k} {fig[part].get(ch, {}).get(k)} < {v}"
            for part in ("moments", "guard")
            for k, v in old[part].get(ch, {}).items()
            if v is not None and (fig[part].get(ch, {}).get(k) or 0.0) < v - MARGIN
        ]
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dense", default="auto")
    ap.add_argument("--write", action="store_true", help="write memoryd/relevance/data/weights.json")
    ap.add_argument("--reuse", action="store_true", help="the pairs of the last run (PAIRS), not collected again")
    args = ap.parse_args()
    if args.reuse and PAIRS.exists():
        p = pickle.loads(PAIRS.read_bytes())
    else:
        dense = Dense(args.dense) if args.dense != "off" else None
        p = Pairs()
        corpus_pairs(p, dense)
        moments_pairs(p, dense)
        coding_pairs(p, dense)
        PAIRS.write_bytes(pickle.dumps(p))
    guard_pairs(p)
    x, y = np.array(p.x), np.array(p.y)
    print(f"{len(p.events)} events, {len(y)} pairs, {int(y.sum())} positive", flush=True)
    prob = cross_validate(p, x, y)
    th = choose(p, prob)
    out = figures(p, deliver(p, prob, th)) | {"thresholds": th}
    out["loses"] = landing(out)
    print(json.dumps(out | {"corpus": out["corpus"]["cv"]}, indent=1))
    FIT.parent.mkdir(exist_ok=True)
    FIT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    if args.write:
        train = np.array([not p.events[i].fold.startswith("frozen:") for i in p.event])
        channel = np.array([p.events[i].channel for i in p.event])
        out = {}
        for ch in ("prompt", "edit", "command"):
            mine = train & (channel == ch)
            if not y[mine].any():
                mine = train  # no labelled positive of this channel: the model of all
            coef, b = fit(x[mine], y[mine])
            w = {n: round(float(c), 5) for n, c in zip(input_names(), coef) if abs(c) > 1e-6}
            out[ch] = {"coef": w, "intercept": round(b, 5), "threshold": th[ch]}
        fitted_on = sorted({ev.store for ev in p.events if not ev.fold.startswith("frozen:")})
        WEIGHTS.write_text(json.dumps({"channels": out, "fitted_on": fitted_on}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
