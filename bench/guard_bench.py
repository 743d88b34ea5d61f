"""The guard bench (issue 50): real projects' rules as memories, their violating and compliant acts as PreToolUse
calls to a real daemon over loopback, scored for two sets of forbid triggers: the ones `memoryd save` PROPOSES
from the rule's prose (the save answer's `forbid`), and the hand-written ones. Method and sources:
bench/guard/README.md. Latency of the hook as a whole process: bench/hook_bench.py.

Run: .venv/bin/python bench/guard_bench.py [--held-out | --fresh | --fresh2 | --fresh3 | --fresh4 | --fresh5] [--json]
(dev projects by default; --held-out, --fresh, --fresh2, --fresh3, --fresh4 and --fresh5 score the projects kept aside,
each once). Targets: violations held >= 0.90, compliant acts held = 0, every reason names its memory.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "guard" / "projects.json"
HELD_TARGET = 0.90
# Each set by its projects' (held_out, fresh_held_out, fresh2_held_out, fresh3_held_out, fresh4_held_out,
# fresh5_held_out) flags: a project belongs to exactly one set.
SETS = {
    "dev": (False, False, False, False, False, False),
    "held-out": (True, False, False, False, False, False),
    "fresh held-out": (True, True, False, False, False, False),
    "fresh2 held-out": (True, False, True, False, False, False),
    "fresh3 held-out": (True, False, False, True, False, False),
    "fresh4 held-out": (True, False, False, False, True, False),
    "fresh5 held-out": (True, False, False, False, False, True),
}
SET_FLAGS = ("held_out", "fresh_held_out", "fresh2_held_out", "fresh3_held_out", "fresh4_held_out", "fresh5_held_out")
# The command-line option (argparse's attribute) that picks each held-out set; none picks dev.
SET_OPTIONS = {
    "held_out": "held-out",
    "fresh": "fresh held-out",
    "fresh2": "fresh2 held-out",
    "fresh3": "fresh3 held-out",
    "fresh4": "fresh4 held-out",
    "fresh5": "fresh5 held-out",
}


def lay_out(project: Path, spec: dict[str, Any]) -> None:
    """The project's files as the acts find them (a Write over an existing file is a change, a new one is not)."""
    (project / ".git").mkdir(parents=True)
    texts = spec.get("file_texts", {})
    for rel in spec["files"]:
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts.get(rel, "x\n"))


def payload(project: Path, act: dict[str, Any]) -> dict[str, Any]:
    data = dict(act["input"])
    if "file_path" in data:
        data["file_path"] = str(project / data["file_path"])
    return {
        "hook_event_name": "PreToolUse",
        "session_id": str(uuid.uuid4()),
        "cwd": str(project),
        "tool_name": act["tool"],
        "tool_input": data,
        "tool_use_id": "toolu_bench",
    }


def score(spec: dict[str, Any], which: str, client: Any, base: Path) -> dict[str, Any]:
    """One project under one set of triggers: each act's decision, and what each memory's save answered."""
    project = base / spec["id"] / which
    lay_out(project, spec)
    paths, saved = {}, []
    for m in spec["memories"]:
        body = {"cwd": str(project), "name": m["name"], "type": m["type"], "description": m["description"]}
        body["body"] = m["body"]
        if which == "hand":
            body["forbid"] = m["hand"]
        r = client.post("/v1/memories", json=body)
        r.raise_for_status()
        answer = r.json()
        paths[m["key"]] = answer["path"]
        saved.append(
            {"key": m["key"], "forbid": answer["forbid"], "will_stop": answer["will_stop"], "review": m["review"]}
        )
    rows = []
    for act in spec["acts"]:
        started = time.perf_counter()
        r = client.post("/v1/hooks/claude-code", json=payload(project, act))
        took = (time.perf_counter() - started) * 1000
        out = r.json().get("hookSpecificOutput") or {}
        held = out.get("permissionDecision") in ("deny", "ask")
        reason = out.get("permissionDecisionReason", "")
        names = held and act["violates"] is not None and paths[act["violates"]] in reason
        rows.append({"act": act, "held": held, "names_memory": bool(names), "daemon_ms": round(took, 2)})
    return {"project": spec["id"], "repo": spec["repo"], "saved": saved, "rows": rows}


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for res in results for r in res["rows"]]
    bad = [r for r in rows if r["act"]["violates"]]
    good = [r for r in rows if not r["act"]["violates"]]
    held = [r for r in bad if r["held"]]
    return {
        "violations": len(bad),
        "violations_held": len(held),
        "held_rate": round(len(held) / len(bad), 3) if bad else 0.0,
        "compliant": len(good),
        "compliant_held": sum(r["held"] for r in good),
        "reasons_naming_memory": f"{sum(r['names_memory'] for r in held)}/{len(held)}",
        "missed": [f"{r['act']['tool']}: {json.dumps(r['act']['input'])[:90]}" for r in bad if not r["held"]],
        "wrongly_held": [f"{r['act']['tool']}: {json.dumps(r['act']['input'])[:90]}" for r in good if r["held"]],
        "daemon_ms_p50": sorted(r["daemon_ms"] for r in rows)[len(rows) // 2] if rows else 0.0,
    }


def select(projects: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The projects of one set (SETS), so a held-out project is never scored with the dev set or another held-out one."""
    return [p for p in projects if tuple(p[flag] for flag in SET_FLAGS) == SETS[name]]


def print_proposals() -> None:
    """What `memoryd save` proposes for every memory of bench/moments and bench/coding (judged in the README)."""
    from memoryd.guard.propose import propose

    files = sorted(ROOT.glob("bench/moments/*.json")) + sorted(ROOT.glob("bench/coding/data/*.json"))
    count = 0
    for f in files:
        for m in json.loads(f.read_text()).get("memories") or []:
            count += 1
            proposal = propose(m["name"], m["description"], m["body"])
            if proposal:
                print(f"{f.stem}: {m['name']} -> {proposal.summary()}")
    print(f"{count} memories read")


def main() -> None:
    parser = argparse.ArgumentParser()
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--held-out", action="store_true", help="score the projects kept aside (run it once)")
    which.add_argument(
        "--fresh", action="store_true", help="score the fresh held-out projects (issue 50 round 2, once)"
    )
    which.add_argument(
        "--fresh2", action="store_true", help="score the second fresh held-out projects (issue 50, once)"
    )
    which.add_argument(
        "--fresh3",
        action="store_true",
        help="score the third fresh held-out projects (issue 50; scored once, now dev data)",
    )
    which.add_argument(
        "--fresh4",
        action="store_true",
        help="score the fourth fresh held-out projects (issue 50; scored once, now dev data)",
    )
    which.add_argument(
        "--fresh5",
        action="store_true",
        help="score the fifth fresh held-out projects (issue 50; scored once, now dev data)",
    )
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument("--proposals", action="store_true", help="print what save proposes for the moments/coding sets")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.proposals:
        print_proposals()
        return
    from tests.support.servers import DaemonProcess, daemon_env

    name = next((SET_OPTIONS[opt] for opt in SET_OPTIONS if getattr(args, opt)), "dev")
    specs = select(json.loads(DATA.read_text())["projects"], name)
    out: dict[str, Any] = {"set": name, "projects": [s["id"] for s in specs]}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        home = base / "home"
        daemon = DaemonProcess(home=home, env=daemon_env(home, MEMORYD_LLM="off", HOME=str(base))).start()
        try:
            with daemon.client() as client:
                for which in ("proposed", "hand"):
                    results = [score(spec, which, client, base) for spec in specs]
                    out[which] = {"summary": summary(results), "projects": results}
        finally:
            daemon.kill()
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{out['set']} set: {', '.join(out['projects'])}")
    for which in ("proposed", "hand"):
        s = out[which]["summary"]
        ok = s["held_rate"] >= HELD_TARGET and s["compliant_held"] == 0
        print(
            f"{which:>8}: violations held {s['violations_held']}/{s['violations']} = {s['held_rate']:.3f}; "
            f"compliant held {s['compliant_held']}/{s['compliant']}; reasons naming the memory "
            f"{s['reasons_naming_memory']}; daemon p50 {s['daemon_ms_p50']} ms; target {'met' if ok else 'NOT met'}"
        )
        for m in s["missed"]:
            print(f"          missed: {m}")
        for m in s["wrongly_held"]:
            print(f"          wrongly held: {m}")
    print("proposed triggers (the save's answer), with the person's review:")
    for res in out["proposed"]["projects"]:
        for saved in res["saved"]:
            print(f"  {res['project']}/{saved['key']}: {saved['will_stop'] or '(none)'}  [review: {saved['review']}]")


if __name__ == "__main__":
    main()
