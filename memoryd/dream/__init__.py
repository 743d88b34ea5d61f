"""Auto-Dream: gated, locked, undoable consolidation of a memory directory."""

from memoryd.dream.lock import ConsolidationLock
from memoryd.dream.service import DreamService, LockHeld

__all__ = ["ConsolidationLock", "DreamService", "LockHeld"]
