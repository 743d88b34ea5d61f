"""`daemon.session_memory`: decides when a session's notes are (re)written and writes them.

Notes live at `$MEMORYD_HOME/sessions/<session_id>/session-memory.md` (not in the project:
they are per-session scratch for compaction, not shared memory). Gates (seeds, sessionMemoryUtils):
first write once the session's content reaches `init_tokens`; then when it grew by `update_tokens`
AND (`tool_calls` tool calls since the last update OR the last assistant turn made no tool call).
A session's size is the estimate_tokens() sum of its prompts, prose, tool inputs and tool results.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import KW_ONLY, InitVar, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import LLMUnavailable, TokenBudgetExceeded
from memoryd.base.files import atomic_write
from memoryd.base.secrets import redact_secrets
from memoryd.base.state_db import StateDB
from memoryd.base.validation import check_session_id
from memoryd.config import SessionMemorySettings
from memoryd.llm.client import LLMClient
from memoryd.session_memory import notes
from memoryd.session_memory.offline import OfflineNotes
from memoryd.transcripts.parser import Entry
from memoryd.transcripts.pipeline import TranscriptFile
from memoryd.transcripts.render import render_entry, tool_input_json

log = logging.getLogger(__name__)
DELTA_MAX_CHARS = limits.SESSION_MEMORY_DELTA_MAX_TOKENS * limits.CHARS_PER_TOKEN  # transcript delta sent to the LLM
_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_memory (
    session_id TEXT PRIMARY KEY,
    tokens_at_update INTEGER NOT NULL,
    entries_at_update INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    method TEXT NOT NULL
);
"""
_SYSTEM = (
    "You maintain the running notes of one coding-agent session. They are used to rebuild context after "
    "compaction. Rewrite the notes from the current notes and the new part of the transcript. Keep exactly "
    "these ten sections as '# ' headers, in this order: {titles}. Keep each section under {section} tokens and "
    "the whole file under {total} tokens; when over budget compress the least important parts first (old "
    "worklog entries). Never include credentials. Answer with the Markdown file only."
)


def entry_tokens(entry: Entry) -> int:
    """One transcript entry's size with the one token estimate: `estimate_tokens` of its parts joined,
    summed part by part (UTF-8 lengths add up) without joining, or encoding ASCII text."""
    text, injected = entry.text, entry.injected
    size = (len(text) if text.isascii() else len(text.encode("utf-8"))) + (
        len(injected) if injected.isascii() else len(injected.encode("utf-8"))
    )
    for use in entry.tool_uses:
        text = tool_input_json(use.input)
        size += len(text) if text.isascii() else len(text.encode("utf-8"))
    for result in entry.tool_results:
        text = result.text
        size += len(text) if text.isascii() else len(text.encode("utf-8"))
    return (size + limits.CHARS_PER_TOKEN - 1) // limits.CHARS_PER_TOKEN


@dataclass(frozen=True)
class Decision:
    write: bool
    reason: str


def decide(
    *,
    tokens: int,
    since_tokens: int | None,
    tool_calls_since: int,
    last_turn_had_tools: bool,
    init_tokens: int,
    update_tokens: int,
    tool_calls: int,
) -> Decision:
    """The seeds' gates as a pure function (`since_tokens` is None before the first write)."""
    if since_tokens is None:
        return Decision(tokens >= init_tokens, "init" if tokens >= init_tokens else "below_init")
    if tokens - since_tokens < update_tokens:
        return Decision(False, "not_enough_growth")
    if tool_calls_since >= tool_calls:
        return Decision(True, "tool_calls")
    if not last_turn_had_tools:
        return Decision(True, "natural_break")
    return Decision(False, "mid_tool_loop")


@dataclass
class SessionRead:
    """One streamed pass over a transcript: what the gates and the notes need, never the whole file."""

    since_index: int = 0  # entries before this index were covered by the last update
    tokens: int = 0
    entries: int = 0
    tool_calls_since: int = 0  # assistant tool calls after the last update
    offline: OfflineNotes = field(default_factory=OfflineNotes)
    last_message_id: str = ""
    last_turn_had_tools: bool = (
        False  # the last assistant message (CC splits it over entries sharing its id) called a tool
    )
    _delta: deque[str] = field(
        default_factory=deque
    )  # the newest rendered entries since the last update, within budget
    _delta_chars: int = 0
    _delta_cut: bool = False

    def add_batch(self, entries: list[Entry], *, in_tail: bool = True) -> None:
        """Fold entries in order. Only the newest ones that can fit the delta are rendered (and
        redacted, once): a big first read renders its tail, not every entry it passes. Before a
        read's tail (`in_tail` False) nothing is rendered and the notes' newest-first lists pass over it."""
        start = self.entries
        shown: dict[int, str] = {}
        room = DELTA_MAX_CHARS if in_tail else 0
        for i in range(len(entries) - 1, -1, -1):  # newest first, until the delta budget is full
            if room <= 0 or start + i < self.since_index:
                break
            rendered = render_entry(entries[i])
            if rendered:
                shown[i] = redact_secrets(rendered)
                room -= len(rendered) + 1
        if room <= 0 and min(shown, default=len(entries)) > max(0, self.since_index - start):
            self._delta_cut = True  # older entries of this batch did not fit the budget
            if not in_tail:  # what the delta held is older than the entries passed over: it would leave a gap
                self._delta.clear()
                self._delta_chars = 0
        add, passing, since, tokens, tool_calls = self.offline.add, not in_tail, self.since_index, 0, 0
        last_id, last_had_tools = self.last_message_id, self.last_turn_had_tools
        for i, e in enumerate(entries, start):  # the counters in locals: this loop sees every entry of a big read
            tokens += entry_tokens(e)
            assistant = e.kind == "assistant"
            if i >= since:
                if assistant:
                    tool_calls += len(e.tool_uses)
                if shown and i - start in shown:
                    self._delta.append(shown[i - start])
                    self._delta_chars += len(shown[i - start]) + 1
            if (
                not passing or e.tool_uses or (e.text and e.kind == "user")
            ):  # what else a passed-over entry holds, the notes skip
                add(e, passing=passing)
            if assistant and not e.is_sidechain:
                if e.message_id and e.message_id == last_id:
                    last_had_tools = last_had_tools or bool(e.tool_uses)
                else:
                    last_id, last_had_tools = e.message_id, bool(e.tool_uses)
        self.last_message_id, self.last_turn_had_tools = last_id, last_had_tools
        self.tokens += tokens
        self.tool_calls_since += tool_calls
        self.entries += len(entries)
        while self._delta_chars > DELTA_MAX_CHARS and len(self._delta) > 1:
            self._delta_chars -= len(self._delta.popleft()) + 1
            self._delta_cut = True

    def delta(self) -> str:
        """The transcript since the last update, its newest part when over the budget."""
        text = "\n".join(self._delta)
        if len(text) > DELTA_MAX_CHARS:
            text, self._delta_cut = text[-DELTA_MAX_CHARS:], True
        return ("[…earlier part omitted]\n" if self._delta_cut else "") + text

    def mark_updated(self) -> None:
        """The notes now cover everything read: the next delta and tool-call count start here."""
        self.since_index, self.tool_calls_since = self.entries, 0
        self._delta.clear()
        self._delta_chars, self._delta_cut = 0, False

    def to_json(self) -> str:
        """The read as saved in state.db (the delta was redacted when it was kept; the notes redact what they keep)."""
        fields = {k: v for k, v in self.__dict__.items() if k not in ("offline", "_delta")}
        return json.dumps(
            {**fields, "_delta": list(self._delta), "offline": self.offline.to_dict()}, ensure_ascii=False
        )

    @classmethod
    def from_json(cls, text: str) -> SessionRead:
        data = json.loads(text)
        offline = OfflineNotes.from_dict(data.pop("offline"))
        delta = deque(data.pop("_delta"))
        return cls(**data, offline=offline, _delta=delta)


_READS_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_reads (
    session_id TEXT PRIMARY KEY,
    state TEXT NOT NULL
);
"""


@dataclass(eq=False)
class SessionMemory:
    """Session notes: a subscriber of the transcript pipeline (what was read of each session is
    kept in `session_reads`, so nothing is read twice, across restarts too) and the gates + writer."""

    settings: SessionMemorySettings
    _: KW_ONLY
    home: InitVar[Path]  # the notes live in its SESSIONS_DIRNAME
    state: StateDB
    llm: LLMClient | None
    now: Callable[[], datetime]
    advance: Callable[[Path], object]  # brings a transcript up to date through the pipeline (which calls `consume`)

    def __post_init__(self, home: Path) -> None:
        self.root = home / limits.SESSIONS_DIRNAME
        self._lock = threading.Lock()
        self.updates = {"llm": 0, "offline": 0, "llm_fallback": 0}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="session-memory")
        self._pending: set[str] = set()
        self._pending_lock = threading.Lock()
        self._reads: OrderedDict[str, SessionRead] = OrderedDict()  # recently used reads, most recent last
        self._reads_lock = threading.Lock()
        self.state.migrate("session_memory", _SCHEMA)
        self.state.migrate("session_reads", _READS_SCHEMA)

    # ------------------------------------------------------------------ the pipeline's subscriber
    def _read_of(self, session_id: str, query_one: Callable[..., Any]) -> SessionRead:
        """The session's read: cached, else saved, else new. `query_one` runs inside the caller's transaction."""
        read = self._reads.pop(session_id, None)
        if read is None:
            row = query_one("SELECT state FROM session_reads WHERE session_id = ?", (session_id,))
            read = SessionRead.from_json(row["state"]) if row else SessionRead()
        self._reads[session_id] = read
        while len(self._reads) > limits.SESSION_MEMORY_CACHED_READS:
            self._reads.popitem(last=False)
        return read

    def consume(self, db: Any, file: TranscriptFile, entries: list[Entry], reset: bool) -> None:
        """Fold a main-session batch into that session's read, saved with the pipeline's cursor.
        A rewritten transcript (a rewind) starts the read over: the notes follow the file as it is now."""
        if file.is_sidechain or not self.settings.enabled or not (entries or reset):
            return
        with self._reads_lock:
            if reset:
                self._reads.pop(file.session_id, None)
                db.execute("DELETE FROM session_reads WHERE session_id = ?", (file.session_id,))
            read = self._read_of(file.session_id, lambda sql, params: db.execute(sql, params).fetchone())
            read.add_batch(entries, in_tail=file.in_tail)
            db.execute(
                "INSERT OR REPLACE INTO session_reads(session_id, state) VALUES (?, ?)",
                (file.session_id, read.to_json()),
            )

    def _save_read(self, session_id: str, read: SessionRead) -> None:
        self.state.execute(
            "INSERT OR REPLACE INTO session_reads(session_id, state) VALUES (?, ?)", (session_id, read.to_json())
        )

    # ------------------------------------------------------------------ updates
    def enqueue(self, session_id: str, transcript_path: str | Path, cwd: str | None = None) -> Future[bool] | None:
        """Run `update` on the background worker (turn-end callers must not wait for an LLM);
        None when an update of that session is already queued (it will read the newer transcript)."""
        check_session_id(session_id)
        with self._pending_lock:
            if session_id in self._pending:
                return None
            self._pending.add(session_id)

        def job() -> bool:
            with self._pending_lock:
                self._pending.discard(session_id)
            try:
                return self.update(session_id, transcript_path, cwd)
            except Exception:
                log.exception("session memory update of %s failed", session_id)
                return False

        return self._pool.submit(job)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def path_for(self, session_id: str) -> Path:
        return self.root / check_session_id(session_id) / limits.SESSION_MEMORY_FILENAME

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """Sessions with notes, most recently updated first."""
        rows = self.state.query(
            "SELECT session_id, updated_at, method FROM session_memory ORDER BY updated_at DESC LIMIT ?", (limit,)
        )
        return [{"session_id": r["session_id"], "updated_at": r["updated_at"], "method": r["method"]} for r in rows]

    def get(self, session_id: str) -> str | None:
        """The session's notes, or None when none were written yet."""
        path = self.path_for(session_id)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def update(self, session_id: str, transcript_path: str | Path, cwd: str | None = None) -> bool:
        """Bring the transcript up to date; (re)write the notes when the gates allow. True when written."""
        cfg = self.settings
        if not cfg.enabled:
            return False
        path = self.path_for(session_id)
        self.advance(Path(transcript_path))
        with self._lock:
            row = self.state.query_one("SELECT * FROM session_memory WHERE session_id = ?", (session_id,))
            if row is not None and not path.exists():
                row = None  # notes deleted by hand: start over
            with self._reads_lock:
                read = self._read_of(session_id, self.state.query_one)
                if row is None and read.since_index:
                    read.since_index, read.tool_calls_since = 0, 0
            decision = decide(
                tokens=read.tokens,
                since_tokens=row["tokens_at_update"] if row is not None else None,
                tool_calls_since=read.tool_calls_since,
                last_turn_had_tools=read.last_turn_had_tools,
                init_tokens=cfg.init_tokens,
                update_tokens=cfg.update_tokens,
                tool_calls=cfg.tool_calls,
            )
            if not decision.write:
                return False
            current = path.read_text(encoding="utf-8") if row is not None else ""
            text, method = self._write_notes(current, read.offline.sections(), read.delta())
            atomic_write(path, redact_secrets(text))
            self.state.execute(
                "INSERT INTO session_memory(session_id, tokens_at_update, entries_at_update, updated_at, method) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET "
                "tokens_at_update=excluded.tokens_at_update, "
                "entries_at_update=excluded.entries_at_update, updated_at=excluded.updated_at, method=excluded.method",
                (session_id, read.tokens, read.entries, self.now().isoformat(), method),
            )
            with self._reads_lock:
                read.mark_updated()
                self._save_read(session_id, read)
            self.updates[method] += 1
            log.info("session memory %s written (%s, %s, %d tokens)", session_id, method, decision.reason, read.tokens)
            return True

    def _write_notes(self, current: str, offline: dict[str, str], delta: str) -> tuple[str, str]:
        if self.llm is not None and self.llm.enabled:
            try:
                return notes.render(notes.enforce_budgets(self._llm_sections(current, delta, offline))), "llm"
            except (LLMUnavailable, TokenBudgetExceeded) as exc:
                log.warning("session memory: LLM failed (%s); writing offline notes", exc.code)
                self.updates["llm_fallback"] += 1
        return notes.render(notes.enforce_budgets(offline)), "offline"

    def _llm_sections(self, current: str, delta: str, offline: dict[str, str]) -> dict[str, str]:
        assert self.llm is not None
        system = _SYSTEM.format(
            titles=", ".join(notes.TITLES),
            section=limits.SESSION_MEMORY_SECTION_MAX_TOKENS,
            total=limits.SESSION_MEMORY_MAX_TOKENS,
        )
        user = (
            f"<current_notes>\n{current or notes.render(offline)}\n</current_notes>\n\n"
            f"<transcript_delta>\n{delta}\n</transcript_delta>"
        )
        result = self.llm.complete(purpose="session_memory", system=system, user=user, max_tokens=4096)
        sections = notes.parse(result.text)
        if not sections:
            raise LLMUnavailable("the model's session notes had none of the ten sections; kept the offline notes.")
        previous = notes.parse(current) if current else offline
        return {t: sections.get(t, previous.get(t, "")) for t in notes.TITLES}

    def status(self) -> dict[str, Any]:
        count = self.state.query_one("SELECT COUNT(*) AS n FROM session_memory")
        return {"enabled": self.settings.enabled, "sessions": count["n"] if count else 0, "updates": dict(self.updates)}
