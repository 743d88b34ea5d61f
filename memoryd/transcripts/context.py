"""`SessionContexts`: per session, what the agent is working on (the files and commands of its
recent tool calls) and which Markdown files it already holds, learned by the transcript pipeline
as it reads each line once. A hook asks for it by session id; no request opens a transcript.

It does NOT decide what recall does with it (the ranker does) nor read files itself.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memoryd.base.secrets import redact_prefix, redact_secrets
from memoryd.base.state_db import StateDB
from memoryd.transcripts.parser import Entry
from memoryd.transcripts.pipeline import TranscriptFile

PATHS_KEPT = 50  # recent file paths and search patterns per session, most recent last
COMMANDS_KEPT = 20  # recent shell commands per session
MARKDOWN_KEPT = 2_000  # Markdown files named per session (memory files among them), most recent last
COMMAND_MAX_CHARS = 500  # a kept command is cut to this (a heredoc is not context)
SESSIONS_KEPT = 2_000  # sessions kept in state.db; the least recently read go first
CACHED = 64  # sessions kept in memory between batches
# Tool inputs that name a file or a place (Claude Code's tools; spec of their inputs: integration doc §2).
PATH_INPUTS = {
    "Read": ("file_path",),
    "Edit": ("file_path",),
    "Write": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Grep": ("path", "pattern", "glob"),
    "Glob": ("path", "pattern"),
}
# An absolute path to a .md file inside free text (a command, a tool's output, an injected header
# "Memory: /…/x.md:"): no blanks or quotes in it; a path named by a tool input is taken whole.
_MARKDOWN_PATH = re.compile(r"""(/[^\s"'`<>|\\]*?\.md)(?![\w.-])""")

SCHEMA = """
CREATE TABLE IF NOT EXISTS session_context (
    session_id TEXT PRIMARY KEY,
    state BLOB NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS session_context_updated ON session_context(updated_at);
"""


@dataclass(frozen=True)
class SessionContext:
    """What a session was working on, most recent last: file paths and search patterns its tools
    named, shell commands it ran (secrets redacted), and the Markdown files it holds in context."""

    paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    memory_files: set[str] = field(default_factory=set)  # absolute paths of .md files named in the transcript

    def held_in(self, memory_dir: Path | str) -> set[str]:
        """The filenames of `memory_dir` the session already holds (read, written, or recalled)."""
        prefix = str(memory_dir).rstrip("/") + "/"
        return {p[len(prefix) :] for p in self.memory_files if p.startswith(prefix) and "/" not in p[len(prefix) :]}


def _keep(seq: dict[str, None], value: str, limit: int) -> None:
    """Put `value` last in an insertion-ordered set, dropping the oldest past `limit`."""
    seq.pop(value, None)
    seq[value] = None
    while len(seq) > limit:
        del seq[next(iter(seq))]


def _markdown_in(text: str) -> Iterable[str]:
    return _MARKDOWN_PATH.findall(text) if ".md" in text else ()


class _Learned:
    """One session's context as it is being learned (insertion-ordered dicts as bounded ordered sets)."""

    __slots__ = ("paths", "commands", "markdown")

    def __init__(self, paths: Iterable[str] = (), commands: Iterable[str] = (), markdown: Iterable[str] = ()) -> None:
        self.paths = dict.fromkeys(paths)
        self.commands = dict.fromkeys(commands)
        self.markdown = dict.fromkeys(markdown)

    def add(self, entries: list[Entry]) -> None:
        for e in entries:
            if e.is_sidechain:
                continue
            for text in (e.injected, e.text):
                for path in _markdown_in(text):
                    _keep(self.markdown, path, MARKDOWN_KEPT)
            for result in e.tool_results:
                for path in _markdown_in(result.text):
                    _keep(self.markdown, path, MARKDOWN_KEPT)
            for use in e.tool_uses:
                if use.name == "Bash":
                    command = str(use.input.get("command") or "").strip()
                    if command:
                        for path in _markdown_in(command):
                            _keep(self.markdown, path, MARKDOWN_KEPT)
                        _keep(self.commands, redact_prefix(command, COMMAND_MAX_CHARS), COMMANDS_KEPT)
                    continue
                for key in PATH_INPUTS.get(use.name, ()):
                    value = use.input.get(key)
                    if isinstance(value, str) and value.strip():
                        value = value.strip()
                        _keep(self.paths, value if key.endswith("path") else redact_secrets(value), PATHS_KEPT)
                        if key.endswith("path") and value.endswith(".md"):
                            _keep(self.markdown, value, MARKDOWN_KEPT)

    def to_json(self) -> bytes:
        return orjson.dumps(
            {"paths": list(self.paths), "commands": list(self.commands), "markdown": list(self.markdown)}
        )

    @classmethod
    def from_json(cls, raw: Any) -> _Learned:
        data = orjson.loads(raw)
        return cls(data.get("paths", ()), data.get("commands", ()), data.get("markdown", ()))

    def snapshot(self) -> SessionContext:
        return SessionContext(list(self.paths), list(self.commands), set(self.markdown))


class SessionContexts:
    """The pipeline's subscriber that learns each session's context; kept in state.db with the
    cursor (a restart resumes where the pipeline does), bounded per session and in sessions."""

    def __init__(self, state: StateDB) -> None:
        self.state = state
        state.migrate("session_context", SCHEMA)
        self._cache: OrderedDict[str, _Learned] = OrderedDict()
        self._lock = threading.Lock()

    def consume(self, db: sqlite3.Connection, file: TranscriptFile, entries: list[Entry], reset: bool) -> None:
        """Fold a main-session batch in; a rewritten transcript (a rewind) starts the session over."""
        if file.is_sidechain or not (entries or reset):
            return  # a subagent's reads are not in the main session's context
        with self._lock:
            learned = None if reset else self._load(file.session_id, db)
            new = learned is None
            learned = learned or _Learned()
            learned.add(entries)
            self._remember(file.session_id, learned)
            db.execute(
                "INSERT OR REPLACE INTO session_context(session_id, state, updated_at) VALUES (?, ?, "
                "COALESCE((SELECT MAX(updated_at) FROM session_context), 0) + 1)",
                (file.session_id, learned.to_json()),
            )
            if new:
                db.execute(
                    "DELETE FROM session_context WHERE updated_at <= "
                    "(SELECT updated_at FROM session_context ORDER BY updated_at DESC LIMIT 1 OFFSET ?)",
                    (SESSIONS_KEPT,),
                )

    def get(self, session_id: str) -> SessionContext | None:
        """The session's context as the pipeline last read it; None for a session never read."""
        with self._lock:
            learned = self._cache.get(session_id)
            if learned is not None:
                return learned.snapshot()
        # the database outside our lock: the pipeline's transaction takes the database first, then our lock
        row = self.state.query_one("SELECT state FROM session_context WHERE session_id = ?", (session_id,))
        if row is None:
            return None
        with self._lock:
            learned = self._cache.get(session_id)  # a batch folded meanwhile is newer than the row read
            if learned is None:
                learned = _Learned.from_json(row["state"])
                self._remember(session_id, learned)
            return learned.snapshot()

    def _load(self, session_id: str, db: sqlite3.Connection) -> _Learned | None:
        learned = self._cache.get(session_id)
        if learned is None:
            row = db.execute("SELECT state FROM session_context WHERE session_id = ?", (session_id,)).fetchone()
            learned = _Learned.from_json(row[0]) if row else None
        return learned

    def _remember(self, session_id: str, learned: _Learned) -> None:
        self._cache.pop(session_id, None)
        self._cache[session_id] = learned
        while len(self._cache) > CACHED:
            self._cache.popitem(last=False)
