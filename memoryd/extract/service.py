"""`ExtractionService`: turn-end jobs, persisted in SQLite, run one at a time by a worker.

A turn-end is answered at once with a job id (one SQLite insert). The worker reads the
session's transcript after its cursor, applies the skips (throttle, the agent wrote memory
itself, no prose), extracts (LLM, else the deterministic extractor) and writes through
`MemoryDir.save`, so secrets are refused there. The cursor moves only after the writes,
so a crash re-runs the job; saves are idempotent (same type+name updates the same file).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable

from memoryd import limits
from memoryd.errors import Conflict, InvalidMemory, InvalidRequest, JobNotFound, LLMUnavailable, QueueFull, TokenBudgetExceeded, Unprocessable
from memoryd.extract.offline import Candidate, extract_explicit
from memoryd.extract.prompts import EXTRACTION_SYSTEM, extraction_user_message
from memoryd.llm import LLMClient, extract_json
from memoryd.metrics import Metrics
from memoryd.similarity import jaccard
from memoryd.state import StateDB
from memoryd.store.secrets import redact_record, redact_secrets
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.paths import FILENAME_RE, canonical_cwd
from memoryd.transcripts.parser import WRITE_TOOLS, Entry, parse_lines
from memoryd.transcripts.reader import read_new_lines
from memoryd.transcripts.service import TranscriptService

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    memory_dir TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    last_assistant_message TEXT,
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    written TEXT NOT NULL DEFAULT '[]',
    refused TEXT NOT NULL DEFAULT '[]',
    attempts INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 1,
    not_before REAL NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status, created_at);
CREATE INDEX IF NOT EXISTS jobs_session ON jobs(session_id, status);
CREATE TABLE IF NOT EXISTS extraction_cursors (
    session_id TEXT PRIMARY KEY,
    transcript_path TEXT NOT NULL,
    offset INTEGER NOT NULL DEFAULT 0,
    inode INTEGER NOT NULL DEFAULT 0,
    turns_since INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS extraction_seen (
    session_id TEXT NOT NULL,
    uuid TEXT NOT NULL,
    PRIMARY KEY (session_id, uuid)
) WITHOUT ROWID;
"""

TRANSCRIPT_PROMPT_MAX_CHARS = 30_000  # bound on the session delta sent to the LLM
DEDUP_SIMILARITY = 0.7  # description word overlap above which a candidate updates an existing memory


@dataclass
class Outcome:
    status: str
    reason: str
    written: list[str]
    refused: list[dict[str, str]]


def _date_of(timestamp: str) -> date | None:
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def _inside(path_text: str, directory: Path) -> bool:
    if not path_text:
        return False
    real = Path(os.path.realpath(os.path.expanduser(path_text)))
    return real == directory or directory in real.parents


class ExtractionService:
    """Turn-end jobs: enqueue fast, run in a worker thread, survive restarts."""

    def __init__(
        self,
        *,
        state: StateDB,
        stores: StoreRegistry,
        transcripts: TranscriptService,
        llm: LLMClient,
        metrics: Metrics,
        every_n_turns: int = limits.EXTRACT_EVERY_N_TURNS,
        enabled: bool = True,
        queue_max: int = limits.EXTRACT_QUEUE_MAX,
        mode_for: Callable[[MemoryDir], str] = lambda store: "topics",
        on_daily_log: Callable[[MemoryDir, Candidate, date | None], object] | None = None,
    ) -> None:
        self.state = state
        self.stores = stores
        self.transcripts = transcripts
        self.llm = llm
        self.metrics = metrics
        self.every_n_turns = every_n_turns
        self.enabled = enabled
        self.queue_max = queue_max
        self.mode_for = mode_for
        self.on_daily_log = on_daily_log
        state.migrate("extraction", SCHEMA)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None
        self._dir_locks: dict[str, threading.Lock] = {}
        self.current_job: str | None = None

    # ------------------------------------------------------------------ request path
    def enqueue_turn_end(self, session_id: str, transcript_path: str, cwd: str, last_assistant_message: str | None = None) -> str:
        """Record a turn end and return its job id; coalesces with a queued job of the session."""
        if not session_id or not isinstance(session_id, str) or len(session_id) > 200:
            raise InvalidRequest("session_id is required: pass the agent's session id (Claude Code's Stop hook JSON has it).")
        real = self.transcripts.check_under_root(transcript_path)
        canonical_cwd(cwd)
        memory_dir = self.stores.memory_dir_for(cwd)
        now = time.time()
        with self.state.transaction() as db:
            db.execute(
                "INSERT INTO extraction_cursors(session_id, transcript_path, turns_since, updated_at) VALUES (?, ?, 1, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET turns_since = turns_since + 1, transcript_path = excluded.transcript_path, updated_at = excluded.updated_at",
                (session_id, str(real), now),
            )
            queued = db.execute("SELECT job_id FROM jobs WHERE session_id = ? AND status = 'queued' ORDER BY created_at LIMIT 1", (session_id,)).fetchone()
            if queued is not None:
                db.execute(
                    "UPDATE jobs SET last_assistant_message = COALESCE(?, last_assistant_message), turns = turns + 1, not_before = ?, updated_at = ? WHERE job_id = ?",
                    (last_assistant_message, now + limits.EXTRACT_SETTLE_SECONDS, now, queued["job_id"]),
                )
                job_id = str(queued["job_id"])
            else:
                count = db.execute("SELECT COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running')").fetchone()["n"]
                if count >= self.queue_max:
                    raise QueueFull(f"the extraction queue is full ({self.queue_max} jobs); memoryd is behind — check `memoryd status` and the log.")
                job_id = f"job_{uuid.uuid4().hex[:16]}"
                db.execute(
                    "INSERT INTO jobs(job_id, kind, session_id, cwd, memory_dir, transcript_path, last_assistant_message, status, not_before, created_at, updated_at) "
                    "VALUES (?, 'extract', ?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
                    (job_id, session_id, cwd, str(memory_dir), str(real), last_assistant_message, now + limits.EXTRACT_SETTLE_SECONDS, now, now),
                )
        self._wake.set()
        return job_id

    def get_job(self, job_id: str) -> dict[str, Any]:
        row = self.state.query_one("SELECT * FROM jobs WHERE job_id = ?", (job_id,))
        if row is None:
            raise JobNotFound(f"no job {job_id!r}; job ids come from POST /v1/events/turn-end.")
        return {
            "job_id": row["job_id"],
            "kind": row["kind"],
            "status": row["status"],
            "reason": row["reason"],
            "memories_written": json.loads(row["written"]),
            "refused": json.loads(row["refused"]),
            "session_id": row["session_id"],
            "attempts": row["attempts"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }

    def counts(self) -> dict[str, int]:
        rows = self.state.query("SELECT status, COUNT(*) AS n FROM jobs GROUP BY status")
        counts = {s: 0 for s in ("queued", "running", "done", "skipped", "failed")}
        counts.update({r["status"]: int(r["n"]) for r in rows})
        return counts

    # ------------------------------------------------------------------ worker
    def start(self) -> None:
        recovered = self.state.execute("UPDATE jobs SET status = 'queued', reason = 'interrupted; retried after restart' WHERE status = 'running'")
        if recovered:
            log.info("re-queued %d extraction job(s) interrupted by a stop", recovered)
        self._stopping.clear()
        self._worker = threading.Thread(target=self._run, name="memoryd-extract", daemon=True)
        self._worker.start()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Finish the running job (or leave it queued for the next start), then stop."""
        self._stopping.set()
        self._wake.set()
        if self._worker is not None:
            self._worker.join(timeout=timeout)
            self._worker = None

    def _next_job(self, *, ignore_delay: bool = False) -> dict[str, Any] | None:
        with self.state.transaction() as db:
            row = db.execute(
                "SELECT * FROM jobs WHERE status = 'queued' AND not_before <= ? ORDER BY created_at LIMIT 1",
                (float("inf") if ignore_delay else time.time(),),
            ).fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? WHERE job_id = ?", (time.time(), row["job_id"]))
            job = dict(row)
            job["attempts"] += 1
            return job

    def prune(self, now: float | None = None) -> dict[str, int]:
        """Forget finished jobs and idle sessions' cursors older than the transcripts' retention."""
        cutoff = (time.time() if now is None else now) - limits.EXTRACT_RETENTION_DAYS * 86400
        with self.state.transaction() as db:
            jobs = db.execute("DELETE FROM jobs WHERE status IN ('done', 'skipped', 'failed') AND updated_at < ?", (cutoff,)).rowcount
            stale = "SELECT session_id FROM extraction_cursors WHERE updated_at < ?"
            seen = db.execute(f"DELETE FROM extraction_seen WHERE session_id IN ({stale})", (cutoff,)).rowcount
            cursors = db.execute("DELETE FROM extraction_cursors WHERE updated_at < ?", (cutoff,)).rowcount
        if jobs or cursors:
            log.info("pruned %d finished extraction job(s) and %d idle session cursor(s) older than %d days", jobs, cursors, limits.EXTRACT_RETENTION_DAYS)
        return {"jobs": jobs, "cursors": cursors, "seen": seen}

    def _run(self) -> None:
        next_prune = 0.0
        while not self._stopping.is_set():
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + limits.EXTRACT_PRUNE_EVERY_SECONDS
                try:
                    self.prune()
                except Exception:  # bookkeeping must never stop extraction
                    log.exception("pruning extraction state failed")
            job = self._next_job()
            if job is None:
                self._wake.wait(timeout=limits.EXTRACT_SETTLE_SECONDS / 5)
                self._wake.clear()
                continue
            self.current_job = job["job_id"]
            try:
                outcome = self.run_job(job)
            except Exception as exc:  # a bug or an I/O error: retry a few times, then fail visibly
                log.exception("extraction job %s failed", job["job_id"])
                status = "queued" if int(job["attempts"]) < limits.EXTRACT_MAX_ATTEMPTS else "failed"
                outcome = Outcome(status, f"error: {exc.__class__.__name__}: {exc}", [], [])
            finally:
                self.current_job = None
            self._finish(job["job_id"], outcome)

    def _finish(self, job_id: str, outcome: Outcome) -> None:
        now = time.time()
        self.state.execute(
            "UPDATE jobs SET status = ?, reason = ?, written = ?, refused = ?, updated_at = ?, not_before = ? WHERE job_id = ?",
            (outcome.status, redact_secrets(outcome.reason), json.dumps(outcome.written),
             json.dumps(redact_record(outcome.refused)), now, now + limits.EXTRACT_RETRY_SECONDS, job_id),
        )
        if outcome.status != "queued":
            self.metrics.jobs.labels("extract", outcome.status).inc()

    def run_pending(self) -> int:
        """Run every queued job now, in this thread (for tests and tools); returns how many ran."""
        ran = 0
        while (job := self._next_job(ignore_delay=True)) is not None:
            self._finish(job["job_id"], self.run_job(job))
            ran += 1
        return ran

    # ------------------------------------------------------------------ one job
    def run_job(self, job: dict[str, Any]) -> Outcome:
        store = self.stores.for_path(Path(job["memory_dir"]))
        lock = self._dir_locks.setdefault(job["memory_dir"], threading.Lock())
        with lock:
            return self._run_locked(job, store)

    def _run_locked(self, job: dict[str, Any], store: MemoryDir) -> Outcome:
        session_id = job["session_id"]
        cursor = self.state.query_one("SELECT * FROM extraction_cursors WHERE session_id = ?", (session_id,))
        offset = int(cursor["offset"]) if cursor and cursor["transcript_path"] == job["transcript_path"] else 0
        inode = int(cursor["inode"]) if cursor and offset else None
        turns_since = int(cursor["turns_since"]) if cursor else 1
        if not self.enabled:
            return Outcome("skipped", "extraction is disabled ([extract] enabled = false)", [], [])
        # Trigger: an earlier job already read this turn (it ran after this turn-end was counted). Outcome: nothing to do.
        if cursor is not None and turns_since == 0:
            return Outcome("skipped", "already covered: an earlier job of this session read this turn", [], [])
        # Trigger: fewer turns than the throttle. Why: extraction costs an LLM call. Outcome: wait, cursor stays.
        if turns_since < self.every_n_turns:
            return Outcome("skipped", f"throttled: turn {turns_since} of every {self.every_n_turns}", [], [])
        path = Path(job["transcript_path"])
        try:
            result = read_new_lines(path, offset, inode)
        except FileNotFoundError:
            # Trigger: the hook fired before the agent created the file. Why: CC writes lazily. Outcome: retry soon.
            if int(job["attempts"]) < limits.EXTRACT_MAX_ATTEMPTS:
                return Outcome("queued", f"transcript {path} does not exist yet; retrying (attempt {job['attempts']} of {limits.EXTRACT_MAX_ATTEMPTS})", [], [])
            return Outcome("failed", f"transcript unreadable: {path} does not exist; check the transcript_path the hook sends", [], [])
        except OSError as exc:
            return Outcome("failed", f"transcript unreadable ({exc.__class__.__name__}: {exc.strerror or exc}); check that {path} exists and is readable", [], [])
        entries, malformed = parse_lines(result.lines)
        entries = [e for e in entries if not e.is_sidechain]
        if result.reset:
            # Trigger: the transcript shrank or was replaced (CC rewrites its tail). Why: the re-read
            # from 0 replays turns already extracted. Outcome: keep only entries not seen before.
            seen = {r["uuid"] for r in self.state.query("SELECT uuid FROM extraction_seen WHERE session_id = ?", (session_id,))}
            entries = [e for e in entries if not e.uuid or e.uuid not in seen]
        last_message = (job.get("last_assistant_message") or "").strip()
        if last_message and not any(last_message in e.text for e in entries if e.kind == "assistant"):
            entries.append(Entry(kind="assistant", raw_type="assistant", text=last_message))  # the transcript may lag the Stop hook

        def advance() -> None:
            # Only the turns this job saw are consumed: a turn-end that arrived while it ran still counts.
            with self.state.transaction() as db:
                db.execute(
                    "UPDATE extraction_cursors SET offset = ?, inode = ?, turns_since = MAX(turns_since - ?, 0), updated_at = ? WHERE session_id = ?",
                    (result.end, result.inode, turns_since, time.time(), session_id),
                )
                db.executemany(
                    "INSERT OR IGNORE INTO extraction_seen(session_id, uuid) VALUES (?, ?)",
                    [(session_id, e.uuid) for e in entries if e.uuid],
                )

        note = f"; {malformed} malformed line(s) skipped" if malformed else ""
        # Trigger: the agent wrote into the memory dir itself. Why: two writers on one file. Outcome: skip, move the cursor.
        if self._agent_wrote_memory(entries, store.path):
            advance()
            return Outcome("skipped", f"the agent wrote to the memory dir itself since the last extraction{note}", [], [])
        prompts = [(e.text, _date_of(e.timestamp)) for e in entries if e.is_prompt]
        assistant_prose = [e for e in entries if e.kind == "assistant" and e.text.strip()]
        # Trigger: only tool output or code since the cursor. Why: nothing said to learn from. Outcome: skip, move the cursor.
        if not prompts and not assistant_prose:
            advance()
            return Outcome("skipped", f"no prose since the last extraction{note}", [], [])
        candidates, how = self._extract(entries, prompts, store)
        written, refused, unchanged = self._apply(store, candidates)
        advance()
        reason = f"{how}: {len(written)} written, {unchanged} unchanged, {len(refused)} refused{note}"
        return Outcome("done", reason, written, refused)

    @staticmethod
    def _agent_wrote_memory(entries: list[Entry], memory_dir: Path) -> bool:
        real_dir = Path(os.path.realpath(memory_dir))
        spellings = {str(memory_dir), str(real_dir)}
        home = os.path.expanduser("~")
        spellings |= {"~" + s[len(home):] for s in list(spellings) if home != "~" and s.startswith(home + os.sep)}
        for entry in entries:
            for tool in entry.tool_uses:
                if tool.name in WRITE_TOOLS:
                    target = str(tool.input.get("file_path") or tool.input.get("notebook_path") or "")
                    if target and not os.path.isabs(os.path.expanduser(target)) and entry.cwd:
                        target = os.path.join(entry.cwd, target)  # relative to the agent's cwd, not the daemon's
                    if _inside(target, real_dir):
                        return True
                elif tool.name == "Bash":
                    command = str(tool.input.get("command", ""))
                    if any(s in command for s in spellings):
                        return True
        return False

    def _extract(self, entries: list[Entry], prompts: list[tuple[str, date | None]], store: MemoryDir) -> tuple[list[Candidate], str]:
        if self.llm.enabled:
            try:
                return self._extract_llm(entries, store), "llm"
            except (LLMUnavailable, TokenBudgetExceeded) as exc:
                log.warning("LLM extraction unavailable (%s); using the offline extractor", exc.code)
                return extract_explicit(prompts), f"offline (LLM: {exc.message})"
        return extract_explicit(prompts), "offline"

    def _extract_llm(self, entries: list[Entry], store: MemoryDir) -> list[Candidate]:
        lines: list[str] = []
        for e in entries:
            stamp = f"[{e.timestamp}] " if e.timestamp else ""
            if e.is_prompt:
                lines.append(f"{stamp}User: {e.text}")
            elif e.kind == "assistant":
                if e.text.strip():
                    lines.append(f"{stamp}Assistant: {e.text}")
                for tool in e.tool_uses:
                    target = tool.input.get("file_path") or tool.input.get("command") or ""
                    lines.append(f"{stamp}Assistant used {tool.name} {str(target)[:120]}")
        transcript = "\n".join(lines)[-TRANSCRIPT_PROMPT_MAX_CHARS:]
        manifest = "\n".join(f"- [{h.type}] {h.filename}: {h.name} — {h.description}" for h in store.scan_memory_headers())
        result = self.llm.complete(purpose="extract", system=EXTRACTION_SYSTEM, user=extraction_user_message(manifest, transcript), max_tokens=2048)
        items = extract_json(result.text, expect=list)
        candidates: list[Candidate] = []
        for item in items:
            if not isinstance(item, dict):
                continue
            name, type_ = str(item.get("name", "")).strip(), str(item.get("type", "")).strip()
            description, body = str(item.get("description", "")).strip(), str(item.get("body", ""))
            if type_ not in limits.MEMORY_TYPES or not name or not description:
                continue
            filename = str(item.get("filename") or "")
            candidates.append(Candidate(name=name, type=type_, description=description, body=body) if not filename else _WithFile(name, type_, description, body, filename))
        return candidates

    def _apply(self, store: MemoryDir, candidates: list[Candidate]) -> tuple[list[str], list[dict[str, str]], int]:
        written: list[str] = []
        refused: list[dict[str, str]] = []
        unchanged = 0
        daily = self.mode_for(store) == "daily-log" and self.on_daily_log is not None
        existing = store.all_headers()
        for cand in candidates:
            if daily:
                try:
                    assert self.on_daily_log is not None
                    self.on_daily_log(store, cand, None)
                    written.append(f"logs:{cand.name}")
                except Unprocessable as exc:
                    refused.append({"name": cand.name, "code": exc.code, "reason": exc.message})
                continue
            target = self._match_existing(cand, existing)
            version = None
            if target is not None:
                try:
                    current = store.get(target)
                    if current.description == " ".join(cand.description.split()) and current.body.strip() == cand.body.strip():
                        unchanged += 1
                        continue
                    version = current.version  # an edit made after this read is re-read, never overwritten
                except Exception:
                    pass
            try:
                saved = store.save(name=cand.name, description=cand.description, type=cand.type, body=cand.body, filename=target,
                                   source="extract", expected=version)
            except (Unprocessable, InvalidMemory, InvalidRequest, Conflict) as exc:
                refused.append({"name": cand.name, "code": exc.code, "reason": exc.message})
                continue
            written.append(saved.memory.filename)
            existing = store.all_headers()
        return written, refused, unchanged

    @staticmethod
    def _match_existing(cand: Candidate, existing: list[Any]) -> str | None:
        """An existing memory this candidate updates: the file the LLM named, the same type+name,
        or a near-identical description of the same type."""
        named = getattr(cand, "filename", "")
        if named and FILENAME_RE.match(named) and any(h.filename == named for h in existing):
            return str(named)
        for h in existing:
            if h.type == cand.type and h.name.strip().casefold() == cand.name.strip().casefold():
                return str(h.filename)
        best, best_score = None, 0.0
        for h in existing:
            if h.type != cand.type:
                continue
            score = jaccard(h.description, cand.description)
            if score > best_score:
                best, best_score = h.filename, score
        return best if best_score >= DEDUP_SIMILARITY else None

    def status(self) -> dict[str, Any]:
        return {**self.counts(), "current_job": self.current_job, "every_n_turns": self.every_n_turns, "mode": self.llm.mode}


@dataclass(frozen=True)
class _WithFile(Candidate):
    """A candidate the LLM tied to an existing file."""

    filename: str = ""
