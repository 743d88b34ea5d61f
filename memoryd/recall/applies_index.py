"""`AppliesIndex`: each memory's `AppliesTo` (written in its frontmatter, else derived from its text),
kept per file version so a tool call costs a dict walk, not a read of every file; and which of them a
prompt meets."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from memoryd.base import limits
from memoryd.base.errors import MemorydError
from memoryd.base.text import query_terms
from memoryd.recall.decide import names_unknown
from memoryd.recall.store_index import StoreIndex
from memoryd.relevance.applies import AppliesTo, from_meta, parse_applies, reaches
from memoryd.relevance.applies_derive import derive, topics_of
from memoryd.relevance.applies_match import prompt_reason
from memoryd.relevance.applies_reason import Reason, Via
from memoryd.relevance.applies_triggers import Triggers
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.model import Memory


def combined(derived: AppliesTo, written: AppliesTo | None) -> AppliesTo:
    """The lists written in the file rule (met with certainty); all else (what the text forbids and is about)
    comes from the text."""
    if written is None:
        return derived
    return replace(derived, paths=written.paths, commands=written.commands, tools=written.tools, explicit=True)


def reached(m: Memory) -> str:
    """The acts a saved memory reaches, in words (the save answer's `reaches`)."""
    written = parse_applies(m.applies_to) if m.applies_to else None
    return reaches(combined(derive(m.name, m.description, m.body, m.type), written))


@dataclass(frozen=True)
class _View:
    """One store's memories with what each applies to, as of one version of its index, and their triggers."""

    version: tuple[int, int]
    # filename -> the mtime its applies_to was read at: the header's own float, so a view costs one dict per
    # store beside `applies`, not a tuple per memory (1.1 MB at 20,000, issue 42)
    mtimes: dict[str, float]
    applies: dict[str, AppliesTo]
    triggers: Triggers


class AppliesIndex:
    """filename -> AppliesTo per memory dir, re-derived only for files whose mtime changed, and rebuilt only when
    the store's index changed (a prompt or a tool call between two saves costs a lookup, not a walk)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_dir: dict[str, _View] = {}

    def of(self, store: MemoryDir, item: StoreIndex) -> dict[str, AppliesTo]:
        """Every memory of the store's index with what it applies to (files read once per version)."""
        return self.view(store, item).applies

    def view(self, store: MemoryDir, item: StoreIndex) -> _View:
        key, version = str(store.path), item.version
        with self._lock:
            known = self._by_dir.get(key)
        if known is not None and known.version == version:
            return known
        headers = item.snapshot()
        mtimes: dict[str, float] = {}
        applies: dict[str, AppliesTo] = {}
        for h in headers:
            have = known.applies.get(h.filename) if known is not None else None
            if have is None or known is None or known.mtimes.get(h.filename) != h.mtime:
                have = self._read(store, h.filename, h.name, h.description, h.type)
            mtimes[h.filename], applies[h.filename] = h.mtime, have
        view = _View(version, mtimes, applies, Triggers.of(applies))
        with self._lock:
            self._by_dir[key] = view
        return view

    @staticmethod
    def _read(store: MemoryDir, filename: str, name: str, description: str, type_: str) -> AppliesTo:
        try:
            text = store.read_raw(filename) or ""
            meta, body = split_frontmatter(text, source=filename)
        except (MemorydError, OSError, UnicodeDecodeError):
            return AppliesTo()
        return combined(derive(name, description, body, type_), from_meta(meta))

    def prompt_picks(
        self, store: MemoryDir, item: StoreIndex, query: str, surfaced: set[str], ranked_chose: bool
    ) -> dict[str, Reason]:
        """Memories whose applies_to the prompt meets, with why: a program, path or code it names
        (always), or a subject it shares (beside the ranking's choice only when it also holds a word of
        the prompt; never when the prompt names a product this store never mentions; the memories
        most about it, at most two)."""
        topics = topics_of(query)
        view = self.view(store, item)
        applies = view.applies
        could = sorted(view.triggers.named_in(query) - surfaced)
        named = {fn: why for fn in could if (why := prompt_reason(applies[fn], query, topics)) and not why.subject_only}
        # a subject alone only for rules about code (they name a path, a command or code): "the colour of
        # her car" must not bring a memory that mentions a background colour (LoCoMo other-store 0.016 -> 0.086)
        subject = sorted(view.triggers.code_rules_about(topics) - surfaced - named.keys())
        if subject and ranked_chose:  # beside the ranking's choice, a subject needs a word of the prompt too
            _, held = item.index.matches(set(query_terms(query)), subject)
            subject = [fn for fn in subject if held[fn]]
        else:  # alone, the subject must be what the memory is about (its name or description), not a word of its body
            subject = [fn for fn in subject if applies[fn].about & topics]
        if not subject or names_unknown(item.index, query):
            return named
        order = {fn: i for i, (fn, _) in enumerate(item.index.rank(query, k=50, gate=False))}
        top = max(applies[fn].weight(topics) for fn in subject)
        subject = sorted(
            (fn for fn in subject if applies[fn].weight(topics) == top), key=lambda fn: (order.get(fn, 99), fn)
        )
        return named | {
            fn: Reason(Via.SUBJECT, min(applies[fn].topics & topics))
            for fn in subject[: limits.TOOL_RECALL_MAX_MEMORIES]
        }
