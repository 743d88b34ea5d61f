"""`ExtractionService`: runs turn-end jobs, one at a time, on a worker thread.

A turn-end is answered at once with a job id (`JobQueue`). The worker brings the session's
transcript up to date through the one pipeline, takes what `PendingTurns` kept since the last
extraction, applies the skips (throttle, the agent wrote memory itself, no prose), extracts
(the model, else the deterministic extractor) and writes through the store's one write path,
where secrets are refused. Pending turns are dropped only after the writes, so a crash re-runs
the job; saves are idempotent (same type+name updates the same file).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import (
    Conflict,
    InvalidMemory,
    InvalidRequest,
    LLMUnavailable,
    MemorydError,
    TokenBudgetExceeded,
    Unprocessable,
)
from memoryd.base.metrics import Metrics
from memoryd.base.secrets import REDACTED
from memoryd.base.similarity import memory_similarity, near_duplicate
from memoryd.extract.jobs import BACKFILL, Job, JobQueue, JobRecord, Outcome
from memoryd.extract.model import extract_with_model
from memoryd.extract.offline import Candidate, extract_explicit, update_of
from memoryd.extract.pending import BASH, PROMPT, TOOLS, TURN, WROTE, PendingRow, PendingTurns
from memoryd.guard.propose import save_forbid
from memoryd.llm import LLMClient
from memoryd.review import ReviewQueue
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.model import draft_fields
from memoryd.store.paths import FILENAME_RE
from memoryd.transcripts.service import TranscriptService

log = logging.getLogger(__name__)


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


def _unreadable(target: str, exc: MemorydError | OSError) -> str:
    """Why an update was not applied: the file it updates did not read (never a blind save over it)."""
    why = exc.message if isinstance(exc, MemorydError) else f"{exc.__class__.__name__}: {exc.strerror or exc}"
    return (
        f"not applied: {target} could not be read ({why}) and was left untouched; fix it, then save the update by hand."
    )


def agent_wrote_memory(rows: list[PendingRow], memory_dir: Path) -> bool:
    """Did the agent itself write into the memory dir (a file tool, or a shell command naming it)?"""
    real_dir = Path(os.path.realpath(memory_dir))
    spellings = {str(memory_dir), str(real_dir)}
    home = os.path.expanduser("~")
    for short in (
        "~",
        "$HOME",
        "${HOME}",
    ):  # how a shell command names a dir under the home (e.g. ~/.claude/projects/…)
        spellings |= {short + s[len(home) :] for s in list(spellings) if home != "~" and s.startswith(home + os.sep)}
    for row in rows:
        if row.kind == WROTE:
            target = row.text
            if not os.path.isabs(os.path.expanduser(target)) and row.cwd:
                target = os.path.join(row.cwd, target)  # relative to the agent's cwd, not the daemon's
            if _inside(target, real_dir):
                return True
        elif row.kind == BASH and any(s in row.text for s in spellings):
            return True
    return False


@dataclass(kw_only=True, eq=False)
class ExtractionService:
    """Turn-end jobs: enqueue fast, run in a worker thread, survive restarts."""

    jobs: JobQueue
    pending: PendingTurns
    stores: StoreRegistry
    transcripts: TranscriptService
    llm: LLMClient
    metrics: Metrics
    every_n_turns: int = limits.EXTRACT_EVERY_N_TURNS
    enabled: bool = True
    mode_for: Callable[[MemoryDir], str] = lambda store: "topics"
    on_daily_log: Callable[[MemoryDir, Candidate, date | None], object] | None = None
    review: ReviewQueue | None = None  # when it wants a store reviewed, candidates are queued instead of written
    on_finish: Callable[[Job, Outcome], object] = lambda job, outcome: None  # the live activity page (#30)

    def __post_init__(self) -> None:
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._worker: threading.Thread | None = None
        self._dir_locks: dict[str, threading.Lock] = {}
        self.current_job: str | None = None
        self.backfill_pause = limits.BACKFILL_PAUSE_SECONDS

    # ------------------------------------------------------------------ request path
    def enqueue_turn_end(
        self, session_id: str, transcript: Path, cwd: str, memory_dir: Path, last_assistant_message: str | None = None
    ) -> str:
        """Queue extraction for a turn end (arguments already validated by the caller)."""
        job_id = self.jobs.enqueue(
            session_id=session_id,
            transcript_path=transcript,
            cwd=cwd,
            memory_dir=memory_dir,
            last_assistant_message=last_assistant_message,
        )
        self._wake.set()
        return job_id

    def enqueue_backfill(self, session_id: str, transcript: Path, cwd: str, memory_dir: Path) -> str:
        job_id = self.jobs.enqueue(
            session_id=session_id, transcript_path=transcript, cwd=cwd, memory_dir=memory_dir, kind=BACKFILL, delay=0
        )
        self._wake.set()
        return job_id

    def get_job(self, job_id: str) -> JobRecord:
        return self.jobs.get(job_id)

    # ------------------------------------------------------------------ worker
    def start(self) -> None:
        recovered = self.jobs.requeue_interrupted()
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

    def prune(self, now: float | None = None) -> dict[str, int]:
        """Forget finished jobs, idle sessions and transcript cursors older than the transcripts' retention."""
        cutoff = (self.jobs.clock() if now is None else now) - limits.EXTRACT_RETENTION_DAYS * 86400
        pruned = self.jobs.prune(cutoff)
        pruned["transcripts"] = self.transcripts.pipeline.forget_older_than(cutoff)
        if any(pruned.values()):
            log.info("pruned extraction state older than %d days: %s", limits.EXTRACT_RETENTION_DAYS, pruned)
        return pruned

    def _run(self) -> None:
        next_prune = 0.0
        while not self._stopping.is_set():
            if time.monotonic() >= next_prune:
                next_prune = time.monotonic() + limits.EXTRACT_PRUNE_EVERY_SECONDS
                try:
                    self.prune()
                except Exception:  # bookkeeping must never stop extraction
                    log.exception("pruning extraction state failed")
            job = self.jobs.claim()
            if job is None:
                self._wake.wait(timeout=limits.EXTRACT_SETTLE_SECONDS / 5)
                self._wake.clear()
                continue
            self.current_job = job.job_id
            try:
                outcome = self.run_job(job)
            except Exception as exc:  # a bug or an I/O error: retry a few times, then fail visibly
                log.exception("extraction job %s failed", job.job_id)
                status = "queued" if job.attempts < limits.EXTRACT_MAX_ATTEMPTS else "failed"
                outcome = Outcome(status=status, reason=f"error: {exc.__class__.__name__}: {exc}")
            finally:
                self.current_job = None
            self._finish(job, outcome)
            if job.kind == BACKFILL:
                self._stopping.wait(self.backfill_pause)

    def _finish(self, job: Job, outcome: Outcome) -> None:
        self.jobs.finish(job.job_id, outcome)
        self.on_finish(job, outcome)
        if outcome.status != "queued":
            self.metrics.jobs.labels(job.kind, outcome.status).inc()

    def run_pending(self) -> int:
        """Run every queued job now, in this thread (for tests and tools); returns how many ran."""
        ran = 0
        while (job := self.jobs.claim(ignore_delay=True)) is not None:
            self._finish(job, self.run_job(job))
            ran += 1
        return ran

    # ------------------------------------------------------------------ one job
    def run_job(self, job: Job) -> Outcome:
        store = self.stores.for_path(Path(job.memory_dir))
        lock = self._dir_locks.setdefault(job.memory_dir, threading.Lock())
        with lock:
            return self._run_locked(job, store)

    def _run_locked(self, job: Job, store: MemoryDir) -> Outcome:
        session_id = job.session_id
        backfill = job.kind == BACKFILL
        if not self.enabled:
            return Outcome(status="skipped", reason="extraction is disabled ([extract] enabled = false)")
        turns_since = self.jobs.turns_since(session_id)
        if not backfill:
            # Trigger: an earlier job already read this turn (it ran after this turn-end was counted). Outcome: nothing
            # to do.
            if turns_since == 0:
                return Outcome(
                    status="skipped", reason="already covered: an earlier job of this session read this turn"
                )
            # Trigger: fewer turns than the throttle. Why: extraction costs an LLM call. Outcome: wait, pending turns
            # stay.
            if (turns_since or 0) < self.every_n_turns:
                return Outcome(status="skipped", reason=f"throttled: turn {turns_since} of every {self.every_n_turns}")
        path = Path(job.transcript_path)
        if not path.exists():
            # Trigger: the hook fired before the agent created the file. Why: CC writes lazily. Outcome: retry soon.
            if job.attempts < limits.EXTRACT_MAX_ATTEMPTS:
                return Outcome(
                    status="queued",
                    reason=f"transcript {path} does not exist yet; retrying (attempt {job.attempts} of "
                    f"{limits.EXTRACT_MAX_ATTEMPTS})",
                )
            return Outcome(
                status="failed",
                reason=f"transcript unreadable: {path} does not exist; check the transcript_path the hook sends",
            )
        read = self.transcripts.pipeline.advance(path)
        if read.error:
            return Outcome(
                status="failed",
                reason=f"transcript unreadable ({read.error}); check that {path} exists and is readable",
            )
        rows = self.pending.peek(session_id)
        last_message = (job.last_assistant_message or "").strip()
        if last_message and not any(last_message in r.text for r in rows if r.kind == TURN):
            rows.append(
                PendingRow(0, TURN, f"ASSISTANT: {last_message}", "", "")
            )  # the transcript may lag the Stop hook

        def consumed() -> None:
            if rows:
                self.pending.done(session_id, max(r.seq for r in rows))
            if turns_since:
                self.jobs.consume_turns(session_id, turns_since)

        note = "".join(
            f"; {n} {what} line(s) skipped"
            for n, what in ((read.malformed, "malformed"), (read.oversized, "oversized"))
            if n
        )
        # Trigger: the agent wrote into the memory dir itself. Why: two writers on one file. Outcome: skip, drop the
        # turns.
        if agent_wrote_memory(rows, store.path):
            consumed()
            return Outcome(
                status="skipped", reason=f"the agent wrote to the memory dir itself since the last extraction{note}"
            )
        prompts = [(r.text, _date_of(r.timestamp)) for r in rows if r.kind == PROMPT]
        said = any(r.kind == TURN for r in rows)
        # Trigger: only tool calls since the last extraction. Why: nothing said to learn from. Outcome: skip, drop the
        # turns.
        if not prompts and not said:
            consumed()
            return Outcome(status="skipped", reason=f"no prose since the last extraction{note}")
        transcript = "\n".join(r.text for r in rows if r.kind in (TURN, TOOLS))
        candidates, how = self._extract(transcript, prompts, store)
        written, refused, unchanged = self._apply(store, candidates)
        consumed()
        reason = f"{how}: {len(written)} written, {unchanged} unchanged, {len(refused)} refused{note}"
        return Outcome(status="done", reason=reason, written=written, refused=refused)

    def _extract(
        self, transcript: str, prompts: list[tuple[str, date | None]], store: MemoryDir
    ) -> tuple[list[Candidate], str]:
        if self.llm.enabled:
            try:
                return extract_with_model(self.llm, transcript, store), "llm"
            except (LLMUnavailable, TokenBudgetExceeded) as exc:
                log.warning("LLM extraction unavailable (%s); using the offline extractor", exc.code)
                return extract_explicit(prompts), f"offline (LLM: {exc.message})"
        return extract_explicit(prompts), "offline"

    def _apply(self, store: MemoryDir, candidates: list[Candidate]) -> tuple[list[str], list[dict[str, str]], int]:
        written: list[str] = []
        refused: list[dict[str, str]] = []
        unchanged = 0
        daily = self.mode_for(store) == "daily-log" and self.on_daily_log is not None
        existing = store.all_headers()
        for cand in candidates:
            if any(REDACTED in field for field in (cand.name, cand.description, cand.body)):
                # The words held a secret, removed before they were kept: a memory of "[secret removed]" helps no one.
                self.metrics.secrets_refused.labels("extract").inc()
                refused.append(
                    {
                        "name": cand.name,
                        "code": "secret_detected",
                        "reason": "refused: it held a secret (removed before it was stored); keep a pointer such as "
                        "'the key is in 1Password' instead.",
                    }
                )
                continue
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
                    update, version = self._update(store, cand, target)
                except (MemorydError, OSError) as exc:
                    # What it could not read it must not overwrite: the update waits until the file reads again.
                    refused.append({"name": cand.name, "code": "target_unreadable", "reason": _unreadable(target, exc)})
                    continue
                if update is None:
                    unchanged += 1
                    continue
                cand = update
            try:
                if self.review is not None and self.review.wanted(store):
                    item = self.review.propose(store, **draft_fields(cand), target=target)
                    if item is None:
                        refused.append(
                            {
                                "name": cand.name,
                                "code": "rejected_before",
                                "reason": "a person rejected this memory in review before",
                            }
                        )
                    else:
                        written.append(f"review:{item}")
                    continue
                fields = draft_fields(cand)
                forbid, proposing = save_forbid(fields["name"], fields["description"], fields["body"], None)
                saved = store.save(
                    **fields,
                    filename=target,
                    source="extract",
                    expected=version,
                    applies_to=getattr(cand, "applies_to", None),  # a model's candidate may say (ModelCandidate)
                    forbid=forbid,  # proposed from the rule's text (issue 50), only where the file has none
                    forbid_if_absent=proposing,
                )
            except (Unprocessable, InvalidMemory, InvalidRequest, Conflict) as exc:
                refused.append({"name": cand.name, "code": exc.code, "reason": exc.message})
                continue
            written.append(saved.memory.filename)
            existing = store.all_headers()
        return written, refused, unchanged

    @staticmethod
    def _update(store: MemoryDir, cand: Candidate, target: str) -> tuple[Candidate | None, str]:
        """`cand` as an update of `target` and the version it was read at (an edit made after this
        read is a 409, never overwritten); None when the memory already says it. An update keeps
        the memory's name; an offline one only adds lines to its body (`update_of`)."""
        current = store.get(target)
        if current.description == " ".join(cand.description.split()) and current.body.strip() == cand.body.strip():
            return None, current.version
        update = update_of(current, cand) if cand.kind else replace(cand, name=current.name)
        return update, current.version

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
        same = [h for h in existing if near_duplicate(h, cand)]
        return str(max(same, key=lambda h: memory_similarity(h, cand)).filename) if same else None

    def status(self) -> dict[str, Any]:
        return {
            **self.jobs.counts(),
            "current_job": self.current_job,
            "every_n_turns": self.every_n_turns,
            "mode": self.llm.mode,
            "backfill": self.jobs.counts(BACKFILL),
        }
