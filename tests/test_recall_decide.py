"""The prompt channel's abstention (recall/decide.py) through a real daemon, with a two-dimensional stand-in model whose
cosines are set per prompt (e5's are too close to the cut to pin in a test)."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from memoryd.recall import decide
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings
from tests.support.toy_model import toy_backend

MEMORIES = [
    (
        "PowerShell parameter naming",
        "Name PowerShell parameters in Pascal case with approved verbs, for readability of the code structure",
        "Cmdlet parameters use PascalCase; functions use approved Verb-Noun names.",
    ),
    ("Release tags", "Release tags are signed and pushed by the release workflow", "Never tag by hand."),
    ("Database migrations", "Migrations run through the migrate script, never by hand", "Use scripts/migrate."),
]
CLOSE, FAR = 0.90, 0.82  # cosines either side of the stand-in's close_similarity (0.85), both above min_similarity


def vec(cosine: float) -> np.ndarray:
    """A unit vector at this cosine to every memory's vector ([1, 0])."""
    return np.array([cosine, math.sqrt(1 - cosine * cosine)], dtype=np.float32)


def toy_daemon(home: Path, cosines: dict[str, float]) -> Daemon:
    """A daemon with the stand-in model: every memory at [1, 0], a prompt at the cosine its first listed word sets."""
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    daemon.recall.indexes.encoder.backend = toy_backend(
        query=lambda text: vec(next((c for w, c in cosines.items() if w in text), 0.0)), close_similarity=0.85
    )
    return daemon


def embedded(daemon: Daemon) -> None:
    daemon.recall.indexes.start_dense()
    daemon.recall.warm()
    deadline = time.monotonic() + 60
    while daemon.recall.indexes.dense_pending():
        assert time.monotonic() < deadline, "the embedding thread never caught up"
        time.sleep(0.02)


def test_a_close_match_on_generic_words_alone_must_also_be_confident(home: Path, project: Path) -> None:
    """Issue 49: a generic commit subject shares three words with a memory of any store ("code", "structure",
    "readability"); not close in meaning and hardly confident, it is no match. The same words close in meaning are."""
    prompt = "Refactor the code structure for improved readability: split the helpers into modules, rename them"
    daemon = toy_daemon(home, {"Refactor": FAR, "Rewrite": CLOSE})
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(
        name=MEMORIES[0][0], description=MEMORIES[0][1], type="project", body=MEMORIES[0][2]
    ).memory.filename
    for name, description, body in MEMORIES[1:]:
        store.save(name=name, description=description, type="project", body=body)
    embedded(daemon)
    far = daemon.recall.recall(str(project), prompt, "s1")
    why = {w.filename: w for w in far.why}
    assert far.memories == [], why
    assert len(why[fn].terms) >= decide.CLOSE_SURE_TERMS and why[fn].confidence < decide.CLOSE_WORDS_MIN
    close = daemon.recall.recall(str(project), prompt.replace("Refactor", "Rewrite"), "s2")
    assert [m.filename for m in close.memories] == [fn]
    daemon.recall.close()
    daemon.state.close()
