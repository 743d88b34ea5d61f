#!/usr/bin/env python3
"""Per-channel policies scored on the same events (bench/relevance.md, "Choosing a policy"): (a) old, as main's
daemon played them (/tmp/rel-old.json); (b) fitted, out of fold; (c) old ∪ fitted at t_union; (d) one model
over the fitted inputs plus which kinds of old reason fire (`memoryd.relevance.reasons`). Needs the cached pairs
of bench/relevance_fit.py (`--reuse`) and old's played rows; prints the CV table, then the frozen split once for
the policies chosen by the written rule.

    .venv/bin/python bench/relevance_policy.py [--old /tmp/rel-old.json]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

import __main__

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import relevance_fit as rf  # noqa: E402
from relevance_bench import scored  # noqa: E402
from relevance_common import build  # noqa: E402
from relevance_daemon import (  # noqa: E402  # noqa: E402
    FOREIGN_COMMANDS,
    FOREIGN_TASKS,
    GUARD_CHANNELS,
    foreign,
    guard_event,
    guard_projects,
    load_corpus,
    task_events,
)

from memoryd.base.limits import TOOL_RECALL_EDIT_CHARS  # noqa: E402
from memoryd.base.text import query_terms  # noqa: E402
from memoryd.relevance.applies_derive import derive, topics_of  # noqa: E402
from memoryd.relevance.match import Context, input_names, inputs, shared  # noqa: E402
from memoryd.relevance.memory import command_act, edit_act, prompt_act  # noqa: E402
from memoryd.relevance.reasons import REASONS, prompt_reasons, tool_reasons  # noqa: E402

POLICIES = ("old", "fitted", "union", "reasons")
TASK = ("recall", "precision", "silence", "foreign_silence")
MARGIN = 0.02  # the most a policy may lose against old on any moments or guard figure of its channel
Spec = tuple[str, str, str, str, str]  # (channel, path, command, writes, prompt)


def specs() -> list[tuple[dict[str, Any], set[str] | None, Spec]]:
    """Every event in bench/relevance_fit.py's order: its store (repo dict), the memories kept, and the act."""
    out: list[tuple[dict[str, Any], set[str] | None, Spec]] = []
    repos = load_corpus()
    scopes = scored(repos)
    for repo in repos:
        keep = set(scopes[repo["repo"]])
        for _, task in [(repo["repo"], t) for t in repo["tasks"]] + foreign(repos, repo, "tasks", FOREIGN_TASKS):
            for ev in task_events(task):
                if "prompt" in ev:
                    out.append((repo, keep, ("prompt", "", "", "", ev["prompt"])))
                else:
                    out.append((repo, keep, ("edit", ev["path"], "", ev["content"], "")))
        for _, cmd in foreign(repos, repo, "commands", FOREIGN_COMMANDS):
            out.append((repo, keep, ("command", "", cmd["command"], "", "")))
    own = json.loads((HERE / "moments" / "calcom.json").read_text(encoding="utf-8"))
    other = json.loads((HERE / "moments" / "twenty.json").read_text(encoding="utf-8"))
    calcom = {"repo": "calcom", "memories": [m | {"filename": m["key"]} for m in own["memories"]], "tasks": []}
    for data in (own, other):
        for s in data["sessions"]:
            for ev in s["events"]:
                if "prompt" in ev:
                    out.append((calcom, None, ("prompt", "", "", "", ev["prompt"])))
                elif ev.get("tool") == "Bash":
                    out.append((calcom, None, ("command", "", ev["command"], "", "")))
                else:
                    out.append((calcom, None, ("edit", ev["path"], "", ev.get("content", ""), "")))
    for proj in guard_projects():
        store = {"repo": proj["id"], "memories": [m | {"filename": m["key"]} for m in proj["memories"]], "tasks": []}
        for a in proj["acts"]:
            if a["tool"] in GUARD_CHANNELS:
                ev = guard_event(a)
                ch = GUARD_CHANNELS[a["tool"]]
                spec = ("command", "", ev["command"], "", "") if ch == "command" else ("edit", ev["path"], "", "", "")
                out.append((store, None, spec[:3] + (ev.get("content", ""), "")))
    return out


def with_reasons(p: rf.Pairs) -> tuple[rf.Pairs, np.ndarray, np.ndarray]:
    """Policy (d)'s pairs: every fitted candidate plus every memory an old reason fires for, each row the fitted
    inputs and one indicator per kind of old reason."""
    assert not any(ev.meta.get("set") == "coding" for ev in p.events), "(d) reads old's reasons of played events only"
    q, names, cols = rf.Pairs(), input_names(), {r: i for i, r in enumerate(REASONS)}
    stores: dict[str, Any] = {}
    for i, (repo, keep, (ch, path, command, writes, prompt)) in enumerate(specs()):
        ev = p.events[i]
        assert ev.channel == ch and (ch != "edit" or ev.path == path), (i, ev.channel, ch, ev.path, path)
        if repo["repo"] not in stores:
            st = build(repo, None)
            derived = {
                m["filename"]: derive(m["name"], m["description"], m["body"], m["type"]) for m in repo["memories"]
            }
            stores[repo["repo"]] = (st, derived)
        st, derived = stores[repo["repo"]]
        topics = topics_of(prompt) if prompt else frozenset()
        fired = {
            fn: prompt_reasons(a, prompt, topics)
            if ch == "prompt"
            else tool_reasons(a, path, command, writes[:TOOL_RECALL_EDIT_CHARS])
            for fn, a in derived.items()
            if keep is None or fn in keep
        }
        have = {p.memory[r]: p.x[r] for r in ev.rows}
        extra = [fn for fn, why in fired.items() if why and fn not in have]
        if extra:
            act = (
                prompt_act(prompt)
                if ch == "prompt"
                else command_act(command)
                if ch == "command"
                else edit_act(path, writes)
            )
            idf, held = st.index.matches(set(query_terms(act.text)), extra)
            total = sum(idf.values()) or 1.0
            for fn in extra:
                common = shared(st.memories[fn], act)
                ctx = Context(
                    lexical=sum(idf[t] for t in held[fn]) / total, rarity={f: st.triggers.holding(f) for f in common}
                )
                x = inputs(st.memories[fn], act, common, ctx)
                have[fn] = [x.get(n, 0.0) for n in names]
        e = rf.Event(ev.fold, ev.store, ev.origin, ev.session, ev.channel, ev.path, ev.wanted, meta=ev.meta)
        for fn, x in have.items():
            ind = [0.0] * len(REASONS)
            for r in fired.get(fn, ()):
                ind[cols[r]] = 1.0
            e.rows.append(len(q.y))
            q.x.append(list(x) + ind)
            q.y.append(float(fn in ev.wanted))
            q.memory.append(fn)
            q.event.append(len(q.events))
        q.events.append(e)
    return q, np.array(q.x), np.array(q.y)


def ranked(p: rf.Pairs, prob: np.ndarray) -> list[list[tuple[float, str]]]:
    return [sorted(((float(prob[r]), p.memory[r]) for r in ev.rows), reverse=True) for ev in p.events]


def deliver(
    p: rf.Pairs, choice: dict[str, tuple[str, float]], cands: dict[str, Any], old: list[list[str]]
) -> list[list[str]]:
    """Per event, what the daemon would inject with `choice` (channel -> policy, threshold): old's own picks, the
    fitted's above the threshold, or old's first then the fitted's; once per session, capped per channel."""
    held: dict[tuple[str, str, str], set[str]] = {}
    out: list[list[str]] = []
    for i, ev in enumerate(p.events):
        seen = held.setdefault((ev.store, ev.origin, ev.session), set())
        kind, t = choice[ev.channel]
        base = [fn for fn in old[i] if fn not in seen] if kind in ("old", "union") else []
        if kind == "old":
            got = base
        else:
            extra = [
                fn
                for pr, fn in cands["fitted" if kind == "union" else kind][i]
                if pr >= t and fn not in seen and fn not in base
            ]
            got = (base + extra)[: max(rf.CAP[ev.channel], len(base))]
        seen.update(got)
        out.append(got)
    return out


def f1(fig: dict[str, Any]) -> float:
    r, pr = fig["recall"] or 0.0, fig["precision"] or 0.0
    return round(2 * r * pr / (r + pr), 3) if r + pr else 0.0


def at_target(fig: dict[str, Any]) -> bool:
    return all((fig[k] or 0.0) >= v for k, v in rf.TARGET.items())


def task(p: rf.Pairs, got: list[list[str]]) -> dict[str, float | None]:
    """Corpus CV task figures as bench/relevance_bench.py counts them: only memories with a maintainer scope."""
    sc = scored(load_corpus())
    kept = [g if ev.meta else [fn for fn in g if fn in sc[ev.store]] for ev, g in zip(p.events, got)]
    return rf.task_figures(p, kept)


def tune(p: rf.Pairs, kind: str, cands: dict[str, Any], old: list[list[str]]) -> dict[str, float]:
    """t per channel for `kind` (union or reasons): prompt and edit each, the other at old, by corpus CV task F1
    among thresholds at the silence targets, or where none is (old's own silence is under them, and a union
    only adds) among those losing at most MARGIN of old's silence and foreign silence; the command channel as
    bench/relevance_fit.py chooses it."""
    base: dict[str, tuple[str, float]] = {ch: ("old", 1.0) for ch in ("prompt", "edit", "command")}
    floor = task(p, deliver(p, base, cands, old))
    th: dict[str, float] = {}
    for ch in ("prompt", "edit"):
        curve = [(t, task(p, deliver(p, base | {ch: (kind, t)}, cands, old))) for t in rf.GRID]
        for t, f in curve:
            print(f"  {kind} {ch} t={t} f1={f1(f)} " + " ".join(f"{k}={f[k]}" for k in TASK), flush=True)
        ok = [(f1(f), t) for t, f in curve if at_target(f)]
        near = [(f1(f), t) for t, f in curve if all((f[k] or 0.0) >= (floor[k] or 0.0) - MARGIN for k in rf.TARGET)]
        th[ch] = max(ok or near or [(0.0, 1.0)])[1]
    best = (-1.0, 1.0)
    for t in rf.GRID:
        c, m = rf.channel_figures(p, deliver(p, base | {"command": (kind, t)}, cands, old), "command")
        ok = (c["foreign_silence"] or 0.0) >= rf.TARGET["foreign_silence"] and (m["quiet"] or 0.0) >= rf.TARGET[
            "silence"
        ]
        best = max(best, (f1({"recall": m["hits"], "precision": m["precision"]}) + ok, t))
    th["command"] = best[1]
    return th


def checked(fig: dict[str, Any], ch: str) -> dict[str, Any]:
    """The moments and guard figures of one channel (what old is tuned on)."""
    out = {f"moments.{k}": v for k, v in fig["moments"].get(ch, {}).items()}
    return out | {f"guard.{k}": v for k, v in fig["guard"].get(ch, {}).items()}


def losses(fig: dict[str, Any], old: dict[str, Any], ch: str) -> list[str]:
    mine, theirs = checked(fig, ch), checked(old, ch)
    return [k for k, v in theirs.items() if v is not None and (mine.get(k) or 0.0) < v - MARGIN]


def sweep(p: rf.Pairs, ch: str, kind: str, cands: dict[str, Any], old: list[list[str]]) -> None:
    """Every threshold of one channel's policy with its moments and guard figures: a look at the checked sets,
    printed after the choice for the reader, never used to make it."""
    for t in rf.GRID:
        fig = rf.figures(
            p, deliver(p, {c: ("old", 1.0) for c in ("prompt", "edit", "command")} | {ch: (kind, t)}, cands, old)
        )
        cv = fig["corpus"]["cv"]["task"]
        print(f"  sweep {kind} {ch} t={t} f1={f1(cv)} " + " ".join(f"{k}={cv[k]}" for k in TASK), checked(fig, ch))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", type=Path, default=Path("/tmp/rel-old.json"))
    ap.add_argument("--sweep", default="", help="channel:policy, e.g. edit:union: its thresholds after the choice")
    ap.add_argument("--policies", default=",".join(POLICIES), help="which of old,fitted,union,reasons to score")
    args = ap.parse_args()
    policies = [k for k in POLICIES if k in args.policies.split(",")]
    __main__.Pairs, __main__.Event = rf.Pairs, rf.Event  # the pickle was written by relevance_fit.py as a script
    p = pickle.loads(rf.PAIRS.read_bytes())
    rf.guard_pairs(p)
    played = json.loads(args.old.read_text(encoding="utf-8"))
    rows = iter([r["injected"] for part in ("corpus", "moments", "guard") for r in played[part]])
    old = [[] if ev.meta.get("set") == "coding" else next(rows) for ev in p.events]  # old never played coding
    assert next(rows, None) is None, "old's rows and the pairs' events differ"
    x, y = np.array(p.x), np.array(p.y)
    cands: dict[str, Any] = {"fitted": ranked(p, rf.cross_validate(p, x, y))}
    th: dict[str, dict[str, float]] = {"old": {}}
    fit_th = json.loads(rf.WEIGHTS.read_text(encoding="utf-8"))["channels"]
    th["fitted"] = {ch: fit_th[ch]["threshold"] for ch in ("prompt", "edit", "command")}
    if "reasons" in policies:
        q, xq, yq = with_reasons(p)
        cands["reasons"] = ranked(q, rf.cross_validate(q, xq, yq))
        th["reasons"] = tune(p, "reasons", cands, old)
    if "union" in policies:
        th["union"] = tune(p, "union", cands, old)
    print("thresholds", json.dumps(th), flush=True)
    allold = {ch: ("old", 1.0) for ch in ("prompt", "edit", "command")}
    base = rf.figures(p, deliver(p, allold, cands, old))
    chosen: dict[str, tuple[str, float]] = {}
    rows: list[dict[str, Any]] = []
    for ch in ("prompt", "edit", "command"):
        best = ("old", 1.0, -1.0)
        for kind in policies:
            choice = allold | {ch: (kind, th[kind].get(ch, 1.0))}
            fig = rf.figures(p, deliver(p, choice, cands, old))
            cv = fig["corpus"]["cv"]
            lost = losses(fig, base, ch)
            row = {"channel": ch, "policy": kind, "t": choice[ch][1], "task_f1": f1(cv["task"])}
            row |= {f"task.{k}": cv["task"][k] for k in ("recall", "precision", "silence", "foreign_silence")}
            alone = cv["command"] if ch == "command" else cv[ch]
            row |= {f"alone.{k}": alone[k] for k in ("recall", "precision", "silence", "foreign_silence")}
            row |= checked(fig, ch) | {"loses": lost}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if not lost and row["task_f1"] > best[2] + 1e-9:
                best = (kind, choice[ch][1], row["task_f1"])
        chosen[ch] = best[:2]
    final = rf.figures(p, deliver(p, chosen, cands, old))
    out = {"thresholds": th, "rows": rows, "chosen": chosen, "chosen_figures": final, "old_figures": base}
    print("chosen", json.dumps(chosen))
    print("chosen cv", json.dumps(final["corpus"]["cv"]))
    print("chosen frozen", json.dumps(final["corpus"]["frozen"]), "old frozen", json.dumps(base["corpus"]["frozen"]))
    if args.sweep:
        ch, kind = args.sweep.split(":")
        sweep(p, ch, kind, cands, old)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "relevance_policy.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
