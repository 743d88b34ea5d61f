"""Word-overlap similarity: how extraction and the dream tell near-duplicate memories apart."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def jaccard(a: str, b: str) -> float:
    """|shared words| / |all words|; 0.0 when either side has none."""
    wa, wb = words(a), words(b)
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0
