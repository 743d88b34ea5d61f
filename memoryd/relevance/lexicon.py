"""The word lists relevance reads, loaded once from `data/*.toml` (one home for every list: adding a
program or a word is a data row with its labelled cases, never a code branch)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


def load(name: str) -> dict[str, Any]:
    """One data file of `memoryd/relevance/data/`, parsed."""
    text = resources.files("memoryd.relevance").joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True, slots=True)
class Programs:
    """Program families (npx belongs to npm), runner word sequences, and the words a command line strips."""

    family_of: dict[str, str]  # typed program -> family name
    ecosystem_of: dict[str, str]  # family name -> ecosystem
    runners: tuple[tuple[tuple[str, ...], str], ...]  # (words, family), longest first
    prefixes: frozenset[str]
    manager_verbs: frozenset[str]
    interpreters: frozenset[str]
    known: frozenset[str] = frozenset()  # programs a memory's prose may name
    english: frozenset[str] = frozenset()  # programs that are English words: named only in backticks

    def family(self, program: str) -> str:
        """The family a typed program belongs to (itself when it has none)."""
        return self.family_of.get(program, program)


@cache
def programs() -> Programs:
    data = load("programs")
    family_of: dict[str, str] = {}
    ecosystem_of: dict[str, str] = {}
    runners: list[tuple[tuple[str, ...], str]] = []
    for name, row in data["families"].items():
        ecosystem_of[name] = row.get("ecosystem", "")
        for member in row["members"]:
            family_of[member] = name
        runners.extend((tuple(words), name) for words in row.get("runners", []))
    runners.sort(key=lambda r: -len(r[0]))
    return Programs(
        family_of,
        ecosystem_of,
        tuple(runners),
        frozenset(data["prefixes"]["words"]),
        frozenset(data["package_manager_verbs"]["words"]),
        frozenset(data["interpreters"]["words"]),
        frozenset(data["known"]["words"]),
        frozenset(data["known"]["english"]),
    )


@dataclass(frozen=True, slots=True)
class Subjects:
    """Classes of coding work: the phrases that name each (one pattern for all) and the code that shows it."""

    of_word: dict[str, str]  # phrase (case-folded) -> subject
    words: re.Pattern[str]
    code: tuple[tuple[re.Pattern[str], str], ...]


@cache
def subjects() -> Subjects:
    data = load("subjects")
    of_word = {w.casefold(): name for name, row in data.items() for w in row["words"]}
    alternation = "|".join(re.escape(w) for w in sorted(of_word, key=len, reverse=True))
    words = re.compile(r"(?<![\w.-])(?:" + alternation + r")(?![\w-])", re.I)
    code = tuple((re.compile(p), name) for name, row in data.items() for p in row.get("code", []))
    return Subjects(of_word, words, code)


@dataclass(frozen=True, slots=True)
class Words:
    """The plain word lists of the extractors (`data/words.toml`)."""

    rule: re.Pattern[str]
    roles: frozenset[str]
    generic_dirs: frozenset[str]
    everyday_kinds: frozenset[str]
    folder_files: frozenset[str]
    plain: frozenset[str]
    acts: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]  # (command, prompt asks it, memory is about it)
    named_kinds: frozenset[str]  # file kinds beyond the everyday ones
    language_kinds: dict[str, tuple[str, ...]]  # a language's name -> its file kinds


@cache
def words() -> Words:
    data = load("words")
    rule = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in data["rule_words"]["words"]) + r")\b", re.I)
    acts = tuple(
        (row["command"], re.compile(row["prompt"]), re.compile(row["memory"], re.M)) for row in data["acts"].values()
    )
    return Words(
        rule,
        frozenset(data["roles"]["words"]),
        frozenset(data["generic_dirs"]["words"]),
        frozenset(data["everyday_kinds"]["words"]),
        frozenset(data["folder_files"]["words"]),
        frozenset(data["plain_words"]["words"]),
        acts,
        frozenset(data["named_kinds"]["words"]),
        {name: tuple(kinds) for name, kinds in data["language_kinds"].items()},
    )


@dataclass(frozen=True, slots=True)
class Code:
    """How written code names the modules it imports and the names it calls, per language."""

    imports: tuple[tuple[re.Pattern[str], str], ...]  # (pattern, language)
    calls: tuple[re.Pattern[str], ...]


@cache
def code() -> Code:
    data = load("code")
    imports = tuple((re.compile(p), lang) for lang, row in data.items() if lang != "calls" for p in row["imports"])
    return Code(imports, tuple(re.compile(p) for p in data["calls"]["patterns"]))


@dataclass(frozen=True, slots=True)
class Polarity:
    """The words that turn a clause against what it names, and those that turn it back (`data/polarity.toml`)."""

    forbid: re.Pattern[str]  # the first in a clause: what follows is ruled out, what precedes it preferred
    resume: re.Pattern[str]  # after a comma or dash: the ruled-out tail ends here
    clause: re.Pattern[str]  # where one clause ends and the next begins
    scope_end: frozenset[str]  # words after which a ruled-out tail names where or why, not what


@cache
def polarity() -> Polarity:
    data = load("polarity")

    def alternation(key: str) -> str:
        return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(data[key]["words"], key=len, reverse=True))

    return Polarity(
        re.compile(r"(?<![\w'-])(?:" + alternation("forbid") + r")(?![\w'-])", re.I),
        re.compile(r"[,–—]\s*(?:-\s*)?(?:" + alternation("resume") + r")(?![\w'-])|\s[-–—]\s", re.I),
        re.compile(r"[.;:!?](?=\s|$)|\n"),
        frozenset(data["scope_end"]["words"]),
    )
