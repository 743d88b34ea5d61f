"""The same hook event twice gets one answer: when both the plugin's hooks and settings-file hooks run (or an
older install's beside a newer one), Claude Code sends each of them the same event, and each forwards it."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

REPEAT_WINDOW_SECONDS = 30.0  # Claude Code starts an event's hooks together; a repeat comes within its hooks' timeout
EVENTS_REMEMBERED = 4096


class RepeatedEvents:
    """Remembers the events it has seen lately by their content; a byte-for-byte repeat is answered once."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._seen: OrderedDict[bytes, float] = OrderedDict()
        self._lock = threading.Lock()
        self._clock = clock

    def first_time(self, payload: dict[str, Any]) -> bool:
        key = hashlib.blake2b(json.dumps(payload, sort_keys=True, default=str).encode(), digest_size=16).digest()
        now = self._clock()
        with self._lock:
            while self._seen and next(iter(self._seen.values())) < now - REPEAT_WINDOW_SECONDS:
                self._seen.popitem(last=False)
            if key in self._seen:
                return False
            self._seen[key] = now
            if len(self._seen) > EVENTS_REMEMBERED:
                self._seen.popitem(last=False)
            return True
