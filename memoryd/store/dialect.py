"""The two frontmatter dialects a memory dir may hold, and `[[links]]` between memories.

memoryd's own: `<type>_<slug>.md`, top-level `name` (a title), `description`, `type`, `created`,
`modified`. Claude Code's: any `<kebab-slug>.md`, `name`, `description`, the type nested as `metadata:` /
`  type: ...`, bodies linking with `[[name]]`. Both keep the title as `name` ("Don't summarize at the end of
responses", as Claude Code's own memory files have it); a file Claude Code wrote with a kebab `name` is read
and updated as it is. Which one a new file gets is decided per folder (`dir_dialect`).
It does NOT read or write files; `memoryd.store.memdir` does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from memoryd.store.paths import slugify

Dialect = Literal["memoryd", "claude-code"]
MEMORYD: Dialect = "memoryd"
CLAUDE_CODE: Dialect = "claude-code"
_OWN_KEYS = ("name", "description", "type", "created", "modified")
# What a memory applies to (paths, commands, tools): memoryd's dialect keeps it at the top level,
# Claude Code's under `metadata` (the one map its reader leaves free), so both readers load the file.
APPLIES_KEY = "applies_to"
AppliesValue = dict[str, list[str]]  # {"paths": [...], "commands": [...], "tools": [...]}
# Other agents' rule files carry their scope at the top level: Claude Code's `.claude/rules` `paths:`, Cursor's
# `globs:`, Copilot's `applyTo:` (a list, or one string of comma-separated globs). A file holding one and no
# `applies_to` applies to those paths, as its agent reads it.
SCOPE_KEYS = ("paths", "globs", "applyTo")
# What a memory forbids (issue 50, memoryd/guard/rules.py reads it): kept where `applies_to` is, for the same reason.
FORBID_KEY = "forbid"

# `[[name]]` or `[[name|label]]`; the target is what Claude Code links by (a memory's name or file stem).
LINK_RE = re.compile(r"\[\[([^\[\]\n|]+?)(\|[^\[\]\n]*)?\]\]")
RELATED_PREFIX = "Related: "


def type_of(meta: dict[str, Any]) -> str:
    """The memory type from either dialect: top-level `type`, else `metadata.type`."""
    value = meta.get("type")
    if value is None and isinstance(meta.get("metadata"), dict):
        value = meta["metadata"].get("type")
    return "" if value is None else str(value)


def dialect_of(meta: dict[str, Any]) -> Dialect:
    """Claude Code's when the type is nested under `metadata` (and not also at the top)."""
    nested = isinstance(meta.get("metadata"), dict) and "type" in meta["metadata"]
    return CLAUDE_CODE if nested and "type" not in meta else MEMORYD


def dir_dialect(counts: Mapping[str, int], default: Dialect = MEMORYD) -> Dialect:
    """The dialect a new file in a dir gets, from its memories' dialect counts: the one most of
    them use (ties: Claude Code's); `default` for a dir without memories."""
    cc, own = counts.get(CLAUDE_CODE, 0), counts.get(MEMORYD, 0)
    if not cc and not own:
        return default
    return CLAUDE_CODE if cc >= own else MEMORYD


def new_stem(dialect: Dialect, type_: str, name: str) -> str:
    """A new file's stem: `<type>_<slug>` (memoryd) or `<slug>` (Claude Code)."""
    return slugify(name) if dialect == CLAUDE_CODE else f"{type_}_{slugify(name)}"


def render_meta(
    dialect: Dialect, prior: dict[str, Any], *, name: str, description: str, type_: str, stamp: str
) -> dict[str, Any]:
    """The frontmatter of a rewrite: own fields updated, every other key kept in its place."""
    if dialect == CLAUDE_CODE:
        out: dict[str, Any] = dict(prior) if prior else {"name": None, "description": None, "metadata": {}}
        # The title as given (#51: a slugified `name` lost "Package manager" for good); the file name is the slug.
        out["name"], out["description"] = name, description
        nested = dict(out["metadata"]) if isinstance(out.get("metadata"), dict) else {}
        nested["type"] = type_
        out["metadata"] = nested
        out["modified"] = stamp  # as Claude Code >= 2.1.214 stamps it
        return out
    created = prior.get("created")
    extra = {k: v for k, v in prior.items() if k not in _OWN_KEYS}
    return {
        "name": name,
        "description": description,
        "type": type_,
        "created": created if created not in (None, "") else stamp,
        "modified": stamp,
        **extra,
    }


def applies_of(meta: dict[str, Any]) -> dict[str, list[str]]:
    """The `applies_to` a file holds, in either place, as lists of strings ({} when none or malformed); without one,
    the paths of another agent's scope key (`SCOPE_KEYS`)."""
    value = meta.get(APPLIES_KEY)
    if value is None and isinstance(meta.get("metadata"), dict):
        value = meta["metadata"].get(APPLIES_KEY)
    if value is None:
        scope = next((meta[key] for key in SCOPE_KEYS if meta.get(key)), None)
        globs = scope.split(",") if isinstance(scope, str) else scope
        if isinstance(globs, list) and all(isinstance(g, str) for g in globs):
            value = {"paths": [g.strip() for g in globs if g.strip()]}
    if not isinstance(value, dict):
        return {}
    out: dict[str, list[str]] = {}
    for key, items in value.items():
        items = [items] if isinstance(items, str) else items
        if isinstance(key, str) and isinstance(items, list) and all(isinstance(i, str) for i in items):
            out[key] = list(items)
    return out


def _place(dialect: Dialect, meta: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """`key` set to `value` where the dialect keeps it (under Claude Code's `metadata`, else top level), removed
    from wherever the file had it; a None value only removes it."""
    out = dict(meta)
    out.pop(key, None)
    nested = dict(out["metadata"]) if isinstance(out.get("metadata"), dict) else None
    if nested is not None:
        nested.pop(key, None)
        out["metadata"] = nested
    if value is not None and dialect == CLAUDE_CODE:
        out["metadata"] = {**(nested or {}), key: value}
    elif value is not None:
        out[key] = value
    return out


def place_applies(dialect: Dialect, meta: dict[str, Any], applies_to: dict[str, list[str]] | None) -> dict[str, Any]:
    """Set (or, with {}, clear) `applies_to` where the dialect keeps it; None leaves the file's own as is."""
    if applies_to is None:
        return meta
    value = {k: list(v) for k, v in applies_to.items() if v}
    return _place(dialect, meta, APPLIES_KEY, value or None)


def forbid_of(meta: dict[str, Any]) -> Any:
    """The raw `forbid` a file holds, top level or under Claude Code's `metadata` (None when it has none)."""
    value = meta.get(FORBID_KEY)
    if value is None and isinstance(meta.get("metadata"), dict):
        value = meta["metadata"].get(FORBID_KEY)
    return value


def place_forbid(dialect: Dialect, meta: dict[str, Any], forbid: dict[str, Any] | None) -> dict[str, Any]:
    """Set `forbid` where the dialect keeps it; {} over one the file had stays as `forbid: {}` (a person's "none":
    no proposal brings one back); None leaves the file's own."""
    if forbid is None or not forbid and forbid_of(meta) is None:  # {} over nothing: nothing to write
        return meta
    return _place(dialect, meta, FORBID_KEY, forbid)


def links(body: str) -> list[str]:
    """The `[[targets]]` of a body, in order, without repeats."""
    seen: dict[str, None] = {}
    for m in LINK_RE.finditer(body):
        seen.setdefault(m.group(1).strip(), None)
    return list(seen)


def keep_links(old_body: str, new_body: str) -> str:
    """A rewrite never drops a link: targets the old body had and the new lacks go on a `Related:` line."""
    present = {t.casefold() for t in links(new_body)}
    missing = [t for t in links(old_body) if t.casefold() not in present]
    if not missing:
        return new_body
    return new_body.rstrip("\n") + "\n\n" + RELATED_PREFIX + ", ".join(f"[[{t}]]" for t in missing)


def relink(body: str, old: Iterable[str], new: str) -> str:
    """`[[old]]` → `[[new]]` (labels kept) for every spelling of the old target."""
    wanted = {o.strip().casefold() for o in old if o.strip()}

    def swap(m: re.Match[str]) -> str:
        return f"[[{new}{m.group(2) or ''}]]" if m.group(1).strip().casefold() in wanted else m.group(0)

    return LINK_RE.sub(swap, body)
