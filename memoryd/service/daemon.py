"""`Daemon`: the composition root. It reads the settings, builds every part with the one clock,
wires them, and owns the start/stop order. It holds no domain logic; nothing else reads configuration.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import asdict

from memoryd import __version__
from memoryd.base import limits
from memoryd.base.activity import DREAM, EXTRACTION, Activity
from memoryd.base.clock import SYSTEM_CLOCK, Clock
from memoryd.base.files import PRIVATE_DIR_MODE, make_private_dir
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import STATE_FILENAME, StateDB
from memoryd.config import Settings
from memoryd.dream import DreamService
from memoryd.dream.gates import Gates
from memoryd.extract import ExtractionService
from memoryd.extract.backfill import Backfill
from memoryd.extract.jobs import Job, JobQueue, Outcome
from memoryd.extract.pending import PendingTurns
from memoryd.extract.turns import TurnEnds
from memoryd.guard.service import Guard
from memoryd.integrations.claude_code_hooks import HookService
from memoryd.integrations.claude_memory import memory_location
from memoryd.llm import LLMClient, UsageMeter
from memoryd.recall import RecallService
from memoryd.review import ReviewQueue
from memoryd.service.auth import load_or_create_token
from memoryd.service.scheduler import Scheduler
from memoryd.service.status import DaemonStatus
from memoryd.service.write_effects import WriteEffects
from memoryd.session_memory import SessionMemory
from memoryd.stale import StaleChecker
from memoryd.store import StoreRegistry
from memoryd.store.daily_log import DailyLog
from memoryd.store.modes import ProjectModes
from memoryd.store.watcher import MemoryWatcher
from memoryd.team import TeamService
from memoryd.transcripts import TranscriptService
from memoryd.transcripts.grep import Ripgrep, engine_status

log = logging.getLogger(__name__)


def log_extraction(job: Job, outcome: Outcome, now: float) -> None:
    """The daemon log's one line for a finished extraction job: files written, counts and method (the
    reason, e.g. "offline: 1 written, 0 unchanged, 0 refused"), time since it was queued; never a body.
    A skipped job (throttled, nothing said) is no news: DEBUG."""
    files = f" [{', '.join(outcome.written)}]" if outcome.written else ""
    waited = (now - job.created_at) * 1000
    log.log(
        logging.DEBUG if outcome.status == "skipped" else logging.INFO,
        "extraction %s %s %s: %s%s; %.0f ms since queued; session %s in %s",
        job.kind,
        job.job_id,
        outcome.status,
        outcome.reason,
        files,
        waited,
        job.session_id,
        job.memory_dir,
    )


class Daemon:
    """Every long-lived part of memoryd, wired together. Construction builds and wires only: nothing is read
    from the memory or team folders and no thread starts before `start`."""

    def __init__(self, settings: Settings, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.clock = clock  # the one source of time: tests pass a ManualClock
        # Parts register their start/stop here, and their section of GET /v1/status in `status.add`.
        self._starters: list[Callable[[], object]] = []
        self._stoppers: list[Callable[[], None]] = []
        self.running = False
        self._build_ground()
        self._build_stores()
        gates = Gates(
            settings=settings.dream,
            stores=self.stores,
            state=self.state,
            transcript_roots=settings.transcript_roots,
            clock=clock,
        )
        self._build_stale_and_team(gates)
        self._build_recall()
        self._build_transcripts()
        self._build_extraction()
        self._build_dream(gates)
        self._build_grep()
        self.on_start(self.team.start)
        self.on_stop(self.team.stop)
        self.status.add("team", self.team.status)

    def _build_ground(self) -> None:
        """The home dir, the token, metrics, the state DB, the LLM and its meter, the live page's activity."""
        settings, now = self.settings, self.clock.now
        self.home = settings.home
        make_private_dir(self.home)
        os.chmod(self.home, PRIVATE_DIR_MODE)  # the token, state and backups live here
        self.token = load_or_create_token(self.home, settings.token_override)
        self.metrics = Metrics()
        self.state = StateDB(self.home / STATE_FILENAME)
        self.meter = UsageMeter(self.state, self.metrics, daily_cap=settings.llm.daily_token_cap, now=now)
        self.llm = LLMClient.from_settings(settings, meter=self.meter)
        # what memory work just did, for the web view's live page (#30)
        self.activity = Activity(clock=self.clock.time)
        self.on_stop(self.activity.close)

    def _build_stores(self) -> None:
        """The memory dirs and their one write path, which reports to metrics and the watcher."""
        settings = self.settings
        self.stores = StoreRegistry(
            **memory_location(settings),  # memory_base = "auto": Claude Code's own memory dir when it is set up
            env_override=settings.memory_dir_override,
            config_dir=settings.memory.memory_dir,
            now=self.clock.now,
            read_only=settings.memory.read_only,
            global_dir=settings.home / limits.GLOBAL_DIRNAME,
        )
        self.watcher = MemoryWatcher()
        # metrics by source, and a dir's first write gets watched
        self.stores.on_write.append(
            WriteEffects(metrics=self.metrics, watcher=self.watcher if settings.memory.watch else None)
        )
        self.stores.on_evict.append(self.watcher.unwatch)
        self.modes = ProjectModes(stores=self.stores, default=settings.memory.mode, per_project=settings.projects)
        self.daily_log = DailyLog(now=self.clock.now)

    def _build_stale_and_team(self, gates: Gates) -> None:
        """What recall and the dream consult: stale names (#21) and team authors; the team folders are loaded
        by `start`."""
        settings = self.settings
        self.stale = StaleChecker(root_of=gates.project_root, clock=self.clock.monotonic)
        self.team = TeamService(
            settings.team,
            home=self.home,
            stores=self.stores,
            watch=self.watcher.watch if settings.memory.watch else None,
            clock=self.clock.time,
            on_folder=lambda: self.scheduler.add_job("team-sync", self.team.tick, seconds=limits.TEAM_TICK_SECONDS),
        )

    def _build_recall(self) -> None:
        self.recall = RecallService(
            settings=self.settings.recall,
            home=self.home,
            stores=self.stores,
            llm=self.llm,
            state=self.state,
            metrics=self.metrics,
            now=self.clock.now,
            is_watched=self.watcher.is_watching,
            activity=self.activity,
            stale_caveat=self.stale.caveat,
            author_of=self.team.author_of,
        )
        self.guard = Guard(
            mode=self.settings.guard.mode, indexes=self.recall.indexes, recall_log=self.recall.recall_log
        )
        self.on_start(lambda: threading.Thread(target=self.recall.warm, name="recall-warm", daemon=True).start())
        self.on_stop(self.recall.close)

    def _build_transcripts(self) -> None:
        """The transcript pipeline and the daemon's status, which reports on it."""
        settings = self.settings
        self.transcripts = TranscriptService(
            roots=settings.transcript_roots,
            state=self.state,
            metrics=self.metrics,
            watch=settings.transcripts.watch,
            clock=self.clock.time,
        )
        self.status = DaemonStatus(
            home=self.home,
            llm=self.llm,
            meter=self.meter,
            stores=self.stores,
            watcher=self.watcher,
            transcripts=self.transcripts,
            clock=self.clock,
        )
        self.metrics.uptime.set(self.status.started_at)
        self.status.add("recall", self.recall.status)
        self.on_start(self.transcripts.start)
        self.on_stop(self.transcripts.stop)

    def _build_extraction(self) -> None:
        """What a turn end sets off: pending turns, review before write (#21), extraction, session notes,
        backfill, and the hooks' answers."""
        settings = self.settings
        pending = PendingTurns(self.state)
        self.review = ReviewQueue(
            self.state,
            stores=self.stores,
            default=settings.extract.review,
            per_project=settings.projects,
            clock=self.clock.time,
        )
        self.extraction = ExtractionService(
            jobs=JobQueue(self.state, clock=self.clock.time),
            pending=pending,
            stores=self.stores,
            transcripts=self.transcripts,
            llm=self.llm,
            metrics=self.metrics,
            every_n_turns=settings.extract.every_n_turns,
            enabled=settings.extract.enabled and not settings.memory.read_only,
            mode_for=self.modes.mode_for,
            on_daily_log=self.daily_log.append_candidate,
            review=self.review,
            on_finish=self._extraction_finished,
        )
        self.session_memory = SessionMemory(
            settings.session_memory,
            home=self.home,
            state=self.state,
            llm=self.llm,
            now=self.clock.now,
            advance=self.transcripts.pipeline.advance,
        )
        self.transcripts.pipeline.subscribe(pending)
        self.transcripts.pipeline.subscribe(self.session_memory)
        self.backfill = Backfill(
            transcripts=self.transcripts,
            pending=pending,
            extraction=self.extraction,
            stores=self.stores,
            clock=self.clock.time,
        )
        self.turns = TurnEnds(
            transcripts=self.transcripts,
            stores=self.stores,
            extraction=self.extraction,
            session_memory=self.session_memory,
            notes_enabled=settings.session_memory.enabled,
        )
        self.hooks = HookService(
            recall=self.recall,
            transcripts=self.transcripts,
            turns=self.turns,
            session_memory=self.session_memory,
            stores=self.stores,
            guard=self.guard,
        )
        self.on_start(self.extraction.start)
        self.on_stop(self.extraction.stop)
        self.on_stop(self.session_memory.close)
        self.status.add("jobs", self.extraction.status)
        self.status.add("transcripts", self.transcripts.status)
        self.status.add("session_memory", self.session_memory.status)

    def _build_dream(self, gates: Gates) -> None:
        """Auto-dream (consolidation) and the scheduler that checks its gates."""
        settings = self.settings
        self.dream = DreamService(
            settings=settings.dream,
            gates=gates,
            stores=self.stores,
            state=self.state,
            llm=self.llm,
            metrics=self.metrics,
            home=self.home,
            clock=self.clock,
            stale_notes=self.stale.dream_notes,
            on_finished=lambda memory_dir, run: self.activity.publish(DREAM, str(memory_dir), asdict(run)),
        )
        self.scheduler = Scheduler(
            self.dream,
            check_interval_seconds=settings.dream.check_interval_seconds,
            enabled=settings.dream.enabled and not settings.memory.read_only,
        )
        self.on_start(self.dream.recover)  # before the scheduler can start a run
        self.on_start(self.scheduler.start)
        self.on_stop(self.scheduler.stop)
        self.on_stop(self.dream.stop)
        self.status.add("dream", self.dream.provider_status)

    def _build_grep(self) -> None:
        """Transcript grep: on rg when found, else on the built-in scanner."""
        wanted = self.settings.transcripts.ripgrep
        self.ripgrep = Ripgrep.discover(wanted)
        if self.ripgrep is None and wanted not in ("auto", "off"):
            log.warning("transcripts.ripgrep = %r is not an executable file; searches use the built-in scanner", wanted)
        self.status.add("grep", lambda: engine_status(self.ripgrep))

    def _extraction_finished(self, job: Job, outcome: Outcome) -> None:
        """A finished extraction job: one log line, and the live page's event."""
        log_extraction(job, outcome, self.clock.time())
        self.activity.publish(EXTRACTION, job.memory_dir, job.live_event(outcome))

    # ------------------------------------------------------------------ lifecycle
    def on_start(self, fn: Callable[[], object]) -> None:
        self._starters.append(fn)

    def on_stop(self, fn: Callable[[], None]) -> None:
        self._stoppers.append(fn)

    def start(self) -> None:
        if self.running:
            return
        self.team.load()  # a team folder tied to a remote schedules the team sync (on_folder), none: no job
        for path, temps in self.stores.recover().items():  # a kill -9's leftovers: temp files, a stale index
            if temps:
                log.info("removed %d temp file(s) a crash left in %s", temps, path)
        if self.settings.memory.watch:
            self.watcher.start()
            for store in self.stores.known():
                self.watcher.watch(store)
            self.stores.on_new_dir.append(
                self.watcher.watch
            )  # a dir that does not exist yet is watched after its first write
            self.stores.discover()
        for fn in self._starters:
            fn()
        self.running = True
        log.info("memoryd %s started in %s mode (home %s)", __version__, self.llm.mode, self.home)

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        for fn in reversed(self._stoppers):
            try:
                fn()
            except Exception:
                log.exception("error while stopping a part")
        self.watcher.stop()
        self.state.close()
        log.info("memoryd stopped")
