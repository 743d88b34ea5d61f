"""What a memory forbids: the `forbid:` value of its frontmatter, checked when a person, a model or a request
writes it, so that only these explicit triggers (never a similarity score) can hold an agent's act.

    forbid:
      commands: [npm, npx]            # a program, a program and its words (`git push --force|-f`)
      writes: [db/migrations/**]      # existing files an act must not change (a new file there is fine)
      creates: [legacy/**]            # new files an act must not create (an existing one may change)
      reads: [.env*, "!.env.example"] # files an act must not read or stage; `!` keeps a path out
      imports: [moment]               # modules new code must not add (and package managers must not install)
      instead: use pnpm               # what to do instead, said to the agent when an act is held
      enforce: deny                   # deny | ask | context | off; absent: the [guard] mode

It does NOT match acts (`match.py`) nor decide what happens to one (`mode.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.store.dialect import FORBID_KEY, forbid_of

FIELDS = ("commands", "writes", "reads", "imports", "creates")
MODES = ("deny", "ask", "context", "off")
PATH_FIELDS = ("writes", "reads", "creates")
EXAMPLE = '{"commands": ["npm"], "writes": ["db/migrations/**"], "instead": "use pnpm"}'


@dataclass(frozen=True, slots=True)
class Forbid:
    """A memory's forbid triggers, what to do instead, and its own mode ("" follows the [guard] mode)."""

    commands: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    instead: str = ""
    enforce: str = ""

    def __bool__(self) -> bool:
        return bool(self.commands or self.writes or self.reads or self.imports or self.creates)

    def to_meta(self) -> dict[str, Any]:
        """The frontmatter value: only what holds something."""
        out: dict[str, Any] = {k: list(getattr(self, k)) for k in FIELDS if getattr(self, k)}
        if self.instead:
            out["instead"] = self.instead
        if self.enforce:
            out["enforce"] = self.enforce
        return out

    def triggers(self) -> list[str]:
        """Every trigger in a line's words: `npm`, `writes db/migrations/**`, `import moment`, `creates legacy/**`."""
        out = list(self.commands)
        out += [f"writes {g}" for g in self.writes]
        out += [f"reads {g}" for g in self.reads]
        out += [f"import {m}" for m in self.imports]
        out += [f"creates {g}" for g in self.creates]
        return out

    def summary(self) -> str:
        """What a save answers: `will stop: npm, npx — use pnpm`."""
        if not self:
            return ""
        tail = f" — {self.instead}" if self.instead else ""
        return f"will stop: {', '.join(self.triggers())}{tail}"


def parse_forbid(value: Any, *, field_name: str = FORBID_KEY) -> Forbid:
    """A request's or a file's `forbid`, checked: InvalidRequest naming the field and the fix."""
    if value is None:
        return Forbid()
    if not isinstance(value, dict):
        raise InvalidRequest(f"{field_name} must be an object like {EXAMPLE}.")
    unknown = sorted(set(value) - {*FIELDS, "instead", "enforce"})
    if unknown:
        raise InvalidRequest(
            f"{field_name}.{unknown[0]} is not a field; use commands, writes, reads, imports, creates, instead "
            "and enforce."
        )
    lists = {key: _items(field_name, key, value.get(key)) for key in FIELDS}
    instead = value.get("instead") or ""
    if not isinstance(instead, str) or "\n" in instead.strip() or len(instead) > limits.FORBID_INSTEAD_MAX_CHARS:
        raise InvalidRequest(
            f"{field_name}.instead must be one line of at most {limits.FORBID_INSTEAD_MAX_CHARS} chars "
            '(what to do instead, e.g. "use pnpm").'
        )
    enforce = value.get("enforce") or ""
    if enforce not in ("", *MODES):
        raise InvalidRequest(f"{field_name}.enforce: {enforce!r} is not a mode; use one of {', '.join(MODES)}.")
    return Forbid(**lists, instead=instead.strip(), enforce=str(enforce))


def _items(field_name: str, key: str, raw: Any) -> tuple[str, ...]:
    items = [raw] if isinstance(raw, str) else (raw or [])
    if not isinstance(items, list) or not all(isinstance(i, str) and i.strip() for i in items):
        raise InvalidRequest(f"{field_name}.{key} must be a list of non-empty strings.")
    if len(items) > limits.FORBID_MAX_ITEMS:
        raise InvalidRequest(f"{field_name}.{key} holds {len(items)} items; keep it to {limits.FORBID_MAX_ITEMS}.")
    for item in items:
        if len(item) > limits.FORBID_ITEM_MAX_CHARS or "\n" in item:
            raise InvalidRequest(
                f"{field_name}.{key}: {item[:40]!r} is too long or spans lines; one item of at most "
                f"{limits.FORBID_ITEM_MAX_CHARS} chars."
            )
        glob = item.strip().removeprefix("!")
        if key in PATH_FIELDS and (glob.startswith("/") or ".." in glob.split("/")):
            raise InvalidRequest(
                f"{field_name}.{key}: {item!r} must be a glob relative to the project (no leading '/', no '..')."
            )
    return tuple(dict.fromkeys(i.strip() for i in items))


def from_meta(meta: dict[str, Any]) -> Forbid | None:
    """The `forbid` of a file's frontmatter (top level, or under Claude Code's `metadata`); None when it has
    none or it does not parse (a hand edit gone wrong holds nothing; `memoryd guard` names it)."""
    value = forbid_of(meta)
    if value is None:
        return None
    try:
        return parse_forbid(value)
    except InvalidRequest:
        return None


def problem_of(meta: dict[str, Any]) -> str:
    """Why a file's `forbid` holds nothing ("" when it parses or is absent): shown by `memoryd guard`."""
    try:
        parse_forbid(forbid_of(meta))
    except InvalidRequest as exc:
        return exc.message
    return ""
