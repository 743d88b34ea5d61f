"""`PendingTurns`: extraction's subscription to the transcript pipeline. It keeps, per session,
what was said since the last extraction (prompts, the rendered turns, the agent's own writes),
durably and bounded, so a turn-end job never reads a transcript itself. What it keeps has its
secrets redacted: state.db never holds one."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

from memoryd.state import StateDB
from memoryd.store.secrets import redact_secrets
from memoryd.transcripts.parser import WRITE_TOOLS, Entry
from memoryd.transcripts.pipeline import TranscriptFile
from memoryd.transcripts.render import render_entry

SCHEMA = """
CREATE TABLE IF NOT EXISTS extraction_pending (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    timestamp TEXT NOT NULL DEFAULT '',
    cwd TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS extraction_pending_session ON extraction_pending(session_id, seq);
"""

PROMPT = "prompt"  # the user's words, for the offline extractor
TURN = "turn"  # one entry with prose (the user's or the assistant's words), rendered for the model
TOOLS = "tools"  # one entry with tool calls only, rendered for the model
WROTE = "wrote"  # a path the agent wrote with a file tool
BASH = "bash"  # a shell command the agent ran (may touch the memory dir)

TEXT_MAX_CHARS = 8_000  # one pending row; a longer prompt or turn keeps its end
TOOL_CALL_CHARS = 120  # extraction sees which tool touched what, not the payload
SESSION_MAX_ROWS = 4_000  # per session; the oldest rendered turns go first past it


@dataclass(frozen=True)
class PendingRow:
    seq: int
    kind: str
    text: str
    timestamp: str
    cwd: str


class PendingTurns:
    """Durable per-session backlog of what extraction has not looked at yet."""

    def __init__(self, state: StateDB) -> None:
        self.state = state
        state.migrate("extraction_pending", SCHEMA)

    def consume(self, db: sqlite3.Connection, file: TranscriptFile, entries: list[Entry], reset: bool) -> None:
        if file.is_sidechain:
            return  # a subagent's transcript: its findings reach the main session as tool results
        rows: list[tuple[str, str, str, str, str]] = []
        for e in entries:
            if e.is_sidechain or e.replayed:  # a rewritten file's old turns were looked at already
                continue
            if e.has_prose:  # the words are redacted once, then rendered; tool calls are rendered, then redacted
                e = replace(e, text=redact_secrets(e.text[-TEXT_MAX_CHARS:]))
            if e.is_prompt:
                rows.append((file.session_id, PROMPT, e.text, e.timestamp, e.cwd))
            rendered = render_entry(e, timestamps=True, tool_chars=TOOL_CALL_CHARS, results=False)
            if e.tool_uses:
                rendered = redact_secrets(rendered)
            if rendered:
                rows.append((file.session_id, TURN if e.has_prose else TOOLS, rendered[-TEXT_MAX_CHARS:], e.timestamp, e.cwd))
            for use in e.tool_uses:
                if use.name in WRITE_TOOLS:
                    target = str(use.input.get("file_path") or use.input.get("notebook_path") or "")
                    if target:
                        rows.append((file.session_id, WROTE, target, e.timestamp, e.cwd))
                elif use.name == "Bash":
                    rows.append((file.session_id, BASH, redact_secrets(str(use.input.get("command", ""))[:TEXT_MAX_CHARS]), e.timestamp, e.cwd))
        if not rows:
            return
        db.executemany("INSERT INTO extraction_pending(session_id, kind, text, timestamp, cwd) VALUES (?, ?, ?, ?, ?)", rows)
        db.execute(
            "DELETE FROM extraction_pending WHERE session_id = ? AND kind IN (?, ?) AND seq <= "
            "(SELECT seq FROM extraction_pending WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (file.session_id, TURN, TOOLS, file.session_id, SESSION_MAX_ROWS),
        )

    def peek(self, session_id: str) -> list[PendingRow]:
        """Everything pending for a session, oldest first."""
        rows = self.state.query("SELECT seq, kind, text, timestamp, cwd FROM extraction_pending WHERE session_id = ? ORDER BY seq", (session_id,))
        return [PendingRow(int(r["seq"]), r["kind"], r["text"], r["timestamp"], r["cwd"]) for r in rows]

    def done(self, session_id: str, through_seq: int) -> None:
        """Drop what a finished job looked at; rows added while it ran stay."""
        self.state.execute("DELETE FROM extraction_pending WHERE session_id = ? AND seq <= ?", (session_id, through_seq))

    def sessions(self) -> list[str]:
        return [r["session_id"] for r in self.state.query("SELECT DISTINCT session_id FROM extraction_pending")]
