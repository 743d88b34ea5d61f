#!/usr/bin/env python3
"""The relevance sets played through a real daemon's public door (Claude Code's hooks over loopback), with the
memoryd found at `--src` (this tree, or main's worktree for the old figures): every event's injected memories
written as rows, scored by bench/relevance_bench.py, so old and new are judged by the same harness.

    .venv/bin/python bench/relevance_daemon.py --src /tmp/rel-main --out /tmp/old.json [--parts corpus,moments,coding,locomo]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import uuid
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus" / "data"
HELD_OUT = frozenset(
    """charmbracelet/crush astral-sh/uv modelcontextprotocol/python-sdk modelcontextprotocol/typescript-sdk
    openai/openai-agents-js github/github-mcp-server pydantic/pydantic-ai ghostty-org/ghostty""".split()
)
FOREIGN_TASKS = 60  # other repositories' tasks asked of each store (seeded sample)
FOREIGN_COMMANDS = 40  # other repositories' commands asked of each store
MAX_EVENTS = 12  # a task's edits played (a 200-file commit is a rename, not 200 acts)
LOCOMO_OTHER = 1  # other stores each LoCoMo question is asked of (abstention)


def group(repo: str) -> str:
    """Repositories that share templated rules count as one (the navikt ones): never each other's foreigners."""
    owner = repo.split("/")[0]
    return owner if owner == "navikt" else repo


@cache
def load_corpus() -> list[dict[str, Any]]:
    repos = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CORPUS.glob("*.json"))]
    return [r for r in repos if r["repo"] not in HELD_OUT]


def foreign(repos: list[dict[str, Any]], repo: dict[str, Any], key: str, n: int) -> list[tuple[str, Any]]:
    """Other repositories' `key` items (tasks or commands) asked of this store: (origin, item), seeded."""
    pool = [(r["repo"], x) for r in repos if group(r["repo"]) != group(repo["repo"]) for x in r.get(key, [])]
    return random.Random(repo["repo"]).sample(pool, min(n, len(pool)))


def task_events(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The prompt, then an Edit of each changed file (its hunk as new text where the corpus has it)."""
    out: list[dict[str, Any]] = [{"prompt": task["prompt"]}]
    texts = {e["path"]: e.get("new_text") or "" for e in task.get("edits", [])}
    paths = list(texts) + [f for f in task.get("files", []) if f not in texts]
    out += [{"tool": "Edit", "path": p, "content": texts.get(p, "")} for p in paths[:MAX_EVENTS]]
    return out


def corpus(srv: Any, work: Path, mb: Any) -> list[dict[str, Any]]:
    """Each store asked its own tasks, a sample of other repositories' tasks and commands (one session a task)."""
    repos = load_corpus()
    maps: dict[str, dict[str, str]] = {}
    for repo in repos:
        cwd = work / "corpus" / repo["repo"].replace("/", "__")
        (cwd / ".git").mkdir(parents=True)
        maps[repo["repo"]] = mb.save_all(srv, cwd, repo["memories"], key="filename")
    mb.embedded(srv)
    rows: list[dict[str, Any]] = []
    for repo in repos:
        cwd = work / "corpus" / repo["repo"].replace("/", "__")
        names = maps[repo["repo"]]
        asked = [(repo["repo"], t) for t in repo["tasks"]] + foreign(repos, repo, "tasks", FOREIGN_TASKS)
        for origin, task in asked:
            session = mb.Session(srv, cwd)
            for ev in task_events(task):
                got = [names.get(fn, fn) for fn in mb.injected(session.event(ev))[0]]
                rows.append(
                    {
                        "store": repo["repo"],
                        "origin": origin,
                        "task": task["id"],
                        "channel": "prompt" if "prompt" in ev else "edit",
                        "path": ev.get("path", ""),
                        "injected": got,
                    }
                )
        for origin, cmd in foreign(repos, repo, "commands", FOREIGN_COMMANDS):
            session = mb.Session(srv, cwd)
            got = [
                names.get(fn, fn) for fn in mb.injected(session.event({"tool": "Bash", "command": cmd["command"]}))[0]
            ]
            rows.append({"store": repo["repo"], "origin": origin, "task": "", "channel": "command", "injected": got})
    return rows


def moments(srv: Any, work: Path, mb: Any) -> list[dict[str, Any]]:
    """bench/moments: calcom's sessions asked of calcom's rules, and twenty's (another project) of them too."""
    own = json.loads((HERE / "moments" / "calcom.json").read_text(encoding="utf-8"))
    other = json.loads((HERE / "moments" / "twenty.json").read_text(encoding="utf-8"))
    cwd = work / "calcom"
    (cwd / ".git").mkdir(parents=True)
    names = mb.save_all(srv, cwd, own["memories"])
    mb.embedded(srv)
    rows: list[dict[str, Any]] = []
    for project, data in (("calcom", own), ("twenty", other)):
        for i, s in enumerate(data["sessions"]):
            session = mb.Session(srv, cwd)
            for ev in s["events"]:
                got = [names.get(fn, fn) for fn in mb.injected(session.event(ev))[0]]
                channel = "prompt" if "prompt" in ev else "command" if ev.get("tool") == "Bash" else "edit"
                rows.append(
                    {
                        "project": project,
                        "session": i,
                        "channel": channel,
                        "event": ev.get("prompt") or ev.get("command") or ev.get("path", ""),
                        "applies": ev.get("applies", []),
                        "injected": got,
                    }
                )
    return rows


GUARD = HERE / "guard" / "projects.json"  # the guard bench's labelled acts
GUARD_CHANNELS = {"Bash": "command", "Edit": "edit", "Write": "edit", "MultiEdit": "edit"}


def guard_projects() -> list[dict[str, Any]]:
    """The guard bench's dev projects (its held-out two stay unread): each act labelled with the memory it
    breaks, or none."""
    return [p for p in json.loads(GUARD.read_text(encoding="utf-8"))["projects"] if not p["held_out"]]


def guard_event(act: dict[str, Any]) -> dict[str, Any]:
    """A guard act as bench/moments_bench.py's Session plays it."""
    i = act["input"]
    if act["tool"] == "Bash":
        return {"tool": "Bash", "command": i["command"]}
    writes = i.get("content") or i.get("new_string") or "\n".join(e.get("new_string", "") for e in i.get("edits", []))
    return {"tool": "Write" if act["tool"] == "Write" else "Edit", "path": i["file_path"], "content": writes}


def guard(srv: Any, work: Path, mb: Any) -> list[dict[str, Any]]:
    """Each project's rule saved as a memory (no forbid: this is context, not the guard), each act in a fresh
    session: did the rule it breaks arrive, and did a compliant act get nothing."""
    rows: list[dict[str, Any]] = []
    for p in guard_projects():
        cwd = work / "guard" / p["id"]
        (cwd / ".git").mkdir(parents=True)
        names = mb.save_all(srv, cwd, p["memories"])
        for act in p["acts"]:
            if act["tool"] not in GUARD_CHANNELS:
                continue
            got = [names.get(fn, fn) for fn in mb.injected(mb.Session(srv, cwd).event(guard_event(act)))[0]]
            rows.append(
                {"project": p["id"], "channel": GUARD_CHANNELS[act["tool"]], "violates": act["violates"]}
                | {"injected": got}
            )
    return rows


def locomo(srv: Any, work: Path, mb: Any) -> dict[str, Any]:
    """The LoCoMo dev split over /v1/recall: recall@5 of each question's own store, and how often another
    conversation's store answers it with anything (abstention's failure)."""
    data = HERE.parent.parent.parent / "shared" / "bench" / "recall_dev.jsonl"
    if not data.exists():
        data = Path("/work/shared/bench/recall_dev.jsonl")
    convs = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    maps: dict[str, dict[str, str]] = {}
    for conv in convs:
        cwd = work / "locomo" / conv["conv_id"]
        (cwd / ".git").mkdir(parents=True)
        maps[conv["conv_id"]] = mb.save_all(srv, cwd, conv["memories"], key="filename")
    mb.embedded(srv)
    rec: list[float] = []
    other: list[bool] = []
    for i, conv in enumerate(convs):
        for q in conv["queries"]:
            for j in [i] + [(i + k) % len(convs) for k in range(1, LOCOMO_OTHER + 1)]:
                target = convs[j]["conv_id"]
                r = srv.client.post(
                    "/v1/recall",
                    json={"cwd": str(work / "locomo" / target), "query": q["q"], "session_id": uuid.uuid4().hex},
                )
                got = [maps[target].get(m["filename"], m["filename"]) for m in r.json()["memories"]]
                if j == i:
                    rec.append(len(set(got[:5]) & set(q["relevant"])) / len(q["relevant"]))
                else:
                    other.append(bool(got))
    return {"recall@5": round(sum(rec) / len(rec), 3), "other_store_injected": round(sum(other) / len(other), 3)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=Path, required=True, help="the tree whose memoryd is played")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--parts", default="corpus,moments,guard,coding,locomo")
    ap.add_argument("--dense", default="auto")
    args = ap.parse_args()
    sys.path.insert(0, str(args.src.resolve()))
    import memoryd  # noqa: F401  (from --src: loaded before the bench modules put this tree first)

    sys.path.insert(0, str(HERE))
    import moments_bench as mb
    from recall_bench import Served

    parts = set(args.parts.split(","))
    out: dict[str, Any] = {"src": str(args.src), "memoryd": str(Path(memoryd.__file__).parent)}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with Served(work / "home", dense=args.dense) as srv:
            if (holder := getattr(srv.daemon, "guard", None)) is not None:
                holder.mode = "off"  # scored as context: a save proposes `forbid`, and a held act hides what came
            srv.daemon.recall.indexes.encoder.load()
            srv.daemon.recall.indexes.start_dense()
            out["dense_model"] = srv.daemon.recall.indexes.encoder.status
            for name, fn in (("corpus", corpus), ("moments", moments), ("guard", guard), ("locomo", locomo)):
                if name in parts:
                    out[name] = fn(srv, work, mb)
                    print(f"{name}: done", flush=True)
        if "coding" in parts:
            out["coding"] = mb.coding(work, "test", args.dense)["all"]
    args.out.write_text(json.dumps(out), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
