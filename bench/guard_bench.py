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
# The held-out sets, by the option that scores each: (its name, the project flag that marks it, what --help says). A
# project flagged `held_out` and at most one other flag is in that set, one with no flag is dev, any other in none.
HELD_OUT_SETS = {
    "held-out": ("held-out", "held_out", "the projects kept aside (run it once)"),
    "fresh": ("fresh held-out", "fresh_held_out", "the fresh held-out projects (issue 50 round 2, once)"),
    "fresh2": ("fresh2 held-out", "fresh2_held_out", "the second fresh held-out projects (issue 50, once)"),
    "fresh3": ("fresh3 held-out", "fresh3_held_out", "the third fresh held-out projects (scored once, now dev data)"),
    "fresh4": ("fresh4 held-out", "fresh4_held_out", "the fourth fresh held-out projects (scored once, now dev data)"),
    "fresh5": ("fresh5 held-out", "fresh5_held_out", "the fifth fresh held-out projects (scored once, now dev data)"),
}
SET_NAMES = ("dev", *(name for name, _, _ in HELD_OUT_SETS.values()))


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


def set_of(project: dict[str, Any]) -> str | None:
    """The one set a project belongs to (None: its flags name no set)."""
    fresh = [name for name, flag, _ in HELD_OUT_SETS.values() if flag != "held_out" and project[flag]]
    if not project["held_out"]:
        return None if fresh else "dev"
    return "held-out" if not fresh else fresh[0] if len(fresh) == 1 else None


def select(projects: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The projects of one set, so a held-out project is never scored with the dev set or another held-out one."""
    return [p for p in projects if set_of(p) == name]


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
    for option, (_, _, what) in HELD_OUT_SETS.items():
        which.add_argument(f"--{option}", action="store_true", help=f"score {what}")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    parser.add_argument("--proposals", action="store_true", help="print what save proposes for the moments/coding sets")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.proposals:
        print_proposals()
        return
    from tests.support.servers import DaemonProcess, daemon_env

    name = next((name for opt, (name, _, _) in HELD_OUT_SETS.items() if getattr(args, opt.replace("-", "_"))), "dev")
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
