"""The offline-quality dev sets (tests/data/offline_quality) and how they are scored: shared by
tests/test_offline_quality.py (thresholds) and bench/offline_quality.py (figures)."""

from __future__ import annotations

import json
import random
import re
import string
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from memoryd.extract.offline import extract_explicit
from memoryd.store.secrets import find_secrets
from memoryd.store.similarity import near_duplicate, supersedes

DATA = Path(__file__).resolve().parents[1] / "data" / "offline_quality"


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def score_extraction() -> dict[str, Any]:
    """Precision and recall of the offline extractor over labelled prompts (a memory counts as
    right when it holds the expected phrase; extra memories are false positives)."""
    tp = fp = expected = 0
    misses: list[str] = []
    wrong: list[str] = []
    for item in load("extraction.jsonl"):
        found = [c.description for c in extract_explicit([(item["text"], None)])]
        expected += item["memories"]
        hits = 0
        for phrase in item["contains"]:
            if any(phrase.lower() in d.lower() for d in found):
                hits += 1
            else:
                misses.append(f"{phrase!r} from {item['text']!r}")
        tp += hits
        extra = max(0, len(found) - item["memories"])
        fp += extra
        if extra:
            wrong.append(f"{item['text']!r} -> {found}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    return {"sentences": sum(max(1, i["memories"]) for i in load("extraction.jsonl")),
            "positive": expected, "negative": sum(1 for i in load("extraction.jsonl") if not i["memories"]),
            "precision": round(precision, 4), "recall": round(tp / expected, 4), "misses": misses, "false_positives": wrong}


def _memory(text: str) -> SimpleNamespace:
    return SimpleNamespace(name=text, description=text, type="feedback", body=text)


def judge_pair(older: str, newer: str) -> str:
    """'supersedes', 'duplicate' or 'distinct': what the dream does with the two memories."""
    a, b = _memory(older), _memory(newer)
    return "supersedes" if supersedes(b, a) else "duplicate" if near_duplicate(b, a) else "distinct"


def score_similarity() -> dict[str, Any]:
    pairs = load("similarity_pairs.jsonl")
    wrong = [f"{p['label']} judged {judge_pair(p['older'], p['newer'])}: {p['older']!r} / {p['newer']!r}"
             for p in pairs if judge_pair(p["older"], p["newer"]) != p["label"]]
    labels = {label: sum(1 for p in pairs if p["label"] == label) for label in ("duplicate", "distinct", "supersedes")}
    return {"pairs": len(pairs), **labels, "accuracy": round(1 - len(wrong) / len(pairs), 4), "wrong": wrong}
