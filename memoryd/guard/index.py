"""`GuardIndex`: the memories of a dir that forbid something, kept per index version so a tool call costs a walk
of the few rules, not a read of every file; a file is re-read only when its mtime changed."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from memoryd.base.errors import MemorydError
from memoryd.guard.rules import Forbid, from_meta, problem_of
from memoryd.recall.store_index import StoreIndex
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import split_frontmatter


@dataclass(frozen=True, slots=True)
class Rule:
    """One memory that forbids: its file, its name and line, and what it forbids."""

    filename: str
    name: str
    description: str
    path: str
    forbid: Forbid
    problem: str = ""  # why its `forbid:` holds nothing (a hand edit that does not parse)


@dataclass(frozen=True)
class _View:
    version: tuple[int, int]
    mtimes: dict[str, float]
    rules: dict[str, Rule]  # every file that has a `forbid:` key, well formed or not


class GuardIndex:
    """filename -> Rule per memory dir, rebuilt only when the store's index changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_dir: dict[str, _View] = {}

    def rules(self, store: MemoryDir, item: StoreIndex) -> list[Rule]:
        """The rules that hold acts (well formed, with at least one trigger), by filename."""
        return [r for _, r in sorted(self._view(store, item).rules.items()) if r.forbid]

    def broken(self, store: MemoryDir, item: StoreIndex) -> list[Rule]:
        """Files whose `forbid:` does not parse, so they hold nothing."""
        return [r for _, r in sorted(self._view(store, item).rules.items()) if r.problem]

    def _view(self, store: MemoryDir, item: StoreIndex) -> _View:
        key, version = str(store.path), item.version
        with self._lock:
            known = self._by_dir.get(key)
        if known is not None and known.version == version:
            return known
        mtimes: dict[str, float] = {}
        rules: dict[str, Rule] = {}
        for h in item.snapshot():
            mtimes[h.filename] = h.mtime
            have = known.rules.get(h.filename) if known is not None else None
            if known is None or known.mtimes.get(h.filename) != h.mtime:
                have = self._read(store, h.filename, h.name, h.description)
            if have is not None:
                rules[h.filename] = have
        view = _View(version, mtimes, rules)
        with self._lock:
            self._by_dir[key] = view
        return view

    @staticmethod
    def _read(store: MemoryDir, filename: str, name: str, description: str) -> Rule | None:
        try:
            text = store.read_raw(filename) or ""
            if "forbid" not in text:
                return None
            meta, _ = split_frontmatter(text, source=filename)
        except (MemorydError, OSError, UnicodeDecodeError):
            return None
        forbid = from_meta(meta)
        problem = problem_of(meta) if forbid is None else ""
        if forbid is None and not problem:
            return None
        return Rule(filename, name, description, str(store.path / filename), forbid or Forbid(), problem)
