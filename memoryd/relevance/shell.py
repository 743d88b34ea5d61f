"""A Bash command line read as the simple commands it runs: each one's typed program, its family
(`npx` is npm's), the program it really runs once runners are stripped (`pnpm dlx prisma migrate` runs
prisma), its subcommand, arguments and path-like words. One linear pass, bounded in size: a hostile
250 KB word costs microseconds, never shlex's quadratic time (issue 52)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from memoryd.base import limits
from memoryd.relevance.lexicon import programs, trie_pattern

_OPERATORS = ("&&", "||", ";", "|", "&", "\n", "(", ")")
_VERSION_SUFFIX = r"\.?[0-9]+(?:\.[0-9]+)*"  # the 3.12 of python3.12, the .11 of python3.11, the 2.7 of python2.7


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command of a line. `program` as typed (basename, lower case); `family` its tool (`npm` for
    `npx`); `runs` the program it runs and its first word (`("prisma", "migrate")`)."""

    words: tuple[str, ...]
    program: str
    family: str
    runs: tuple[str, ...]
    args: tuple[str, ...]
    runner: str = ""  # the family whose runner launched `runs` ("npm" for `npx eslint`), else ""
    redirects: tuple[str, ...] = ()  # files named after `>`, `>>` or `<`

    @property
    def writes(self) -> tuple[str, ...]:
        """Files the command writes by redirection (`echo x > db/migrations/1.sql`)."""
        return tuple(r[1:] for r in self.redirects if r.startswith(">"))

    @property
    def subcommand(self) -> str:
        """The first word after the program that is not an option (`install` of `npm install -D x`)."""
        return next((w for w in self.args if not w.startswith("-")), "")

    def paths(self) -> tuple[str, ...]:
        """Path-like arguments and redirected files (`cat .env.local` names `.env.local`)."""
        return tuple(w for w in self.args if _path_like(w)) + tuple(r[1:] for r in self.redirects)


def _path_like(word: str) -> bool:
    return not word.startswith("-") and "=" not in word and ("/" in word or "." in word.strip("."))


def split_line(command: str) -> list[list[str]]:
    """The words of each simple command of a line, quotes removed, heredoc bodies skipped; linear in its
    length, which is cut at COMMAND_PARSE_MAX_CHARS. A redirected file is one word led by `>` or `<`."""
    text = command[: limits.COMMAND_PARSE_MAX_CHARS]
    out: list[list[str]] = [[]]
    word: list[str] = []
    in_word = False
    heredoc = ""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if heredoc and ch == "\n":  # skip the body up to the delimiter line
            end = text.find("\n" + heredoc + "\n", i)
            end_at_eof = text.endswith("\n" + heredoc)
            i = end + len(heredoc) + 2 if end >= 0 else (n if not end_at_eof else n)
            heredoc = ""
            _end_word(out, word, in_word)
            word, in_word = [], False
            out.append([])
            continue
        if ch in "'\"":
            close = text.find(ch, i + 1)
            close = n if close < 0 else close
            word.append(text[i + 1 : close])
            in_word = True
            i = close + 1
            continue
        if ch == "\\" and i + 1 < n:
            word.append(text[i + 1])
            in_word = True
            i += 2
            continue
        if ch == "<" and text.startswith("<<", i) and not text.startswith("<<<", i):
            j = i + 2 + (text[i + 2 : i + 3] == "-")
            while j < n and text[j] == " ":
                j += 1
            k = j
            while k < n and not text[k].isspace() and text[k] not in ";&|":
                k += 1
            heredoc = text[j:k].strip("'\"")
            i = k
            continue
        if ch in "<>" and word and "".join(word).isdigit():  # the 2 of `2> file` or `2>&1`
            word, in_word = [], False
        if text.startswith(">&", i):  # `2>&1`: a descriptor copied, no file
            i += 2
            while i < n and (text[i].isdigit() or text[i] == "-"):
                i += 1
            continue
        if text.startswith("&>", i):  # `&> file`: both streams to a file
            i += 1
            ch = ">"
        if ch in "<>":  # `> file`, `>> file`, `< file`, `2> file`
            _end_word(out, word, in_word)
            i += 2 if text.startswith(">>", i) else 1
            while i < n and text[i] == " ":
                i += 1
            word, in_word = [">" if ch == ">" else "<"], False
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), "")
        if op or ch in " \t\r":
            _end_word(out, word, in_word)
            word, in_word = [], False
            if op:
                out.append([])
            i += len(op) or 1
            continue
        if ch == "#" and not in_word:  # a comment runs to the end of the line
            nl = text.find("\n", i)
            i = n if nl < 0 else nl
            continue
        word.append(ch)
        in_word = True
        i += 1
    _end_word(out, word, in_word)
    return [words for words in out if words]


def _end_word(out: list[list[str]], word: list[str], in_word: bool) -> None:
    if in_word and len(out[-1]) < limits.COMMAND_PARSE_MAX_WORDS:
        out[-1].append("".join(word))


def simple_command(words: list[str]) -> SimpleCommand | None:
    """What one command's words run: env assignments and prefixes (`sudo`, `env`) stripped, `python -m pip`
    read as pip, a runner (`npx`, `pnpm dlx`, `uv run`) read as the program it runs."""
    table = programs()
    redirects = tuple(w for w in words if w[:1] in "<>")
    words = [w for w in words if w[:1] not in "<>"]
    while words and ("=" in words[0] and not words[0].startswith("-") or words[0] in table.prefixes):
        words = words[1:]
    if not words:
        return None
    words = without_global_options(words)
    typed = [interpreter_of(words[0].rsplit("/", 1)[-1].casefold()), *words[1:]]
    if typed[0] in table.interpreters and len(typed) > 2 and typed[1] == "-m":
        typed = typed[2:]
    program = typed[0]
    runs = typed
    runner = ""
    lowered = tuple(w.casefold() for w in typed)
    for seq, family in table.runners:
        if lowered[: len(seq)] == seq and len(typed) > len(seq):
            runs, runner = typed[len(seq) :], family
            break
    if not runner and program in table.manager_members and len(typed) > 3 and typed[1] in table.package_verbs:
        runs = [program, *typed[3:]]  # `yarn workspace @app/web vitest run`: what runs in the package
    if not runner and program in table.family_of and len(runs) > 1:
        verb = runs[1].casefold()
        if verb not in table.manager_verbs and not verb.startswith("-") and _bare(verb):
            runs, runner = runs[1:], table.family(program)  # `yarn vitest run` runs vitest
    run_key = tuple(w.casefold() for w in runs[:1] + [w for w in runs[1:] if not w.startswith("-")][:1])
    return SimpleCommand(tuple(typed), program, table.family(program), run_key, tuple(typed[1:]), runner, redirects)


def interpreter_of(program: str) -> str:
    """An interpreter under a version suffix read as the interpreter (`python3.12` -> python3, `python2.7` -> python);
    any other program as typed."""
    found = None if program in programs().interpreters else _versioned().fullmatch(program)
    return found.group(1) if found else program


@cache
def _versioned() -> re.Pattern[str]:
    """An [interpreters] name, the longest that fits, and a version suffix after it."""
    return re.compile(f"({trie_pattern(programs().interpreters)}){_VERSION_SUFFIX}")


def without_global_options(words: list[str]) -> list[str]:
    """A package manager's words without the global options typed before its verb and their values (`npm --prefix
    apps/web run dev` -> `npm run dev`), and a runner verb's options before the program it runs (`uv run --with mypy
    mypy src` -> `uv run mypy src`); [global_options] rows of data/programs.toml, so the verb and the program are
    read where they stand."""
    table = programs().global_options
    if not words:
        return words
    head, rest = words[:1], words[1:]
    key = words[0].rsplit("/", 1)[-1].casefold()
    while True:
        if key in table:
            kept, rest = _options_dropped(rest, table[key], keep_flags=" " not in key)
            head += [] if _runner_verb_at(key, rest) else kept  # `uv --offline run mypy`: the manager's own flag
        longer = f"{key} {rest[0].casefold()}" if rest else ""
        if not longer or not any(k == longer or k.startswith(longer + " ") for k in table):
            return head + rest
        head.append(rest.pop(0))
        key = longer


def _runner_verb_at(program: str, rest: list[str]) -> bool:
    """The words after a program start one of its runner verbs (`run mypy` of `uv --offline run mypy`; the runners
    of data/programs.toml), so the program's flags before them are its own, not the program run's."""
    lowered = tuple(w.casefold() for w in rest)
    return any(seq[0] == program and lowered[: len(seq) - 1] == seq[1:] for seq, _ in programs().runners)


def _options_dropped(rest: list[str], taking: frozenset[str], *, keep_flags: bool) -> tuple[list[str], list[str]]:
    """(the flags kept, the words after the leading options): each option in `taking` dropped with its value; a
    manager's flag (`--silent`) kept, the reader skips it as before; a runner verb's flag (`--frozen`) dropped."""
    kept: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] != "--":
        option = rest.pop(0)
        if option in taking and rest:
            rest.pop(0)
        elif option not in taking and keep_flags:
            kept.append(option)
    if not keep_flags and rest[:1] == ["--"]:
        rest = rest[1:]  # `uv run -- mypy`: the runner's options end
    return kept, rest


def _bare(word: str) -> bool:
    """A word that can name a program or script (not a path or a package spec like `lodash@4`)."""
    return word.replace("-", "").replace("_", "").replace(":", "").isalnum()


@lru_cache(maxsize=1024)
def parse(command: str) -> tuple[SimpleCommand, ...]:
    """The simple commands of a Bash line, parsed once per line however many memories read it."""
    return tuple(c for words in split_line(command) if (c := simple_command(words)) is not None)


def command_key(command: str) -> tuple[str, ...]:
    """The program a command runs and its first word, as `parse` reads its first simple command (`npx prisma
    migrate` and `yarn prisma migrate` are both ("prisma", "migrate"); `npm install` is ("npm", "install")): how a
    memory's commands and an act's are compared."""
    commands = parse(command)
    return commands[0].runs if commands else ()


def command_paths(command: str) -> tuple[str, ...]:
    """The path-like words of a line, its programs' and redirected files' included (`./scripts/deploy.sh`,
    `cat .env.local`)."""
    return tuple(w for words in split_line(command) for word in words if _path_like(w := word.lstrip("<>")))
