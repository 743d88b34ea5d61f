"""`TeamService`: the daemon's team-memory part. Ties team folders to remotes, saves team
memories through their `MemoryDir`, and syncs on demand, on a schedule and after writes."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, InitVar, dataclass
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest, MemorydError
from memoryd.config import TeamSettings
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.model import SaveResult
from memoryd.store.paths import sanitize_path
from memoryd.team.errors import EntriesCapped, TeamNotConfigured
from memoryd.team.report import SyncReport
from memoryd.team.state import STATE_FILENAME, TeamState
from memoryd.team.sync import TeamRepo

log = logging.getLogger(__name__)
TEAM_HOME_DIRNAME = "team"  # <MEMORYD_HOME>/team/<memory dir key>/{git,state.json}
_BRANCH_RE = re.compile(r"^(?!-)(?!.*\.\.)(?!.*//)[A-Za-z0-9._/-]{1,100}(?<![./])$")


def check_remote(url: str) -> str:
    url = url.strip()
    if not url or url.startswith("-") or any(c in url for c in "\n\r\0"):
        raise InvalidRequest(
            "remote is not a git URL: pass e.g. --remote git@github.com:team/memory.git or a path to a bare repository."
        )
    if url.lower().startswith("ext::"):
        raise InvalidRequest("remote: the ext:: transport runs commands and is refused; use an ssh, https or file URL.")
    return url


def check_branch(branch: str) -> str:
    if not _BRANCH_RE.match(branch) or branch.endswith(".lock"):
        raise InvalidRequest(
            f"branch {branch!r} is not a valid git branch name: use letters, digits, '.', '_', '-' or '/', e.g. "
            "'memory'."
        )
    return branch


@dataclass(frozen=True, kw_only=True)
class TeamInit:
    """A project's team folder tied to its remote, with the first sync's report or why it failed (it is retried)."""

    repo: TeamRepo
    report: SyncReport | None = None
    sync_error: str = ""


@dataclass(eq=False)
class TeamService:
    """Every team folder of this daemon, by the personal memory dir it belongs to."""

    settings: TeamSettings
    _: KW_ONLY
    home: InitVar[Path]  # the team folders live in its TEAM_HOME_DIRNAME
    stores: StoreRegistry
    watch: Callable[[MemoryDir], None] | None = None
    env: dict[str, str] | None = None
    clock: Callable[[], float] = time.time
    # Called each time a team folder is tied to a remote (at load and at init): the daemon schedules the
    # periodic sync then, not while no team is set up.
    on_folder: Callable[[], None] = lambda: None

    def __post_init__(self, home: Path) -> None:
        self.root = home / TEAM_HOME_DIRNAME
        self._repos: dict[Path, TeamRepo] = {}
        self._timers: dict[Path, threading.Timer] = {}
        self._lock = threading.Lock()
        self._stopped = False

    # ------------------------------------------------------------------ bindings
    def load(self) -> None:
        """Pick up the team folders tied to a remote before this start."""
        for path in sorted(self.root.glob(f"*/{STATE_FILENAME}")):
            try:
                state = TeamState.load(path)
            except (OSError, ValueError) as exc:
                log.warning(
                    "team state %s is unreadable (%s); run `memoryd team init` again for that project",
                    path,
                    exc.__class__.__name__,
                )
                continue
            self._register(
                TeamRepo(
                    path.parent,
                    state,
                    self.stores.team_for(Path(state.memory_dir)),
                    self.settings,
                    env=self.env,
                    clock=self.clock,
                )
            )

    def _register(self, repo: TeamRepo) -> TeamRepo:
        with self._lock:
            self._repos[Path(repo.state.memory_dir)] = repo
        repo.store.on_change.append(lambda store, filename: self._written(repo))
        if self.watch is not None:
            self.watch(repo.store)
        self.on_folder()
        return repo

    def start(self) -> None:
        """Watch the team folders for hand edits (the watcher runs only once the daemon starts)."""
        if self.watch is not None:
            for repo in self.repos():
                self.watch(repo.store)

    def init(self, cwd: str, remote: str, branch: str = limits.TEAM_DEFAULT_BRANCH) -> TeamInit:
        """Tie the project's team folder to `remote`/`branch` and run the first sync (its error, if any, is
        returned)."""
        remote, branch = check_remote(remote), check_branch(branch)
        memory_dir = self.stores.memory_dir_for(cwd)
        with self._lock:
            repo = self._repos.get(memory_dir)
        if repo is not None:
            if repo.state.remote != remote or repo.state.branch != branch:
                repo.state.remote, repo.state.branch = remote, branch
                repo.state.last_remote, repo.state.pinned, repo.state.remote_rewritten = None, {}, False
                repo.git.set_remote(remote)
                repo.save_state()
        else:
            state = TeamState(memory_dir=str(memory_dir), remote=remote, branch=branch)
            root = self.root / sanitize_path(str(memory_dir))
            repo = self._register(
                TeamRepo.create(
                    root, state, self.stores.team_for(memory_dir), self.settings, env=self.env, clock=self.clock
                )
            )
        try:
            return TeamInit(repo=repo, report=repo.sync())
        except MemorydError as exc:
            return TeamInit(repo=repo, sync_error=exc.message)

    def repo_for(self, cwd: str) -> TeamRepo:
        memory_dir = self.stores.memory_dir_for(cwd)
        with self._lock:
            repo = self._repos.get(memory_dir)
        if repo is None:
            raise TeamNotConfigured(
                f"team memory is not set up for {memory_dir}: run `memoryd team init --remote URL` in the project "
                "(URL: a git repository the team can reach)."
            )
        return repo

    def repos(self) -> list[TeamRepo]:
        with self._lock:
            return list(self._repos.values())

    # ------------------------------------------------------------------ writes
    def save(self, cwd: str, *, name: str, description: str, type: str, body: str) -> SaveResult:
        """A team memory, through the team folder's MemoryDir; a new one past max_entries is refused."""
        store = self.repo_for(cwd).store
        headers = store.all_headers()
        is_update = any(h.type == type and h.name.strip().casefold() == name.strip().casefold() for h in headers)
        if not is_update and len(headers) >= self.settings.max_entries:
            raise EntriesCapped(
                f"team memory holds {len(headers)} entries, the cap ([team] max_entries = "
                f"{self.settings.max_entries}): "
                "update or forget a team memory first, or raise the cap."
            )
        return store.save(name=name, description=description, type=type, body=body, source="team")

    def _written(self, repo: TeamRepo) -> None:
        """After a write to a team folder (not the sync's own): a sync, debounced."""
        if getattr(repo.applying, "on", False) or self._stopped:
            return
        key = Path(repo.state.memory_dir)
        with self._lock:
            old = self._timers.pop(key, None)
            if old is not None:
                old.cancel()
            timer = threading.Timer(self.settings.debounce_seconds, self._background_sync, args=(repo,))
            timer.daemon = True
            self._timers[key] = timer
            timer.start()

    # ------------------------------------------------------------------ scheduled sync
    def due(self, repo: TeamRepo) -> bool:
        """Backoff after failures; otherwise every sync_interval_minutes; never after a force-push (a person
        decides)."""
        s, now = repo.state, self.clock()
        if s.remote_rewritten:
            return False
        if s.next_retry is not None:
            return now >= s.next_retry
        interval = self.settings.sync_interval_minutes * 60
        return interval > 0 and (s.last_attempt is None or now - s.last_attempt >= interval)

    def tick(self) -> None:
        """The scheduler's job: sync every folder that is due."""
        for repo in self.repos():
            if self.due(repo):
                self._background_sync(repo, scheduled=True)

    def _background_sync(self, repo: TeamRepo, scheduled: bool = False) -> None:
        if self._stopped or (
            not scheduled and repo.state.next_retry is not None and self.clock() < repo.state.next_retry
        ):
            return  # in backoff: the scheduler retries when it is due
        try:
            repo.sync()
        except MemorydError as exc:
            log.warning("team sync of %s: %s", repo.store.path, exc.message)
        except Exception:
            log.exception("team sync of %s crashed", repo.store.path)

    def stop(self) -> None:
        self._stopped = True
        with self._lock:
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()

    # ------------------------------------------------------------------ reading
    def author_of(self, team_dir: Path, filename: str) -> str:
        """Who changed a team memory last (git history), or this member for one not synced yet."""
        with self._lock:
            repo = self._repos.get(team_dir.parent)
        return repo.author_of(filename) if repo is not None else ""

    def status(self) -> dict[str, Any]:
        """For GET /v1/status: each team folder's remote, ahead/behind, last sync and error."""
        out = []
        for repo in self.repos():
            s = repo.state
            out.append(
                {
                    "team_dir": str(repo.store.path),
                    "branch": s.branch,
                    "last_sync": s.last_sync,
                    "last_error": s.last_error,
                    "remote_rewritten": s.remote_rewritten,
                    "consecutive_failures": s.failures,
                }
            )
        return {"folders": out}
