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

from memoryd.base.secrets import find_secrets
from memoryd.base.similarity import near_duplicate, supersedes
from memoryd.extract.offline import extract_explicit

DATA = Path(__file__).resolve().parents[1] / "data" / "offline_quality"


def load(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def score_extraction() -> dict[str, Any]:
    """Precision and recall of the offline extractor over labelled prompts (a memory counts as
    right when it holds the expected phrase; extra memories are false positives), by kind, with
    the false positives by category of look-alike (question, hypothetical, quote, code, …)."""
    tp = fp = expected = 0
    misses: list[str] = []
    wrong: list[str] = []
    kinds: dict[str, dict[str, int]] = {}
    negatives: dict[str, dict[str, int]] = {}
    reasons = reasons_kept = kind_wrong = 0
    items = load("extraction.jsonl")
    for item in items:
        found = extract_explicit([(item["text"], None)])
        labelled = item.get("kind", "")
        expected += item["memories"]
        hits = 0
        for phrase in item["contains"]:
            if any(phrase.lower() in c.description.lower() for c in found):
                hits += 1
            else:
                misses.append(f"{phrase!r} from {item['text']!r}")
        tp += hits
        extra = max(0, len(found) - item["memories"])
        fp += extra
        if extra:
            wrong.append(f"{item['text']!r} -> {[c.description for c in found]}")
        if labelled:
            k = kinds.setdefault(labelled, {"expected": 0, "found": 0, "tp": 0, "fp": 0})
            k["expected"] += item["memories"]
            k["found"] += hits
            kind_wrong += sum(1 for c in found if c.kind != labelled)
        else:
            n = negatives.setdefault(item.get("category", "other"), {"sentences": 0, "false_positives": 0})
            n["sentences"] += 1
            n["false_positives"] += len(found)
        for i, c in enumerate(found):  # precision by the kind the extractor gave
            k = kinds.setdefault(c.kind, {"expected": 0, "found": 0, "tp": 0, "fp": 0})
            k["tp" if i < item["memories"] else "fp"] += 1
        if item.get("why"):
            reasons += 1
            reasons_kept += any(item["why"].lower() in c.body.split("**Why:**")[-1].lower() for c in found)
    by_kind = {
        kind: {
            "precision": round(k["tp"] / (k["tp"] + k["fp"]), 4) if k["tp"] + k["fp"] else 1.0,
            "recall": round(k["found"] / k["expected"], 4) if k["expected"] else 1.0,
            "expected": k["expected"],
        }
        for kind, k in sorted(kinds.items())
    }
    precision = tp / (tp + fp) if tp + fp else 1.0
    return {
        "sentences": sum(max(1, i["memories"]) for i in items),
        "positive": expected,
        "negative": sum(1 for i in items if not i["memories"]),
        "precision": round(precision, 4),
        "recall": round(tp / expected, 4),
        "by_kind": by_kind,
        "false_positives_by_category": negatives,
        "kind_wrong": kind_wrong,
        "reasons": reasons,
        "reasons_kept": reasons_kept,
        "misses": misses,
        "false_positives": wrong,
    }


# The words a title must not lose from between the words it keeps.
MEANING_WORDS = frozenset(
    "to on from in for with without not never no don't before after under over into by at of instead than until "
    "only except".split()
)
_TITLE_PREFIX = "User role: "


def title_faults(name: str, description: str) -> list[str]:
    """What is wrong with a title against the description it names: cut inside a word or a phrase,
    a meaning word dropped from between the words it keeps, more than TITLE_MAX_WORDS words."""
    from memoryd.extract.shape import _CODE, _DANGLING, _PHRASE_START, _TOKEN, TITLE_MAX_WORDS

    name = name[len(_TITLE_PREFIX) :] if name.startswith(_TITLE_PREFIX) else name
    if "`" in name:
        faults = ["keeps Markdown code marks"]
    else:  # a title is plain words: the description's code spans, marked again, count as one word each
        faults = []
        for span in _CODE.findall(description):
            name = name.replace(span.strip("`"), span, 1)
    words = _TOKEN.findall(name)
    source = _TOKEN.findall(description)
    norm = [w.strip(",;:.").lower() for w in source]
    if len(words) > TITLE_MAX_WORDS:
        faults.append("too long")
    at = -1
    for word in words:
        key = word.strip(",;:.").lower()
        nxt = next((i for i in range(at + 1, len(norm)) if norm[i] == key), None)
        if nxt is None:
            faults.append(f"{word!r} is not a whole word of the description")
            return faults
        lost = [source[i] for i in range(at + 1, nxt) if norm[i] in MEANING_WORDS] if at >= 0 else []
        if lost:
            faults.append(f"dropped {lost} before {word!r}")
        at = nxt
    if words and words[-1].strip(",;:").lower() in _DANGLING:
        faults.append(f"ends on {words[-1]!r}")
    if 0 <= at < len(norm) - 1 and not source[at].endswith((",", ";", ":")) and norm[at + 1] not in _PHRASE_START:
        faults.append(f"cut before {source[at + 1]!r}")
    return faults


# How a prompt was said, never what a memory keeps (#39 item 7).
FILLER = ("told you", "as i said", "like i said", "as i mentioned", "please remember", "how many times")


def score_text(items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """How the extracted memories read: names cut or missing meaning words, bodies saying a sentence
    twice, descriptions opening with a request phrase, case changed in code or acronyms."""
    import re as _re

    from memoryd.extract.shape import code_and_acronyms, repeated_sentences, starts_with_request

    names, bodies, requests, cases, fillers = [], [], [], [], []
    memories = 0
    for item in items if items is not None else load("extraction.jsonl"):
        for c in extract_explicit([(item["text"], None)]):
            memories += 1
            if faults := title_faults(c.name, c.description):
                names.append(f"{c.name!r}: {'; '.join(faults)}")
            if repeated := repeated_sentences(c.body):
                bodies.append(f"{c.name!r}: {repeated}")
            if starts_with_request(c.description) or starts_with_request(c.name):
                requests.append(f"{c.name!r}: {c.description!r}")
            written = f"{c.name}\n{c.description}\n{c.body}"
            changed = [t for t in code_and_acronyms(item["text"]) if t.lower() in written.lower() and t not in written]
            changed += [w for w in _re.findall(r"\b[a-z][A-Z]{2,}\w*", written) if w not in item["text"]]
            if changed:
                cases.append(f"{c.name!r}: {changed}")
            if said := [f for f in FILLER if f in written.lower()]:
                fillers.append(f"{c.name!r}: {said}")
    return {
        "memories": memories,
        "names_cut_or_lost_words": len(names),
        "bodies_with_repeated_sentence": len(bodies),
        "descriptions_with_request_phrase": len(requests),
        "case_changes": len(cases),
        "filler_kept": len(fillers),
        "names": names,
        "bodies": bodies,
        "requests": requests,
        "cases": cases,
        "fillers": fillers,
    }


def _memory(text: str) -> SimpleNamespace:
    return SimpleNamespace(name=text, description=text, type="feedback", body=text)


def judge_pair(older: str, newer: str) -> str:
    """'supersedes', 'duplicate' or 'distinct': what the dream does with the two memories."""
    a, b = _memory(older), _memory(newer)
    return "supersedes" if supersedes(b, a) else "duplicate" if near_duplicate(b, a) else "distinct"


def score_similarity() -> dict[str, Any]:
    pairs = load("similarity_pairs.jsonl")
    wrong = [
        f"{p['label']} judged {judge_pair(p['older'], p['newer'])}: {p['older']!r} / {p['newer']!r}"
        for p in pairs
        if judge_pair(p["older"], p["newer"]) != p["label"]
    ]
    labels = {label: sum(1 for p in pairs if p["label"] == label) for label in ("duplicate", "distinct", "supersedes")}
    return {"pairs": len(pairs), **labels, "accuracy": round(1 - len(wrong) / len(pairs), 4), "wrong": wrong}


_FILL = re.compile(r"\{([AaUhHdbul]):(\d+)\}")
_ALPHABETS = {
    "A": string.ascii_letters + string.digits,
    "a": string.ascii_lowercase + string.digits,
    "U": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "d": string.digits,
    "l": string.ascii_lowercase,
    "b": string.ascii_letters + string.digits + "+/",
    "u": string.ascii_letters + string.digits + "-_",
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

        def fill(m: re.Match[str], rng: random.Random = rng, parts: list[str] = parts) -> str:
            value = "".join(rng.choice(_ALPHABETS[m.group(1)]) for _ in range(int(m.group(2))))
            parts.append(value)
            return value

        text = _FILL.sub(fill, item["template"])
        cases.append(
            SecretCase(item["secret"], item["kind"], item["field"], text, tuple(p for p in parts if len(p) >= 8))
        )
    return cases


def score_secrets() -> dict[str, Any]:
    """Secrets refused (by kind) and look-alikes wrongly refused, plus whether any refusal echoed a value."""
    from memoryd.base.errors import SecretDetected
    from memoryd.base.secrets import check_no_secrets

    cases = secret_cases()
    secrets = [c for c in cases if c.secret]
    lookalikes = [c for c in cases if not c.secret]
    missed = [f"{c.kind}: {c.text[:60]!r}" for c in secrets if not find_secrets(c.text, field=c.field)]
    false_positives = [
        f"{c.kind}: {[f.kind for f in find_secrets(c.text)]} in {c.text[:70]!r}"
        for c in lookalikes
        if find_secrets(c.text)
    ]
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
        "secrets": len(secrets),
        "kinds": len({c.kind for c in secrets}),
        "lookalikes": len(lookalikes),
        "refused": len(secrets) - len(missed),
        "refused_rate": round((len(secrets) - len(missed)) / len(secrets), 4),
        "false_positive_count": len(false_positives),
        "missed": missed,
        "false_positives": false_positives,
        "echoed": echoed,
        "field_not_named": unnamed,
    }
