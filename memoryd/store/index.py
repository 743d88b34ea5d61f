"""MEMORY.md: render one pointer line per memory, and serve it truncated with the fix-it warning.

It does NOT read memory files; it works on headers the caller scanned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from memoryd import limits
from memoryd.store.model import MemoryHeader

TYPE_ORDER = {"feedback": 0, "user": 1, "project": 2, "reference": 3}

TRUNCATION_WARNING = (
    "> WARNING: MEMORY.md is {reason}; only part of it was loaded. "
    "Keep index entries to one line under ~150 chars; move detail into topic files."
)


def _one_line(text: str) -> str:
    return " ".join(text.split())


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


@dataclass(frozen=True)
class ServedIndex:
    content: str
    truncated: bool
    lines: int
    bytes: int


def truncate_index(raw: str, *, max_lines: int = limits.INDEX_MAX_LINES, max_bytes: int = limits.INDEX_MAX_BYTES) -> ServedIndex:
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
    return ServedIndex(content=served, truncated=bool(reasons), lines=len(served.splitlines()), bytes=len(served.encode("utf-8")))
