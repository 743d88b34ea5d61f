"""Auto-Dream: gated, locked, undoable consolidation of a memory directory."""

from memoryd.dream.lock import ConsolidationLock
from memoryd.dream.service import DreamService
from memoryd.errors import LockHeld

__all__ = ["ConsolidationLock", "DreamService", "LockHeld"]
