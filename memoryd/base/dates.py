"""Relative dates → absolute ones ("tomorrow" said on 2026-03-04 → "2026-03-05"), in prose only.

Memories are read weeks later, when "Thursday" means nothing (seeds: project memories carry
absolute dates). Used by extraction and by the dream; it only rewrites unambiguous phrases, and
never inside code (inline or fenced), identifiers, paths, URLs or quoted command lines: a memory's
code must come back byte for byte (`code_spans_kept` is the guard the writers check).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

_SIMPLE = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "the day after tomorrow": 2,
    "the day before yesterday": -2,
}

# What is never rewritten: fenced blocks, inline code, indented or `$ ` command lines, URLs,
# paths, dotted/underscored/called identifiers, and quoted strings that read as a command line.
_PROTECTED = re.compile(
    r"""
    (?P<fence>^[ \t]*(?P<mark>`{3,}|~{3,})[^\n]*\n(?:.*?\n)??[ \t]*(?P=mark)[ \t]*(?:\n|$)  # fenced block
      |^[ \t]*(?:`{3,}|~{3,})[\s\S]*\Z)                                                     # unclosed fence
    |(?P<inline>(?P<ticks>`+)[^`\n]+?(?P=ticks))                                              # inline code
    |(?P<shell>^(?:[ ]{4}|\t|[ \t]*\$\ )[^\n]*)                                               # indented or `$ ` line
    |(?P<url>\b[a-z][a-z0-9+.-]*://\S+|\bwww\.\S+)                                            # URL
    |(?P<path>(?:~|\.{1,2})?(?:[\w.-]*[/\\])+[\w.-]*)                                         # path
    |(?P<ident>[\w$]+(?:(?:\.|::|->)[\w$]+|\([^()\n]*\))+[\w$]*|\w+_\w+|\w+(?=\())           # identifier or call
    |(?P<cmd>(?<!\w)(?P<q>["'])[^"'\n]*?                                                     # quoted command line
      (?:\s-{1,2}\w|\|\s|&&|\bsudo\s|\b(?:p?npm|yarn|git|make|docker|kubectl|python3?|pytest|cargo|go)\s)
      [^"'\n]*(?P=q)(?!\w))
    """,
    re.VERBOSE | re.MULTILINE | re.DOTALL | re.IGNORECASE,
)


def _fmt(d: date) -> str:
    return d.isoformat()


def protected_spans(text: str) -> list[str]:
    """The code-like spans of `text`, in order: what no date rewrite may change."""
    return [m.group(0) for m in _PROTECTED.finditer(text)]


def code_spans_kept(before: str, after: str) -> bool:
    """The write-path guard: True when a rewrite left every code-like span byte for byte."""
    return protected_spans(before) == protected_spans(after)


def _rewrite_prose(text: str, ref: date) -> str:
    def simple(m: re.Match[str]) -> str:
        return _fmt(ref + timedelta(days=_SIMPLE[m.group(0).lower()]))

    out = re.sub(
        r"\b(?:the day after tomorrow|the day before yesterday|today|tonight|tomorrow|yesterday|this (?:morning"
        r"|afternoon|evening))\b",
        simple,
        text,
        flags=re.IGNORECASE,
    )

    def weeks(m: re.Match[str]) -> str:
        sign = 1 if m.group(1).lower() == "next" else -1
        unit = m.group(2).lower()
        if unit == "week":
            monday = ref - timedelta(days=ref.weekday()) + timedelta(weeks=sign)
            return f"the week of {_fmt(monday)}"
        if unit == "month":
            month = ref.month + sign
            year = ref.year + (month - 1) // 12
            month = (month - 1) % 12 + 1
            return f"{year:04d}-{month:02d}"
        return f"{ref.year + sign}"

    out = re.sub(r"\b(next|last) (week|month|year)\b", weeks, out, flags=re.IGNORECASE)

    def weekday(m: re.Match[str]) -> str:
        qualifier = (m.group(1) or "").lower().strip()
        target = WEEKDAYS.index(m.group(2).lower())
        delta = (target - ref.weekday()) % 7
        if qualifier == "last":
            delta = delta - 7 if delta else -7
        elif qualifier == "next" or delta == 0:
            delta = delta or 7
        prefix = m.group(0)[: m.start(2) - m.start(0)]
        prefix = re.sub(r"(?i)\b(next|last|this)\s+$", "", prefix)
        return f"{prefix}{m.group(2)} {_fmt(ref + timedelta(days=delta))}"

    out = re.sub(
        r"\b(?:(next|last|this)\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!\s+\d{4}-\d{2}-\d{2})",
        weekday,
        out,
        flags=re.IGNORECASE,
    )
    return out


def absolutize_dates(text: str, ref: date) -> str:
    """Rewrite relative day phrases against `ref` in the prose between code-like spans."""
    out, last = [], 0
    for m in _PROTECTED.finditer(text):
        out.append(_rewrite_prose(text[last : m.start()], ref))
        out.append(m.group(0))
        last = m.end()
    out.append(_rewrite_prose(text[last:], ref))
    return "".join(out)
