"""`GrepPool`: worker processes that scan big transcript searches on every core.

Python's find and re hold the GIL, so threads cannot share the work; processes can. The pool
is spawned (the daemon runs threads: forking it is unsafe), started on first use only, and its
workers import just `memoryd.grep_scan`. Files go out in newest-first work units and come back
in that order, so the caller sees exactly what an in-process scan would give.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Generator

from memoryd import limits
from memoryd.grep_scan import FileScan, Plan, scan_here, scan_unit, warm

log = logging.getLogger(__name__)


def work_units(files: list[tuple[Path, int]], unit_bytes: int | None = None) -> list[list[Path]]:
    """Consecutive files batched to about `unit_bytes` each (a bigger file is a unit alone), order kept."""
    unit_bytes = limits.GREP_POOL_UNIT_BYTES if unit_bytes is None else unit_bytes
    units: list[list[Path]] = []
    current: list[Path] = []
    size = 0
    for path, n in files:
        current.append(path)
        size += n
        if size >= unit_bytes:
            units.append(current)
            current, size = [], 0
    if current:
        units.append(current)
    return units


def in_order(
    submit: Callable[[list[Path], float], Future[list[FileScan]]], units: list[list[Path]], in_flight: int,
    remaining: Callable[[], float],
) -> Generator[tuple[Path | None, FileScan], None, None]:
    """(path, FileScan) per file, units in the given order though they run concurrently; (None,
    deadline scan) when time runs out. `submit(unit, seconds_left)` starts one unit; `in_flight`
    are out at a time, and closing the generator cancels those not started yet."""
    pending: deque[tuple[list[Path], Future[list[FileScan]]]] = deque()
    todo = iter(units)

    def send() -> None:
        unit = next(todo, None)
        if unit is not None:
            pending.append((unit, submit(unit, max(0.0, remaining()))))

    try:
        for _ in range(in_flight):
            send()
        while pending:
            unit, future = pending.popleft()
            try:
                scans = future.result(timeout=max(0.0, remaining()))
            except FutureTimeout:
                yield None, FileScan([], 0, "deadline")
                return
            send()  # keep the workers busy while the caller builds hits
            yield from zip(unit, scans, strict=False)  # a unit stopped early returns fewer scans
    finally:
        for _, future in pending:
            future.cancel()


class GrepPool:
    """A lazily started process pool for transcript scans, shared by concurrent searches; its
    workers stop after `idle_seconds` without a search and start again on the next one."""

    def __init__(self, workers: int | None = None, idle_seconds: float = limits.GREP_POOL_IDLE_SECONDS) -> None:
        self.workers = workers or min(limits.GREP_POOL_MAX_WORKERS, os.cpu_count() or 1)
        self.idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._closed = False
        self._breaks = 0
        self._users = 0  # searches (or warm calls) holding the executor now
        self._last_used = time.monotonic()
        self._idle_timer: threading.Timer | None = None

    @property
    def started(self) -> bool:
        return self._executor is not None

    def _acquire(self) -> ProcessPoolExecutor | None:
        """The executor (started if needed), held until `_release` so the idle stop cannot take it."""
        with self._lock:
            if self._closed:
                return None
            if self._executor is None:
                self._executor = ProcessPoolExecutor(
                    max_workers=self.workers, mp_context=multiprocessing.get_context("spawn")
                )
            self._users += 1
            return self._executor

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            self._last_used = time.monotonic()
            if self._users == 0 and self._executor is not None and not self._closed:
                self._arm_idle_stop(self.idle_seconds)

    def _arm_idle_stop(self, seconds: float) -> None:
        """(Re)start the timer that stops idle workers; called with the lock held."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        self._idle_timer = threading.Timer(seconds, self._stop_if_idle)
        self._idle_timer.daemon = True
        self._idle_timer.start()

    def _stop_if_idle(self) -> None:
        """Shut the workers down (they hold ~19 MB each after a big search) if no search ran lately."""
        with self._lock:
            executor = self._executor
            if executor is None or self._users or self._closed:
                return
            left = self._last_used + self.idle_seconds - time.monotonic()
            if left > 0:  # used again since the timer was set
                self._arm_idle_stop(left)
                return
            self._executor, self._idle_timer = None, None
        log.debug("grep workers idle for %.0fs: stopping them", self.idle_seconds)
        executor.shutdown(wait=True)

    def warm(self) -> list[int]:
        """Start the workers now (benchmarks time searches, not process start); the pids that ran."""
        executor = self._acquire()
        if executor is None:
            return []
        try:
            return sorted({f.result() for f in [executor.submit(warm) for _ in range(self.workers)]})
        finally:
            self._release()

    def scan(
        self, plan: Plan, files: list[tuple[Path, int]], max_hits: int, *, remaining: Callable[[], float]
    ) -> Generator[tuple[Path | None, FileScan], None, None]:
        """(path, FileScan) per file in the given order; (None, deadline scan) when time runs out.

        A few units are in flight at a time, each given the seconds left when it is sent; closing
        the generator (the caller has enough) cancels the units not yet started. If a worker dies,
        the files not yet returned are scanned here."""
        paths = [p for p, _ in files]
        executor = self._acquire()
        if executor is None:  # closed (daemon stopping) or given up on: scan here
            yield from scan_here(plan, paths, lambda: max_hits, lambda: remaining() <= 0)
            return
        try:
            yield from self._scan_on(executor, plan, files, paths, max_hits, remaining)
        finally:
            self._release()

    def _scan_on(
        self, executor: ProcessPoolExecutor, plan: Plan, files: list[tuple[Path, int]], paths: list[Path], max_hits: int,
        remaining: Callable[[], float],
    ) -> Generator[tuple[Path | None, FileScan], None, None]:
        """`scan` on a held executor."""
        done = 0  # files returned so far

        def submit(unit: list[Path], seconds: float) -> Future[list[FileScan]]:
            return executor.submit(scan_unit, plan, [str(p) for p in unit], max_hits, seconds)

        try:
            for path, scan in in_order(submit, work_units(files), 2 * self.workers, remaining):
                if path is not None:
                    done += 1
                    self._breaks = 0  # the workers run
                yield path, scan
            return
        except BrokenProcessPool:
            log.warning("a grep worker process died; scanning the rest of this search in-process")
            self._broken(executor)
        yield from scan_here(plan, paths[done:], lambda: max_hits, lambda: remaining() <= 0)

    def _broken(self, executor: ProcessPoolExecutor) -> None:
        """Forget a broken executor so the next search starts a fresh one; after a few breaks in a
        row (workers that cannot start) stop trying and scan in-process."""
        with self._lock:
            if self._executor is executor:
                self._executor = None
                self._breaks += 1
                if self._breaks >= limits.GREP_POOL_MAX_BREAKS:
                    self._closed = True
                    log.error("grep worker processes keep dying; transcript search runs in-process from now on")
        executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (pending units are cancelled); later searches run in-process."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
            if self._idle_timer is not None:
                self._idle_timer.cancel()
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)
