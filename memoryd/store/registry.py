"""`StoreRegistry`: resolves an agent's cwd to its `MemoryDir`, one instance per directory.

It keeps at most `STORE_REGISTRY_MAX_DIRS` dirs open (least recently used go first), so
thousands of distinct cwds grow neither memory nor /v1/status.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.base import limits
from memoryd.base.clock import SYSTEM_CLOCK
from memoryd.base.errors import Forbidden, InvalidRequest
from memoryd.store.dialect import CLAUDE_CODE, MEMORYD, Dialect
from memoryd.store.memdir import MemoryDir, Now, WriteEvent
from memoryd.store.paths import project_root, resolve_memory_dir

PROJECT, GLOBAL = "project", "global"  # a memory's scope: this project's store, or the user's own in every project


@dataclass(kw_only=True, eq=False)
class StoreRegistry:
    """cwd → MemoryDir. Knows the memory dirs used lately (for the watcher, dream and status)."""

    memory_base: Path
    env_override: str = ""
    config_dir: str = ""
    now: Now = SYSTEM_CLOCK.now
    max_dirs: int = limits.STORE_REGISTRY_MAX_DIRS
    read_only: bool = False
    default_dir: Callable[[str], Path] | None = None  # cwd → memory dir when no override is set (memory_base = "auto")
    claude_code_tree: Path | None = None  # ~/.claude when Claude Code is set up: its folders get its dialect
    global_dir: Path | None = None  # the user's own memories, in every project (`$MEMORYD_HOME/global/`)

    def __post_init__(self) -> None:
        self._dirs: OrderedDict[Path, MemoryDir] = OrderedDict()
        self._roots: dict[Path, Path] = {}  # memory dir → project root it was first resolved from
        self._team_dirs: dict[Path, MemoryDir] = {}
        self._global: MemoryDir | None = None
        self._lock = threading.Lock()
        # A dir seen for the first time, or found on disk for the first time after that (the watcher listens).
        self.on_new_dir: list[Callable[[MemoryDir], None]] = []
        self._seen_on_disk: set[Path] = set()  # dirs offered to `on_new_dir` once they existed
        self.on_evict: list[Callable[[MemoryDir], None]] = []
        # Every write through any dir's one write path (metrics, watch registration listen here).
        self.on_write: list[Callable[[WriteEvent], None]] = []

    def memory_dir_for(self, cwd: str) -> Path:
        path = resolve_memory_dir(
            cwd,
            env_override=self.env_override,
            config_dir=self.config_dir,
            memory_base=self.memory_base,
            default=self.default_dir,
        )
        if not (self.env_override or self.config_dir):  # a fixed dir is the user's own choice, shared on purpose
            self._refuse_global(path)
        return path

    def _refuse_global(self, path: Path) -> None:
        """A project's dir as settings resolved it (a repo's `autoMemoryDirectory` among them) is never the global
        store nor inside it: issue 52, an unpacked project's settings.local.json sent its saves to
        the global folder, recalled in every project. (Another project's folder: `claude_memory.foreign_store`.)"""
        if self.global_dir is None:
            return
        if Path(os.path.realpath(path)).is_relative_to(os.path.realpath(self.global_dir)):
            raise Forbidden(
                f"this project's memory dir {path} is the global memory folder (or inside it): a settings file's "
                "autoMemoryDirectory may not send a project's memories there. Remove that autoMemoryDirectory, or "
                "save with scope global to mean every project."
            )

    def for_cwd(self, cwd: str) -> MemoryDir:
        path = self.memory_dir_for(cwd)
        store = self.for_path(path)
        with self._lock:
            known_root = path in self._roots or path not in self._dirs
        if not known_root:  # resolved once per dir, not on every request
            root = project_root(cwd)
            with self._lock:
                if path in self._dirs:
                    self._roots.setdefault(path, root)
        return store

    def for_path(self, path: Path) -> MemoryDir:
        evicted: list[MemoryDir] = []
        with self._lock:
            store = self._dirs.get(path)
            created = store is None
            if store is None:
                store = self._dirs[path] = MemoryDir(
                    path, now=self.now, events=self.on_write, default_dialect=self.dialect_for(path)
                )
                store.read_only = self.read_only
                while len(self._dirs) > self.max_dirs:
                    old_path, old = self._dirs.popitem(last=False)
                    self._roots.pop(old_path, None)
                    self._seen_on_disk.discard(old_path)
                    evicted.append(old)
            else:
                self._dirs.move_to_end(path)
        for old in evicted:
            for callback in list(self.on_evict):
                callback(old)
        if created or self._found_on_disk(store):
            for callback in list(self.on_new_dir):
                callback(store)
        return store

    def _found_on_disk(self, store: MemoryDir) -> bool:
        """A dir registered before it existed that another program made since (Claude Code writing its own
        memories, a clone, a copy): offered to `on_new_dir` once, or it was never watched and a big one was
        swept every second (issue 42)."""
        if store.watched or not self.on_new_dir or store.path in self._seen_on_disk or not store.path.is_dir():
            return False
        with self._lock:
            if store.path in self._seen_on_disk:
                return False
            self._seen_on_disk.add(store.path)
        return True

    def dialect_for(self, path: Path) -> Dialect:
        """The dialect a folder without memories gets: Claude Code's inside its tree (its agent
        writes there too: one style per folder), memoryd's in memoryd's own store."""
        tree = self.claude_code_tree
        return CLAUDE_CODE if tree is not None and path.is_relative_to(tree) else MEMORYD

    def team_for(self, memory_dir: Path) -> MemoryDir:
        """The team folder `<memory dir>/team/` as its own MemoryDir; kept out of `known()`, so
        extraction and dream never write there."""
        path = memory_dir / limits.TEAM_DIRNAME
        with self._lock:
            team = self._team_dirs.get(path)
            if team is None:
                team = self._team_dirs[path] = MemoryDir(path, now=self.now)
            return team

    def global_store(self) -> MemoryDir:
        """The user's global memories (`save --global`): recalled and listed in every project; kept
        out of `known()` like a team folder, so extraction, dream and team sync never write there."""
        if self.global_dir is None:
            raise InvalidRequest("this daemon has no global memory folder; start it with a MEMORYD_HOME.")
        with self._lock:
            if self._global is None:
                self._global = MemoryDir(self.global_dir, now=self.now, events=self.on_write)
                self._global.read_only = self.read_only
            return self._global

    def for_scope(self, cwd: str, scope: str) -> MemoryDir:
        """The store a request names: the project's (`project`), or the user's global one (`global`)."""
        if scope == GLOBAL:
            return self.global_store()
        if scope != PROJECT:
            raise InvalidRequest(
                f"unknown scope {scope!r}: use {PROJECT!r} (this project) or {GLOBAL!r} (every project)."
            )
        return self.for_cwd(cwd)

    def known(self) -> list[MemoryDir]:
        with self._lock:
            return list(self._dirs.values())

    def project_root_of(self, memory_dir: Path) -> Path | None:
        with self._lock:
            return self._roots.get(memory_dir)

    def discover(self) -> list[MemoryDir]:
        """Register every existing `<base>/projects/*/memory` dir (and the fixed override)."""
        fixed = self.env_override or self.config_dir
        if fixed:
            path = Path(fixed).expanduser()
            return [self.for_path(path.resolve())] if path.is_dir() else []
        projects = self.memory_base / "projects"
        found = []
        if projects.is_dir():
            for candidate in sorted(projects.glob("*/memory")):
                if candidate.is_dir() and not candidate.is_symlink() and not candidate.parent.is_symlink():
                    found.append(self.for_path(candidate))
        return found

    def recover(self) -> dict[str, int]:
        """At start, after a crash: every existing memory dir loses its temp files and gets its
        index reconciled with its files. Returns temp files removed by dir."""
        return {str(store.path): store.recover() for store in self.discover()}
