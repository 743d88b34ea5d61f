"""The store's value types."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypedDict

from memoryd.base.similarity import MemoryLike


class MemoryText(MemoryLike, Protocol):
    """What a memory says, whatever holds it (a Memory, a candidate, a review item): name, description, body."""

    @property
    def body(self) -> str: ...


class MemoryDraft(MemoryText, Protocol):
    """A memory's text and type, before or apart from its file: what extraction hands over."""

    @property
    def type(self) -> str: ...


class DraftFields(TypedDict):
    """A draft's four fields as keywords, as `MemoryDir.save` and `ReviewQueue.propose` take them."""

    name: str
    description: str
    type: str
    body: str


def draft_fields(draft: MemoryDraft) -> DraftFields:
    """`save(**draft_fields(candidate), ...)`: a draft handed over whole, its fields named once."""
    return {"name": draft.name, "description": draft.description, "type": draft.type, "body": draft.body}


@dataclass(frozen=True, slots=True)
class MemoryHeader:
    """What a scan reads from a file's first 30 lines, plus its mtime. Compact (slots, the dir's
    one Path shared, no body): a table holds 20,000 of them."""

    filename: str
    name: str
    description: str
    type: str
    mtime: float
    folder: Path = field(compare=False)  # the memory dir
    dialect: str = "memoryd"  # or "claude-code" (type nested under `metadata`)

    @property
    def path(self) -> Path:
        return self.folder / self.filename


@dataclass(frozen=True)
class MemoryFields:
    """What a memory file says, declared once: the core's Memory and the API's answer (api/models.py MemoryOut)
    both take these fields, in this order."""

    version: str  # content hash; pass it back as `expected` so a save never overwrites a newer edit
    filename: str
    name: str
    description: str
    type: str
    body: str
    mtime: float
    created: str
    modified: str


@dataclass(frozen=True)
class Memory(MemoryFields):
    """A whole memory file."""

    path: Path = field(compare=False)
    dialect: str = "memoryd"
    applies_to: dict[str, list[str]] = field(default_factory=dict, compare=False)  # paths, commands, tools
    forbid: dict[str, Any] = field(default_factory=dict, compare=False)  # what it forbids (memoryd/guard/rules.py)


@dataclass(frozen=True)
class InvalidFile:
    """A hand-edited file that could not be read as a memory; reported, never overwritten."""

    filename: str
    error: str


@dataclass(frozen=True)
class SaveResult:
    memory: Memory
    created: bool
    index_changed: bool
