#!/usr/bin/env python3
"""LLM budget benchmark (issue 16): what memoryd sends to the model, and what a backend adds.

1. Extraction input tokens per turn: the real Claude Code transcripts in
   ../shared/fixtures/claude-transcripts are replayed turn by turn into a daemon whose model is
   a scripted Messages API on 127.0.0.1; every request it receives (system prompt, messages,
   the structured-output tool) is measured. Target: <= 3k input tokens per turn on average.
2. Recall manifest bytes at store sizes 10 .. 2,000 (descriptions of the maximum 500 chars).
   Target: <= 4 KB at any size.
3. Latency each backend adds around the model (the scripted model answers at once):
   the anthropic SDK / messages-api path, and the real `claude` CLI when it is cached.

    .venv/bin/python bench/llm_budget_bench.py [--fixtures DIR] [--sizes 10,50,200,2000] [--calls 5]

Tokens are estimated with memoryd's one estimate (4 chars a token). Results: bench/results/llm_budget.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from memoryd.base import limits  # noqa: E402
from memoryd.base.clock import SYSTEM_CLOCK  # noqa: E402
from memoryd.base.metrics import Metrics  # noqa: E402
from memoryd.base.state_db import StateDB  # noqa: E402
from memoryd.config_sources import load_settings  # noqa: E402
from memoryd.llm import LLMClient, UsageMeter  # noqa: E402
from memoryd.llm.claude_cli import ClaudeCLIBackend  # noqa: E402
from memoryd.llm.schemas import RecallSelection  # noqa: E402
from memoryd.server import build_app  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from memoryd.transcripts.parser import estimate_tokens  # noqa: E402
from tests.support.messages_api import Reply, ScriptedMessagesAPI  # noqa: E402
from tests.support.servers import ThreadedServer  # noqa: E402

# ../shared next to the main checkout, or next to the worktrees folder
FIXTURES = next(
    (
        p / "shared" / "fixtures" / "claude-transcripts"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared").is_dir()
    ),
    ROOT.parent / "shared" / "fixtures" / "claude-transcripts",
)
CLAUDE = (
    Path(os.environ.get("MEMORYD_TEST_CACHE", Path.home() / ".cache" / "memoryd-tests"))
    / "claude-code-2.1.330"
    / "node_modules"
    / ".bin"
    / "claude"
)


def request_tokens(body: dict[str, Any]) -> int:
    """Everything the model reads: system, messages and tool definitions."""
    system = body.get("system")
    text = system if isinstance(system, str) else json.dumps(system or "")
    text += json.dumps(body.get("messages", []), ensure_ascii=False) + json.dumps(
        body.get("tools", []), ensure_ascii=False
    )
    return estimate_tokens(text)


def is_prompt(line: dict[str, Any]) -> bool:
    if line.get("type") != "user" or line.get("isMeta"):
        return False
    content = (line.get("message") or {}).get("content")
    return isinstance(content, str) or any(isinstance(b, dict) and b.get("type") == "text" for b in content or [])


def wait_job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise TimeoutError(job_id)


def extraction_budget(fixtures: Path, tmp: Path) -> dict[str, Any]:
    per_turn: list[int] = []
    per_file: dict[str, dict[str, Any]] = {}
    with ScriptedMessagesAPI() as api:
        api.default = Reply(tool_input={"memories": []})
        home, roots, project = tmp / "home", tmp / "transcripts", tmp / "project"
        (project / ".git").mkdir(parents=True)
        home.mkdir()
        settings = load_settings(
            {"MEMORYD_HOME": str(home), "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": api.url}, home=home
        )
        settings.memory.memory_base = ""  # benches never write into the real ~/.claude
        settings.transcripts.roots = [str(roots)]
        settings.session_memory.enabled = False
        daemon = Daemon(settings)
        with (
            ThreadedServer(build_app(daemon)) as server,
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=30) as c,
        ):
            for path in sorted(fixtures.glob("*.jsonl")):
                lines = [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines() if raw.strip()]
                sid = str(uuid.uuid4())
                target = roots / "bench" / f"{sid}.jsonl"
                target.parent.mkdir(parents=True, exist_ok=True)
                starts = [i for i, line in enumerate(lines) if is_prompt(line)] + [len(lines)]
                tokens: list[int] = []
                for begin, end in zip(starts, starts[1:]):
                    with target.open("a", encoding="utf-8") as out:
                        for line in lines[:end] if begin == starts[0] else lines[begin:end]:
                            out.write(json.dumps(line) + "\n")
                    before = len(api.requests)
                    r = c.post(
                        "/v1/events/turn-end",
                        json={"session_id": sid, "transcript_path": str(target), "cwd": str(project)},
                    )
                    wait_job(c, r.json()["job_id"])
                    tokens += [request_tokens(b) for b in api.requests[before:]]
                per_turn += tokens
                per_file[path.name] = {
                    "turns": len(starts) - 1,
                    "calls": len(tokens),
                    "mean_input_tokens": round(statistics.mean(tokens)) if tokens else 0,
                    "max_input_tokens": max(tokens, default=0),
                }
        daemon.stop() if hasattr(daemon, "stop") else None
    return {
        "calls": len(per_turn),
        "mean_input_tokens": round(statistics.mean(per_turn)) if per_turn else 0,
        "max_input_tokens": max(per_turn, default=0),
        "target_mean": 3000,
        "by_file": per_file,
    }


def manifest_budget(sizes: list[int], tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with ScriptedMessagesAPI() as api:
        api.default = Reply(tool_input={"selected_memories": []})
        for size in sizes:
            home, project = tmp / f"m{size}", tmp / f"p{size}"
            (project / ".git").mkdir(parents=True)
            settings = load_settings(
                {"MEMORYD_HOME": str(home), "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": api.url}, home=home
            )
            settings.memory.memory_base = ""  # benches never write into the real ~/.claude
            settings.recall.deadline_seconds = 30
            daemon = Daemon(settings)
            store = daemon.stores.for_cwd(str(project))
            for i in range(size):
                desc = (
                    f"Memory {i}: deploys of service {i} go through pipeline {i % 7} "
                    + "and more words of a long description " * 20
                )
                store.save(
                    name=f"Memory {i}",
                    description=desc[: limits.MEMORY_DESCRIPTION_MAX_CHARS],
                    type="project",
                    body=f"body {i}",
                )
            before = len(api.requests)
            daemon.recall.recall(str(project), "how do deploys of service 3 work?", "bench")
            body = api.requests[before]
            shown = body["messages"][0]["content"].split("Available memories:\n", 1)[1]
            out[str(size)] = {
                "manifest_bytes": len(shown.encode()),
                "lines": len(shown.splitlines()),
                "request_tokens": request_tokens(body),
            }
            daemon.recall.close()
    return {"target_bytes": limits.RECALL_MANIFEST_MAX_BYTES, "by_store_size": out}


def latency(calls: int, tmp: Path) -> dict[str, Any]:
    """Wall time of one structured recall-shaped call per backend, the model answering at once."""
    out: dict[str, Any] = {}
    with ScriptedMessagesAPI() as api:
        api.default = Reply(tool_input={"selected_memories": ["a.md"]})
        meter = UsageMeter(StateDB(tmp / "lat.db"), Metrics(), daily_cap=0, now=SYSTEM_CLOCK.now)
        clients = {
            "anthropic / messages-api (SDK)": LLMClient(api_key="bench", base_url=api.url, model="m", meter=meter)
        }
        if CLAUDE.exists():
            user = tmp / "cli-user"
            (user / ".claude").mkdir(parents=True)
            (user / ".claude" / "settings.json").write_text(json.dumps({"apiKeyHelper": "echo sk-ant-bench"}))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "MEMORYD_"))}
            env.update(HOME=str(user), ANTHROPIC_BASE_URL=api.url)
            cli = ClaudeCLIBackend(binary=str(CLAUDE), model="haiku", workdir=tmp / "cli-cwd", max_queue=1, env=env)
            clients["claude-cli (real CLI 2.1.330)"] = LLMClient(backend=cli, meter=meter)
        for name, client in clients.items():
            times = []
            for _ in range(calls):
                t = time.perf_counter()
                client.complete(purpose="recall", system="pick", user="q", schema=RecallSelection, timeout=60)
                times.append(time.perf_counter() - t)
            out[name] = {"median_s": round(statistics.median(times), 3), "max_s": round(max(times), 3), "calls": calls}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--sizes", default="10,50,200,2000")
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        results = {
            "extraction": extraction_budget(args.fixtures, tmp / "x")
            if args.fixtures.is_dir()
            else {"skipped": f"no {args.fixtures}"},
            "recall_manifest": manifest_budget([int(s) for s in args.sizes.split(",")], tmp / "r"),
            "latency": latency(args.calls, tmp / "l"),
        }
    print(json.dumps(results, indent=2))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "llm_budget.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
