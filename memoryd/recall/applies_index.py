"""`AppliesIndex`: each memory's `AppliesTo` (written in its frontmatter, else derived from its text),
kept per file version so a tool call costs a dict walk, not a read of every file; and which of them a
prompt meets."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace

from memoryd.base import limits
from memoryd.base.digest_cache import text_digest
from memoryd.base.errors import MemorydError
from memoryd.base.globs import is_wild
from memoryd.base.process import lower_priority
from memoryd.base.text import query_terms
from memoryd.recall.decide import names_unknown
from memoryd.recall.derived_cache import DerivedCache
from memoryd.recall.store_index import StoreIndex
from memoryd.recall.view_keeper import KEEPER_NICE
from memoryd.relevance.applies import AppliesTo, from_meta, reaches, written_applies
from memoryd.relevance.applies_derive import derive, topics_of
from memoryd.relevance.applies_match import meeting, prompt_reason
from memoryd.relevance.applies_reason import Reason, Via
from memoryd.relevance.applies_triggers import Triggers
from memoryd.store import MemoryDir
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.model import Memory, MemoryHeader

log = logging.getLogger(__name__)


def combined(derived: AppliesTo, written: AppliesTo | None) -> AppliesTo:
    """The lists written in the file rule (met with certainty); all else (what the text forbids and is about)
    comes from the text."""
    if written is None:
        return derived
    return replace(derived, paths=written.paths, commands=written.commands, tools=written.tools, explicit=True)


def reached(m: Memory) -> str:
    """The acts a saved memory reaches, in words (the save answer's `reaches`)."""
    return reaches(combined(derive(m.name, m.description, m.body, m.type), written_applies(m.applies_to)))


@dataclass(frozen=True)
class _View:
    """One store's memories with what each applies to, as of one version of its index, and their triggers."""

    version: tuple[int, int]
    # filename -> the mtime its applies_to was read at: the header's own float, so a view costs one dict per
    # store beside `applies`, not a tuple per memory (1.1 MB at 20,000, issue 42)
    mtimes: dict[str, float]
    applies: dict[str, AppliesTo]
    triggers: Triggers


_NO_VIEW = _View((-1, -1), {}, {}, Triggers())
_READ_AT_ONCE = 500  # files read, looked up in the derived cache and kept per batch (their texts held meanwhile)


def _applies(h: MemoryHeader, text: str) -> AppliesTo:
    """What a memory file applies to: the lists its frontmatter writes, the rest derived from its text."""
    try:
        meta, body = split_frontmatter(text, source=h.filename)
    except MemorydError:
        return AppliesTo()
    return combined(derive(h.name, h.description, body, h.type), from_meta(meta))


def _stale(headers: list[MemoryHeader], old: _View) -> list[MemoryHeader]:
    """The memories `old` holds no derivation of as of their file's mtime."""
    return [h for h in headers if h.filename not in old.applies or old.mtimes.get(h.filename) != h.mtime]


# More files to derive than this, and a request is answered from the view as it stands (the last one, or none) while
# a background thread derives them: a first prompt on an unknown store of 20,000 waited ~30 s for them.
DERIVE_INLINE_MAX = 256


class AppliesIndex:
    """filename -> AppliesTo per memory dir, re-derived only for files whose mtime changed, and rebuilt only when
    the store's index changed (a prompt or a tool call between two saves costs a lookup, not a walk). What is derived
    is kept on disk by text (`DerivedCache`): a restart reads it back."""

    def __init__(self, kept: DerivedCache | None = None) -> None:
        self._lock = threading.Lock()
        self._by_dir: dict[str, _View] = {}
        self._kept = kept or DerivedCache(None)
        self._deriving: set[str] = set()  # stores whose view a thread is deriving many files for

    def close(self) -> None:
        self._kept.close()

    def of(self, store: MemoryDir, item: StoreIndex) -> dict[str, AppliesTo]:
        """Every memory of the store's index with what it applies to (files read once per version)."""
        return self.view(store, item).applies

    def view(self, store: MemoryDir, item: StoreIndex, *, wait: bool = False) -> _View:
        """The store's view as of its index's version. More than DERIVE_INLINE_MAX files to derive: `wait=False`
        (a request) gets the last view (or an empty one) at once and a background thread derives them."""
        key, version = str(store.path), item.version
        with self._lock:
            known = self._by_dir.get(key)
        if known is not None and known.version == version:
            return known
        headers = item.snapshot()
        old = known or _NO_VIEW
        stale = _stale(headers, old)
        if len(stale) > DERIVE_INLINE_MAX:
            with self._lock:
                busy = key in self._deriving
                if not busy:
                    self._deriving.add(key)
            if not wait or busy:
                if not busy:
                    threading.Thread(
                        target=self._derive_later, args=(store, item), name="recall-derive", daemon=True
                    ).start()
                return old
            try:
                return self._built(store, version, headers, old, stale)
            finally:
                with self._lock:
                    self._deriving.discard(key)
        return self._built(store, version, headers, old, stale)

    def _derive_later(self, store: MemoryDir, item: StoreIndex) -> None:
        lower_priority(KEEPER_NICE)  # a request's thread wins a contended core
        key = str(store.path)
        try:
            version, headers = item.version, item.snapshot()
            with self._lock:
                old = self._by_dir.get(key) or _NO_VIEW
            self._built(store, version, headers, old, _stale(headers, old))
        except Exception:
            log.exception("recall: deriving what the memories of %s apply to failed", store.path)
        finally:
            with self._lock:
                self._deriving.discard(key)

    def _built(
        self,
        store: MemoryDir,
        version: tuple[int, int],
        headers: list[MemoryHeader],
        old: _View,
        stale: list[MemoryHeader],
    ) -> _View:
        """The view of these headers: `old`'s entries for files unchanged since, the `stale` ones read and derived."""
        fresh = self._derived(store, stale)
        mtimes = {h.filename: h.mtime for h in headers}
        applies = {h.filename: fresh[h.filename] if h.filename in fresh else old.applies[h.filename] for h in headers}
        view = _View(version, mtimes, applies, Triggers.of(applies))
        with self._lock:
            self._by_dir[str(store.path)] = view
        return view

    def _derived(self, store: MemoryDir, headers: list[MemoryHeader]) -> dict[str, AppliesTo]:
        """What each of these memories applies to: read back from the derived cache when its file's text was seen
        before (by this daemon or an earlier one), else parsed, derived and kept."""
        out: dict[str, AppliesTo] = {}
        for i in range(0, len(headers), _READ_AT_ONCE):
            texts = {h.filename: (h, self._text(store, h.filename)) for h in headers[i : i + _READ_AT_ONCE]}
            digests = {
                fn: text_digest((h.name, h.description, h.type, t)) for fn, (h, t) in texts.items() if t is not None
            }
            found = self._kept.get_many(list(digests.values()))
            made: list[tuple[bytes, AppliesTo]] = []
            for fn, (h, text) in texts.items():
                if text is None:  # unreadable
                    out[fn] = AppliesTo()
                elif (have := found.get(digests[fn])) is not None:
                    out[fn] = have
                else:
                    out[fn] = _applies(h, text)
                    made.append((digests[fn], out[fn]))
            self._kept.put_many(made)
        return out

    @staticmethod
    def _text(store: MemoryDir, filename: str) -> str | None:
        try:
            return store.read_raw(filename) or ""
        except (MemorydError, OSError, UnicodeDecodeError):
            return None

    def context_picks(
        self, store: MemoryDir, item: StoreIndex, paths: list[str], surfaced: set[str]
    ) -> dict[str, Reason]:
        """Memories whose reach a file the session is working on meets (`paths`: project-relative, most recent
        last): a prompt in the middle of that work is about it, as an edit of the file would be. The most recent
        files first, at most two; met at their place or by their code, not by the file's language alone (a whole
        language is too wide for a file only read)."""
        view = self.view(store, item)
        met: dict[str, Reason] = {}
        recent = [p for p in dict.fromkeys(reversed(paths)) if p and not p.startswith("/") and not is_wild(p)]
        for path in recent[: limits.CONTEXT_FILES_MET]:
            for fn in sorted(view.triggers.for_tool(path, "", "") - surfaced - met.keys()):
                if (why := meeting(view.applies[fn], "Read", path)) and not why.language_only:
                    met[fn] = why
        return {fn: met[fn] for fn in list(met)[: limits.TOOL_RECALL_MAX_MEMORIES]}

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
