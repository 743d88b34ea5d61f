"""The local ranker on its own: stemming, every memory ranked, incremental updates, boosts."""

from __future__ import annotations

import random
import tracemalloc

import numpy as np
import pytest

from memoryd.base.text import date_keys, terms
from memoryd.recall import ranker
from memoryd.recall.ranker import Doc, LexicalIndex, analyse


def index_of(*docs: tuple[str, str, str, str]) -> LexicalIndex:
    idx = LexicalIndex()
    for fn, name, desc, body in docs:
        idx.put(analyse(fn, name, desc, body))
    return idx


def test_terms_drop_stopwords_and_stem() -> None:
    assert terms("What were the deployments running on?") == ["deploy", "run"]


def test_date_keys_read_years_and_months() -> None:
    assert date_keys("Said on 8 May 2023 (session 1)") == {"2023", "2023-05"}
    assert date_keys("read relative times against 2023-05-08") == {"2023", "2023-05"}
    assert date_keys("no dates here") == set()


def test_stemmed_match_beats_no_match_and_zero_scores_are_dropped() -> None:
    idx = index_of(
        ("a.md", "Deploying", "deployments go through Argo", ""), ("b.md", "Coffee", "flat white please", "")
    )
    assert [fn for fn, _ in idx.rank("how do we deploy?")] == ["a.md"]
    assert idx.rank("the and of") == []


def test_exclude_and_incremental_updates() -> None:
    idx = index_of(("a.md", "Cache", "cache invalidation rules", ""), ("b.md", "Cache two", "cache warmup rules", ""))
    assert {fn for fn, _ in idx.rank("cache rules")} == {"a.md", "b.md"}
    assert [fn for fn, _ in idx.rank("cache rules", exclude={"a.md"})] == ["b.md"]
    idx.remove("b.md")
    assert [fn for fn, _ in idx.rank("cache warmup")] == ["a.md"]
    idx.put(analyse("a.md", "Queue", "kafka queue", ""))  # replaced in place
    assert idx.rank("cache rules") == [] and len(idx) == 1


def test_subject_named_in_query_wins_a_tie() -> None:
    idx = index_of(
        ("c.md", "Alice likes hiking", "Alice likes hiking with Bianca", ""),
        ("m.md", "Bianca likes hiking", "Bianca likes hiking with Alice", ""),
    )
    assert idx.rank("What does Bianca like doing?")[0][0] == "m.md"
    assert idx.rank("What does Alice like doing?")[0][0] == "c.md"


def test_date_in_query_boosts_memories_of_that_month() -> None:
    # ISO dates only: the month name in the query matches no word, only the date key
    idx = index_of(
        ("may.md", "Trip", "went on a trip", "as of 2023-05-03"),
        ("june.md", "Trip", "went on a trip", "as of 2023-06-03"),
    )
    assert idx.rank("what trip happened in May 2023?")[0][0] == "may.md"
    assert idx.rank("what trip happened in June 2023?")[0][0] == "june.md"


def test_numbers_never_fill_the_stem_cache() -> None:
    """Each save's ids and counts are new words: cached, they grew the daemon by a megabyte a minute (issue 31)."""
    from memoryd.base.text import _stem_cached

    before = _stem_cached.cache_info().currsize
    assert terms(" ".join(f"rule {n} revised {n + 1}" for n in range(900_000, 901_000))).count("900000") == 1
    assert _stem_cached.cache_info().currsize - before <= 2  # "rule", "revised": the words, not the thousand numbers
    ids = terms(" ".join(f"deploying ticket{n}x to v{n} shards" for n in range(1_000)))  # issue 42: words with a digit
    assert ids[:4] == ["deploy", "ticket0x", "v0", "shard"] and len(set(ids)) == 2 + 2 * 1_000
    assert _stem_cached.cache_info().currsize - before <= 4  # and "deploy", "shard"


def test_ranking_beside_writes_and_compactions_never_fails() -> None:
    """A query's view of a posting array alive after the lock made the next write fail half-way
    (BufferError), and a compaction renumbers words a query read outside it: the index broke for
    good and recall answered 500 (issue 31's failed soaks)."""
    import sys
    import threading

    idx = LexicalIndex()
    for i in range(1100):
        idx.put(analyse(f"m{i}.md", f"deploy note {i}", f"staging deploy rule {i}", "run the pipeline"))
    failures: list[BaseException] = []
    done = threading.Event()

    def query() -> None:
        while not done.is_set():
            try:
                idx.rank("how do we deploy to staging?")
                idx.fits({"deploy", "stage", "pipelin"}, [f"m{i}.md" for i in range(5)])
                idx.matches({"deploy", "rule", "1050"}, ["m1.md"])
            except BaseException as exc:  # noqa: BLE001 - any failure is the finding
                failures.append(exc)
                return

    readers = [threading.Thread(target=query) for _ in range(3)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often: the windows between statements open
    for t in readers:
        t.start()
    try:
        for n in range(6000):  # new numbers come and go: each compaction drops dead words
            idx.put(analyse(f"m{n % 1100}.md", f"deploy note {n}", f"staging deploy rule {n + 7}", "run the pipeline"))
    finally:
        sys.setswitchinterval(interval)
        done.set()
        for t in readers:
            t.join()
    assert failures == []


def _churned(fold_min: int, monkeypatch: pytest.MonkeyPatch) -> LexicalIndex:
    """4,000 puts (a third of them replacing an earlier version), 600 removals: folds and compactions on the way."""
    monkeypatch.setattr(ranker, "FOLD_MIN_POSTINGS", fold_min)
    monkeypatch.setattr(ranker, "FOLD_SHARE", 10**9)  # the tail's size alone decides
    monkeypatch.setattr(ranker, "COMPACT_DEAD_SHARE", 1)  # a compaction (which folds) once as many are dead as live
    rng = random.Random(11)
    words = "deploy staging database migration lockfile review flaky runner docker schema release hotfix".split()
    idx = LexicalIndex()
    for n in range(4_000):
        fn = f"m{rng.randrange(2_700)}.md"
        idx.put(analyse(fn, f"note {n}", " ".join(rng.choices(words, k=6)), f"ticket{n}x {rng.choice(words)} 2023"))
        if n % 7 == 0:
            idx.remove(f"m{rng.randrange(2_700)}.md")
    return idx


def test_postings_folded_early_or_late_answer_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The base and the tail of the postings (issue 42) are one list to every query: an index that folds
    its tail at nearly every put ranks, matches and counts exactly as one that almost never does."""
    often, rarely = _churned(1, monkeypatch), _churned(10**9, monkeypatch)
    assert not often._tail and len(rarely._tail) > 500
    assert often.filenames() == rarely.filenames() and often.vocabulary == rarely.vocabulary
    names = often.filenames()[:40]
    for q in ("deploy to staging", "docker schema release ticket3999x", "flaky runner 2023", "ticket12x", "nothing"):
        assert often.rank(q, k=30, gate=False) == rarely.rank(q, k=30, gate=False)
        assert often.matches(set(terms(q)), names) == rarely.matches(set(terms(q)), names)
        assert [often.idf(t) for t in terms(q)] == [rarely.idf(t) for t in terms(q)]


def test_a_word_costs_its_postings_not_two_arrays() -> None:
    """20,000 memories each with a word of its own (an id, a name) held ~300 bytes of array objects per word
    beside its 8 bytes of postings (issue 42)."""
    docs = [analyse(f"m{i}.md", f"note {i}", "deploy staging", f"ticket{i}x") for i in range(5_000)]
    tracemalloc.start()
    try:
        idx = LexicalIndex()
        for doc in docs:
            idx.put(doc)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert idx.vocabulary > 10_000
    assert held / idx.vocabulary < 200, held / idx.vocabulary


def test_doc_ids_past_16_bits_are_found_before_and_after_a_fold() -> None:
    """The base keeps doc ids in 16 bits while they fit (issue 42's RSS); memories put past 65,536 slots wait
    in the 32-bit tail, and the next fold widens the base: a word on either side is found throughout."""
    idx = LexicalIndex()
    for i in range(65_000):
        idx.put(Doc(f"m{i}.md", {"common": 1.0, f"own{i}": 1.0}, 2.0))
    idx._fold()
    assert idx._base_docs.dtype == np.uint16
    for i in range(65_000, 66_000):
        idx.put(Doc(f"m{i}.md", {"common": 1.0, f"own{i}": 1.0}, 2.0))
    assert idx._tail and idx._base_docs.dtype == np.uint16

    def found() -> None:
        for i in (3, 64_999, 65_536, 65_999):
            assert [fn for fn, _ in idx.rank(f"own{i}", k=1, gate=False)] == [f"m{i}.md"]
            held = idx.matches({f"own{i}", "own5", "common"}, [f"m{i}.md", "m65900.md"])[1]
            assert held[f"m{i}.md"] == sorted({"common", f"own{i}"} | ({"own5"} if i == 5 else set()))
            assert held["m65900.md"] == sorted({"common"} | ({f"own{i}"} if i == 65_900 else set()))

    found()
    idx._fold()
    assert idx._base_docs.dtype == np.int32 and not idx._tail
    found()


def test_deleted_memories_slots_go_once_they_outnumber_a_quarter_of_the_live_ones() -> None:
    """Under churn (saves and deletes) the tombstones' slots and postings grew until as many were dead as
    live: at 5,000 memories up to ~4 MB, and the soak's RSS with them (issue 42)."""
    idx = LexicalIndex()
    for i in range(5_000):
        idx.put(Doc(f"m{i}.md", {"common": 1.0, f"own{i}": 1.0}, 2.0))
    for i in range(ranker.COMPACT_MIN_DEAD):
        idx.remove(f"m{i}.md")
    assert len(idx._names) == 5_000  # a few dead: kept until there are enough
    idx.remove(f"m{ranker.COMPACT_MIN_DEAD}.md")  # 1,025 dead: over a quarter of the 3,975 live
    assert len(idx._names) == len(idx) == 5_000 - ranker.COMPACT_MIN_DEAD - 1
    assert [fn for fn, _ in idx.rank("own4999", k=1, gate=False)] == ["m4999.md"]
