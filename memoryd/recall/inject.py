"""What an agent sees of a recalled memory: truncated content, a header with its age or the
freshness caveat, and the `<system-reminder>` blocks (seeds: findRelevantMemories, memoryAge)."""

from __future__ import annotations

import math

from memoryd.base import limits

TRUNCATION_NOTE = "\n\n[... truncated, memory file too large ...]"
FRESHNESS_CAVEAT = (
    "This memory is {days} days old. Memories are point-in-time observations, not live state — "
    "claims about code behavior may be outdated. Verify against current code before asserting as fact."
)


def truncate_content(
    text: str, *, max_lines: int = limits.RECALL_FILE_MAX_LINES, max_bytes: int = limits.RECALL_FILE_MAX_BYTES
) -> str:
    """At most 200 lines and 4,096 bytes (cut on a character boundary), plus the note when cut."""
    cut = False
    lines = text.split("\n")
    if len(lines) > max_lines:
        text, cut = "\n".join(lines[:max_lines]), True
    raw = text.encode("utf-8")
    if len(raw) > max_bytes:
        text, cut = raw[:max_bytes].decode("utf-8", errors="ignore"), True
    return text + TRUNCATION_NOTE if cut else text


def age_days(mtime: float, now: float) -> int:
    """Whole days since the file was written (never negative), as the seeds count them."""
    return max(0, math.floor((now - mtime) / 86_400))


def freshness_caveat(days: int) -> str:
    """The caveat for memories older than one day; empty otherwise."""
    return FRESHNESS_CAVEAT.format(days=days) if days > limits.FRESHNESS_AFTER_DAYS else ""


def age_words(days: int) -> str:
    return "today" if days == 0 else "yesterday" if days == 1 else f"{days} days ago"


def header_for(path: str, days: int) -> str:
    caveat = freshness_caveat(days)
    return f"{caveat}\n\nMemory: {path}:" if caveat else f"Memory (saved {age_words(days)}): {path}:"


def memory_text(name: str, description: str, type_: str, content: str) -> str:
    """The memory as its file reads (frontmatter, then the body), so a memory saved with a name and a
    description but no body still says what it is (issue 38, 4): never an empty block."""
    head = [
        f"name: {name}" if name else "",
        f"description: {description}" if description else "",
        f"type: {type_}" if type_ else "",
    ]
    lines = "\n".join(line for line in head if line)
    body = content.strip("\n")
    return f"---\n{lines}\n---\n{body}" if body else f"---\n{lines}\n---"


def injection_text(blocks: list[tuple[str, str]]) -> str:
    """(header, content) pairs as `<system-reminder>` blocks; the first carries the marker once."""
    parts = []
    for i, (header, content) in enumerate(blocks):
        marker = f"{limits.INJECTED_MARKER}\n" if i == 0 else ""
        parts.append(f"<system-reminder>\n{marker}{header}\n\n{content}\n</system-reminder>")
    return "\n\n".join(parts)
