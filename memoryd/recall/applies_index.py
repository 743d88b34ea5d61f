"""`AppliesIndex`: each memory read into the relevance features (`memoryd.relevance`: its text, and the
`applies_to` lists written in its frontmatter), kept per file version so an act costs a lookup of the
memories sharing its features, not a read of every file."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from memoryd.base.errors import MemorydError
from memoryd.recall.applies import from_meta
from memoryd.recall.store_index import StoreIndex
from memoryd.relevance.features import Feature
from memoryd.relevance.memory import Memory, memory, shared
from memoryd.relevance.shell import parse
from memoryd.relevance.triggers import Triggers
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import split_frontmatter


@dataclass(frozen=True)
class _View:
    """One store's memories with their features, as of one version of its index, and their triggers."""

    version: tuple[int, int]
    # filename -> the mtime its features were read at (one dict per store, not a tuple per memory: issue 42)
    mtimes: dict[str, float]
    memories: dict[str, Memory]
    tools: dict[str, tuple[str, ...]]  # the tools a memory's written `applies_to` limits it to
    triggers: Triggers


class AppliesIndex:
    """filename -> Memory per memory dir, re-read only for files whose mtime changed, and rebuilt only when the
    store's index changed (a prompt or a tool call between two saves costs a lookup, not a walk)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_dir: dict[str, _View] = {}

    def view(self, store: MemoryDir, item: StoreIndex) -> _View:
        key, version = str(store.path), item.version
        with self._lock:
            known = self._by_dir.get(key)
        if known is not None and known.version == version:
            return known
        mtimes: dict[str, float] = {}
        memories: dict[str, Memory] = {}
        tools: dict[str, tuple[str, ...]] = {}
        for h in item.snapshot():
            have = known.memories.get(h.filename) if known is not None else None
            limit = known.tools.get(h.filename, ()) if known is not None else ()
            if have is None or known is None or known.mtimes.get(h.filename) != h.mtime:
                have, limit = self._read(store, h.filename, h.name, h.description, h.type)
            mtimes[h.filename], memories[h.filename] = h.mtime, have
            if limit:
                tools[h.filename] = limit
        view = _View(version, mtimes, memories, tools, Triggers.of(memories))
        with self._lock:
            self._by_dir[key] = view
        return view

    @staticmethod
    def _read(
        store: MemoryDir, filename: str, name: str, description: str, type_: str
    ) -> tuple[Memory, tuple[str, ...]]:
        try:
            text = store.read_raw(filename) or ""
            meta, body = split_frontmatter(text, source=filename)
        except (MemorydError, OSError, UnicodeDecodeError):
            return Memory(frozenset()), ()
        read = memory(name, description, body, type_)
        written = from_meta(meta)
        if written is None:
            return read, ()
        return with_written(read, written.paths, written.commands), written.tools


def with_written(mem: Memory, paths: tuple[str, ...], commands: tuple[str, ...]) -> Memory:
    """A memory with the places and commands its frontmatter's `applies_to` writes: features like any other."""
    extra: set[Feature] = set()
    for line in commands:
        for c in parse(line)[:1]:
            extra.add(("program", c.family))
            if len(c.runs) > 1:
                extra.add(("subcommand", " ".join(c.runs[:2])))
    globs = tuple(dict.fromkeys((*paths, *mem.globs)))
    return shared(replace(mem, features=shared(mem.features | frozenset(extra)), globs=globs))
