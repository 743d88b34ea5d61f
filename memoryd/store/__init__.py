"""The memdir: plain Markdown memories with YAML frontmatter, indexed by MEMORY.md."""

from memoryd.store.memdir import MemoryDir
from memoryd.store.model import InvalidFile, Memory, MemoryHeader, SaveResult
from memoryd.store.registry import StoreRegistry

__all__ = ["InvalidFile", "Memory", "MemoryDir", "MemoryHeader", "SaveResult", "StoreRegistry"]
