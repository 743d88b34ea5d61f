"""Auto-Dream: gated, locked, undoable consolidation of a memory directory."""

from memoryd.base.errors import LockHeld
from memoryd.dream.lock import ConsolidationLock
from memoryd.dream.service import DreamService

__all__ = ["ConsolidationLock", "DreamService", "LockHeld"]
