"""Offline-quality benchmark: the dev sets in tests/data/offline_quality scored the way the tests
score them, plus the secret check's cost per KB (it runs on every save and on all text sent to a
model). Targets: secrets 100% refused with 0 false positives; extraction precision ≥ 0.95 and
recall ≥ 0.90 (by kind, decisions included) with no false positive on questions, hypotheticals,
quotes or code comments; how the memories read: names cut or missing meaning words, bodies saying a
sentence twice, descriptions opening with a request phrase, case changed in code or acronyms,
conversational filler kept ("I told you before") (all 0); every labelled similarity pair judged
right. Prints the figures and writes bench/results/offline_quality.json.

Run: .venv/bin/python bench/offline_quality.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memoryd.base.secrets import find_secrets, redact_secrets  # noqa: E402
from tests.support.offline_quality import score_extraction, score_secrets, score_similarity, score_text, secret_cases  # noqa: E402

ROUNDS = 30


def _per_kb_us(text: str, fn: object) -> float:
    """Fastest microseconds per KB of `fn(text)` over ROUNDS runs (the best estimate on a shared machine)."""
    assert callable(fn)
    fn(text)  # warm: the detect-secrets import and regex compilation are paid once per process
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - start)
    return round(min(times) * 1e6 / (len(text.encode()) / 1024), 1)


def secret_speed() -> dict[str, float]:
    prose = (ROOT / "README.md").read_text(encoding="utf-8")[: 64 * 1024]  # a realistic mix of prose, code and URLs
    mixed = "\n".join(c.text for c in secret_cases())
    start = time.perf_counter()
    find_secrets("first call")
    return {
        "first_call_ms": round((time.perf_counter() - start) * 1000, 1),
        "prose_us_per_kb": _per_kb_us(prose, find_secrets),
        "prose_kb": round(len(prose.encode()) / 1024, 1),
        "dev_set_us_per_kb": _per_kb_us(mixed, find_secrets),
        "redact_prose_us_per_kb": _per_kb_us(prose, redact_secrets),
    }


def main() -> None:
    speed = secret_speed()
    secrets, extraction, similarity = score_secrets(), score_extraction(), score_similarity()
    print(
        f"secrets: {secrets['refused']}/{secrets['secrets']} refused ({secrets['refused_rate']:.0%}) across {secrets['kinds']} kinds; "
        f"{secrets['false_positive_count']}/{secrets['lookalikes']} look-alikes refused; refusals echoing a value: {len(secrets['echoed'])}"
    )
    for line in secrets["missed"] + secrets["false_positives"]:
        print("   ", line)
    print(
        f"secret check cost: {speed['prose_us_per_kb']} µs/KB on prose ({speed['prose_kb']} KB), {speed['dev_set_us_per_kb']} µs/KB on the dev set, "
        f"redaction {speed['redact_prose_us_per_kb']} µs/KB; first call {speed['first_call_ms']} ms (lazy detect-secrets import)"
    )
    print(
        f"extraction: precision {extraction['precision']:.3f}, recall {extraction['recall']:.3f} over {extraction['sentences']} sentences "
        f"({extraction['positive']} positive, {extraction['negative']} negative)"
    )
    for line in extraction["misses"] + extraction["false_positives"]:
        print("   ", line)
    for kind, k in extraction["by_kind"].items():
        print(f"    {kind:<11} precision {k['precision']:.3f}, recall {k['recall']:.3f} ({k['expected']} expected)")
    print(
        "    false positives by look-alike: "
        + ", ".join(
            f"{cat} {n['false_positives']}/{n['sentences']}"
            for cat, n in extraction["false_positives_by_category"].items()
        )
    )
    print(
        f"    reasons kept in **Why:** {extraction['reasons_kept']}/{extraction['reasons']}; wrong kind {extraction['kind_wrong']}"
    )
    text = score_text()
    print(
        f"memory text over {text['memories']} memories: names cut or missing meaning words {text['names_cut_or_lost_words']}, "
        f"bodies with a repeated sentence {text['bodies_with_repeated_sentence']}, descriptions starting with a request phrase "
        f"{text['descriptions_with_request_phrase']}, case changes in code or acronyms {text['case_changes']}, "
        f"conversational filler kept {text['filler_kept']}"
    )
    for line in text["names"] + text["bodies"] + text["requests"] + text["cases"] + text["fillers"]:
        print("   ", line)
    print(
        f"similarity: {similarity['accuracy']:.0%} of {similarity['pairs']} pairs right ({similarity['duplicate']} duplicates, "
        f"{similarity['distinct']} distinct incl. hard negatives, {similarity['supersedes']} contradictions)"
    )
    for line in similarity["wrong"]:
        print("   ", line)
    out = ROOT / "bench" / "results" / "offline_quality.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "secrets": secrets,
                "secret_speed": speed,
                "extraction": extraction,
                "memory_text": text,
                "similarity": similarity,
            },
            indent=2,
        )
    )
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
