"""MEMORY.md: render one pointer line per memory, merge them with the lines memoryd did not
write (notes, headings, Claude Code's own pointers), and serve it truncated with the warning.

It does NOT read memory files; it works on headers the caller scanned.
"""

from __future__ import annotations

import bisect
import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass

from memoryd.base import limits
from memoryd.store.model import MemoryHeader

TYPE_ORDER = {"feedback": 0, "user": 1, "project": 2, "reference": 3}

TRUNCATION_WARNING = (
    "> WARNING: MEMORY.md is {reason}; only part of it was loaded. "
    "Keep index entries to one line under ~150 chars; move detail into topic files."
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# `- [Title](file.md) ...`: the target is a bare file name in the memory dir.
POINTER_RE = re.compile(r"^\s*[-*+]\s+\[[^\]\n]*\]\(<?([^)/\\<>\s]+\.md)>?\)")


def index_line(header: MemoryHeader) -> str:
    """`- [Title](file.md) — one-line hook`, hook shortened so the line stays ≲150 chars."""
    title = _one_line(header.name).replace("[", "(").replace("]", ")") or header.filename
    head = f"- [{title}]({header.filename})"
    hook = _one_line(header.description)
    room = limits.INDEX_ENTRY_MAX_CHARS - len(head) - 3
    if room < 12:
        return head
    if len(hook) > room:
        hook = hook[: room - 1].rstrip() + "…"
    return f"{head} — {hook}" if hook else head


def order_for_index(headers: Iterable[MemoryHeader]) -> list[MemoryHeader]:
    """Most useful first (feedback, user, project, reference), newest first within a type,
    so truncation drops the least useful lines."""
    return sorted(headers, key=lambda h: (TYPE_ORDER.get(h.type, 9), -h.mtime, h.filename))


def render_index(headers: Iterable[MemoryHeader]) -> str:
    lines = [index_line(h) for h in order_for_index(headers)]
    return "\n".join(lines) + "\n" if lines else ""


def pointer_target(line: str) -> str | None:
    m = POINTER_RE.match(line)
    return m.group(1) if m else None


def _sort_key(header: MemoryHeader) -> tuple[int, float, str]:
    return (TYPE_ORDER.get(header.type, 9), -header.mtime, header.filename)


class IndexLayout:
    """MEMORY.md in memory: lines someone else wrote before and after memoryd's block, and the
    block itself kept sorted, so one memory's change is a bisect and a list insert (no rescan)."""

    def __init__(self, before: list[str], headers: Iterable[MemoryHeader], after: list[str], covered: set[str]) -> None:
        self.before, self.after, self.covered = before, after, covered
        ordered = order_for_index(h for h in headers if h.filename not in covered)
        self.keys = [_sort_key(h) for h in ordered]
        self.block = [index_line(h) for h in ordered]
        self._line_of = {h.filename: line for h, line in zip(ordered, self.block)}
        self._key_of = {h.filename: key for h, key in zip(ordered, self.keys)}

    def copy(self) -> IndexLayout:
        """An independent copy: a save's draft moves its line there while this one may move too."""
        other = copy.copy(self)
        other.before, other.after, other.covered = list(self.before), list(self.after), set(self.covered)
        other.keys, other.block = list(self.keys), list(self.block)
        other._line_of, other._key_of = dict(self._line_of), dict(self._key_of)
        return other

    def lines(self) -> list[str]:
        lines = self.before + self.block + self.after
        while lines and not lines[-1].strip():
            lines.pop()
        return lines

    def ours(self) -> dict[str, str]:
        """filename → the line memoryd wrote for it (kept current, not a copy)."""
        return self._line_of

    def drop(self, filename: str) -> bool:
        """Forget a memory memoryd deleted: its block line and anyone's pointer to it."""
        changed = self._remove(filename)
        if filename in self.covered:
            self.covered.discard(filename)
            self.before = [line for line in self.before if pointer_target(line) != filename]
            self.after = [line for line in self.after if pointer_target(line) != filename]
            changed = True
        return changed

    def upsert(self, header: MemoryHeader) -> bool:
        """A memory memoryd wrote: its line moves to its place (unless someone else's pointer covers it)."""
        if header.filename in self.covered:
            return False
        line, key = index_line(header), _sort_key(header)
        old_key = self._key_of.get(header.filename)
        if self._line_of.get(header.filename) == line and old_key is not None:
            i = bisect.bisect_left(self.keys, old_key)
            if (i == 0 or self.keys[i - 1] < key) and (i + 1 == len(self.keys) or key < self.keys[i + 1]):
                self.keys[i] = self._key_of[header.filename] = key  # same line, same place: the file stays as it is
                return False
        self._remove(header.filename)
        i = bisect.bisect(self.keys, key)
        self.keys.insert(i, key)
        self.block.insert(i, line)
        self._line_of[header.filename], self._key_of[header.filename] = line, key
        return True

    def _remove(self, filename: str) -> bool:
        key = self._key_of.pop(filename, None)
        if key is None:
            return False
        del self._line_of[filename]
        i = bisect.bisect_left(self.keys, key)  # keys are unique: they end with the filename
        del self.keys[i], self.block[i]
        return True


def merge_index(
    current: list[str], headers: Iterable[MemoryHeader], ours: dict[str, str], *, removed: frozenset[str] = frozenset()
) -> IndexLayout:
    """MEMORY.md's layout from its current lines and the memories on disk.

    memoryd's lines (the ones it last wrote, `ours`, or equal to what it would write) form one
    block, in `order_for_index` order, where the first of them stood. Every other line stays as
    written: notes, headings, and pointers someone else wrote to a memory (that memory then gets
    no second line). Pointers to a file memoryd just deleted (`removed`) go.
    """
    valid = {h.filename: h for h in headers}
    kept: list[str] = []
    covered: set[str] = set()
    block_at: int | None = None
    for line in current:
        target = pointer_target(line)
        if target is not None:
            header = valid.get(target)
            mine = ours.get(target) == line or (header is not None and index_line(header) == line)
            if target in removed or mine or (target in ours and header is None):
                if block_at is None and (mine or target in ours):
                    block_at = len(kept)
                continue
            if header is not None:
                covered.add(target)
        kept.append(line)
    has_block = any(f not in covered for f in valid)
    if block_at is None:
        block_at = len(kept)
        while block_at > 0 and not kept[block_at - 1].strip():
            block_at -= 1  # new lines go after the last written line, not after trailing blanks
        prev = kept[block_at - 1] if block_at else ""
        if has_block and prev.strip() and pointer_target(prev) is None and not prev.lstrip().startswith("#"):
            kept.insert(block_at, "")  # a blank line between someone's note and memoryd's first pointer
            block_at += 1
    return IndexLayout(kept[:block_at], valid.values(), kept[block_at:], covered)


@dataclass(frozen=True)
class ServedIndex:
    content: str
    truncated: bool
    lines: int
    bytes: int


def truncate_index(
    raw: str, *, max_lines: int = limits.INDEX_MAX_LINES, max_bytes: int = limits.INDEX_MAX_BYTES
) -> ServedIndex:
    """Lines first (200), then bytes (25,000) cut at the last newline before the limit."""
    text = raw.rstrip("\n")
    all_lines = text.split("\n") if text else []
    reasons: list[str] = []
    if len(all_lines) > max_lines:
        all_lines = all_lines[:max_lines]
        reasons.append(f"over {max_lines} lines")
    text = "\n".join(all_lines)
    encoded = text.encode("utf-8")
    if len(encoded) > max_bytes:
        cut = encoded[:max_bytes]
        newline = cut.rfind(b"\n")
        cut = cut[:newline] if newline > 0 else b""
        text = cut.decode("utf-8", errors="ignore")
        reasons.append(f"over {max_bytes:,} bytes")
    if reasons:
        text = (text + "\n\n" if text else "") + TRUNCATION_WARNING.format(reason=" and ".join(reasons))
    served = text + "\n" if text else ""
    return ServedIndex(
        content=served, truncated=bool(reasons), lines=len(served.splitlines()), bytes=len(served.encode("utf-8"))
    )
