"""The word lists relevance reads, loaded once from `data/*.toml` (one home for every list: adding a
program or a word is a data row with its labelled cases, never a code branch)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any


def trie_pattern(words: Iterable[str]) -> str:
    """Words as one alternation shaped like a trie (`c(?:ss|olou?r)`-like), longest first at each branch:
    the regex engine then tries a letter once per position, not once per word."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if "" in node:
            branches.append("")  # the word may end here: the longer branches are tried first
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return emit(trie)


def any_word(words: Iterable[str], flags: int = re.I) -> re.Pattern[str]:
    """One pattern matching any of these words or phrases whole (as a trie: where two of them match, the longer
    is tried first, as in an alternation longest first)."""
    return re.compile(r"\b(?:" + trie_pattern(words) + r")\b", flags)


def load(name: str) -> dict[str, Any]:
    """One data file of `memoryd/relevance/data/`, parsed."""
    text = resources.files("memoryd.relevance").joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


READERS = ("matcher", "fitted", "guard")  # the readers of a shared table: applies_*, features.py, guard/propose.py


def shared_rows(table: str, reader: str) -> dict[str, tuple[str, ...]]:
    """A `words.toml` table several readers share (negations, library cues), as `reader` reads it: each list of rows
    but those its `<reader>_skip` names, in the table's order (one list, not one copy per reader)."""
    if reader not in READERS:
        raise ValueError(f"no reader {reader!r} of the shared tables")
    data = load("words")[table]
    skip = data.get(f"{reader}_skip", {})
    return {
        key: tuple(w for w in rows if w not in skip.get(key, ()))
        for key, rows in data.items()
        if isinstance(rows, list)
    }


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
    managers: tuple[tuple[str, ...], ...] = ()  # per ecosystem, its package managers' family names
    choice: re.Pattern[str] = re.compile(r"(?!)")  # a phrase making one named manager a choice among them
    package_verbs: frozenset[str] = frozenset()  # a manager's verb naming a package, then a script (`workspace`)
    global_options: dict[str, frozenset[str]] = field(default_factory=dict)  # options before a verb, taking a value

    def family(self, program: str) -> str:
        """The family a typed program belongs to (itself when it has none)."""
        return self.family_of.get(program, program)

    @property
    def manager_members(self) -> frozenset[str]:
        """Every program typed to run a package manager (npm, npx, pnpm, pnpx, ..., pip3, uvx)."""
        managers = {f for ecosystem in self.managers for f in ecosystem}
        return frozenset(p for p, f in self.family_of.items() if f in managers)

    @property
    def named(self) -> frozenset[str]:
        """The programs other than package managers a memory may name (the English ones only in backticks)."""
        return (self.known | self.english) - self.manager_members


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
    by_ecosystem: dict[str, list[str]] = {}
    for name, row in data["families"].items():
        if row.get("package_manager"):
            by_ecosystem.setdefault(row["ecosystem"], []).append(name)
    return Programs(
        family_of,
        ecosystem_of,
        tuple(runners),
        frozenset(data["prefixes"]["words"]),
        frozenset(data["package_manager_verbs"]["words"]),
        frozenset(data["interpreters"]["words"]),
        frozenset(data["known"]["words"]),
        frozenset(data["known"]["english"]),
        tuple(tuple(f) for f in by_ecosystem.values()),
        re.compile(r"\b(?:" + "|".join(re.escape(w) for w in data["package_managers"]["choice"]) + ")", re.I),
        frozenset(data["package_managers"]["package_verbs"]),
        {k: frozenset(v) for k, v in data["global_options"].items()},
    )


@dataclass(frozen=True, slots=True)
class Subjects:
    """Classes of coding work: the phrases that name each (one pattern for all) and the code that shows it."""

    of_word: dict[str, str]  # phrase (case-folded) -> subject
    words: re.Pattern[str]
    code: tuple[tuple[re.Pattern[str], str], ...]
    weak: frozenset[str] = frozenset()  # words that give their subject only beside another of its words


@cache
def subjects() -> Subjects:
    """The subjects as the fitted features read them: every row, its `words`, its `code`."""
    data = load("subjects")
    of_word = {w.casefold(): name for name, row in data.items() for w in row["words"]}
    code = tuple((re.compile(p), name) for name, row in data.items() for p in row.get("code", []))
    return Subjects(of_word, _words_pattern(of_word), code)


@cache
def matcher_subjects() -> Subjects:
    """The subjects as the daemon's matcher reads them (relevance/applies_*): the rows not `matcher = false`, their
    words but `fitted_only`, plus `matcher_words`; `code` here is `matcher_code`, read in prose too; `weak` are the
    `matcher_weak` words."""
    data = {name: row for name, row in load("subjects").items() if row.get("matcher", True)}
    of_word = {
        w.casefold(): name
        for name, row in data.items()
        for w in [*row["words"], *row.get("matcher_words", [])]
        if w not in row.get("fitted_only", [])
    }
    code = tuple((re.compile(p), name) for name, row in data.items() for p in row.get("matcher_code", []))
    weak = frozenset(w.casefold() for row in data.values() for w in row.get("matcher_weak", []))
    return Subjects(of_word, _words_pattern(of_word), code, weak)


def _words_pattern(of_word: dict[str, str]) -> re.Pattern[str]:
    """Every phrase in one pass, whole: shaped as a trie (a pass per subject was ten times the work)."""
    return re.compile(r"(?<![\w.-])" + trie_pattern(of_word) + r"(?![\w-])", re.I)


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
    layers: frozenset[str] = frozenset()  # the roles that are layers code is split into (part of `roles`)
    negation: re.Pattern[str] = re.compile(r"(?!)")  # a word or phrase that negates what follows
    creating: re.Pattern[str] = re.compile(r"(?!)")  # "adding a new", "creating new": making a new thing
    named_alone: frozenset[str] = frozenset()  # folders too common to be a place when named alone (with generic_dirs)
    not_paths: frozenset[str] = frozenset()  # words with a slash that are never a path ("and/or")
    language_aliases: dict[str, str] = field(default_factory=dict)  # another word for a language (stylesheet: css)
    negation_verbs: str = "use"  # an alternation of the verbs between a negation and what it forbids ("never run")
    library_verbs: frozenset[str] = frozenset()  # verbs naming a library after them ("don't add moment")
    library_words: frozenset[str] = frozenset()  # words naming a library before them ("moment imports")
    library_fillers: frozenset[str] = frozenset()  # words between such a verb and the names ("add new moment")
    headline_guidance: frozenset[str] = frozenset()  # words around a language's name in a headline about writing it
    framework_languages: dict[str, str] = field(default_factory=dict)  # a framework -> its language (ktor: kotlin)
    host_suffixes: frozenset[str] = frozenset()  # the last label of a host name (`github.com`): not code
    products: frozenset[str] = frozenset()  # products written in CamelCase (GitHub): a name in prose, not code
    negation_words: tuple[str, ...] = ()  # the words `negation` matches, as written (a match begins with one)
    rule_words: tuple[str, ...] = ()  # the words `rule` matches, as written

    @property
    def languages(self) -> dict[str, tuple[str, ...]]:
        """Every language's name and alias -> its file kinds, everyday ones included."""
        return self.language_kinds | {a: self.language_kinds[n] for a, n in self.language_aliases.items()}

    @property
    def frameworks(self) -> dict[str, tuple[str, ...]]:
        """A framework's name -> the file kinds of its language (`framework_languages`)."""
        return {f: self.language_kinds[n] for f, n in self.framework_languages.items()}

    @property
    def place_kinds(self) -> dict[str, tuple[str, ...]]:
        """The languages (and their aliases) none of whose kinds is everyday: a rule naming one in its headline
        reaches each edit of its files (CSS, SQL; not Python, whose `.py` says nothing)."""
        own = {n: k for n, k in self.language_kinds.items() if not set(k) & self.everyday_kinds}
        return own | {a: own[n] for a, n in self.language_aliases.items() if n in own}


@cache
def words() -> Words:
    data = load("words")
    negations, cues = shared_rows("negations", "matcher"), shared_rows("library_cues", "matcher")
    rule = re.compile(r"\b(?:" + "|".join(re.escape(w) for w in data["rule_words"]["words"]) + r")\b", re.I)
    roles = data["roles"]
    acts = tuple(
        (row["command"], re.compile(row["prompt"]), re.compile(row["memory"], re.M)) for row in data["acts"].values()
    )
    return Words(
        rule,
        frozenset(roles["layers"]) | frozenset(roles["others"]),
        frozenset(data["generic_dirs"]["words"]),
        frozenset(data["everyday_kinds"]["words"]),
        frozenset(data["folder_files"]["words"]),
        frozenset(data["plain_words"]["words"]),
        acts,
        frozenset(data["named_kinds"]["words"]),
        {name: tuple(kinds) for name, kinds in data["language_kinds"].items()},
        frozenset(roles["layers"]),
        any_word(negations["words"]),
        re.compile(r"\b(?:" + "|".join(data["creating"]["words"]) + r")\s+(?:an?\s+)?new\b", re.I),
        frozenset(data["generic_dirs"]["named_alone"]),
        frozenset(data["not_paths"]["words"]),
        dict(data["language_aliases"]),
        alternation(data["negation_verbs"]["words"]),
        frozenset(cues["verbs"]),
        frozenset(cues["words"]),
        frozenset(cues["fillers"]),
        frozenset(data["headline_guidance"]["words"]),
        dict(data["framework_languages"]),
        frozenset(data["cue_not_code"]["host_suffixes"]),
        frozenset(data["cue_not_code"]["products"]),
        tuple(negations["words"]),
        tuple(data["rule_words"]["words"]),
    )


def alternation(words: Iterable[str]) -> str:
    """Words as a regex alternation, longest first."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


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
    """The words that turn a clause against what it names (words.toml `[negations]`), and those that turn it back
    (`data/polarity.toml`)."""

    forbid: re.Pattern[str]  # the first in a clause: what follows is ruled out, what precedes it preferred
    resume: re.Pattern[str]  # after a comma or dash: the ruled-out tail ends here
    clause: re.Pattern[str]  # where one clause ends and the next begins
    scope_end: frozenset[str]  # words after which a ruled-out tail names where or why, not what
    # the lower-case words each `forbid` match opens with, one opening another aside (None when one is not lower-case
    # ASCII): a clause whose lowered text holds none of them holds no cue
    openers: tuple[str, ...] | None = None
    forbid_low: re.Pattern[str] | None = None  # `forbid` for a lowered text (`case_free`)


@cache
def polarity() -> Polarity:
    data = load("polarity")

    def alternation(words: Iterable[str]) -> str:
        return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))

    negations = shared_rows("negations", "fitted")["words"]
    forbid = re.compile(r"(?<![\w'-])(?:" + alternation(negations) + r")(?![\w'-])", re.I)
    return Polarity(
        forbid,
        re.compile(r"[,–—]\s*(?:-\s*)?(?:" + alternation(data["resume"]["words"]) + r")(?![\w'-])|\s[-–—]\s", re.I),
        re.compile(r"[.;:!?](?=\s|$)|\n"),
        frozenset(data["scope_end"]["words"]),
        openers([w.split(" ", 1)[0] for w in negations]),
        case_free(forbid.pattern, forbid.flags),
    )


# The characters a case-insensitive pattern takes for an ASCII letter besides its two cases (İ ı ſ K), and those whose
# lower case is not one character of the same kind (tests/test_derive_speed.py checks every code point): a text without
# them, lowered, keeps its length and its word characters, and a lower-case pattern without re.I finds in it what the
# case-insensitive one finds in the text.
FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


def lowered(text: str) -> str | None:
    """The text's lower case when lowering it keeps what a pattern sees (no `FOLDS_TO_ASCII`), for the case-free
    patterns (`case_free`); None when it may not. One `in` per character: a regex's scan took as long as lowering."""
    return text.lower() if text.isascii() or not any(c in text for c in FOLDS_TO_ASCII) else None


def openers(words: Iterable[str]) -> tuple[str, ...] | None:
    """Words a case-insensitive pattern's every match opens with, as lower-case ASCII, a word another opens aside:
    in a text without `FOLDS_TO_ASCII`, lowered, it can match only where `str.find` finds one (a `find` per word
    runs far faster than a regex's scan); None when a word is not lower-case ASCII."""
    low = sorted(set(words))
    if not low or not all(w and w.isascii() and w == w.lower() for w in low):
        return None
    return tuple(w for w in low if not any(w != o and w.startswith(o) for o in low))


def case_free(pattern: str, flags: int = re.I) -> re.Pattern[str] | None:
    """A case-insensitive pattern without re.I, for a lowered text (no `FOLDS_TO_ASCII`): when its letters, escapes
    aside, are all lower-case ASCII and it sets no flag inline, it finds there what it finds in the text, at the
    same places; None when it may not."""
    bare = re.sub(r"\\.", "", pattern, flags=re.S)
    if not bare.isascii() or bare != bare.lower() or re.search(r"\(\?[a-zA-Z]", bare):
        return None
    return re.compile(pattern, flags & ~re.I)


def opening_at(low: str, words: tuple[str, ...]) -> list[int]:
    """Each place in a lowered text where one of these words (`openers`) begins, in order, overlaps too."""
    found: set[int] = set()
    for word in words:
        at = low.find(word)
        while at >= 0:
            found.add(at)
            at = low.find(word, at + 1)
    return sorted(found)
