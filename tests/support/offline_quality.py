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


_FILL = re.compile(r"\{([AaUhHdbul]):(\d+)\}")
_ALPHABETS = {
    "A": string.ascii_letters + string.digits, "a": string.ascii_lowercase + string.digits, "U": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef", "H": "0123456789ABCDEF", "d": string.digits, "l": string.ascii_lowercase,
    "b": string.ascii_letters + string.digits + "+/", "u": string.ascii_letters + string.digits + "-_",
}


@dataclass(frozen=True)
class SecretCase:
    secret: bool
    kind: str
    field: str
    text: str
    random_parts: tuple[str, ...]  # the generated values: a refusal must not echo any of them


def secret_cases() -> list[SecretCase]:
    """The secrets dev set with its random parts filled in (seeded, so every run sees the same text;
    the repo holds templates, never a live-looking credential)."""
    cases = []
    for i, item in enumerate(load("secrets.jsonl")):
        rng = random.Random(f"memoryd-secrets-{i}")
        parts: list[str] = []

        def fill(m: re.Match[str]) -> str:
            value = "".join(rng.choice(_ALPHABETS[m.group(1)]) for _ in range(int(m.group(2))))
            parts.append(value)
            return value

        text = _FILL.sub(fill, item["template"])
        cases.append(SecretCase(item["secret"], item["kind"], item["field"], text, tuple(p for p in parts if len(p) >= 8)))
    return cases


def score_secrets() -> dict[str, Any]:
    """Secrets refused (by kind) and look-alikes wrongly refused, plus whether any refusal echoed a value."""
    from memoryd.errors import SecretDetected
    from memoryd.store.secrets import check_no_secrets

    cases = secret_cases()
    secrets = [c for c in cases if c.secret]
    lookalikes = [c for c in cases if not c.secret]
    missed = [f"{c.kind}: {c.text[:60]!r}" for c in secrets if not find_secrets(c.text, field=c.field)]
    false_positives = [f"{c.kind}: {[f.kind for f in find_secrets(c.text)]} in {c.text[:70]!r}" for c in lookalikes if find_secrets(c.text)]
    echoed, unnamed = [], []
    for c in secrets:
        try:
            check_no_secrets({c.field: c.text})
        except SecretDetected as exc:
            if any(part in exc.message for part in c.random_parts):
                echoed.append(c.kind)
            if f"in {c.field} at line" not in exc.message:
                unnamed.append(c.kind)
    return {
        "secrets": len(secrets), "kinds": len({c.kind for c in secrets}), "lookalikes": len(lookalikes),
        "refused": len(secrets) - len(missed), "refused_rate": round((len(secrets) - len(missed)) / len(secrets), 4),
        "false_positive_count": len(false_positives), "missed": missed, "false_positives": false_positives,
        "echoed": echoed, "field_not_named": unnamed,
    }
