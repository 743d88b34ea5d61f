"""The one transcript pipeline: hostile lines never wedge a session, huge lines are skipped,
roots that appear later are watched, every consumer sees each turn once."""

from __future__ import annotations

import json
import random
import time
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memoryd.base import limits
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.extract.pending import PendingTurns
from memoryd.session_memory import SessionMemory
from memoryd.transcripts.parser import MalformedLine, parse_line, parse_lines
from memoryd.transcripts.pipeline import TranscriptFile, TranscriptPipeline
from memoryd.transcripts.reader import iter_batches
from tests.conftest import LiveDaemon, make_settings
from tests.support.clock import POLL_SECONDS
from tests.support.transcripts import new_session
from tests.test_extract import memories, turn_end

HOSTILE_LINES = [
    b'{"type":"user","message":"oops"}',
    b'{"type":"user","message":["a", 1]}',
    b'{"type":"assistant","message":{"content":"text","stop_reason":{"x":1}}}',
    b'{"type":"attachment","attachment":"hook output"}',
    b'{"type":"attachment","attachment":{"type":"queued_command","prompt":["x"]}}',
    b'{"type":"user","message":{"content":[{"type":"tool_result","content":[1,{"type":"text","text":3}]}]}}',
    b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":["Write"],"input":"x"}]}}',
    b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b'{"a":' + b"9" * 4400 + b"}",
    b'{"type":"user","message":{"content":"bad \xff\xfe utf8"}}',
    b"[1, 2, 3]",
    b"\x00\x01\x02",
]


def test_no_line_raises_and_each_is_counted() -> None:
    entries, malformed = parse_lines(HOSTILE_LINES)
    assert malformed + len(entries) == len(HOSTILE_LINES)
    assert malformed >= 5


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "text",
                    "attachment",
                    "uuid",
                    "input",
                    "name",
                    "tool_use_id",
                    "prompt",
                    "isSidechain",
                    "cwd",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@hsettings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["user", "assistant", "attachment", "system", "x"])},
        optional={
            "message": json_values,
            "attachment": json_values,
            "uuid": json_values,
            "isSidechain": json_values,
            "cwd": json_values,
        },
    )
)
def test_fuzzed_entries_never_raise(obj: dict) -> None:  # type: ignore[type-arg]
    try:
        parse_line(json.dumps(obj))
    except ValueError as exc:  # MalformedLine is the one allowed outcome besides an Entry
        assert type(exc).__name__ == "MalformedLine"


KEYS = [
    "type",
    "message",
    "content",
    "text",
    "attachment",
    "uuid",
    "input",
    "name",
    "tool_use_id",
    "prompt",
    "role",
    "id",
]


def random_value(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False, 0, -1, 10**30, 1.5])
    if kind == 2:
        return rng.choice(
            ["user", "assistant", "text", "tool_use", "tool_result", "queued_command", "", "\ud800x", "é"]
        )
    if kind in (3, 4):
        return "".join(rng.choice("ab <>/\n") for _ in range(rng.randrange(12)))
    if kind == 5:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): random_value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_thousands_of_seeded_random_entries_never_raise() -> None:
    rng = random.Random(2026)
    lines = []
    for _ in range(5000):
        obj = {"type": rng.choice(["user", "assistant", "attachment", "system"])}
        obj.update({rng.choice(KEYS): random_value(rng) for _ in range(rng.randrange(4))})
        lines.append(json.dumps(obj).encode())
    outcomes = {"entry": 0, "malformed": 0}
    for line in lines:
        try:
            parse_line(line)
            outcomes["entry"] += 1
        except MalformedLine:
            outcomes["malformed"] += 1
    assert sum(outcomes.values()) == len(lines), outcomes  # nothing else was raised


def test_random_bytes_never_raise() -> None:
    rng = random.Random(7)
    lines = [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 80))) for _ in range(3000)]
    lines += [b'{"type":"user","message":{"content":' + line + b"}}" for line in lines[:1000]]
    entries, malformed = parse_lines(lines)
    assert len(entries) + malformed <= len(lines)


def test_a_hostile_line_does_not_wedge_the_session(live: LiveDaemon, project: Path) -> None:
    session = new_session(live.daemon.settings.transcript_roots[0], str(project))
    for line in HOSTILE_LINES:
        session.raw(line.decode("latin-1") + "\n")
    session.user("Remember: always run the linter before committing.")
    job = turn_end(live, session)
    assert job["status"] == "done", job
    assert [m["type"] for m in memories(live, session.cwd)] == ["feedback"]
    assert live.client.get("/v1/status").json()["transcripts"]["malformed_lines"] >= 5


def test_an_oversized_line_is_skipped_unread_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    huge = json.dumps({"type": "user", "message": {"role": "user", "content": "z" * 3000}})
    small = json.dumps({"type": "user", "uuid": "u2", "message": {"role": "user", "content": "after the huge line"}})
    path.write_text(f"{huge}\n{small}\n")
    batches = list(iter_batches(path, batch_bytes=256, line_max=1024))
    assert sum(b.oversized for b in batches) == 1
    assert [line for b in batches for line in b.lines] == [small.encode()]
    assert batches[-1].end == path.stat().st_size


def test_a_line_longer_than_a_batch_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    long = json.dumps({"type": "user", "uuid": "u1", "message": {"role": "user", "content": "z" * 700}})
    small = json.dumps({"type": "user", "uuid": "u2", "message": {"role": "user", "content": "after the long line"}})
    path.write_text(f"{small}\n{long}\n{small}\n")
    batches = list(iter_batches(path, batch_bytes=256, line_max=1024))
    assert [line for b in batches for line in b.lines] == [small.encode(), long.encode(), small.encode()]
    assert not any(b.oversized for b in batches) and batches[-1].end == path.stat().st_size


def test_an_unfinished_oversized_line_holds_the_cursor(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"a":"' + "z" * 3000)
    batches = list(iter_batches(path, batch_bytes=256, line_max=1024))
    assert batches[-1].end == 0 and not any(b.oversized for b in batches)


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, bool, bool]] = []

    def consume(self, db: object, file: TranscriptFile, entries: list, reset: bool) -> None:  # type: ignore[type-arg]
        self.seen += [(e.text, e.replayed, reset) for e in entries if e.text]


def test_each_turn_reaches_every_consumer_once_and_a_rewrite_is_flagged(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "state.db")
    pipeline = TranscriptPipeline(state=state, metrics=Metrics())
    first, second = Recorder(), Recorder()
    pipeline.subscribe(first)
    pipeline.subscribe(second)
    writer = new_session(tmp_path / "root", "/home/me/app")
    writer.user("one")
    pipeline.advance(writer.path)
    pipeline.advance(writer.path)  # nothing new
    writer.user("two")
    pipeline.advance(writer.path)
    assert first.seen == second.seen == [("one", False, False), ("two", False, False)]
    kept = writer.path.read_bytes().splitlines(keepends=True)[0]
    writer.path.write_bytes(kept)  # a rewind: the file now ends after "one"
    writer.user("three")
    pipeline.advance(writer.path)
    assert first.seen[2:] == [("one", True, True), ("three", False, True)]
    row = pipeline.row(writer.path)
    assert row is not None and row["resets"] == 1 and row["offset"] == writer.path.stat().st_size


def test_ids_stored_one_per_row_by_an_older_version_still_flag_a_rewrite(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "state.db")
    pipeline = TranscriptPipeline(state=state, metrics=Metrics())
    recorder = Recorder()
    pipeline.subscribe(recorder)
    writer = new_session(tmp_path / "root", "/home/me/app")
    first = writer.user("one")
    pipeline.advance(writer.path)
    with state.transaction() as db:  # the ids as the one-row-per-id table held them
        db.execute("DELETE FROM transcript_seen_batches")
        db.execute("INSERT INTO transcript_seen(path, uuid) VALUES (?, ?)", (str(writer.path), first["uuid"]))
    writer.path.write_text(writer.path.read_text()[:-1] + " \n")  # rewritten: the byte before the cursor is no newline
    writer.user("two")
    pipeline.advance(writer.path)
    assert recorder.seen[1:] == [("one", True, True), ("two", False, True)]


def test_a_root_that_appears_later_is_watched_and_read(live: LiveDaemon, project: Path) -> None:
    root = live.daemon.settings.transcript_roots[0]
    assert not root.exists()
    status = live.client.get("/v1/status").json()["transcripts"]
    assert status["watched"] == [] and status["waiting_for"] == [str(root)]
    session = new_session(root, str(project))  # creates <root>/<project folder>/<session>.jsonl
    session.user("Remember: the staging DB resets every Sunday night.")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        status = live.client.get("/v1/status").json()["transcripts"]
        if status["watched"] == [str(root)] and status["files"] == 1:
            break
        time.sleep(POLL_SECONDS)
    assert status["watched"] == [str(root)] and status["files"] == 1, status
    assert limits.TRANSCRIPT_LINE_MAX_BYTES >= 1 << 20


class Crash(RuntimeError):
    pass


class CrashOnBatch:
    """Raises inside the cursor's transaction on its `n`th batch, as a daemon killed mid-read would stop there."""

    def __init__(self, n: int) -> None:
        self.n = n

    def consume(self, db: object, file: TranscriptFile, entries: list, reset: bool) -> None:  # type: ignore[type-arg]
        self.n -= 1
        if self.n == 0:
            raise Crash("killed mid-read")


def _read(
    tmp_path: Path, name: str, transcript: Path, *, tail_bytes: int, crash_at: int = 0
) -> tuple[StateDB, SessionMemory]:
    state = StateDB(tmp_path / f"{name}.db")
    pipeline = TranscriptPipeline(state=state, metrics=Metrics(), batch_bytes=2048, tail_bytes=tail_bytes)
    settings = make_settings(tmp_path / name)
    notes = SessionMemory(
        settings.session_memory, home=settings.home, state=state, llm=None, now=datetime.now, advance=pipeline.advance
    )
    pipeline.subscribe(PendingTurns(state))
    pipeline.subscribe(notes)
    if crash_at:
        pipeline.subscribe(CrashOnBatch(crash_at))
    pipeline.advance(transcript)
    return state, notes


def test_a_big_read_renders_only_its_tail_and_a_crash_mid_read_resumes_to_the_same_result(tmp_path: Path) -> None:
    writer = new_session(tmp_path / "root", "/home/me/app")
    for i in range(60):
        writer.user(f"request {i}")
        writer.assistant(
            f"answer {i}",
            tools=[
                ("Write", {"file_path": f"/home/me/app/f{i}.py", "content": "x"}),
                ("Bash", {"command": f"make t{i}"}),
            ],
        )
        writer.tool_result("ok " * 60, is_error=i % 10 == 0)
    assert writer.path.stat().st_size > 20 * 2048  # many batches before a 6 KB tail

    def pending(state: StateDB) -> list[tuple[str, str]]:
        return [(r["kind"], r["text"]) for r in state.query("SELECT kind, text FROM extraction_pending ORDER BY seq")]

    def read(notes: SessionMemory) -> dict:  # type: ignore[type-arg]
        return json.loads(notes._read_of(writer.session_id, notes.state.query_one).to_json())

    full_state, full_notes = _read(tmp_path, "full", writer.path, tail_bytes=1 << 30)
    tail_state, tail_notes = _read(tmp_path, "tail", writer.path, tail_bytes=6000)
    full, tail = pending(full_state), pending(tail_state)
    # Every write the agent made is kept; prompts and turns only from the tail, never rendered before it.
    assert (
        [t for k, t in tail if k == "wrote"]
        == [t for k, t in full if k == "wrote"]
        == [f"/home/me/app/f{i}.py" for i in range(60)]
    )
    assert ("prompt", "request 0") in full and ("prompt", "request 59") in tail and ("prompt", "request 0") not in tail
    assert not any("answer 0\n" in t or t.endswith("answer 0") for _, t in tail)
    # The notes count everything either way; their delta and newest-first lists hold the tail.
    full_read, tail_read = read(full_notes), read(tail_notes)
    for key in ("tokens", "entries", "tool_calls_since", "last_turn_had_tools"):
        assert tail_read[key] == full_read[key], key
    for key in ("first_prompt", "files", "commands"):
        assert tail_read["offline"][key] == full_read["offline"][key], key
    assert tail_read["_delta_cut"] and "USER: request 59" in tail_read["_delta"][-3]
    assert not any("request 0\n" in d or d.endswith("request 0") for d in tail_read["_delta"])
    # Killed on its third batch (before the tail), then restarted: the same kept result as the read never stopped.
    with pytest.raises(Crash):
        _read(tmp_path, "crashed", writer.path, tail_bytes=6000, crash_at=3)
    state = StateDB(tmp_path / "crashed.db")
    assert (
        0 < TranscriptPipeline(state=state, metrics=Metrics()).row(writer.path)["offset"] < writer.path.stat().st_size
    )  # type: ignore[index]
    resumed_state, resumed_notes = _read(tmp_path, "crashed", writer.path, tail_bytes=6000)
    assert pending(resumed_state) == tail and read(resumed_notes) == tail_read
