"""The user's own global `user` memories ("how I like to work") as SessionStart context, within a small budget.

Claude Code loads its user-level memory (`~/.claude/CLAUDE.md`) into every session whatever is asked; a global
`user` memory (`save --global -t user`) is the same kind of knowledge, so it arrives at the start of every
session too, instead of only when a prompt shares its words (#51). It does NOT rank, recall or write.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.base import limits
from memoryd.base.errors import MemorydError
from memoryd.store import MemoryDir

HEADING = "## About the user (their global memories, in every project)"
USER_TYPE = "user"
MORE = "[{left} more: `memoryd list --global --type user`]"


@dataclass(frozen=True, kw_only=True)
class UserContext:
    """What SessionStart adds: the text ("" when none) and the files it holds (for recall's ledger)."""

    text: str
    filenames: tuple[str, ...]


def _entry(name: str, description: str, body: str) -> str:
    """One memory: its name and description, then its body when it says more than the description."""
    head = f"- **{name}**: {description}"
    body = body.strip()
    return head if not body or body == description.strip() else head + "\n  " + "\n  ".join(body.splitlines())


def user_context(store: MemoryDir, cap: int = limits.USER_MEMORY_CONTEXT_MAX_CHARS) -> UserContext:
    """The global `user` memories, newest first, each whole or with its description alone, until `cap`
    characters; a memory that cannot be read is skipped (the session goes on without it)."""
    lines = [f"{limits.INJECTED_MARKER}\n{HEADING}"]
    size, kept = len(lines[0]) + len(MORE) + 8, []  # room kept for the line that says where the rest are
    headers = store.list(USER_TYPE) if store.has_memories() else []
    for header in headers:
        try:
            body = store.get(header.filename).body
        except MemorydError:
            continue
        for entry in (_entry(header.name, header.description, body), _entry(header.name, header.description, "")):
            if size + len(entry) + 1 <= cap:
                lines.append(entry)
                size += len(entry) + 1
                kept.append(header.filename)
                break
    if not kept:
        return UserContext(text="", filenames=())
    left = len(headers) - len(kept)
    if left:
        lines.append(MORE.format(left=left))
    return UserContext(text="\n".join(lines) + "\n\n", filenames=tuple(kept))
