"""Three-way merge of the team folder, file by file: never a silent overwrite.

One side changed → that side. Both changed → frontmatter merged key by key and the bodies by
`git merge-file`; when the bodies collide, ours and what only theirs says (no sentence twice) go
into one body under a review note (in the body, not the frontmatter, so saving the merged text
clears it); when theirs says nothing ours does not, ours is the merge.
An edit beats a concurrent delete. It does NOT read or write the memory folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoryd.base.errors import InvalidFrontmatter
from memoryd.base.text import sentences
from memoryd.store.frontmatter import render_frontmatter, split_frontmatter

REVIEW_MARK = "> **Needs review:**"
REVIEW_NOTE = (
    REVIEW_MARK + " {ours} and {theirs} edited this team memory at the same time. "
    "memoryd kept both below (what {theirs} wrote, without what {ours} already says): merge them into one, then save "
    "it."
)

# (base, ours, theirs) bodies → (merged, clean)
TextMerger = Callable[[str, str, str], tuple[str, bool]]


@dataclass(frozen=True)
class FileMerge:
    text: str | None  # None: the file is deleted
    conflict: bool = False  # both versions were kept for review


def _merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif key == "modified":
            value = max(str(o or ""), str(t or ""))
        elif key == "created":
            value = min(str(o or t), str(t or o))
        else:
            value = o  # both changed the field: ours, and the body shows both versions
        if value is not None:
            out[key] = value
    return out


def merge_memory(
    base: str | None, ours: str, theirs: str, *, merge_text: TextMerger, ours_label: str, theirs_label: str
) -> FileMerge:
    """Both sides changed one memory file: a merged file, or both versions marked for review."""
    if ours == theirs:
        return FileMerge(ours)
    try:
        b_meta, b_body = split_frontmatter(base or "", source="base")
        o_meta, o_body = split_frontmatter(ours, source="ours")
        t_meta, t_body = split_frontmatter(theirs, source="theirs")
    except InvalidFrontmatter:
        b_meta, o_meta, t_meta, b_body, o_body, t_body = {}, {}, {}, base or "", ours, theirs
    meta = _merge_meta(b_meta, o_meta, t_meta)
    body, clean = merge_text(b_body, o_body, t_body)
    if clean:
        return FileMerge(render_frontmatter(meta, body) if meta else body)
    extra = only_theirs(o_body, t_body)
    if not extra:  # theirs says nothing ours does not: ours is the merge
        return FileMerge(ours)
    note = REVIEW_NOTE.format(ours=ours_label, theirs=theirs_label)
    both = (
        f"{note}\n\n### Version by {ours_label}\n\n{o_body.strip()}\n\n### Only in {theirs_label}'s "
        f"version\n\n{extra}\n"
    )
    return FileMerge(render_frontmatter(meta, both) if meta else both, conflict=True)


def only_theirs(ours: str, theirs: str) -> str:
    """Theirs without the sentences ours already says (lines kept whole where nothing repeats)."""
    said = {key for _, key in sentences(ours) if key}
    lines = []
    for line in theirs.strip().splitlines():
        kept = [s for s, key in sentences(line) if key and key not in said]
        if len(kept) == len([k for _, k in sentences(line) if k]):
            lines.append(line)  # nothing of it repeats: the line as written
        elif kept:
            lines.append(" ".join(kept))
    return "\n".join(lines).strip()


def needs_review(body: str) -> bool:
    """Whether a memory body still holds both versions of a concurrent edit."""
    return body.lstrip().startswith(REVIEW_MARK)


def merge_file(base: str | None, ours: str | None, theirs: str | None, **kwargs: Any) -> FileMerge:
    """The three-way decision for one filename (None: absent on that side)."""
    if ours == theirs or theirs == base:
        return FileMerge(ours)
    if ours == base:
        return FileMerge(theirs)
    if ours is None:
        return FileMerge(theirs)  # they edited what we deleted: the edit wins
    if theirs is None:
        return FileMerge(ours)
    return merge_memory(base, ours, theirs, **kwargs)
