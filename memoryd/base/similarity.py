"""When two memories say the same thing, and when a newer one overrules an older one: the one
measure extraction (update instead of a new file) and the dream (merge, supersede) share.

Words are stemmed (Snowball), field synonyms are folded ("DB" is "database", "tabs" are about
indentation), negations are one token, and the score mixes Jaccard with containment so a short
memory inside a longer one still counts. Exclusive choices (npm / pnpm, tabs / spaces, Go /
Python) keep memories apart: "use tabs in Go" and "use spaces in Python" never merge, and
"uses npm" followed by "moved to pnpm" is a contradiction the newer memory wins.
"""

from __future__ import annotations

import re
from typing import Protocol

from memoryd.base import limits
from memoryd.base.text import STOPWORDS, stem

NEAR_DUPLICATE = limits.NEAR_DUPLICATE_SIMILARITY
SAME_SUBJECT = 0.75  # how alike two memories must be, apart from the choice they differ on, to contradict


class MemoryLike(Protocol):
    """A memory, a header or an extraction candidate: what a memory claims is in these two."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


# Field synonyms: each concept term, then the words that stand for it (a word may name two concepts; a concept
# that lists its own name keeps that word as itself too: "mysql" is mysql and a database).
_CONCEPTS: dict[str, str] = {
    "tab": "tab tabs",
    "indent": "tab tabs space spaces indentation indenting indented indents",
    "space": "space spaces",
    "database": "db dbs databases postgresql postgres pg mysql sqlite mongodb mongo",
    "postgres": "postgresql postgres pg",
    "mysql": "mysql",
    "sqlite": "sqlite",
    "mongodb": "mongodb mongo",
    "test": "tests testing tested specs spec unittest pytest jest vitest",
    "unittest": "unittest",
    "pytest": "pytest",
    "jest": "jest",
    "vitest": "vitest",
    "mock": "mocks mocking mocked stubs fakes",
    "repository": "repo repos",
    "configuration": "config cfg",
    "documentation": "docs doc",
    "dependency": "deps dependencies",
    "javascript": "js",
    "typescript": "ts",
    "python": "py",
    "golang": "golang",
    "kubernetes": "k8s",
    "environment": "env",
    "authentication": "auth",
    "production": "prod",
    "development": "dev",
    "pullrequest": "pr prs mr",
    "lint": "linter linting lints",
    "prefer": "prefers preferred preference likes like wants want",
    "use": "uses using used moved switched migrated adopted runs run via",
    "quote": "quote quotes quoted",
}
_SYNONYMS: dict[str, tuple[str, ...]] = {  # word -> the concepts it stands for
    word: tuple(c for c, words in _CONCEPTS.items() if word in words.split())
    for word in " ".join(_CONCEPTS.values()).split()
}
_NEGATIONS = frozenset("not no never don dont doesn didn avoid without stop".split())
_DROP = STOPWORDS | frozenset(
    "always please every whenever project team our user users we us also instead now from going forward".split()
)
# Choices a memory holds one of: two memories naming different members disagree (or talk about different things).
_EXCLUSIVE: tuple[frozenset[str], ...] = tuple(
    frozenset(stem(w) for w in group.split())
    for group in (
        "npm pnpm yarn bun",
        "tab space",
        "single double",
        "postgres mysql sqlite mongodb dynamodb",
        "jest vitest mocha jasmine",
        "pytest unittest nose",
        "golang python rust java typescript javascript ruby php kotlin swift yaml",
        "react vue svelte angular solid",
        "webpack vite esbuild rollup parcel",
        "pip poetry uv pipenv conda",
        "github gitlab bitbucket",
        "rebase merge squash",
        "black ruff autopep8 yapf",
        "prettier biome",
        "aws gcp azure",
        "docker podman",
    )
)
# "moved from npm to pnpm", "pnpm instead of npm", "no longer npm": the choice after these words is the old one.
_OLD_CHOICE = re.compile(
    r"\b(?:from|instead of|rather than|no longer(?: uses?)?|not|over|replacing|replaced)\s+(?:the\s+)?([\w.+-]+)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
# Words that say how a memory holds a choice, not what it is about: weak evidence of sameness.
_WEAK = frozenset({"not", "use", "prefer", "indent", "host", "live"})


def terms(text: str) -> set[str]:
    """Stemmed concept terms of a text: stopwords dropped, synonyms folded, negations one token."""
    text = re.sub(r"\bGo\b", "golang", text)  # the language, not the verb (case tells them apart)
    text = re.sub(r"(?i)\bpull requests?\b", "pr", text)
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if word in _NEGATIONS:
            out.add("not")
        elif word in _SYNONYMS:
            out.update(stem(concept) for concept in _SYNONYMS[word])
        elif word not in _DROP:
            out.add(stem(word))
    return out


def _choices(text: str) -> list[set[str]]:
    """Per exclusive group, the members the text holds now (an "instead of X" member is dropped)."""
    current = terms(_OLD_CHOICE.sub(" ", text))
    return [current & group for group in _EXCLUSIVE]


def _conflicts(a: str, b: str) -> int:
    """How many exclusive groups the two texts fill with different members."""
    return sum(1 for x, y in zip(_choices(a), _choices(b)) if x and y and not x & y)


def _content(a: set[str]) -> set[str]:
    """Terms minus the weak ones ("use", "prefer", "not"), unless nothing else is left."""
    return (a - _WEAK) or a


def _score(a: set[str], b: set[str]) -> float:
    a, b = _content(a), _content(b)
    if not a or not b:
        return 0.0
    shared = len(a & b)
    jaccard = shared / len(a | b)
    containment = shared / min(len(a), len(b)) if min(len(a), len(b)) >= 2 else jaccard
    return 0.5 * jaccard + 0.5 * containment


def similarity(a: str, b: str) -> float:
    """0..1: how much the two texts say the same thing; 0 when they name different exclusive choices."""
    if _conflicts(a, b):
        return 0.0
    return _score(terms(a), terms(b))


def _text(memory: MemoryLike) -> str:
    return f"{memory.name}. {memory.description}"


def memory_similarity(a: MemoryLike, b: MemoryLike) -> float:
    """Similarity of two memories by what they claim (name and description; bodies carry boilerplate)."""
    if a.description.strip().casefold() == b.description.strip().casefold():
        return 1.0
    return max(similarity(a.description, b.description), similarity(_text(a), _text(b)))


def near_duplicate(a: MemoryLike, b: MemoryLike) -> bool:
    """Same type (when both have one) and saying the same thing: one memory, not two."""
    if getattr(a, "type", None) != getattr(b, "type", None):
        return False
    return memory_similarity(a, b) >= NEAR_DUPLICATE


def supersedes(newer: MemoryLike, older: MemoryLike) -> bool:
    """The newer memory contradicts the older on one exclusive choice about the same subject
    ("uses npm" → "moved to pnpm"), so the older is stale."""
    if getattr(newer, "type", None) != getattr(older, "type", None):
        return False
    a, b = _text(newer), _text(older)
    if _conflicts(a, b) != 1:
        return False  # agreeing, or differing on two choices: different subjects ("tabs in Go", "spaces in Python")
    members = frozenset().union(*_EXCLUSIVE)
    x, y = terms(a) - members - _WEAK, terms(b) - members - _WEAK
    if not x or not y:
        return True
    shared = len(x & y)
    return shared / min(len(x), len(y)) >= 1.0 or shared / len(x | y) >= SAME_SUBJECT
