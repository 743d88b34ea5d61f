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
import re
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from memoryd import limits
from memoryd.config import Settings
from memoryd.errors import InvalidRequest, LLMUnavailable, TokenBudgetExceeded
from memoryd.llm.client import LLMClient
from memoryd.session_memory import notes
from memoryd.session_memory.offline import build_sections
from memoryd.state import StateDB
from memoryd.store.files import atomic_write
from memoryd.store.secrets import redact_secrets
from memoryd.transcripts.parser import Entry, estimate_tokens, parse_lines
from memoryd.transcripts.reader import read_new_lines

log = logging.getLogger(__name__)
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
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
    """One transcript entry's size with the one token estimate."""
    parts = [entry.text, entry.injected]
    parts += [json.dumps(u.input, ensure_ascii=False) for u in entry.tool_uses]
    parts += [r.text for r in entry.tool_results]
    return estimate_tokens("".join(parts))


def check_session_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id or ""):
        raise InvalidRequest(
            f"session_id {session_id!r} is not valid: use the agent's session id (letters, digits, '.', '_', '-'; ≤128 chars)."
        )
    return session_id


@dataclass(frozen=True)
class Decision:
    write: bool
    reason: str


def decide(*, tokens: int, since_tokens: int | None, tool_calls_since: int, last_turn_had_tools: bool,
           init_tokens: int, update_tokens: int, tool_calls: int) -> Decision:
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


def _last_turn_had_tools(entries: list[Entry]) -> bool:
    """Whether the last assistant message (CC splits one message over entries sharing its id) called a tool."""
    mains = [e for e in entries if e.kind == "assistant" and not e.is_sidechain]
    if not mains:
        return False
    last = mains[-1]
    same = [e for e in mains if e.message_id == last.message_id] if last.message_id else [last]
    return any(e.tool_uses for e in same)


def _render_delta(entries: list[Entry]) -> str:
    lines: list[str] = []
    for e in entries:
        if e.is_prompt:
            lines.append(f"USER: {e.text}")
        elif e.kind == "assistant":
            if e.text.strip():
                lines.append(f"ASSISTANT: {e.text}")
            lines += [f"TOOL CALL {u.name}: {json.dumps(u.input, ensure_ascii=False)[:2000]}" for u in e.tool_uses]
        for r in e.tool_results:
            lines.append(f"TOOL RESULT{' (error)' if r.is_error else ''}: {r.text[:2000]}")
    text = "\n".join(lines)
    budget = limits.SESSION_MEMORY_DELTA_MAX_TOKENS * limits.CHARS_PER_TOKEN
    return text if len(text) <= budget else "[…earlier part omitted]\n" + text[-budget:]


class SessionMemory:
    def __init__(self, settings: Settings, *, state: StateDB, llm: LLMClient | None, now: Callable[[], datetime]) -> None:
        self.settings = settings
        self.state = state
        self.llm = llm
        self.now = now
        self.root = settings.home / limits.SESSIONS_DIRNAME
        self._lock = threading.Lock()
        self.updates = {"llm": 0, "offline": 0, "llm_fallback": 0}
        state.migrate("session_memory", _SCHEMA)

    def path_for(self, session_id: str) -> Path:
        return self.root / check_session_id(session_id) / limits.SESSION_MEMORY_FILENAME

    def get(self, session_id: str) -> str | None:
        """The session's notes, or None when none were written yet."""
        path = self.path_for(session_id)
        try:
            return path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def update(self, session_id: str, transcript_path: str | Path, cwd: str | None = None) -> bool:
        """Re-read the transcript; (re)write the notes when the gates allow. True when written."""
        cfg = self.settings.session_memory
        if not cfg.enabled:
            return False
        path = self.path_for(session_id)
        try:
            read = read_new_lines(Path(transcript_path), 0)
        except OSError:
            return False
        entries, _ = parse_lines(read.lines)
        with self._lock:
            row = self.state.query_one("SELECT * FROM session_memory WHERE session_id = ?", (session_id,))
            if row is not None and not path.exists():
                row = None  # notes deleted by hand: start over
            tokens = sum(entry_tokens(e) for e in entries)
            start = min(row["entries_at_update"], len(entries)) if row is not None else 0
            since = entries[start:]
            decision = decide(
                tokens=tokens,
                since_tokens=row["tokens_at_update"] if row is not None else None,
                tool_calls_since=sum(len(e.tool_uses) for e in since if e.kind == "assistant"),
                last_turn_had_tools=_last_turn_had_tools(entries),
                init_tokens=cfg.init_tokens,
                update_tokens=cfg.update_tokens,
                tool_calls=cfg.tool_calls,
            )
            if not decision.write:
                return False
            current = path.read_text(encoding="utf-8") if row is not None else ""
            text, method = self._write_notes(current, entries, since)
            atomic_write(path, redact_secrets(text), mode=0o600)
            self.state.execute(
                "INSERT INTO session_memory(session_id, tokens_at_update, entries_at_update, updated_at, method) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET tokens_at_update=excluded.tokens_at_update, "
                "entries_at_update=excluded.entries_at_update, updated_at=excluded.updated_at, method=excluded.method",
                (session_id, tokens, len(entries), self.now().isoformat(), method),
            )
            self.updates[method] += 1
            log.info("session memory %s written (%s, %s, %d tokens)", session_id, method, decision.reason, tokens)
            return True

    def _write_notes(self, current: str, entries: list[Entry], since: list[Entry]) -> tuple[str, str]:
        offline = build_sections(entries)
        if self.llm is not None and self.settings.llm_mode == "llm":
            try:
                return notes.render(notes.enforce_budgets(self._llm_sections(current, since, offline))), "llm"
            except (LLMUnavailable, TokenBudgetExceeded) as exc:
                log.warning("session memory: LLM failed (%s); writing offline notes", exc.code)
                self.updates["llm_fallback"] += 1
        return notes.render(notes.enforce_budgets(offline)), "offline"

    def _llm_sections(self, current: str, since: list[Entry], offline: dict[str, str]) -> dict[str, str]:
        assert self.llm is not None
        system = _SYSTEM.format(titles=", ".join(notes.TITLES), section=limits.SESSION_MEMORY_SECTION_MAX_TOKENS,
                                total=limits.SESSION_MEMORY_MAX_TOKENS)
        user = (f"<current_notes>\n{current or notes.render(offline)}\n</current_notes>\n\n"
                f"<transcript_delta>\n{_render_delta(since)}\n</transcript_delta>")
        result = self.llm.complete(purpose="session_memory", system=system, user=user, max_tokens=4096)
        sections = notes.parse(result.text)
        if not sections:
            raise LLMUnavailable("the model's session notes had none of the ten sections; kept the offline notes.")
        previous = notes.parse(current) if current else offline
        return {t: sections.get(t, previous.get(t, "")) for t in notes.TITLES}

    def status(self) -> dict[str, Any]:
        count = self.state.query_one("SELECT COUNT(*) AS n FROM session_memory")
        return {"enabled": self.settings.session_memory.enabled, "sessions": count["n"] if count else 0, "updates": dict(self.updates)}
