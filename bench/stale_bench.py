#!/usr/bin/env python3
"""Stale-memory benchmark, through a real daemon's GET /v1/stale:

- the labelled dev set (tests/fixtures/stale: a small repo, memories marked stale or fresh):
  precision and recall of the flags (targets: precision >= 0.9, recall >= 0.8);
- a TypeScript shop as a person's machine has it (an untracked lockfile, a git-ignored `.env.local`,
  dev dependencies installed in node_modules/.bin, files removed by a later commit) with memories
  written as a person would: false "possibly stale" must be 0, and what it really lost is counted;
- with `--mirrors DIR` (git mirrors as DIR/<owner>+<name>/repo), the coding dev set's memories
  (bench/coding/data, dev split) against their repository checked out at the commit their rules were
  read at, where every memory is true: every flag there is a false one.

Prints each set's figures, every false flag and every miss; writes bench/results/stale_bench.json.
Exits 1 when a target is missed.

    .venv/bin/python bench/stale_bench.py [--mirrors /work/.mirror [--held-out]]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.config_sources import load_settings  # noqa: E402
from memoryd.server import build_app  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from tests.support.servers import ThreadedServer  # noqa: E402
from tests.support.stale_fixture import (  # noqa: E402
    labelled_memories,
    make_repo,
    make_ts_shop,
    ts_shop_memories,
)

RESULTS = ROOT / "bench" / "results" / "stale_bench.json"
CODING = ROOT / "bench" / "coding" / "data"
PRECISION_TARGET, RECALL_TARGET = 0.9, 0.8
# Where the rule file named a path the tree had had and no longer had at that commit (git log of the
# commit's own history): stale from the start, so flagging it is a true detection. (Three rule files also
# name paths no commit had: memos' lib/connect.ts, strands' multiagent/nodes/, spec-kit's output paths;
# those the project cannot be said to "no longer have", and they count as fresh.)
RULE_FILE_STALE = {
    "pipecat-ai/pipecat": {"project_rtvi.md"},  # rtvi.py became the package rtvi/ in 158424aa2, before the rules
}


def run_set(client: httpx.Client, repo: Path, memories: list[dict[str, Any]]) -> dict[str, Any]:
    """Save the memories into the repo's project, ask for the stale report, score it against the labels."""
    labels: dict[str, bool] = {}
    for m in memories:
        r = client.post(
            "/v1/memories",
            json={
                "cwd": str(repo),
                "name": m["name"],
                "description": m["description"],
                "type": m["type"],
                "body": m["body"],
            },
        )
        r.raise_for_status()
        labels[r.json()["filename"]] = m["stale"]
    started = time.perf_counter()
    report = client.get("/v1/stale", params={"cwd": str(repo)}).json()
    cold_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    client.get("/v1/stale", params={"cwd": str(repo)}).raise_for_status()
    warm_ms = (time.perf_counter() - started) * 1000
    flagged = {m["filename"]: m["reasons"] for m in report["memories"]}
    stale = sum(labels.values())
    detected = sum(1 for f in flagged if labels[f])
    return {
        "memories": len(labels),
        "stale": stale,
        "flagged": len(flagged),
        "true_stale_detected": detected,
        "false_stale": {f: flagged[f] for f in flagged if not labels[f]},
        "missed": [f for f, s in labels.items() if s and f not in flagged],
        "precision": detected / len(flagged) if flagged else 1.0,
        "recall": detected / stale if stale else 1.0,
        "cold_ms": cold_ms,
        "warm_ms": warm_ms,
    }


def checkout(mirror: Path, commit: str, dest: Path) -> Path:
    """The repository at `commit` with only that commit's history (as its authors had it then), a clone
    sharing the mirror's objects: no remote branches or tags from later."""
    for args in (
        ["clone", "-q", "--shared", "--no-checkout", "--no-tags", str(mirror), str(dest)],
        ["-C", str(dest), "checkout", "-q", "-B", "rules", commit],
        ["-C", str(dest), "remote", "remove", "origin"],
    ):
        subprocess.run(["git", *args], check=True, capture_output=True, timeout=600)
    heads = subprocess.run(
        ["git", "-C", str(dest), "for-each-ref", "--format=%(refname)", "refs/heads"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for ref in heads:
        if ref != "refs/heads/rules":
            subprocess.run(["git", "-C", str(dest), "update-ref", "-d", ref], check=True, capture_output=True)
    return dest


def coding_sets(mirrors: Path, split: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(repo, commit, memories labelled fresh) for each repository of the split whose mirror is here."""
    sets = []
    for path in sorted(CODING.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        mirror = mirrors / data["repo"].replace("/", "+") / "repo"
        if data["split"] != split or not mirror.is_dir():
            continue
        stale = RULE_FILE_STALE.get(data["repo"], set())
        memories = [{**m, "stale": m["filename"] in stale} for m in data["memories"]]
        sets.append((data["repo"], data["rule_files"][0]["commit"], memories))
    return sets


def print_set(name: str, result: dict[str, Any]) -> None:
    print(
        f"{name}: {result['memories']} memories ({result['stale']} stale)  flagged {result['flagged']}  "
        f"true stale detected {result['true_stale_detected']}/{result['stale']}  "
        f"false stale {len(result['false_stale'])}  ({result['cold_ms']:.0f} ms cold, {result['warm_ms']:.0f} ms warm)"
    )
    for f, reasons in result["false_stale"].items():
        print(f"  false stale: {f}: {'; '.join(reasons)}")
    for f in result["missed"]:
        print(f"  missed: {f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--mirrors", type=Path, help="git mirrors of the coding set's repositories (<owner>+<name>/repo)"
    )
    parser.add_argument(
        "--held-out", action="store_true", help="the coding set's test repositories too (scored, never tuned on)"
    )
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        settings = load_settings({"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off"}, home=home)
        settings.transcripts.roots = [str(home / "transcripts")]
        settings.dream.enabled = False
        daemon = Daemon(settings)
        with (
            ThreadedServer(build_app(daemon)) as server,
            httpx.Client(
                base_url=server.url, headers={"Authorization": f"Bearer {daemon.token}"}, timeout=300
            ) as client,
        ):
            results["dev set"] = run_set(client, make_repo(Path(tmp) / "shop"), labelled_memories())
            (Path(tmp) / "acme").mkdir()
            results["TypeScript shop"] = run_set(client, make_ts_shop(Path(tmp) / "acme"), ts_shop_memories())
            splits = ["dev", "test"] if args.held_out else ["dev"]
            for repo, commit, memories in (
                [s for split in splits for s in coding_sets(args.mirrors, split)] if args.mirrors else []
            ):
                dest = checkout(
                    args.mirrors / repo.replace("/", "+") / "repo", commit, Path(tmp) / repo.replace("/", "+")
                )
                results[f"{repo}@{commit[:10]}"] = run_set(client, dest, memories)
    for name, result in results.items():
        print_set(name, result)
    dev = results["dev set"]
    false_stale = sum(len(r["false_stale"]) for n, r in results.items() if n != "dev set")
    print(
        f"dev set: precision {dev['precision']:.3f} (target {PRECISION_TARGET})  recall {dev['recall']:.3f} (target {RECALL_TARGET})"
    )
    print(f"false stale outside the dev set: {false_stale} (target 0)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2))
    ok = dev["precision"] >= PRECISION_TARGET and dev["recall"] >= RECALL_TARGET and false_stale == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
