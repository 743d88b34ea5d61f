"""`StoreRegistry`: resolves an agent's cwd to its `MemoryDir`, one instance per directory."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from memoryd.store.memdir import Clock, MemoryDir, utc_now
from memoryd.store.paths import project_root, resolve_memory_dir


class StoreRegistry:
    """cwd → MemoryDir. Knows every memory dir touched since start (for the watcher and dream)."""

    def __init__(self, *, memory_base: Path, env_override: str = "", config_dir: str = "", now: Clock = utc_now,
                 default_dir: Callable[[str], Path] | None = None) -> None:
        self.memory_base = memory_base
        self.default_dir = default_dir  # cwd → memory dir when no override is set (memory_base = "auto")
        self.env_override = env_override
        self.config_dir = config_dir
        self._now = now
        self._dirs: dict[Path, MemoryDir] = {}
        self._roots: dict[Path, Path] = {}  # memory dir → project root it was first resolved from
        self._lock = threading.Lock()
        self.on_new_dir: list[Callable[[MemoryDir], None]] = []

    def memory_dir_for(self, cwd: str) -> Path:
        return resolve_memory_dir(cwd, env_override=self.env_override, config_dir=self.config_dir,
                                  memory_base=self.memory_base, default=self.default_dir)

    def for_cwd(self, cwd: str) -> MemoryDir:
        path = self.memory_dir_for(cwd)
        store = self.for_path(path)
        with self._lock:
            self._roots.setdefault(path, project_root(cwd))
        return store

    def for_path(self, path: Path) -> MemoryDir:
        with self._lock:
            store = self._dirs.get(path)
            created = store is None
            if store is None:
                store = self._dirs[path] = MemoryDir(path, now=self._now)
        if created:
            for callback in list(self.on_new_dir):
                callback(store)
        return store

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
