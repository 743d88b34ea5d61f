"""What a memory forbids: the `forbid:` value of its frontmatter, checked when a person, a model or a request
writes it, so that only these explicit triggers (never a similarity score) can hold an agent's act.

    forbid:
      commands: [npm, npx]            # a program, a program and its words (`git push --force|-f`); `!` keeps
                                      # acts out ("!RAILS_ENV=test rails db:reset", "!RAILS_ENV=test")
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
from memoryd.guard.acts import is_assignment
from memoryd.store.dialect import FORBID_KEY, forbid_of

FIELDS = ("commands", "writes", "reads", "imports", "creates")
MODES = ("deny", "ask", "context", "off")
PATH_FIELDS = ("writes", "reads", "creates")
EXAMPLE = '{"commands": ["npm"], "writes": ["db/migrations/**"], "instead": "use pnpm"}'
KEEP_OUT = "!"  # an item that keeps acts out of the field's other items (`!.env.example`, `!RAILS_ENV=test`)
EXCEPTION_EXAMPLE = '["rails db:reset", "!RAILS_ENV=test rails db:reset"]'


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

    def triggers(self, *, kept_out: bool = False) -> list[str]:
        """Every trigger in a line's words: `npm`, `writes db/migrations/**`, `import moment`, `creates legacy/**`;
        with `kept_out`, the `!` items instead, without their `!` (`RAILS_ENV=test rails db:reset`)."""

        def said(items: tuple[str, ...]) -> list[str]:
            return [i.removeprefix(KEEP_OUT) for i in items if i.startswith(KEEP_OUT) == kept_out]

        out = said(self.commands)
        out += [f"writes {g}" for g in said(self.writes)]
        out += [f"reads {g}" for g in said(self.reads)]
        out += [f"import {m}" for m in said(self.imports)]
        out += [f"creates {g}" for g in said(self.creates)]
        return out

    def summary(self) -> str:
        """What a save answers: `will stop: npm, npx — use pnpm`, `will stop: rails db:reset (not: RAILS_ENV=test
        rails db:reset)`."""
        if not self:
            return ""
        kept_out = self.triggers(kept_out=True)
        nots = f" (not: {', '.join(kept_out)})" if kept_out else ""
        tail = f" — {self.instead}" if self.instead else ""
        return f"will stop: {', '.join(self.triggers())}{nots}{tail}"


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
        glob = item.strip().removeprefix(KEEP_OUT)
        if not glob:
            example = EXCEPTION_EXAMPLE if key == "commands" else '[".env*", "!.env.example"]'
            raise InvalidRequest(
                f"{field_name}.{key}: {item!r} keeps nothing out; write what it keeps out after the '!' "
                f"(e.g. {example})."
            )
        if key == "commands":
            _check_command(field_name, item.strip())
        if key in PATH_FIELDS and (glob.startswith("/") or ".." in glob.split("/")):
            raise InvalidRequest(
                f"{field_name}.{key}: {item!r} must be a glob relative to the project (no leading '/', no '..')."
            )
    if key == "commands" and items and all(i.strip().startswith(KEEP_OUT) for i in items):
        raise InvalidRequest(
            f"{field_name}.commands holds only '!' items, which keep acts out of the other items and so hold "
            f"nothing alone; add the command they narrow, e.g. {EXCEPTION_EXAMPLE}."
        )
    return tuple(dict.fromkeys(i.strip() for i in items))


def _check_command(field_name: str, item: str) -> None:
    """A command item is `[!][NAME=value ...] program [words]`; only a `!` item may be assignments alone (it keeps
    out every act run with them), since a trigger of assignments alone would hold any program."""
    words = item.removeprefix(KEEP_OUT).split()
    program = next((w for w in words if not is_assignment(w)), "")
    if not program and not item.startswith(KEEP_OUT):
        raise InvalidRequest(
            f"{field_name}.commands: {item!r} names no program; put the command after the assignments "
            f'("RAILS_ENV=production rails db:reset"), or keep those acts out with a \'!\' item ("!{item}").'
        )


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
