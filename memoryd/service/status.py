"""`DaemonStatus`: what GET /v1/status answers. The daemon's own facts, then one section per
part (each part registers its provider); a sick part shows its error, status still answers."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd import __version__
from memoryd.base.clock import Clock
from memoryd.llm import LLMClient, UsageMeter
from memoryd.store import StoreRegistry
from memoryd.store.watcher import MemoryWatcher
from memoryd.transcripts import TranscriptService


@dataclass(kw_only=True, eq=False)
class DaemonStatus:
    home: Path
    llm: LLMClient
    meter: UsageMeter
    stores: StoreRegistry
    watcher: MemoryWatcher
    transcripts: TranscriptService
    clock: Clock

    def __post_init__(self) -> None:
        self.started_at = self.clock.time()  # epoch seconds, for the uptime gauge
        self._started = self.clock.monotonic()
        self.providers: dict[str, Callable[[], Any]] = {}

    def add(self, name: str, provider: Callable[[], Any]) -> None:
        """A part's own section of the status."""
        self.providers[name] = provider

    def report(self) -> dict[str, Any]:
        known = self.stores.known()
        invalid = {str(s.path): s.invalid_files() for s in known}
        base: dict[str, Any] = {
            "version": __version__,
            "mode": self.llm.mode,
            "model": self.llm.model,
            "llm": self.llm.status(),
            "uptime_seconds": round(self.clock.monotonic() - self._started, 3),
            "pid": os.getpid(),
            "home": str(self.home),
            "memory_dirs": sorted(str(s.path) for s in known),
            "watched_folders": {"memory": self.watcher.watched, "transcripts": self.transcripts.status()["watched"]},
            "invalid_files": {k: v for k, v in invalid.items() if v},
            "llm_usage": self.meter.summary(),
        }
        for name, provider in self.providers.items():
            try:
                base[name] = provider()
            except Exception as exc:  # status must answer even when a part is sick
                base[name] = {"error": str(exc)}
        return base
