"""An edit that lost a race: the form's text against the file as another writer saved it since.

The edit form carries the version it showed; when the file changed (or went) since, nothing is
written and the person sees both texts and chooses: keep theirs, keep mine, or edit a merge.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from memoryd.store.model import Memory

# The form's version for "no file": an empty form field reaches the route as missing, not as "".
ABSENT = "absent"


@dataclass(frozen=True, kw_only=True)
class Draft:
    """What the edit form sent."""

    name: str
    description: str
    body: str
    type: str  # not editable; carried so a memory deleted meanwhile can be put back as it was


@dataclass(frozen=True, kw_only=True)
class EditConflict:
    """The page's material: both texts, where they differ, a merge to start from, and the version to save against."""

    filename: str
    mine: Draft
    theirs: Memory | None  # None: deleted since the form was opened
    reason: str

    @property
    def version(self) -> str:
        """The version a choice is saved against: the file as it is now (ABSENT when it is gone)."""
        return self.theirs.version if self.theirs else ABSENT

    @property
    def diff(self) -> str:
        """Theirs → mine, name and description included, as a unified diff."""
        lines = difflib.unified_diff(
            as_text(self.theirs).splitlines(keepends=True),
            as_text(self.mine).splitlines(keepends=True),
            fromfile=f"{self.filename} (saved since)",
            tofile=f"{self.filename} (your edit)",
        )
        return "".join(lines) or "(the texts are the same)"

    @property
    def merged(self) -> str:
        """Every line of both bodies once, in order; where they differ, theirs first, then mine."""
        return union_merge(self.theirs.body if self.theirs else "", self.mine.body)


def as_text(m: Memory | Draft | None) -> str:
    if m is None:
        return ""
    return f"name: {m.name}\ndescription: {m.description}\n\n{m.body}\n"


def union_merge(theirs: str, mine: str) -> str:
    """A two-way merge that drops nothing: lines both have appear once, lines only one side has all appear."""
    a, b = theirs.splitlines(), mine.splitlines()
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        out.extend(a[i1:i2])
        if op != "equal":
            out.extend(b[j1:j2])
    return "\n".join(out)
