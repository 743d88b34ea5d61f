"""What an agent's tool call is about to do, as the guard reads it: the commands it runs, the files it
changes, reads or stages, and the modules its new code imports (only those the old text did not).

It does NOT decide whether a memory forbids it (`match.py`).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field, fields
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.tool_input import tool_target
from memoryd.relevance.lexicon import programs
from memoryd.relevance.shell import SimpleCommand, simple_command, split_line

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_STRING_LITERAL = re.compile(r"""(['"`])([^'"`\n]{1,300})\1""")  # a literal of an inline program (`'.env'`)
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit"})
READ_TOOLS = frozenset({"Read"})
WRITE_TOOL = "Write"
# Imports in the languages agents write most: JS/TS (`from "x"`, `require("x")`, `import("x")`), Python, Go, Rust.
_IMPORT_RES = (
    re.compile(r"""(?:\bfrom|^\s*import|\bexport\s+[^;]*?\bfrom)\s*['"]([^'"\s]+)['"]""", re.M),
    re.compile(r"""\b(?:require|import)\s*\(\s*['"]([^'"\s]+)['"]\s*\)"""),
    re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.M),
    re.compile(r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)[ \t]*(?:#.*)?$", re.M),
    re.compile(r"""^[ \t]*(?:import[ \t]+)?(?:[\w.]+[ \t]+)?"([\w.\-/]+)"[ \t]*$""", re.M),
    re.compile(r"^[ \t]*(?:pub[ \t]+)?use[ \t]+([\w]+)::", re.M),
)


@dataclass(frozen=True, slots=True)
class InPlace:
    """An editor that changes the files it names only with its in-place flag (`sed -i`, `perl -0pi -e`)."""

    flag: re.Pattern[str]
    script_options: frozenset[str]


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A program that only runs the rest of the line (`timeout 60 yarn dev`): what it takes before the command."""

    options: frozenset[str] = frozenset()
    operands: int = 0
    lookup: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ActRows:
    """The rows of data/acts.toml."""

    writers: dict[str, str]
    creators: dict[str, str]
    non_readers: frozenset[str]
    install_verbs: frozenset[str]
    family_separators: tuple[str, ...]
    in_place: dict[str, InPlace]
    wrappers: dict[str, Wrapper]
    script_runs: dict[str, frozenset[str]]
    inline_programs: dict[str, frozenset[str]]
    shell_strings: dict[str, frozenset[str]]
    exporters: frozenset[str]


@cache
def rows() -> ActRows:
    text = resources.files("memoryd.guard").joinpath("data", "acts.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    return ActRows(
        dict(data["writers"]),
        dict(data["creators"]),
        frozenset(data["non_readers"]["programs"]),
        frozenset(data["install_verbs"]["words"]),
        tuple(data["imports"]["family_separators"]),
        {k: InPlace(re.compile(v["flag"]), frozenset(v["script_options"])) for k, v in data["in_place"].items()},
        {
            k: Wrapper(frozenset(v.get("options", ())), int(v.get("operands", 0)), frozenset(v.get("lookup", ())))
            for k, v in data["wrappers"].items()
        },
        {k: frozenset(v) for k, v in data["script_runs"].items()},
        {k: frozenset(v) for k, v in data["inline_programs"].items()},
        {k: frozenset(v) for k, v in data["shell_strings"].items()},
        frozenset(data["exporters"]["words"]),
    )


@dataclass(frozen=True)
class Act:
    """One tool call about to run. `path` is relative to the project when inside it; `old`/`new` are the text an
    edit replaces and writes (a Write's `old` is the file as it is now); `root` is the project's directory."""

    tool: str
    root: str = ""
    path: str = ""
    command: str = ""
    old: str = ""
    new: str = ""
    created: bool = False  # a Write of a file that does not exist yet
    commands: tuple[EnvCommand, ...] = field(default=(), compare=False)

    @classmethod
    def from_payload(cls, payload: dict[str, Any], cwd: str) -> Act:
        """The act of a PreToolUse payload; a Write's target is read (bounded) to tell new imports from old."""
        tool, data, raw = tool_target(payload)
        path = relative(raw, cwd)
        command = str(data.get("command") or "") if tool == "Bash" else ""
        old, new, created = "", "", False
        if tool == "Edit":
            old, new = str(data.get("old_string") or ""), str(data.get("new_string") or "")
        elif tool == "MultiEdit":
            edits = [e for e in data.get("edits") or [] if isinstance(e, dict)]
            old = "\n".join(str(e.get("old_string") or "") for e in edits)
            new = "\n".join(str(e.get("new_string") or "") for e in edits)
        elif tool == "NotebookEdit":
            new = str(data.get("new_source") or "")
        elif tool == WRITE_TOOL and path:
            new = str(data.get("content") or "")
            before = _read_bounded(Path(cwd, path) if cwd else Path(raw))
            created, old = before is None, before or ""
        return cls(tool, cwd, path, command, old, new, created, commands_of(command) if command else ())

    def describe(self) -> str:
        """The act in a line, for the recall log, the live page and the reason."""
        if self.command:
            return f"{self.tool}: {self.command[:200]}"
        return f"{self.tool} {self.path}" if self.path else self.tool

    def exists(self, rel: str) -> bool:
        return os.path.lexists(Path(self.root, rel)) if self.root else False

    def new_imports(self) -> set[str]:
        """Modules the new text imports that the old text did not."""
        return imports_in(self.new) - imports_in(self.old) if self.new else set()


@dataclass(frozen=True, slots=True)
class EnvCommand(SimpleCommand):
    """A simple command with the environment assignments typed before it (`RAILS_ENV=test` of `RAILS_ENV=test rails
    db:reset`, or after `env`), which a forbid's `!` exception may name."""

    env: tuple[str, ...] = ()


def is_assignment(word: str) -> bool:
    """`NAME=value`, as the shell reads a word before a command."""
    return _ASSIGNMENT.match(word) is not None


@lru_cache(maxsize=1024)
def commands_of(command: str, exported: tuple[str, ...] = ()) -> tuple[EnvCommand, ...]:
    """The simple commands of a Bash line as the guard reads them: each one's wrappers (`timeout 60`, `nice -n 5`,
    `env X=1`, rows of data/acts.toml) stripped, so `timeout 60 yarn dev` runs `yarn dev`; the assignments kept, with
    those exported earlier on the line (`export X=1 && cmd`, [exporters] rows; `exported`: those it starts with)."""
    out: list[EnvCommand] = []
    for words in split_line(command):
        rest, env = unwrapped(words)
        if rest and rest[0] in rows().exporters:  # no program: its assignments reach the later commands
            exported = assigned_over(exported, [w for w in rest[1:] if is_assignment(w)])
            continue
        env = assigned_over(exported, env)
        if (cmd := simple_command(rest)) is not None:
            out.append(EnvCommand(**{f.name: getattr(cmd, f.name) for f in fields(cmd)}, env=env))
        out += [inner for line in shell_strings(rest) for inner in commands_of(line, env)]
    return tuple(out)


def assigned_over(env: tuple[str, ...], assignments: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The environment `env` with `assignments` made after it: a later value of a name replaces the earlier one
    (`export X=a; X=b cmd` runs cmd with X=b)."""
    names = {a.split("=", 1)[0] for a in assignments}
    return tuple(a for a in env if a.split("=", 1)[0] not in names) + tuple(assignments)


def shell_strings(words: list[str]) -> list[str]:
    """The command lines a shell runs from its `-c` string ([shell_strings] rows): `bash -c 'pip install . && pytest'`
    runs `pip install .` and `pytest`, read as if typed on the line."""
    options = rows().shell_strings.get(words[0].rsplit("/", 1)[-1]) if words else None
    if not options:
        return []
    for option, line in zip(words[1:], words[2:], strict=False):
        cluster = option[:1] == "-" and option[1:2] != "-" and f"-{option[-1]}" in options
        if option in options or cluster:
            return [line]
    return []


def unwrapped(words: list[str]) -> tuple[list[str], tuple[str, ...]]:
    """A command's words without the wrappers that only run the rest (`sudo -u app npm ci` -> `npm ci`), and the
    assignments before it (`X=1 cmd`, `env X=1 cmd`); no words at all when a wrapper only looks the program up
    (`command -v yarn`)."""
    redirects = [w for w in words if w[:1] in "<>"]
    rest = [w for w in words if w[:1] not in "<>"]
    table = rows().wrappers
    env: list[str] = []
    while rest:
        while rest and "=" in rest[0] and not rest[0].startswith("-"):
            env += [rest[0]] if is_assignment(rest[0]) else []
            rest = rest[1:]  # `X=1 cmd`: an assignment
        name = rest[0].rsplit("/", 1)[-1] if rest else ""
        pair = f"{name} {rest[1]}" if len(rest) > 1 else ""
        width = 2 if pair in table else 1  # a subcommand that only runs the rest (`bundle exec rake …`)
        wrapper = table.get(pair if width == 2 else name)
        if wrapper is None:
            break
        rest = rest[width:]
        while rest and rest[0].startswith("-") and rest[0] != "-":
            option = rest.pop(0)
            if option in wrapper.lookup:
                return [], ()
            if option == "--":
                break
            if option in wrapper.options and rest:
                rest.pop(0)
        rest = rest[wrapper.operands :]
    return rest + redirects, tuple(env)


def relative(raw: str, cwd: str) -> str:
    """A path as the project names it: `./` dropped, an absolute path inside the project made relative."""
    raw = raw[2:] if raw.startswith("./") else raw
    root = cwd.rstrip("/") + "/"
    return raw[len(root) :] if cwd and raw.startswith(root) else raw


def _read_bounded(path: Path) -> str | None:
    """The file's text before a Write (None: it does not exist yet); a huge or unreadable one counts as empty."""
    try:
        with open(path, "rb") as f:
            return f.read(limits.GUARD_OLD_TEXT_MAX_BYTES).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError:
        return ""


def imports_in(text: str) -> set[str]:
    """The modules a text imports, in any of the languages `_IMPORT_RES` reads."""
    found: set[str] = set()
    for rx in _IMPORT_RES:
        for m in rx.finditer(text):
            found.update(part.strip() for part in m.group(1).split(",") if part.strip())
    return found


def runs_words(cmd: SimpleCommand) -> tuple[str, ...]:
    """The words of the program a runner runs (`prisma migrate reset` of `npx prisma migrate reset`)."""
    if not cmd.runner or not cmd.runs:
        return ()
    for i in range(1, len(cmd.words)):
        if cmd.words[i].casefold() == cmd.runs[0]:
            return (cmd.words[i].casefold(), *cmd.words[i + 1 :])
    return ()


def written(cmd: SimpleCommand, root: str) -> list[str]:
    """The existing files a command changes: redirected onto, or named by a writer row (`rm`, `sed -i`, `cp`'s
    destination)."""
    out = [relative(w, root) for w in cmd.writes] + [relative(p, root) for p in edited_in_place(cmd)]
    how = _writer_of(cmd, rows().writers)
    if how:
        paths = _path_args(cmd, skip_subcommand=" " in how[0])
        if how[1] == "last":
            paths = paths[-1:] if len(paths) > 1 else []
        out += [relative(p, root) for p in paths]
    return out


def edited_in_place(cmd: SimpleCommand) -> list[str]:
    """The files an in-place editor row changes (`perl -0pi -e 's/a/b/' x.md` -> x.md): none without its flag;
    its script (an option's value, else the first argument) is no file."""
    editor = rows().in_place.get(cmd.program)
    if editor is None or not any(editor.flag.match(a) for a in cmd.args):
        return []
    files: list[str] = []
    scripted, take_value = False, False
    for arg in cmd.args:
        if take_value:
            take_value = False
            continue
        if arg.startswith("-"):
            if arg in editor.script_options or not arg.startswith("--") and f"-{arg[-1]}" in editor.script_options:
                scripted = take_value = True  # `-e 's/a/b/'`, or a cluster ending in it (`perl -pe`, `sed -ne`)
            continue
        files.append(arg)
    return files if scripted else files[1:]


def created(cmd: SimpleCommand, root: str) -> list[str]:
    """The files a command may create (redirected onto, or named by a creator row: `touch`, `cp`'s destination);
    the caller keeps those that do not exist yet."""
    out = [relative(w, root) for w in cmd.writes]
    how = _writer_of(cmd, rows().creators)
    if how:
        paths = _path_args(cmd, skip_subcommand=" " in how[0])
        out += [relative(p, root) for p in (paths[-1:] if how[1] == "last" and len(paths) > 1 else paths)]
    return out


def read(cmd: SimpleCommand, root: str) -> list[str]:
    """The files a command reads or stages: its path arguments (an option's `=value` too), less what it only
    writes (`cp`'s destination), a shell's `-c` string, and everything for programs that name files unread (`echo`)."""
    if cmd.program in rows().non_readers or f"{cmd.program} {cmd.subcommand}" in rows().non_readers:
        return []
    paths = _path_args(cmd, skip_subcommand=False)
    inner = shell_strings(list(cmd.words))  # a shell's -c string is commands, read as its own (commands_of)
    paths = [p for p in paths if p not in inner]
    how = _writer_of(cmd, rows().writers)
    if how and how[1] == "last" and len(paths) > 1:
        paths = paths[:-1]
    paths += [r[1:] for r in cmd.redirects if r.startswith("<")]
    paths += named_in_program(cmd)
    return [relative(p, root) for p in paths]


def named_in_program(cmd: SimpleCommand) -> list[str]:
    """The quoted string literals of an interpreter's inline program ([inline_programs] rows): `python -c
    "print(dotenv_values('.env'))"` names `.env`, a file the program reads."""
    options = rows().inline_programs.get(cmd.program)
    if not options:
        return []
    out: list[str] = []
    for option, program in zip(cmd.args, cmd.args[1:], strict=False):
        cluster = option[:1] == "-" and option[1:2] != "-" and f"-{option[-1]}" in options
        if option in options or cluster:
            out += [m.group(2) for m in _STRING_LITERAL.finditer(program) if m.group(2).strip()]
    return out


def _writer_of(cmd: SimpleCommand, table: dict[str, str]) -> tuple[str, str] | None:
    two = f"{cmd.program} {cmd.subcommand}"
    if cmd.subcommand and two in table:
        return two, table[two]
    return (cmd.program, table[cmd.program]) if cmd.program in table else None


def _path_args(cmd: SimpleCommand, *, skip_subcommand: bool) -> list[str]:
    out: list[str] = []
    skipped = not skip_subcommand
    for arg in cmd.args:
        if arg.startswith("-"):
            if "=" in arg:
                out.append(arg.split("=", 1)[1])
            continue
        if not skipped:
            skipped = True
            continue
        out.append(arg)
    return out


def installed(cmd: SimpleCommand) -> list[str]:
    """The packages a package manager's install verb adds (`pnpm add moment@2` adds `moment`)."""
    if cmd.program not in _managers() or cmd.subcommand not in rows().install_verbs:
        return []
    names = [a for a in cmd.args if not a.startswith("-")][1:]
    return [_package_name(a) for a in names if a]


@cache
def _managers() -> frozenset[str]:
    return frozenset(programs().family_of)


def _package_name(spec: str) -> str:
    """`lodash@4` -> lodash, `@scope/x@1` -> @scope/x, `requests==2.0` -> requests."""
    head, at, _ = spec[1:].partition("@") if spec.startswith("@") else spec.partition("@")
    name = ("@" + head) if spec.startswith("@") else head
    return re.split(r"[=<>!~\[;]", name, maxsplit=1)[0].casefold()
