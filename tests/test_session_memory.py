"""Session memory: gates at their boundaries, budgets, offline content, LLM rewrite and fallback, API."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.config import Settings
from memoryd.service.daemon import Daemon
from memoryd.session_memory import notes
from memoryd.session_memory.service import SessionMemory, decide, entry_tokens
from memoryd.transcripts.parser import estimate_tokens, parse_lines
from memoryd.transcripts.pipeline import TranscriptPipeline
from memoryd.transcripts.reader import read_new_lines
from tests.conftest import make_settings
from tests.support.messages_api import RETRY_NOW, Reply, ScriptedMessagesAPI
from tests.support.transcripts import TranscriptWriter, new_session

GATES = dict(
    init_tokens=limits.SESSION_MEMORY_INIT_TOKENS,
    update_tokens=limits.SESSION_MEMORY_UPDATE_TOKENS,
    tool_calls=limits.SESSION_MEMORY_TOOL_CALLS,
)


def total(s: TranscriptWriter) -> int:
    entries, _ = parse_lines(read_new_lines(s.path, 0).lines)
    return sum(entry_tokens(e) for e in entries)


def pad_to(s: TranscriptWriter, target: int) -> None:
    """Grow the session to exactly `target` tokens with a tool result (not a prompt, not a turn)."""
    need = target - total(s)
    assert need > 0
    s.tool_result("r" * (need * limits.CHARS_PER_TOKEN))
    assert total(s) == target


@pytest.fixture
def sm(settings: Settings) -> SessionMemory:
    """Session notes fed by a real transcript pipeline, as the daemon wires them."""
    state = StateDB(settings.home / "sm.db")
    pipeline = TranscriptPipeline(state=state, metrics=Metrics())
    notes = SessionMemory(
        settings.session_memory,
        home=settings.home,
        state=state,
        llm=None,
        now=lambda: __import__("datetime").datetime(2026, 1, 1),
        advance=pipeline.advance,
    )
    pipeline.subscribe(notes)
    return notes


def test_decide_boundaries() -> None:
    init = limits.SESSION_MEMORY_INIT_TOKENS
    assert not decide(tokens=init - 1, since_tokens=None, tool_calls_since=0, last_turn_had_tools=False, **GATES).write
    assert decide(tokens=init, since_tokens=None, tool_calls_since=0, last_turn_had_tools=True, **GATES).write
    base = dict(since_tokens=init, **GATES)
    grown = init + limits.SESSION_MEMORY_UPDATE_TOKENS
    assert not decide(tokens=grown - 1, tool_calls_since=99, last_turn_had_tools=False, **base).write
    assert decide(tokens=grown, tool_calls_since=3, last_turn_had_tools=True, **base).reason == "tool_calls"
    assert decide(tokens=grown, tool_calls_since=2, last_turn_had_tools=True, **base).reason == "mid_tool_loop"
    assert decide(tokens=grown, tool_calls_since=2, last_turn_had_tools=False, **base).reason == "natural_break"


def test_estimate_is_the_one_estimate() -> None:
    assert estimate_tokens("a" * 4) == 1 and estimate_tokens("a" * 5) == 2 and estimate_tokens("é" * 2) == 1


def test_gates_end_to_end(sm: SessionMemory, home: Path, project: Path) -> None:
    s = new_session(home / "transcripts", str(project), "sess-1")
    s.user("Fix the flaky parser test in src/parser.py")
    pad_to(s, limits.SESSION_MEMORY_INIT_TOKENS - 1)
    assert sm.update("sess-1", s.path) is False and sm.get("sess-1") is None
    pad_to(s, limits.SESSION_MEMORY_INIT_TOKENS)
    assert sm.update("sess-1", s.path) is True
    first = sm.get("sess-1")
    assert first is not None and all(f"# {t}\n" in first for t in notes.TITLES)
    assert sm.path_for("sess-1") == home / "sessions" / "sess-1" / "session-memory.md"
    # growth of update_tokens with 3 tool calls since → update; one token short → none
    s.assistant(
        "",
        tools=[
            ("Read", {"file_path": "src/parser.py"}),
            ("Edit", {"file_path": "src/parser.py"}),
            ("Bash", {"command": "pytest -q"}),
        ],
    )
    grown = limits.SESSION_MEMORY_INIT_TOKENS + limits.SESSION_MEMORY_UPDATE_TOKENS
    pad_to(s, grown - 1)
    assert sm.update("sess-1", s.path) is False
    pad_to(s, grown)
    assert sm.update("sess-1", s.path) is True
    second = sm.get("sess-1")
    assert second is not None and "src/parser.py (Read, Edit)" in second and "`pytest -q`" in second
    # grown again, only 2 tool calls and the turn is still in a tool loop → no; a prose-only turn → yes
    s.user("now also handle empty files")
    s.assistant("", tools=[("Read", {"file_path": "a.py"}), ("Read", {"file_path": "b.py"})])
    pad_to(s, grown + limits.SESSION_MEMORY_UPDATE_TOKENS)
    assert sm.update("sess-1", s.path) is False
    s.assistant("Done: empty files now parse.")
    assert sm.update("sess-1", s.path) is True
    assert "Done: empty files now parse." in (sm.get("sess-1") or "")


def test_offline_sections(sm: SessionMemory, settings: Settings, home: Path, project: Path) -> None:
    settings.session_memory.init_tokens = 0
    s = new_session(home / "transcripts", str(project), "sess-off")
    s.user("Add retries to the HTTP client\nwith exponential backoff")
    s.assistant(
        "Looking.", tools=[("Grep", {"path": "src/http.py", "pattern": "retry"}), ("Bash", {"command": "make test"})]
    )
    s.tool_result("ModuleNotFoundError: No module named 'tenacity'", is_error=True)
    s.assistant("Installed and fixed.")
    assert sm.update("sess-off", s.path)
    sections = notes.parse(sm.get("sess-off") or "")
    assert sections["Session Title"].endswith("Add retries to the HTTP client")
    assert "exponential backoff" in sections["Task specification"]
    assert "- src/http.py (Grep)" in sections["Files and Functions"]
    assert "ModuleNotFoundError" in sections["Errors & Corrections"]
    assert "user: Add retries" in sections["Worklog"] and "(2 tool calls)" in sections["Worklog"]
    assert "Installed and fixed." in sections["Current State"]


def test_section_budget_edge_and_recent_kept() -> None:
    at_limit = "x" * (limits.SESSION_MEMORY_SECTION_MAX_TOKENS * limits.CHARS_PER_TOKEN)
    assert notes.enforce_budgets({"Learnings": at_limit})["Learnings"] == at_limit
    log = "\n".join(f"- step {i:05d} " + "w" * 60 for i in range(400))
    out = notes.enforce_budgets({"Worklog": log, "Task specification": at_limit + "y"})
    assert estimate_tokens(out["Worklog"]) <= limits.SESSION_MEMORY_SECTION_MAX_TOKENS
    assert "step 00399" in out["Worklog"] and "step 00000" not in out["Worklog"]
    assert estimate_tokens(out["Task specification"]) <= limits.SESSION_MEMORY_SECTION_MAX_TOKENS
    assert out["Task specification"].startswith("xxx")


def test_total_budget_compresses_least_important_first() -> None:
    full = {t: "\n".join(f"- {t} line {i} " + "z" * 70 for i in range(100)) for t in notes.TITLES}
    full["Session Title"] = "My session"
    out = notes.enforce_budgets(full)
    assert estimate_tokens(notes.render(out)) <= limits.SESSION_MEMORY_MAX_TOKENS
    assert (
        out["Session Title"] == "My session"
        and out["Current State"] == notes.enforce_budgets({"Current State": full["Current State"]})["Current State"]
    )
    assert estimate_tokens(out["Worklog"]) < estimate_tokens(out["Current State"])


def test_session_id_validated(sm: SessionMemory) -> None:
    for bad in ("", "../etc", ".hidden", "a/b", "x" * 129):
        with pytest.raises(InvalidRequest):
            sm.get(bad)


def test_api_404_then_markdown(live, project: Path) -> None:  # type: ignore[no-untyped-def]
    r = live.client.get("/v1/sessions/nope-123/memory")
    assert (
        r.status_code == 404
        and r.json()["error"]["code"] == "session_not_found"
        and "10,000" in r.json()["error"]["message"]
    )
    assert live.client.get("/v1/sessions/..bad/memory").status_code == 400
    live.daemon.settings.session_memory.init_tokens = 0
    s = new_session(live.daemon.settings.transcript_roots[0], str(project), "sess-api")
    s.user("Write the changelog")
    assert live.daemon.session_memory.update("sess-api", str(s.path), str(project))
    r = live.client.get("/v1/sessions/sess-api/memory")
    assert r.status_code == 200 and "Write the changelog" in r.json()["markdown"]
    assert live.client.get("/v1/status").json()["session_memory"]["sessions"] == 1


def _llm_daemon(home: Path, messages_api: ScriptedMessagesAPI) -> Daemon:
    settings = make_settings(home, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=messages_api.url)
    settings.session_memory.init_tokens = 0
    settings.llm.timeout_seconds = 2
    return Daemon(settings)


def test_llm_rewrites_notes_from_delta(home: Path, project: Path, messages_api: ScriptedMessagesAPI) -> None:
    daemon = _llm_daemon(home, messages_api)
    s = new_session(daemon.settings.transcript_roots[0], str(project), "sess-llm")
    s.user("Migrate the DB to Postgres 16")
    messages_api.push(
        Reply(text="# Session Title\nPostgres 16 migration\n# Current State\nDump taken.\n# Worklog\n- dumped\n")
    )
    assert daemon.session_memory.update("sess-llm", s.path)
    sections = notes.parse(daemon.session_memory.get("sess-llm") or "")
    assert sections["Session Title"].endswith("Postgres 16 migration") and "Dump taken." in sections["Current State"]
    assert (
        "Migrate the DB to Postgres 16" in sections["Task specification"]
    )  # missing section kept from the offline notes
    assert "Migrate the DB to Postgres 16" in messages_api.texts_sent()[-1]
    assert daemon.session_memory.updates["llm"] == 1


def test_llm_delta_is_what_came_after_the_last_update_newest_first_kept(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    daemon = _llm_daemon(home, messages_api)
    daemon.settings.session_memory.update_tokens = 1
    s = new_session(daemon.settings.transcript_roots[0], str(project), "sess-delta")
    s.user("Step one: rename the config loader")
    messages_api.push(Reply(text="# Session Title\nRename\n"))
    assert daemon.session_memory.update("sess-delta", s.path)
    # More than the delta budget arrives: the newest part is sent.
    budget = limits.SESSION_MEMORY_DELTA_MAX_TOKENS * limits.CHARS_PER_TOKEN
    s.user("OLDEST new request")
    for i in range(budget // 1500 + 5):
        s.assistant(f"note {i} " + "z" * 1500)
    s.assistant("NEWEST words of the session")
    messages_api.push(Reply(text="# Session Title\nRename, part two\n"))
    assert daemon.session_memory.update("sess-delta", s.path)
    sent = messages_api.texts_sent()[-1]
    delta = sent.split("<transcript_delta>")[1]
    assert "NEWEST words of the session" in delta and "[…earlier part omitted]" in delta
    assert "Step one" not in delta and "OLDEST new request" not in delta  # before the last update / cut for budget
    assert len(delta) <= budget + 200


@pytest.mark.parametrize(
    "reply", [Reply(status=500, headers=RETRY_NOW), Reply(text="no headers at all")], ids=["500", "garbage"]
)
def test_llm_failure_falls_back_to_offline(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI, reply: Reply
) -> None:
    daemon = _llm_daemon(home, messages_api)
    s = new_session(daemon.settings.transcript_roots[0], str(project), "sess-fb")
    s.user("Refactor the cache layer")
    messages_api.push(reply)
    assert daemon.session_memory.update("sess-fb", s.path)
    assert "Refactor the cache layer" in (daemon.session_memory.get("sess-fb") or "")
    assert daemon.session_memory.updates["llm_fallback"] == 1 and daemon.session_memory.updates["offline"] == 1


def test_secrets_in_transcript_are_redacted(sm: SessionMemory, settings: Settings, home: Path, project: Path) -> None:
    settings.session_memory.init_tokens = 0
    s = new_session(home / "transcripts", str(project), "sess-sec")
    s.user("Deploy with key AKIAIOSFODNN7EXAMPLE please")
    assert sm.update("sess-sec", s.path)
    assert "AKIAIOSFODNN7EXAMPLE" not in (sm.get("sess-sec") or "")


def test_enqueue_runs_in_background_and_coalesces(
    sm: SessionMemory, settings: Settings, home: Path, project: Path
) -> None:
    settings.session_memory.init_tokens = 0
    s = new_session(home / "transcripts", str(project), "sess-q")
    s.user("Queue this session")
    gate = threading.Event()
    sm._pool.submit(gate.wait, 30)  # keep the worker busy so the second enqueue finds the first pending
    first = sm.enqueue("sess-q", s.path)
    second = sm.enqueue("sess-q", s.path)
    gate.set()
    assert first is not None and second is None
    assert first.result(timeout=30) is True and "Queue this session" in (sm.get("sess-q") or "")
    with pytest.raises(InvalidRequest):
        sm.enqueue("../x", s.path)
    sm.close()


def notes_with_pipeline(settings: Settings, state: StateDB) -> tuple[SessionMemory, TranscriptPipeline]:
    pipeline = TranscriptPipeline(state=state, metrics=Metrics())
    notes = SessionMemory(
        settings.session_memory,
        home=settings.home,
        state=state,
        llm=None,
        now=lambda: __import__("datetime").datetime(2026, 1, 1),
        advance=pipeline.advance,
    )
    pipeline.subscribe(notes)
    return notes, pipeline


def test_updates_read_only_the_appended_part_even_across_a_restart(
    settings: Settings, home: Path, project: Path
) -> None:
    settings.session_memory.init_tokens = 0
    settings.session_memory.update_tokens = 1
    state = StateDB(home / "sm.db")
    sm, pipeline = notes_with_pipeline(settings, state)
    s = new_session(home / "transcripts", str(project), "sess-inc")
    s.user("Speed up the importer")
    s.assistant("Reading.", tools=[("Read", {"file_path": "src/importer.py"})])
    assert sm.update("sess-inc", s.path)
    assert pipeline.bytes_read == s.path.stat().st_size
    s.tool_result("boom: importer crashed", is_error=True)
    s.assistant("Fixed the crash.")
    assert sm.update("sess-inc", s.path)
    assert pipeline.bytes_read == s.path.stat().st_size  # the second update read only the appended lines
    # A restart: a new pipeline and new notes over the same state read only what was appended since.
    fresh, fresh_pipeline = notes_with_pipeline(settings, state)
    before = s.path.stat().st_size
    s.user("and add a progress bar")
    assert fresh.update("sess-inc", s.path)
    assert fresh_pipeline.bytes_read == s.path.stat().st_size - before
    notes_now = fresh.get("sess-inc") or ""
    assert (
        "Fixed the crash." in notes_now and "boom: importer crashed" in notes_now and "add a progress bar" in notes_now
    )


def test_a_rewritten_transcript_is_read_again_from_the_start(
    sm: SessionMemory, settings: Settings, home: Path, project: Path
) -> None:
    settings.session_memory.init_tokens = 0
    settings.session_memory.update_tokens = 1
    s = new_session(home / "transcripts", str(project), "sess-rw")
    s.user("Old task that was rewound away " + "x" * 4000)
    assert sm.update("sess-rw", s.path)
    s.path.write_text("")  # replaced by a shorter file (e.g. a rewind): the cursor no longer applies
    s.user("New task after the rewrite " + "y" * 8000)  # grown past the last update's size
    s.assistant("Working on the new task.")
    assert sm.update("sess-rw", s.path)
    notes_now = sm.get("sess-rw") or ""
    assert "New task after the rewrite" in notes_now and "Working on the new task." in notes_now
    assert "Old task" not in notes_now
