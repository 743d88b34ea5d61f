#!/usr/bin/env python3
"""Print the per-repository table and the totals of bench/corpus/data/*.json.

python3 bench/corpus/stats.py            # Markdown table + totals
"""

import json
import sys
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def main() -> int:
    rows, tot = [], Counter()
    langs = Counter()
    for f in sorted(DATA.glob("*.json"), key=lambda p: p.name.lower()):
        d = json.loads(f.read_text())
        mems = d["memories"]
        scoped = [m for m in mems if m.get("scope") and not m.get("universal")]
        tasks = d["tasks"]
        rel_tasks = sum(1 for t in tasks if t["relevant"])
        pairs = sum(len(t["relevant"]) for t in tasks)
        kinds = Counter(m.get("scope_kind") or ("universal" if m.get("universal") else "none") for m in mems)
        rows.append(
            (
                d["repo"],
                d["language"],
                d["split"],
                len(d["rule_files"]),
                len(mems),
                sum(1 for m in mems if m.get("universal")),
                len(scoped),
                len(tasks),
                rel_tasks,
                pairs,
                len(d["commands"]),
            )
        )
        langs[d["language"]] += 1
        tot.update(
            repos=1,
            rule_files=len(d["rule_files"]),
            memories=len(mems),
            universal=sum(1 for m in mems if m.get("universal")),
            scoped=len(scoped),
            tasks=len(tasks),
            rel_tasks=rel_tasks,
            pairs=pairs,
            commands=len(d["commands"]),
            frozen=d["split"] == "frozen",
        )
        for k, v in kinds.items():
            tot["kind:" + k] += v
    print(
        "| repository | language | split | rule files | memories | universal | scoped | tasks | tasks w/ relevant | (rule, commit) pairs | commands |"
    )
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    print(
        f"| **total ({tot['repos']} repos)** | {len(langs)} languages | {tot['frozen']} frozen | "
        f"{tot['rule_files']} | {tot['memories']} | {tot['universal']} | {tot['scoped']} | {tot['tasks']} | "
        f"{tot['rel_tasks']} | {tot['pairs']} | {tot['commands']} |"
    )
    print()
    print("languages: " + ", ".join(f"{k} {v}" for k, v in sorted(langs.items(), key=lambda kv: (-kv[1], kv[0]))))
    print("memory scope kinds: " + ", ".join(f"{k[5:]} {v}" for k, v in sorted(tot.items()) if k.startswith("kind:")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
