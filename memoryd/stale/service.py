"""`StaleChecker`: which memories name a path, script, flag, function or package the project no
longer has, and why. Cached per memory (by its mtime) and per project (by HEAD and the git index),
so recall can ask on every prompt; `memoryd stale`, the web view and dream read it fresh.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import MemorydError
from memoryd.stale.project import ProjectFacts, repo_key
from memoryd.stale.refs import FLAG, MODULE, PACKAGE, PATH, SCRIPT, SYMBOL, Ref, find_refs
from memoryd.store import MemoryDir

log = logging.getLogger(__name__)
CAVEAT = (
    "Possibly stale: this memory names {what} that the project no longer has. Check the current code before "
    "relying on it."
)


def reason(ref: Ref) -> str:
    """Why a ref counts as gone, naming what was checked."""
    if ref.kind == PATH:
        return (
            f"names `{ref.name}`, which git history had and neither git ls-files (tracked, untracked, ignored) nor "
            "the disk has now"
        )
    if ref.kind == SCRIPT:
        where = {"make": "no Makefile target", "just": "no justfile recipe"}.get(ref.runner, "no package.json script")
        if ref.implicit:
            where = "no package.json script, program in node_modules/.bin or dependency"
        run = "run " if ref.runner in ("npm", "pnpm", "yarn", "bun") and not ref.implicit else ""
        return f"runs `{ref.runner} {run}{ref.name}`, but {where} is called {ref.name}"
    if ref.kind == PACKAGE:
        return (
            f"names package `{ref.name}`, which no manifest lists (package.json, pyproject.toml, requirements, "
            "Cargo.toml, go.mod)"
        )
    if ref.kind == MODULE:
        return f"runs `python -m {ref.name}`, but {ref.name} is neither a tracked module nor a dependency"
    if ref.kind == FLAG:
        return f"names flag `{ref.name}`, which no tracked file contains"
    assert ref.kind == SYMBOL
    return f"names `{ref.name}`, which no tracked file contains (git grep)"


@dataclass(frozen=True)
class Finding:
    filename: str
    name: str
    type: str
    reasons: tuple[str, ...]
    refs: tuple[Ref, ...]


@dataclass(kw_only=True, eq=False)
class StaleChecker:
    """Stale flags per memory dir; a dir whose project is unknown or not a git repo is never flagged."""

    root_of: Callable[[MemoryDir], Path | None]
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._facts: dict[Path, tuple[str, ProjectFacts]] = {}
        self._keys: dict[Path, tuple[float, str | None]] = {}
        self._results: dict[tuple[str, str], tuple[tuple[float, str], tuple[Ref, ...]]] = {}
        self._pending: set[tuple[str, str]] = set()  # memories whose history check runs in the background
        self._lock = threading.Lock()

    def _project(self, store: MemoryDir, *, fresh: bool) -> tuple[str, ProjectFacts] | None:
        root = self.root_of(store)
        if root is None or not root.is_dir():
            return None
        now = self.clock()
        with self._lock:
            cached_key = self._keys.get(root)
        if fresh or cached_key is None or now - cached_key[0] > limits.STALE_REPO_RECHECK_SECONDS:
            key = repo_key(root)
            with self._lock:
                self._keys[root] = (now, key)
        else:
            key = cached_key[1]
        if key is None:
            return None
        with self._lock:
            cached = self._facts.get(root)
        if cached is None or cached[0] != key:
            cached = (key, ProjectFacts.load(root, exclude=store.path))
            with self._lock:
                self._facts[root] = cached
        return cached

    def _missing(
        self,
        store: MemoryDir,
        filename: str,
        mtime: float,
        key: str,
        facts: ProjectFacts,
        history_timeout: float = limits.STALE_HISTORY_TIMEOUT_SECONDS,
    ) -> tuple[Ref, ...] | None:
        """What the memory names that the project no longer has; None when git history did not answer in time."""
        cache_key = (str(store.path), filename)
        stamp = (mtime, key)
        with self._lock:
            hit = self._results.get(cache_key)
        if hit is not None and hit[0] == stamp:
            # A file created since (untracked: the repo key does not change) makes the memory true again.
            return tuple(r for r in hit[1] if not (r.kind == PATH and facts.on_disk(r.name)))
        memory = store.get(filename)
        refs = find_refs(
            f"{memory.name}\n\n{memory.description}\n\n{memory.body}", cli_names=frozenset(facts.cli_names)
        )
        found, whole = facts.missing(refs, history_timeout=history_timeout)
        if not whole:
            return None
        gone = tuple(found)
        with self._lock:
            self._results[cache_key] = ((memory.mtime, key), gone)
        return gone

    def check(self, store: MemoryDir, *, fresh: bool = True) -> list[Finding]:
        """Every stale memory of the dir, with its reasons (newest memory first)."""
        project = self._project(store, fresh=fresh)
        if project is None:
            return []
        key, facts = project
        findings = []
        for header in store.all_headers():
            try:
                gone = self._missing(store, header.filename, header.mtime, key, facts)
            except MemorydError:
                continue  # unreadable since the scan: listed as invalid elsewhere
            if gone:  # None: git history did not answer in time, so nothing is claimed
                findings.append(
                    Finding(header.filename, header.name, header.type, tuple(reason(r) for r in gone), gone)
                )
        return findings

    def finding(self, store: MemoryDir, filename: str) -> Finding | None:
        """One memory's finding (its page shows it), None when it is fresh or the project cannot be checked."""
        project = self._project(store, fresh=False)
        if project is None:
            return None
        memory = store.get(filename)
        gone = self._missing(store, filename, memory.mtime, *project)
        return Finding(filename, memory.name, memory.type, tuple(reason(r) for r in gone), gone) if gone else None

    def checked(self, store: MemoryDir) -> bool:
        """Whether this dir's project can be checked at all (known root, a git repo)."""
        return self._project(store, fresh=False) is not None

    def caveat(self, store: MemoryDir, filename: str) -> str:
        """The line recall puts before a stale memory; empty for a fresh one (or on any error: recall must not fail)."""
        try:
            project = self._project(store, fresh=False)
            if project is None:
                return ""
            path = store.path / filename  # the filename came from the store's own scan
            key, facts = project
            with self._lock:
                if (str(store.path), filename) in self._pending:
                    return ""  # its history check is still running: no caveat until it says so
            mtime = path.stat().st_mtime
            gone = self._missing(store, filename, mtime, key, facts, limits.STALE_HISTORY_RECALL_TIMEOUT_SECONDS)
            if gone is None:  # a long history: finish the check off recall's path, for the next recall
                self._check_later(store, filename, mtime, key, facts)
                return ""
        except Exception:
            log.warning("stale check failed for %s; recalled without a caveat", filename, exc_info=True)
            return ""
        if not gone:
            return ""
        return CAVEAT.format(what=", ".join(r.describe() for r in gone[:3]) + (" and more" if len(gone) > 3 else ""))

    def _check_later(self, store: MemoryDir, filename: str, mtime: float, key: str, facts: ProjectFacts) -> None:
        pending = (str(store.path), filename)
        with self._lock:
            if pending in self._pending:
                return
            self._pending.add(pending)

        def run() -> None:
            try:
                self._missing(store, filename, mtime, key, facts)
            except Exception:
                log.warning("stale check failed for %s", filename, exc_info=True)
            finally:
                with self._lock:
                    self._pending.discard(pending)

        threading.Thread(target=run, name="stale-history", daemon=True).start()

    def dream_notes(self, store: MemoryDir) -> list[str]:
        """What a consolidation proposes for each stale memory: update it, or remove it."""
        try:
            findings = self.check(store)
        except Exception:
            log.warning("stale check failed for %s", store.path, exc_info=True)
            return []
        return [
            f"stale: {f.filename} {'; '.join(f.reasons)}. Proposed: update it to the current names, or remove it "
            f"(memoryd forget {f.filename})."
            for f in findings
        ]
