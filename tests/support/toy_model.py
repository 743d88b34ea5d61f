"""A two-dimensional stand-in embedding model for recall's tests: every memory where the test puts it (by default
[1, 0]), every prompt at the vector the test's function gives, fused as a real model's cosines are."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from memoryd.recall.dense import Backend

ONE = np.array([1.0, 0.0], dtype=np.float32)  # the memories' vector unless a test says otherwise


def toy_backend(
    passages: Callable[[list[str]], Any] | None = None,
    query: Callable[[str], Any] | None = None,
    *,
    close_similarity: float = 0.0,
) -> Backend:
    """The stand-in model: `passages` embeds memories (default: each at [1, 0]), `query` a prompt (default: [1, 0])."""
    return Backend(
        "toy",
        "toy 1",
        passages or (lambda texts: np.stack([ONE for _ in texts])),
        query or (lambda text: ONE),
        fusion_weight=2.0,
        min_similarity=0.8,
        close_similarity=close_similarity,
    )
