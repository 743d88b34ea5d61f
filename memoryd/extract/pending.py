"""`PendingTurns`: extraction's subscription to the transcript pipeline. It keeps, per session,
what was said since the last extraction (prompts, the rendered turns, the agent's own writes),
durably and bounded, so a turn-end job never reads a transcript itself. What it keeps has its
secrets redacted: state.db never holds one."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace

from memoryd.base.secrets import redact_secrets
from memoryd.base.state_db import StateDB
from memoryd.extract.model import TRANSCRIPT_PROMPT_MAX_CHARS
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
SESSION_MAX_ROWS = 4_000  # rendered turns and shell commands kept per session; the oldest go first past it
TURNS_KEPT_CHARS = TRANSCRIPT_PROMPT_MAX_CHARS  # rendered turns a batch keeps: what one model prompt holds
PROMPTS_KEPT = 200  # the user's newest prompts per session, for the offline extractor


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
        """Keep what a job can use, newest first, within the budgets: the rendered turns a model
        prompt holds (TURNS_KEPT_CHARS), the last PROMPTS_KEPT prompts, the agent's own writes.
        Older entries of a big read (and every batch before its tail) are passed over, never rendered or redacted."""
        if file.is_sidechain:
            return  # a subagent's transcript: its findings reach the main session as tool results
        rows: list[tuple[str, str, str, str, str]] = []
        # Before the read's tail only the agent's writes are kept: the tail fills the newest-first budgets.
        turn_room, prompts_left = (TURNS_KEPT_CHARS, PROMPTS_KEPT) if file.in_tail else (0, 0)
        for e in reversed(entries if file.in_tail else [e for e in entries if e.tool_uses]):
            if e.is_sidechain or e.replayed:  # a rewritten file's old turns were looked at already
                continue
            for use in e.tool_uses:
                if use.name in WRITE_TOOLS:
                    target = str(use.input.get("file_path") or use.input.get("notebook_path") or "")
                    if target:
                        rows.append((file.session_id, WROTE, target, e.timestamp, e.cwd))
                elif use.name == "Bash" and turn_room > 0:
                    rows.append(
                        (
                            file.session_id,
                            BASH,
                            redact_secrets(str(use.input.get("command", ""))[:TEXT_MAX_CHARS]),
                            e.timestamp,
                            e.cwd,
                        )
                    )
            if turn_room <= 0 and (prompts_left <= 0 or not e.is_prompt):
                continue
            if e.has_prose:  # the words are redacted once, then rendered; tool calls are rendered, then redacted
                e = replace(e, text=redact_secrets(e.text[-TEXT_MAX_CHARS:]))
            if e.is_prompt and prompts_left > 0:
                rows.append((file.session_id, PROMPT, e.text, e.timestamp, e.cwd))
                prompts_left -= 1
            if turn_room > 0:
                rendered = render_entry(e, timestamps=True, tool_chars=TOOL_CALL_CHARS, results=False)
                if e.tool_uses:
                    rendered = redact_secrets(rendered)
                if rendered:
                    rows.append(
                        (
                            file.session_id,
                            TURN if e.has_prose else TOOLS,
                            rendered[-TEXT_MAX_CHARS:],
                            e.timestamp,
                            e.cwd,
                        )
                    )
                    turn_room -= len(rendered) + 1
        if not rows:
            return
        rows.reverse()  # oldest first, so `seq` keeps the transcript's order
        db.executemany(
            "INSERT INTO extraction_pending(session_id, kind, text, timestamp, cwd) VALUES (?, ?, ?, ?, ?)", rows
        )
        for kinds, keep in (((TURN, TOOLS, BASH), SESSION_MAX_ROWS), ((PROMPT,), PROMPTS_KEPT)):
            marks = ", ".join("?" for _ in kinds)
            db.execute(
                f"DELETE FROM extraction_pending WHERE session_id = ? AND kind IN ({marks}) AND seq <= "
                f"(SELECT seq FROM extraction_pending WHERE session_id = ? AND kind IN ({marks}) ORDER BY seq DESC "
                "LIMIT 1 OFFSET ?)",
                (file.session_id, *kinds, file.session_id, *kinds, keep),
            )

    def peek(self, session_id: str) -> list[PendingRow]:
        """Everything pending for a session, oldest first."""
        rows = self.state.query(
            "SELECT seq, kind, text, timestamp, cwd FROM extraction_pending WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        return [PendingRow(int(r["seq"]), r["kind"], r["text"], r["timestamp"], r["cwd"]) for r in rows]

    def done(self, session_id: str, through_seq: int) -> None:
        """Drop what a finished job looked at; rows added while it ran stay."""
        self.state.execute(
            "DELETE FROM extraction_pending WHERE session_id = ? AND seq <= ?", (session_id, through_seq)
        )

    def sessions(self) -> list[str]:
        return [r["session_id"] for r in self.state.query("SELECT DISTINCT session_id FROM extraction_pending")]
