"""The session-notes template (seeds' Session Memory, ten sections) and its token budgets."""

from __future__ import annotations

import re

from memoryd.base import limits
from memoryd.transcripts.parser import estimate_tokens

SECTIONS: tuple[tuple[str, str], ...] = (
    ("Session Title", "A short title for the session."),
    ("Current State", "What is being worked on right now; pending tasks; next steps."),
    ("Task specification", "What the user asked for: goals, constraints, design decisions."),
    ("Files and Functions", "Files and functions read or changed, and why they matter."),
    ("Workflow", "Commands run, in what order, and how to interpret their output."),
    ("Errors & Corrections", "Errors hit and how they were fixed; approaches that failed."),
    ("Codebase and System Documentation", "How the relevant parts of the system fit together."),
    ("Learnings", "What worked, what did not, what to avoid."),
    ("Key results", "Exact outputs the user asked for (answers, tables, numbers)."),
    ("Worklog", "Terse step-by-step log of what was done, oldest first."),
)
TITLES = tuple(t for t, _ in SECTIONS)
# Least important first: compressed first when the file is over budget.
COMPRESS_ORDER = (
    "Worklog",
    "Workflow",
    "Codebase and System Documentation",
    "Files and Functions",
    "Errors & Corrections",
    "Learnings",
    "Key results",
    "Task specification",
    "Current State",
    "Session Title",
)
_HEADER = re.compile(r"^# (.+?)\s*$", re.MULTILINE)


def parse(markdown: str) -> dict[str, str]:
    """Section title → body for the ten known sections (unknown headers stay in the previous body)."""
    sections: dict[str, str] = {}
    matches = [m for m in _HEADER.finditer(markdown) if m.group(1) in TITLES]
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(markdown)
        sections[m.group(1)] = markdown[m.end() : end].strip("\n")
    return sections


def render(sections: dict[str, str]) -> str:
    """All ten sections in template order; an empty section keeps its italic description."""
    parts = []
    for title, hint in SECTIONS:
        body = sections.get(title, "").strip()
        parts.append(f"# {title}\n_{hint}_\n" + (f"\n{body}\n" if body else ""))
    return "\n".join(parts)


def _cut_lines(body: str, max_tokens: int, *, keep_recent: bool) -> str:
    """Drop whole lines (oldest or last) until the body fits; a single long line is cut by chars."""
    if estimate_tokens(body) <= max_tokens:
        return body
    marker = "[… older entries compressed]" if keep_recent else "[… truncated]"
    lines = body.splitlines()
    while lines and estimate_tokens("\n".join(lines + [marker])) > max_tokens:
        lines.pop(0 if keep_recent else -1)
    if not lines:
        budget = max(0, max_tokens * limits.CHARS_PER_TOKEN - len(marker.encode()) - 8)
        text = body.encode("utf-8")
        kept = (text[-budget:] if keep_recent else text[:budget]).decode("utf-8", "ignore") if budget else ""
        lines = [kept] if kept else []
    return "\n".join([marker] + lines if keep_recent else lines + [marker])


_LOG_LIKE = {"Worklog", "Workflow", "Errors & Corrections", "Files and Functions"}


def enforce_budgets(
    sections: dict[str, str],
    *,
    section_max: int = limits.SESSION_MEMORY_SECTION_MAX_TOKENS,
    total_max: int = limits.SESSION_MEMORY_MAX_TOKENS,
) -> dict[str, str]:
    """Each section ≤ section_max tokens, the rendered file ≤ total_max: compress the least important first."""
    out = {t: _cut_lines(sections.get(t, "").strip(), section_max, keep_recent=t in _LOG_LIKE) for t in TITLES}
    for title in COMPRESS_ORDER:
        over = estimate_tokens(render(out)) - total_max
        if over <= 0:
            break
        current = estimate_tokens(out[title])
        out[title] = (
            _cut_lines(out[title], max(0, current - over - 1), keep_recent=title in _LOG_LIKE) if current > over else ""
        )
    return out
