#!/usr/bin/env python3
"""The moments benchmark (issue 38): a real project's rules saved as memories, then its sessions
played through Claude Code's hook door (POST /v1/hooks/claude-code on a daemon over loopback):
each prompt as UserPromptSubmit, each Bash command and edit as PreToolUse. Every event is labelled
with the memories that obviously apply to it, or none; another project's events check silence.

    .venv/bin/python bench/moments_bench.py [--dense auto|off]           # bench/moments/
    .venv/bin/python bench/moments_bench.py --coding dev|test [--dense auto|off]   # the coding set, task level

Model calls per 100 prompts: how many prompts would start the model's side-query with a model backend
(the local ranking neither clearly silent nor clearly sure: `recall/model_route.py` `model_not_needed`).
Moments: a labelled memory counts as delivered when the event or an earlier moment of its session
injected it (it is in the agent's context). Precision: injected memories labelled for some event of
their session, over all injected. Silence: events labelled none that got nothing. Writes JSON to
bench/results/.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coding_eval import load_repos, tally  # noqa: E402  (bench/coding_eval.py: the same metrics)
from recall_bench import Served, embedded  # noqa: E402  (a real daemon behind uvicorn on loopback)

DATA = ROOT / "bench" / "moments"
RESULTS = ROOT / "bench" / "results"
HEADER = re.compile(r"^Memory(?: \(saved [^)]*\))?: (\S+\.md):$", re.M)
# A held act's reason names the memory's file (memoryd/guard/reason.py): the rule reached the agent as the deny.
HELD_BY = re.compile(r"edit or remove `forbid:` in (\S+\.md) ")


class Session:
    """One Claude Code session of a project, through the hook door."""

    def __init__(self, srv: Served, cwd: Path) -> None:
        self.srv, self.cwd, self.id = srv, cwd, uuid.uuid4().hex
        self.ms: dict[str, list[float]] = {"UserPromptSubmit": [], "PreToolUse": []}
        self.held: list[str] = []  # the memories whose rule held the last act (deny or ask): delivered as its reason

    def hook(self, payload: dict[str, Any]) -> str:
        body = {"session_id": self.id, "cwd": str(self.cwd), **payload}
        t0 = time.perf_counter()
        r = self.srv.client.post("/v1/hooks/claude-code", json=body)
        self.ms[payload["hook_event_name"]].append((time.perf_counter() - t0) * 1000)
        r.raise_for_status()
        out = r.json().get("hookSpecificOutput", {})
        self.held = [Path(m).name for m in HELD_BY.findall(str(out.get("permissionDecisionReason", "")))]
        return str(out.get("additionalContext", ""))

    def event(self, ev: dict[str, Any]) -> str:
        if "prompt" in ev:
            return self.hook({"hook_event_name": "UserPromptSubmit", "prompt": ev["prompt"]})
        tool_input: dict[str, Any] = {}
        if ev.get("command"):
            tool_input["command"] = ev["command"]
        if ev.get("path"):
            tool_input["file_path"] = str(self.cwd / ev["path"])
        if ev["tool"] == "Write":
            tool_input["content"] = ev.get("content", "")
        elif ev["tool"] == "Edit":
            tool_input |= {"old_string": "", "new_string": ev.get("content", "")}
        return self.hook(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": ev["tool"],
                "tool_input": tool_input,
                "tool_use_id": "toolu_" + uuid.uuid4().hex[:20],
            }
        )


def injected(context: str) -> tuple[list[str], bool]:
    """The memory files a hook's answer carries, and whether every block has its description."""
    blocks = context.split("<system-reminder>")[1:]
    names = [Path(m).name for m in HEADER.findall(context)]
    return names, all("\ndescription: " in b for b in blocks)


def save_all(srv: Served, cwd: Path, memories: list[dict[str, Any]], key: str = "key") -> dict[str, str]:
    """Save each memory over REST; answer filename -> the dataset's key."""
    out: dict[str, str] = {}
    for m in memories:
        r = srv.client.post(
            "/v1/memories",
            json={
                "cwd": str(cwd),
                "name": m["name"],
                "description": m["description"],
                "type": m["type"],
                "body": m["body"],
            },
        )
        r.raise_for_status()
        out[r.json()["filename"]] = m[key]
    return out


def play(srv: Served, cwd: Path, sessions: list[dict[str, Any]], names: dict[str, str]) -> dict[str, Any]:
    """Every session's events in order; per event what arrived and what was labelled."""
    rows: list[dict[str, Any]] = []
    ms: dict[str, list[float]] = {"UserPromptSubmit": [], "PreToolUse": []}
    for s in sessions:
        session = Session(srv, cwd)
        held: set[str] = set()
        labelled = {k for ev in s["events"] for k in ev.get("applies", [])}
        for ev in s["events"]:
            got, described = injected(session.event(ev))
            got += [fn for fn in session.held if fn not in got]
            keys = [names.get(fn, fn) for fn in got]
            held |= set(keys)
            rows.append(
                {
                    "kind": "prompt" if "prompt" in ev else "tool",
                    "event": ev.get("prompt") or ev.get("command") or f"{ev['tool']} {ev.get('path', '')}",
                    "applies": ev.get("applies", []),
                    "injected": keys,
                    "held_by": [names.get(fn, fn) for fn in session.held],
                    "delivered": [k for k in ev.get("applies", []) if k in held],
                    "right": [k for k in keys if k in labelled],
                    "described": described,
                }
            )
        for k, v in session.ms.items():
            ms[k] += v
    return {"rows": rows, "ms": ms}


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def figures(own: dict[str, Any], foreign: dict[str, Any]) -> dict[str, Any]:
    rows = own["rows"]

    def hits(kind: str) -> float | None:
        xs = [len(r["delivered"]) / len(r["applies"]) for r in rows if r["kind"] == kind and r["applies"]]
        return round(sum(xs) / len(xs), 3) if xs else None

    total = sum(len(r["injected"]) for r in rows)
    none = [r for r in rows if not r["applies"]]
    frows = foreign["rows"]
    ms = {k: own["ms"][k] + foreign["ms"][k] for k in own["ms"]}
    return {
        "prompt_hits": hits("prompt"),
        "tool_hits": hits("tool"),
        "precision": round(sum(len(r["right"]) for r in rows) / total, 3) if total else None,
        "silence": round(sum(not r["injected"] for r in none) / len(none), 3) if none else None,
        "foreign_silence": round(sum(not r["injected"] for r in frows) / len(frows), 3) if frows else None,
        # the same, the acts a rule of the store held set apart (the rule forbids what the act runs: `npx` under
        # "never npm"), so what is left is context that arrived for nothing
        "foreign_silence_held_apart": _share(
            [not r["injected"] for r in frows if not r["held_by"]],
        ),
        "all_described": all(r["described"] for r in rows + frows),
        "events": len(rows),
        "foreign_events": len(frows),
        "injected": total,
        "hook_ms_p50": {k: round(statistics.median(v), 2) for k, v in ms.items() if v},
    }


def moments(work: Path, dense: str) -> dict[str, Any]:
    own = json.loads((DATA / "calcom.json").read_text(encoding="utf-8"))
    other = json.loads((DATA / "twenty.json").read_text(encoding="utf-8"))
    with Served(work / "home", dense=dense) as srv:
        srv.daemon.recall.indexes.encoder.load()
        srv.daemon.recall.indexes.start_dense()
        cwd = work / "calcom"
        (cwd / ".git").mkdir(parents=True)
        names = save_all(srv, cwd, own["memories"])
        embedded(srv)
        mine = play(srv, cwd, own["sessions"], names)
        theirs = play(srv, cwd, other["sessions"], names)
        wanted = srv.daemon.recall.model_wanted
        health = []
        for _ in range(50):
            t0 = time.perf_counter()
            srv.client.get("/v1/health")
            health.append((time.perf_counter() - t0) * 1000)
    out = figures(mine, theirs) | {"health_ms_p50": round(statistics.median(health), 2)}
    prompts = sum(r["kind"] == "prompt" for r in mine["rows"] + theirs["rows"])
    out["model_calls_per_100_prompts"] = round(100 * wanted / prompts, 1) if prompts else None
    out["misses"] = [r for r in mine["rows"] if set(r["applies"]) - set(r["delivered"])]
    out["noise"] = [r for r in mine["rows"] + theirs["rows"] if set(r["injected"]) - set(r["right"])]
    return out


def coding(work: Path, split: str, dense: str, edits: bool = True) -> dict[str, Any]:
    """The coding set at the task level: the prompt, then a PreToolUse Edit of each changed file, one session."""
    repos = load_repos(split)
    with Served(work / "home-coding", dense=dense) as srv:
        srv.daemon.recall.indexes.encoder.load()
        srv.daemon.recall.indexes.start_dense()
        maps = {}
        for repo in repos:
            cwd = work / "coding" / repo["repo"].replace("/", "__")
            (cwd / ".git").mkdir(parents=True)
            maps[repo["repo"]] = save_all(srv, cwd, repo["memories"], key="filename")
        embedded(srv)

        def ask(repo: dict[str, Any], task: dict[str, Any]) -> list[str]:
            session = Session(srv, work / "coding" / repo["repo"].replace("/", "__"))
            got = injected(session.event({"prompt": task["prompt"]}))[0]
            for f in task["files"] if edits else []:
                got += injected(session.event({"tool": "Edit", "path": f, "content": ""}))[0]
            return list(dict.fromkeys(maps[repo["repo"]].get(fn, fn) for fn in got))

        asked = [0]

        def counted(repo: dict[str, Any], task: dict[str, Any]) -> list[str]:
            asked[0] += 1
            return ask(repo, task)

        out = tally(repos, counted)
        out["all"]["model_calls_per_100_prompts"] = round(100 * srv.daemon.recall.model_wanted / asked[0], 1)
        return out


def scale(work: Path, n: int, calls: int = 200) -> dict[str, Any]:
    """PreToolUse's cost with `n` memories (each naming a path and a command), against /v1/health."""
    with Served(work / "home-scale", dense="off") as srv:
        cwd = work / "scaled"
        (cwd / ".git").mkdir(parents=True)
        for i in range(n):
            srv.client.post(
                "/v1/memories",
                json={
                    "cwd": str(cwd),
                    "name": f"Rule {i}",
                    "description": f"Files under services/svc{i}/ are owned by team {i % 17}; never run tool{i} there",
                    "type": "feedback",
                    "body": f"Use `make svc{i}` to build it.",
                },
            ).raise_for_status()
        session = Session(srv, cwd)
        session.event({"tool": "Bash", "command": "ls"})  # the first call reads every file once
        session.ms["PreToolUse"].clear()
        for i in range(calls):
            if i % 2:
                session.event({"tool": "Edit", "path": f"services/other{i}/main.go", "content": "x := 1"})
            else:
                session.event({"tool": "Bash", "command": f"go test ./services/other{i}/..."})
        health = []
        for _ in range(calls):
            t0 = time.perf_counter()
            srv.client.get("/v1/health")
            health.append((time.perf_counter() - t0) * 1000)
    return {
        "memories": n,
        "pre_tool_use_ms_p50": round(statistics.median(session.ms["PreToolUse"]), 2),
        "health_ms_p50": round(statistics.median(health), 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dense", default="auto")
    ap.add_argument("--coding", choices=("dev", "test"), default=None, help="the coding set at the task level instead")
    ap.add_argument("--show", action="store_true", help="print the misses and the noise")
    ap.add_argument("--scale", type=int, default=0, help="PreToolUse's cost with this many memories instead")
    ap.add_argument("--prompt-only", action="store_true", help="coding: the prompt alone, no edits (for comparison)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.scale:
            out = scale(Path(tmp), args.scale)
            name = f"moments_scale_{args.scale}"
            print(json.dumps(out, indent=1))
        elif args.coding:
            out = coding(Path(tmp), args.coding, args.dense, edits=not args.prompt_only)
            name = f"coding_tasks_{args.coding}{'_prompt_only' if args.prompt_only else ''}"
            print(json.dumps(out["all"], indent=1))
        else:
            out = moments(Path(tmp), args.dense)
            name = "moments"
            print(json.dumps({k: v for k, v in out.items() if k not in ("misses", "noise")}, indent=1))
            if args.show:
                for r in out["misses"]:
                    print("MISS ", r["event"][:90], "| wanted", r["applies"], "| got", r["injected"])
                for r in out["noise"]:
                    print("NOISE", r["event"][:90], "| wanted", r["applies"], "| got", r["injected"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}_{args.dense}.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
