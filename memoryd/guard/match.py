"""Does an act meet a memory's forbid triggers? Only these explicit triggers can hold an act: a command the
memory names, an existing file it protects from writes, a file it keeps from being read or staged, a module new
code must not import, a new file it keeps from being created. Never a similarity score.

It does NOT decide what happens to a held act (`mode.py`) nor read memory files (`index.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from itertools import takewhile

from memoryd.guard.acts import (
    EDIT_TOOLS,
    READ_TOOLS,
    WRITE_TOOL,
    Act,
    EnvCommand,
    created,
    installed,
    is_assignment,
    read,
    rows,
    runs_words,
    unwrapped,
    written,
)
from memoryd.guard.glob_overlap import has_glob, overlaps
from memoryd.guard.rules import KEEP_OUT, Forbid
from memoryd.relevance.applies_match import path_matches
from memoryd.relevance.lexicon import programs
from memoryd.relevance.shell import SimpleCommand

COMMAND, WRITES, READS, IMPORTS, CREATES = "command", "writes", "reads", "imports", "creates"


@dataclass(frozen=True, slots=True)
class Hit:
    """Which trigger an act met, and the part of the act that met it (`npm install lodash`, a path, a module)."""

    kind: str  # command | writes | reads | imports | creates
    trigger: str
    what: str
    command: EnvCommand | None = None

    def describe(self) -> str:
        """The hit for a person: `runs npm (npm install lodash)`."""
        if self.kind == COMMAND:
            return f"`{self.what}` runs `{self.trigger}`"
        if self.kind == WRITES:
            return f"it changes {self.what}, which matches `{self.trigger}`"
        if self.kind == READS:
            return f"it reads {self.what}, which matches `{self.trigger}`"
        if self.kind == CREATES:
            return f"it creates the new file {self.what}, which matches `{self.trigger}`"
        return f"it adds `{self.what}`, which matches `{self.trigger}`"


def meets(forbid: Forbid, act: Act) -> Hit | None:
    """The first forbid trigger the act meets, or None: the act goes on untouched."""
    for cmd in act.commands:
        hit = _command_hit(forbid, act, cmd)
        if hit is not None:
            return hit
    if act.path and forbid.writes and (act.tool in EDIT_TOOLS or act.tool == WRITE_TOOL and not act.created):
        glob = _first_glob(forbid.writes, act.path)
        if glob:
            return Hit(WRITES, glob, act.path)
    if act.path and forbid.creates and act.tool == WRITE_TOOL and act.created:
        glob = _first_glob(forbid.creates, act.path)
        if glob:
            return Hit(CREATES, glob, act.path)
    if act.path and forbid.reads and (act.tool in READ_TOOLS or act.tool in EDIT_TOOLS):
        glob = _first_glob(forbid.reads, act.path)
        if glob:
            return Hit(READS, glob, act.path)
    if forbid.imports and act.new:
        for module in sorted(act.new_imports()):
            spec = module_spec(forbid.imports, module)
            if spec:
                return Hit(IMPORTS, spec, module)
    return None


def _command_hit(forbid: Forbid, act: Act, cmd: EnvCommand) -> Hit | None:
    line = " ".join(cmd.words)
    spec = next((s for s in forbid.commands if not s.startswith(KEEP_OUT) and command_matches(s, cmd)), "")
    if spec and not any(command_matches(s[1:], cmd) for s in forbid.commands if s.startswith(KEEP_OUT)):
        return Hit(COMMAND, spec, line, cmd)
    if forbid.writes:
        for rel in written(cmd, act.root):
            glob = _first_glob(forbid.writes, rel)
            if glob and (act.exists(rel) or has_glob(rel)):  # the shell expands a glob to files that exist
                return Hit(WRITES, glob, rel, cmd)
    if forbid.creates:
        for rel in created(cmd, act.root):
            glob = "" if has_glob(rel) else _first_glob(forbid.creates, rel)  # a glob names no new file
            if glob and not act.exists(rel):
                return Hit(CREATES, glob, rel, cmd)
    if forbid.reads:
        for rel in read(cmd, act.root):
            glob = _first_glob(forbid.reads, rel)
            if glob:
                return Hit(READS, glob, rel, cmd)
    if forbid.imports:
        for package in installed(cmd):
            spec = module_spec(forbid.imports, package)
            if spec:
                return Hit(IMPORTS, spec, package, cmd)
    return None


def command_matches(spec: str, cmd: SimpleCommand) -> bool:
    """`npm` meets `npm install` and `npx eslint` (npm's family); `prisma migrate reset` meets `npx prisma migrate
    reset`; each further word must be among the command's words (`git push --force|-f main`, globs allowed); a
    script said with or without the manager's run verb is one act (`yarn dev`, `yarn run dev`). Assignments before
    the program (`RAILS_ENV=test|ci rails db:reset`, or alone) must be among those the command is run with."""
    words = spec.split()
    assigned = list(takewhile(is_assignment, words))
    env = cmd.env if isinstance(cmd, EnvCommand) else ()
    if not all(_assigned(a, env) for a in assigned):
        return False
    if len(assigned) == len(words):
        return True
    said = unwrapped(words[len(assigned) :])[0]  # read as an act is: `bundle exec rake x` names `rake x`
    if not said:
        return False
    head, *rest = [w.casefold() for w in said]
    seqs = []
    if head in (cmd.program, cmd.family):
        args = tuple(w.casefold() for w in cmd.args)
        seqs.append(args)
        if cmd.family == head and _script_of(head, list(args)):
            seqs.append(args[1:])  # `yarn run dev` is `yarn dev`
    runs = runs_words(cmd)
    if runs and head == runs[0] and not _own_way(head, cmd):
        seqs.append(tuple(w.casefold() for w in runs[1:]))
    rests = [rest, rest[1:]] if _script_of(head, rest) else [rest]  # a trigger `yarn run dev` holds `yarn dev`
    return any(_words_in(r, args) for r in rests for args in seqs)


def _assigned(token: str, env: tuple[str, ...]) -> bool:
    """`NAME=value` among a command's assignments: the name exact, the value as a word (`test|ci`, globs)."""
    name, values = token.split("=", 1)
    return any(a.split("=", 1)[0] == name and _word_in(values, (a.split("=", 1)[1],)) for a in env)


def _script_of(manager: str, words: list[str]) -> bool:
    """The words run a script through the manager's run verb (`run dev` of `yarn run dev`), and the script is no
    verb of the manager's own (`bun run test` is a script; `bun test` is bun's test runner, another act)."""
    verbs = rows().script_runs.get(manager, frozenset())
    return len(words) > 1 and words[0] in verbs and words[1] not in programs().manager_verbs


def _words_in(rest: list[str], args: tuple[str, ...]) -> bool:
    """A spec's subcommand (its first word that is no option) is the command's subcommand, not any word
    (`bun test` is not `bun run test`); its other words may stand anywhere (`git push origin main --force`)."""
    if rest and not rest[0].startswith("-"):
        if not _word_in(rest[0], (next((a for a in args if not a.startswith("-")), ""),)):
            return False
        rest = rest[1:]
    return all(_word_in(token, args) for token in rest)


def _own_way(head: str, cmd: SimpleCommand) -> bool:
    """`uv pip install` is uv's own way to do what a rule against pip asks for: a package manager run by another
    of its ecosystem is not that manager."""
    table = programs()
    ecosystem = table.ecosystem_of.get(table.family(head), "")
    return bool(ecosystem) and table.family(head) != cmd.family and table.ecosystem_of.get(cmd.family) == ecosystem


def _word_in(token: str, args: tuple[str, ...]) -> bool:
    """A token's word among the args; a short flag or a cluster of them (`-f`, `-fd`) also inside another cluster
    in any order (`-df`, `-fdx`): the same flags, spelled another way."""
    for alt in token.split("|"):
        short = len(alt) >= 2 and alt[0] == "-" and alt[1] != "-" and alt[1:].isalpha()
        for arg in args:
            clustered = short and arg[:1] == "-" and arg[1:2] != "-" and set(alt[1:]) <= set(arg[1:])
            if fnmatchcase(arg, alt) or clustered:
                return True
    return False


def _first_glob(globs: tuple[str, ...], rel: str) -> str:
    """The first glob that takes the path, unless a `!glob` keeps it out (`.env*` but `!.env.example`). A shell
    glob the act names (`documents/x/*.md`) meets a glob when some path could match both (glob_overlap.py); a `!`
    keeps it out only when it is that very glob, since the shell may expand it to other files too."""
    if has_glob(rel):
        if any(g.startswith("!") and g[1:].removeprefix("./") == rel.removeprefix("./") for g in globs):
            return ""
        return next((g for g in globs if not g.startswith("!") and overlaps(rel, g)), "")
    if any(g.startswith("!") and path_matches(g[1:], rel) for g in globs):
        return ""
    return next((g for g in globs if not g.startswith("!") and path_matches(g, rel)), "")


def module_spec(specs: tuple[str, ...], module: str) -> str:
    """The forbidden module a module is, or is of its family (`moment` takes `moment/locale/fr` and
    `moment-timezone`; `requests` takes `requests.adapters`; a scope `@mui` takes `@mui/material`, never
    `@mui-x/y`): the separators are rows of data/acts.toml."""
    lowered = module.casefold()
    joins = rows().family_separators
    for spec in specs:
        s = spec.casefold()
        family = (s + "/",) if s.startswith("@") and "/" not in s else tuple(s + j for j in joins)
        if lowered == s or lowered.startswith(family):  # a scope (`@mui`) takes its packages, not `@mui-x/y`
            return spec
    return ""
