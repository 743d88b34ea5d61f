"""`RecallLog`: what each recall gave the agent and why, kept in the state database as a ring of
the last RECALL_LOG_PER_PROJECT recalls per memory dir. A prompt is redacted and cut short before
it is stored; no memory body is ever stored (only file names, names, scores and matched words)."""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field, fields, replace
from typing import Any

from memoryd.base import limits
from memoryd.base.activity import RECALL, Activity
from memoryd.base.secrets import REDACTED, redact_secrets, secret_parts
from memoryd.base.state_db import StateDB
from memoryd.base.text import words
from memoryd.recall.explain import Why

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS recall_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    memory_dir TEXT NOT NULL,
    session_id TEXT NOT NULL,
    source TEXT NOT NULL,
    prompt TEXT NOT NULL,
    method TEXT NOT NULL,
    reason TEXT NOT NULL,
    took_ms REAL NOT NULL,
    why TEXT NOT NULL,
    lexical_only INTEGER NOT NULL DEFAULT 0,
    vectors_missing INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS recall_log_dir ON recall_log(memory_dir, id);
CREATE INDEX IF NOT EXISTS recall_log_session ON recall_log(session_id, id);
CREATE TABLE IF NOT EXISTS recall_log_hits (
    entry_id INTEGER NOT NULL,
    memory_dir TEXT NOT NULL,
    filename TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS recall_log_hits_file ON recall_log_hits(memory_dir, filename, entry_id);
CREATE INDEX IF NOT EXISTS recall_log_hits_entry ON recall_log_hits(entry_id);
"""
# columns added since the table was first made: (name, declaration), each added to an older table once
ADDED_COLUMNS = (
    ("lexical_only", "INTEGER NOT NULL DEFAULT 0"),  # issue 52
    ("vectors_missing", "INTEGER NOT NULL DEFAULT 0"),
)
SOURCES = ("hook", "rest", "mcp")
WRITER_ROUNDS = 2  # batches a reader writes itself before it hands the rest back
WRITER_THREAD_NAME = "recall-log"


@dataclass(frozen=True)
class RecallEntry:
    id: int
    at: float
    memory_dir: str
    session_id: str
    source: str  # hook | rest | mcp | cli
    prompt: str  # redacted, cut to RECALL_LOG_PROMPT_CHARS
    method: str
    reason: str  # why it stayed silent, or why the LLM was not used
    took_ms: float
    injected: list[Why] = field(default_factory=list)
    left_out: list[Why] = field(default_factory=list)  # just under the cut
    lexical_only: bool = False  # ranked without any vector: tool time, or the model off or not loaded yet
    vectors_missing: int = 0  # memories found lexically only, their vectors owed to saves (reads never wait for them)

    @property
    def held(self) -> str:
        """The guard's decision when this entry is a held act (deny, ask or context), else ""."""
        return next((w.held for w in self.injected if w.held), "")

    def as_dict(self) -> dict[str, Any]:
        """Its fields as plain data, for the live activity event and the web view (the API reads the entry itself)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)} | {"held": self.held}
        return data | {
            "injected": [w.as_dict() for w in self.injected],
            "left_out": [w.as_dict() for w in self.left_out],
        }

    def log_line(self) -> str:
        """The daemon log's one line for it: files given, counts, method, time; never the prompt or a body."""
        given = ", ".join(w.filename for w in self.injected)
        what = f"gave {len(self.injected)} ({given})" if self.injected else "gave none"
        if self.held:
            what = f"held an act ({self.held}) by {given}"
        return (
            f"recall ({self.source}) {what}, {len(self.left_out)} left out; method {self.method}, "
            f"{self.took_ms:.1f} ms; session {self.session_id} in {self.memory_dir}"
        )


def _split(why: list[Why]) -> tuple[list[Why], list[Why]]:
    """(injected, left out), each in the order recall weighed them."""
    return [w for w in why if w.injected], [w for w in why if not w.injected]


# Issue 52: a password named without "is" or ":" ("password hunter2", "pw hunter2", "passwd Zx9!kLm2") passes the
# save check, which must not refuse notes about passwords; a log only keeps, so there such a value goes too: a
# credential word, then a value mixing letters with digits or symbols. Possessive runs: linear on any prompt.
_NAMED_VALUE = re.compile(
    r"(?i)\b(?:password|passwd|passphrase|pwd|pw|pin|secret|token)s?\b[ \t]*+(?:[:=][ \t]*+)?"
    r"(?:(?:is|was)[ \t]++)?(?P<value>[^\s,;'\"`]++)"
)
_LETTER, _NOT_LETTER = re.compile(r"[A-Za-z]"), re.compile(r"[0-9!@#$%^&*+=~_-]")


def _value(m: re.Match[str]) -> str:
    """The credential-like value of one `_NAMED_VALUE` match ("" when it reads as a word: "password manager")."""
    value = m.group("value").rstrip(".!?)")
    return value if _LETTER.search(value) and _NOT_LETTER.search(value) else ""


def _named_values(text: str) -> list[str]:
    """The values a credential word names in `text`, each as it is written."""
    return [v for m in _NAMED_VALUE.finditer(text) if (v := _value(m))]


def redact_log_text(text: str) -> str:
    """`redact_secrets`, and then each value a credential word names (`_NAMED_VALUE`)."""

    def cut(m: re.Match[str]) -> str:
        value = _value(m)
        start = m.start("value") - m.start()
        return m.group()[:start] + REDACTED + m.group()[start + len(value) :] if value else m.group()

    return _NAMED_VALUE.sub(cut, redact_secrets(text))


def short_prompt(prompt: str) -> str:
    """Redacted first, then cut, so a cut never leaves half a secret behind."""
    text = " ".join(redact_log_text(prompt).split())
    cut = limits.RECALL_LOG_PROMPT_CHARS
    return text if len(text) <= cut else text[: cut - 1] + "…"


def redacted_why(why: list[Why], prompt: str) -> list[Why]:
    """Each reason with nothing secret left (issue 41): context items redacted, and a matched word that
    is a secret itself or part of one in the prompt or a context item becomes REDACTED (`hunter2` in
    "the password is hunter2", the body of a token in `GITHUB_TOKEN=ghp_… ./deploy.sh`)."""
    items = {item for w in why for item in w.context}
    parts = [p for text in (prompt, *items) for p in (*secret_parts(text), *_named_values(text))]
    secret = {word for part in parts for word in words(part)}

    seen: dict[str, str] = {}  # each word, path or item scanned once per recall (8 reasons repeat most of them)

    def redact(text: str) -> str:
        if text not in seen:
            seen[text] = redact_log_text(text)
        return seen[text]

    def clean(found: tuple[str, ...]) -> tuple[str, ...]:
        kept = [REDACTED if t.lower() in secret or redact(t) != t else t for t in found]
        return tuple(dict.fromkeys(kept))

    return [
        replace(
            w,
            name=redact(w.name),
            terms=clean(w.terms),
            paths=clean(w.paths),
            context=tuple(redact(item) for item in w.context),
        )
        for w in why
    ]


@dataclass(eq=False)
class RecallLog:
    """Writes one row per recall (and publishes it as live activity); reads by dir, session or memory."""

    state: StateDB
    _: KW_ONLY
    clock: Callable[[], float]
    activity: Activity | None = None
    keep: int = limits.RECALL_LOG_PER_PROJECT

    def __post_init__(self) -> None:
        self._batch = threading.Condition()  # guards what follows
        self._pending: list[
            tuple[RecallEntry, list[Why]]
        ] = []  # each with its reasons in the order recall weighed them
        self._writing = False  # a thread is writing batches; others only append
        self._writer: ThreadPoolExecutor | None = None  # writes what recalls hand over, after they answered
        self._recorded = 0  # recalls handed to `record`
        self._stored = 0  # ... of which written (or given up on)
        self.state.migrate("recall_log", SCHEMA)
        have = {row["name"] for row in self.state.query("PRAGMA table_info(recall_log)")}
        for name, declaration in ADDED_COLUMNS:
            if name not in have:
                self.state.execute(f"ALTER TABLE recall_log ADD COLUMN {name} {declaration}")

    def record(
        self,
        *,
        memory_dir: str,
        session_id: str,
        source: str,
        prompt: str,
        method: str,
        reason: str,
        took_ms: float,
        why: list[Why],
        lexical_only: bool = False,
        vectors_missing: int = 0,
    ) -> None:
        """Log one recall: its row is written by the log's writer thread, in batches, one transaction each,
        and the recall answers at once (issue 31: a transaction per recall queued every recall behind the
        others under 20 clients; issue 42: its own write was ~35 % of a recall whose vector was cached).
        Readers wait for what was recorded before them (`_settled`). Every field is redacted here, before
        it is stored or published (the API, --explain, the live page and its stream read what is stored)."""
        why = redacted_why(why, prompt)
        entry = RecallEntry(
            0,
            self.clock(),
            memory_dir,
            session_id,
            source,
            short_prompt(prompt),
            method,
            redact_secrets(reason),
            round(took_ms, 2),
            *_split(why),
            lexical_only=lexical_only,
            vectors_missing=vectors_missing,
        )
        log.info("%s", entry.log_line())
        with self._batch:
            self._pending.append((entry, list(why)))
            self._recorded += 1
            if self._writing:
                return
            self._writing = True
        try:
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix=WRITER_THREAD_NAME)
            self._writer.submit(self._drain)
        except RuntimeError:  # closed: the daemon is stopping, write it here
            self._drain()

    def close(self) -> None:
        """Write what is pending and stop the writer thread (before the state database closes)."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
        self._settled()

    def _drain(self) -> None:
        """The writer's turn: batches until none is left."""
        while True:
            self._write_pending()
            with self._batch:
                if not self._pending or self._writing:
                    return
                self._writing = True

    def _write_pending(self) -> None:
        """Write batches until none is left, or for WRITER_ROUNDS at most (a reader must not keep
        writing rows while recalls go on arriving), then hand the writer's role back: the writer
        thread (`_drain`) takes it again while rows are pending."""
        for _ in range(WRITER_ROUNDS):
            with self._batch:
                batch, self._pending = self._pending, []
                if not batch:
                    break
            try:
                written = self._insert(batch)
            except Exception:  # the log is for people; never fail the agent's prompt over it
                log.exception("could not record %d recalls in the recall log", len(batch))
                written = []
            if self.activity is not None:  # before they count as stored: a reader that waited sees them live too
                for entry in written:
                    self.activity.publish(RECALL, entry.memory_dir, entry.as_dict())
            with self._batch:
                self._stored += len(batch)
                self._batch.notify_all()
        with self._batch:
            self._writing = False
            self._batch.notify_all()

    def _insert(self, batch: list[tuple[RecallEntry, list[Why]]]) -> list[RecallEntry]:
        """One transaction: the rows, their hits, and each dir's ring trimmed once."""
        written = []
        with self.state.transaction() as db:
            for entry, why in batch:
                cur = db.execute(
                    "INSERT INTO recall_log(at, memory_dir, session_id, source, prompt, method, "
                    "reason, took_ms, why, lexical_only, vectors_missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.at,
                        entry.memory_dir,
                        entry.session_id,
                        entry.source,
                        entry.prompt,
                        entry.method,
                        entry.reason,
                        entry.took_ms,
                        json.dumps([w.as_dict() for w in why]),
                        int(entry.lexical_only),
                        entry.vectors_missing,
                    ),
                )
                entry_id = int(cur.lastrowid or 0)
                db.executemany(
                    "INSERT INTO recall_log_hits(entry_id, memory_dir, filename) VALUES (?, ?, ?)",
                    [(entry_id, entry.memory_dir, w.filename) for w in entry.injected],
                )
                written.append(replace(entry, id=entry_id))
            for memory_dir in {entry.memory_dir for entry, _ in batch}:
                # the ring: rows of this dir older than its newest `keep` go
                edge = db.execute(
                    "SELECT id FROM recall_log WHERE memory_dir = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                    (memory_dir, self.keep),
                ).fetchone()
                if edge is not None:
                    db.execute(
                        "DELETE FROM recall_log_hits WHERE entry_id IN (SELECT id FROM recall_log "
                        "WHERE memory_dir = ? AND id <= ?)",
                        (memory_dir, edge["id"]),
                    )
                    db.execute("DELETE FROM recall_log WHERE memory_dir = ? AND id <= ?", (memory_dir, edge["id"]))
        return written

    def _settled(self) -> None:
        """Before a read: every recall logged so far is written."""
        with self._batch:
            target = self._recorded
            if self._stored < target and not self._writing:  # left by a writer that handed over: write it now
                self._writing = True
            else:
                self._batch.wait_for(lambda: self._stored >= target, timeout=limits.RECALL_LOG_SETTLE_SECONDS)
                return
        self._write_pending()

    def entries(
        self,
        *,
        memory_dir: str | None = None,
        session_id: str | None = None,
        limit: int = limits.RECALL_LOG_DEFAULT_LIMIT,
    ) -> list[RecallEntry]:
        """The newest recalls first, of one dir and/or one session when given."""
        self._settled()
        where, params = [], []
        if memory_dir is not None:
            where.append("memory_dir = ?")
            params.append(memory_dir)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        sql = (
            "SELECT * FROM recall_log"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY id DESC LIMIT ?"
        )
        return [_entry(row) for row in self.state.query(sql, (*params, limit))]

    def of_memory(self, memory_dir: str, filename: str, limit: int = 10) -> list[RecallEntry]:
        """The last recalls that gave the agent this memory, newest first."""
        self._settled()
        rows = self.state.query(
            "SELECT l.* FROM recall_log_hits h JOIN recall_log l ON l.id = h.entry_id WHERE "
            "h.memory_dir = ? AND h.filename = ? "
            "ORDER BY h.entry_id DESC LIMIT ?",
            (memory_dir, filename, limit),
        )
        return [_entry(row) for row in rows]


def _entry(row: Any) -> RecallEntry:
    return RecallEntry(
        int(row["id"]),
        float(row["at"]),
        row["memory_dir"],
        row["session_id"],
        row["source"],
        row["prompt"],
        row["method"],
        row["reason"],
        float(row["took_ms"]),
        *_split([Why.from_dict(d) for d in json.loads(row["why"])]),
        lexical_only=bool(row["lexical_only"]),
        vectors_missing=int(row["vectors_missing"]),
    )
