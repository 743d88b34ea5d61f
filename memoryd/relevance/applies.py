"""What a memory applies to: the paths (globs), commands and tools of its `applies_to` frontmatter
(as Claude Code's `.claude/rules` take `paths:`, Cursor `globs`, Copilot `applyTo`), checked when a
person, a model or a request writes it. Deriving it offline: `applies_derive.py`; meeting it: `applies_match.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.store.dialect import APPLIES_KEY, applies_of

FIELDS = ("paths", "commands", "tools")
TOOLS = ("Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read")
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})


@dataclass(frozen=True, slots=True)
class AppliesTo:
    """Where a memory applies. `forbids` (derived) are the commands its rule says never to run."""

    paths: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    forbids: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    explicit: bool = False  # written in the file (by a person or a model), not derived
    names: frozenset[str] = field(default_factory=frozenset)  # the programs it names (for prompts)
    cues: frozenset[str] = frozenset()  # code it names (`TRPCError`, `as any`, `@calcom/ui`): an edit writing one
    weights: tuple[tuple[str, int], ...] = ()  # per topic, how many of its words the memory uses
    about: frozenset[str] = frozenset()  # the topics of its name and description: what it is about, not mentions
    kinds: frozenset[str] = frozenset()  # file extensions whose language its name or description names (css)
    roles: frozenset[str] = frozenset()  # code roles its name is about ("in repositories": repository)
    rule: bool = True  # it states a rule (feedback, user, or a project memory saying never/always/only)
    code_forbids: frozenset[str] = frozenset()  # names it rules out that code imports or calls ("not moment")
    subjects_forbidden: frozenset[str] = frozenset()  # subjects whose code it rules out ("raw hex values": styling)
    home: tuple[str, ...] = ()  # the place its headline opens with ("apps/web: ..."): code it names is met only there

    def weight(self, topics: Iterable[str]) -> int:
        """How strongly the memory is about these subjects (distinct topic words it uses)."""
        wanted = set(topics)
        return sum(n for t, n in self.weights if t in wanted)

    def to_meta(self) -> dict[str, list[str]]:
        """The frontmatter value: only the lists that hold something."""
        return {k: list(getattr(self, k)) for k in FIELDS if getattr(self, k)}

    def __bool__(self) -> bool:
        return bool(self.paths or self.commands or self.tools)


REACHES_NO_ACT = "no act: add --path or --command"  # a memory that comes only when a prompt recalls it


def reaches(a: AppliesTo) -> str:
    """The acts a memory will be brought to, in words for the one who saved it ("edits under src/payments/,
    commands npm"), or how to give it some: a memory that reaches no act comes only when a prompt recalls it."""
    parts = []
    if a.paths:
        parts.append("edits " + ", ".join(f"under {p[:-2]}" if p.endswith("/**") else f"of {p}" for p in a.paths))
    if a.commands:
        parts.append("commands " + ", ".join(a.commands))
    if a.tools:
        parts.append("tools " + ", ".join(a.tools))
    return ", ".join(parts) if parts else REACHES_NO_ACT


# ----------------------------------------------------------------------------- the frontmatter value
def parse_applies(value: Any, *, field_name: str = APPLIES_KEY) -> AppliesTo:
    """A request's or a file's `applies_to`, checked: InvalidRequest naming the field and the fix."""
    if value is None:
        return AppliesTo()
    if not isinstance(value, dict):
        raise InvalidRequest(
            f'{field_name} must be an object like {{"paths": ["db/migrations/**"], "commands": '
            f'["npm"], "tools": ["Bash"]}}.'
        )
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise InvalidRequest(f"{field_name}.{unknown[0]} is not a field; use paths, commands and tools.")
    out: dict[str, tuple[str, ...]] = {}
    for key in FIELDS:
        items = value.get(key) or []
        items = [items] if isinstance(items, str) else items
        if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
            raise InvalidRequest(f"{field_name}.{key} must be a list of non-empty strings.")
        if len(items) > limits.APPLIES_TO_MAX_ITEMS:
            raise InvalidRequest(
                f"{field_name}.{key} holds {len(items)} items; keep it to {limits.APPLIES_TO_MAX_ITEMS}."
            )
        for item in items:
            _check_item(field_name, key, item)
        out[key] = tuple(dict.fromkeys(i.strip() for i in items))
    tools = tuple(_tool_name(field_name, t) for t in out["tools"])
    return AppliesTo(out["paths"], out["commands"], tools, explicit=True)


def _check_item(field_name: str, key: str, item: str) -> None:
    if len(item) > limits.APPLIES_TO_ITEM_MAX_CHARS or "\n" in item:
        raise InvalidRequest(
            f"{field_name}.{key}: {item[:40]!r} is too long or spans lines; one glob or command of at "
            f"most {limits.APPLIES_TO_ITEM_MAX_CHARS} chars."
        )
    if key == "paths" and (item.startswith("/") or ".." in item.split("/")):
        raise InvalidRequest(
            f"{field_name}.paths: {item!r} must be a glob relative to the project (no leading '/', no '..')."
        )


def _tool_name(field_name: str, tool: str) -> str:
    for known in TOOLS:
        if tool.strip().casefold() == known.casefold():
            return known
    raise InvalidRequest(f"{field_name}.tools: {tool!r} is not a tool memoryd answers; use {', '.join(TOOLS)}.")


def from_meta(meta: dict[str, Any]) -> AppliesTo | None:
    """The `applies_to` of a file's frontmatter (top level, or under Claude Code's `metadata`); None
    when it has none or it does not parse (a hand edit gone wrong is derived instead, never fatal)."""
    return written_applies(applies_of(meta))


def written_applies(value: dict[str, list[str]]) -> AppliesTo | None:
    """The `applies_to` a file holds (`applies_of`, as `Memory.applies_to` keeps it), None when it has none or it
    does not parse: a hand edit gone wrong, or a copied rule file's scope reaching out of the project, is derived
    instead, never fatal."""
    if not value:
        return None
    try:
        return parse_applies(value)
    except InvalidRequest:
        return None


def checked_applies(value: Any) -> dict[str, list[str]] | None:
    """A model's `applies_to` (extraction, consolidation), kept only when well formed; None: the file keeps its own."""
    try:
        return parse_applies(value).to_meta() if value else None
    except InvalidRequest:
        return None
