"""Transcript parsing and incremental reading, on the real fixtures and generated files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.transcripts import TranscriptService, parse_line, parse_lines, read_new_lines
from memoryd.transcripts.parser import MalformedLine
from memoryd.transcripts.reader import iter_batches
from tests.support.clock import POLL_SECONDS
from tests.support.transcripts import new_session

FIXTURES = Path(__file__).parent / "fixtures" / "claude-transcripts"


def test_real_fixtures_yield_prompts_tools_and_no_harness_text() -> None:
    entries, malformed = parse_lines((FIXTURES / "spotter-short-v2.1.38.jsonl").read_bytes().splitlines())
    assert malformed == 0
    prompts = [e.text for e in entries if e.is_prompt]
    assert prompts == [
        "mix phx.server doesnt seem to start"
    ]  # "[Request interrupted…]" and /model records are not prompts
    assert any(t.name == "Bash" for e in entries for t in e.tool_uses)
    assert any(r.is_error for e in entries for r in e.tool_results)


def test_compaction_summary_is_never_a_prompt() -> None:
    entries, _ = parse_lines((FIXTURES / "spotter-compaction-excerpt-v2.1.39.jsonl").read_bytes().splitlines())
    assert any(e.kind == "compact_boundary" for e in entries)
    assert not [e for e in entries if e.is_prompt]
    assert any("being continued from a previous conversation" in e.injected for e in entries)


def test_subagent_entries_are_marked_sidechain() -> None:
    entries, _ = parse_lines((FIXTURES / "spotter-subagent-agent-aac57f5-v2.1.39.jsonl").read_bytes().splitlines())
    assert entries and all(e.is_sidechain for e in entries if e.kind in ("user", "assistant"))


def test_injected_recall_text_is_not_the_users_words() -> None:
    reminder = (
        f"<system-reminder>\n{limits.INJECTED_MARKER}\nMemory: feedback_x.md\nalways use pnpm\n</system-reminder>"
    )
    line = json.dumps(
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": f"{reminder}\nfix the build please"}}
    )
    entry = parse_line(line)
    assert entry is not None and entry.text == "fix the build please" and "pnpm" in entry.injected
    meta = parse_line(
        json.dumps(
            {
                "type": "user",
                "uuid": "u2",
                "isMeta": True,
                "message": {"role": "user", "content": "remember always use npm"},
            }
        )
    )
    assert meta is not None and not meta.is_prompt
    attach = parse_line(
        json.dumps({"type": "attachment", "uuid": "u3", "attachment": {"type": "hook_success", "stdout": "remember X"}})
    )
    assert attach is not None and attach.kind == "other" and not attach.is_prompt


def test_a_prompt_queued_while_the_agent_worked_is_the_users_words() -> None:
    queued = parse_line(
        json.dumps(
            {
                "type": "attachment",
                "uuid": "q1",
                "timestamp": "2026-03-01T10:00:00Z",
                "attachment": {"type": "queued_command", "prompt": "remember that we deploy with fly"},
            }
        )
    )
    assert queued is not None and queued.is_prompt and queued.text == "remember that we deploy with fly"
    slash = parse_line(
        json.dumps(
            {
                "type": "attachment",
                "uuid": "q2",
                "attachment": {"type": "queued_command", "prompt": "<command-name>/mcp</command-name>"},
            }
        )
    )
    assert slash is not None and not slash.is_prompt


def test_malformed_and_unknown_lines() -> None:
    with pytest.raises(MalformedLine):
        parse_line("{not json")
    with pytest.raises(MalformedLine):
        parse_line("[1, 2]")
    assert parse_line("   ") is None
    unknown = parse_line(json.dumps({"type": "marble-origami-commit", "x": 1}))
    assert unknown is not None and unknown.kind == "other"
    entries, malformed = parse_lines(
        [
            b'{"type":"user","uuid":"a","message":{"role":"user","content":"hi there"}}',
            b"garbage",
            b"",
            b'{"type":"user","uuid":"a","message":{"role":"user","content":"hi there"}}',
        ]
    )
    assert malformed == 1 and len(entries) == 1  # duplicate uuid kept once


def test_partial_last_line_is_kept_for_the_next_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":')
    first = read_new_lines(path, 0)
    assert first.lines == [b'{"a":1}'] and first.end == 8
    with path.open("ab") as fh:
        fh.write(b"2}\n")
    second = read_new_lines(path, first.end, first.inode)
    assert second.lines == [b'{"b":2}'] and not second.reset


def test_truncated_or_replaced_file_is_reread_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    first = read_new_lines(path, 0)
    path.write_bytes(b'{"c":3}\n')  # shorter than the cursor
    again = read_new_lines(path, first.end, first.inode)
    assert again.reset and again.lines == [b'{"c":3}']
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b'{"d":4}\n{"e":5}\n{"f":6}\n')
    os.replace(replacement, path)  # same name, new inode, longer
    third = read_new_lines(path, again.end, again.inode)
    assert third.reset and len(third.lines) == 3


def _wait(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError("condition not met in time")


def test_watcher_ingests_appends_and_backfills_after_restart(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    root.mkdir()
    db = StateDB(tmp_path / "state.db")
    service = TranscriptService(roots=[root], state=db, metrics=Metrics())
    service.start()
    try:
        writer = new_session(root, "/home/me/app")
        writer.user("hello there, set up the project")
        _wait(lambda: (service.file_state(writer.path) or {}).get("lines") == 1)
        writer.raw("this is not json\n")
        writer.assistant("Done.")
        _wait(lambda: (service.file_state(writer.path) or {}).get("lines") == 3)
        state = service.file_state(writer.path)
        assert (
            state is not None
            and state["malformed"] == 1
            and state["session_id"] == writer.session_id
            and state["cwd"] == "/home/me/app"
        )
    finally:
        service.stop()
    writer.user("a line written while the daemon was down")
    restarted = TranscriptService(roots=[root], state=db, metrics=Metrics(), watch=False)
    assert writer.path in restarted.changed_since_last_run()
    restarted.start()
    try:
        _wait(lambda: (restarted.file_state(writer.path) or {}).get("lines") == 4)
    finally:
        restarted.stop()


def test_tail_rewritten_past_the_cursor_is_detected(tmp_path: Path) -> None:
    """CC truncates its tail and re-appends; when the new tail is longer than the old cursor,
    the size check alone misses it, the newline-before-cursor check does not."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    first = read_new_lines(path, 0)
    assert first.end == 16
    with path.open("r+b") as fh:  # same inode: drop the last line, append a longer one
        fh.truncate(8)
        fh.seek(8)
        fh.write(b'{"c":"a much longer line"}\n')
    again = read_new_lines(path, first.end, first.inode)
    assert again.reset and again.lines == [b'{"a":1}', b'{"c":"a much longer line"}']
    # An untouched file at a line boundary is not reset.
    with path.open("ab") as fh:
        fh.write(b'{"d":4}\n')
    assert not (tail := read_new_lines(path, again.end, again.inode)).reset and tail.lines == [b'{"d":4}']


def test_a_large_transcript_is_ingested_in_batches(tmp_path: Path) -> None:
    """More bytes than one batch, and one line longer than a batch: all of it lands, in bounded reads."""
    root = tmp_path / "projects"
    db = StateDB(tmp_path / "state.db")
    service = TranscriptService(roots=[root], state=db, metrics=Metrics(), watch=False)
    writer = new_session(root, "/home/me/app")
    batch = limits.TRANSCRIPT_READ_BATCH_BYTES
    filler = "x" * 50_000
    lines = 0
    while writer.path.exists() is False or writer.path.stat().st_size < 2 * batch:
        writer.user(f"turn {lines} {filler}")
        lines += 1
    writer.assistant("y" * (batch + 10))  # a single line longer than a batch
    writer.user("the last words")
    writer.raw('{"type":"user","partial":')  # a partial last line waits for the rest
    result = service.ingest(writer.path)
    assert result.lines == lines + 2 and result.malformed == 0
    state = service.file_state(writer.path)
    assert (
        state is not None
        and state["lines"] == lines + 2
        and state["offset"] == writer.path.stat().st_size - len('{"type":"user","partial":')
    )
    assert writer.path in service.changed_since_last_run()  # the partial tail is read again on the next start
    writer.raw("true}\n")
    tail = service.ingest(writer.path)
    assert (tail.lines, tail.malformed, tail.reset, tail.offset) == (1, 0, False, writer.path.stat().st_size)
    assert writer.path not in service.changed_since_last_run()


def test_batches_cover_the_file_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [json.dumps({"n": i, "pad": "p" * (i % 7) * 10}).encode() for i in range(200)]
    lines.insert(100, json.dumps({"giant": "g" * 5000}).encode())  # longer than a batch
    path.write_bytes(b"\n".join(lines) + b"\n" + b'{"partial":')
    batches = list(iter_batches(path, batch_bytes=512))
    assert len(batches) > 10
    assert [line for b in batches for line in b.lines] == lines
    assert all(a.end == b.start for a, b in zip(batches, batches[1:], strict=False))
    assert batches[-1].end == path.stat().st_size - len(b'{"partial":')
    # from a cursor: only what follows; a file replaced under the cursor: from 0, flagged
    tail = list(iter_batches(path, batches[3].end, batches[0].inode, batch_bytes=512))
    assert [line for b in tail for line in b.lines] == [line for b in batches[4:] for line in b.lines]
    path.write_bytes(b'{"new":1}\n')
    again = list(iter_batches(path, batches[3].end, batches[0].inode, batch_bytes=512))
    assert again[0].reset and [line for b in again for line in b.lines] == [b'{"new":1}']
