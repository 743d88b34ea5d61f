"""Per-session rolling notes (spec §5): ten sections, token-gated updates, LLM or offline."""

from memoryd.session_memory.service import SessionMemory

__all__ = ["SessionMemory"]
