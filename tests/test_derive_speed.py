"""The patterns `applies_derive` was made faster with find exactly what the slower ones they replace found: the
slower forms are written here as the reference and both run over random texts of the characters that matter
(bench/derive_digest.py checks the whole derivation over the corpus)."""

from __future__ import annotations

import random
import re

import pytest

from memoryd.relevance import applies_derive as d
from memoryd.relevance.lexicon import FOLDS_TO_ASCII, lowered, shared_rows

_EXTS = "tsx?|jsx?|mjs|cjs|json|sql|py|prisma|ya?ml|toml|css|scss|lock|go|rs|rb|sh|html|vue|svelte"
REFERENCE = {
    "PATH_RE": (
        d.PATH_RE,
        r"(?<![\w/.:@-])(?:\*\*/|\*\.)?\.?[\w@*-][\w.@*-]*(?:/[\w.@*\[\]-]+)+/?"
        r"|(?<![\w/.:@-])\*\.[\w.]+"
        r"|(?<![\w/.:@-])\.env[\w.*-]*"
        rf"|(?<![\w/.:@-])[\w*-]+(?:\.[\w*-]+)*\.(?:{_EXTS})\b",
        0,
    ),
    "_KIND_RE": (d._KIND_RE, r"(?<![\w/.*-])\.(" + "|".join(sorted(d.WORDS.named_kinds)) + r")(?![\w/.-])", 0),
    "CAMEL_RE": (d.CAMEL_RE, r"(?<![\w.])[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*\b", 0),
    "_SCOPED": (d._SCOPED, r"(?<![\w/])@[\w-]+/[\w./-]*\w", 0),
    "_NAMED_WORD": (d._NAMED_WORD, r"(?<![\w.@/-])[A-Za-z][\w-]*(?![\w/])", 0),
    "_PLACEHOLDER": (
        d._PLACEHOLDER,
        r"\{[\w|.-]{1,40}\}|<[\w-]{1,30}>(?=[/_.\w-])|(?<=[/_.\w-])<[\w-]{1,30}>",
        0,
    ),
    "negation": (
        d.WORDS.negation,
        r"\b(?:"
        + "|".join(re.escape(w) for w in sorted(shared_rows("negations", "matcher")["words"], key=len, reverse=True))
        + r")\b",
        re.I,
    ),
}
PIECES = [
    *"aZx9_ ./-@*:[]{}<>`'\n,é",
    "src/",
    "db/migrations/",
    ".env",
    ".ts",
    ".css",
    ".scss",
    ".md",
    "**/",
    "*.",
    "Foo",
    "BarBaz",
    "OAuth",
    "@scope/ui",
    "Day.js",
    "never ",
    "NOT ",
    "don't ",
    "do not ",
    "no",
    "css",
    "tailwind",
    "Pull Request",
    "\u0130",
    "\u0131",
    "\u017f",
    "\u212a",
    "ß",
    "Σ",
    "\t",
    "\xa0",
    "\u2028",
    "\x1c",
    "\u3000",
]


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_a_faster_pattern_finds_what_the_slower_one_found(name: str) -> None:
    fast, slow, flags = REFERENCE[name]
    reference = re.compile(slow, flags)
    for text in texts(4000, seed=len(name)):
        assert fast.findall(text) == reference.findall(text), repr(text)


@pytest.mark.parametrize("rx", [d.PATH_RE, d._DIR_RE, d._DOTTED])
def test_the_words_holding_a_dot_or_a_slash_hold_every_match(rx: re.Pattern[str]) -> None:
    for text in texts(4000, seed=11):
        assert d._in_marked(rx, d._reading(text)) == rx.findall(text), repr(text)


def test_the_subjects_words_in_lower_case_are_those_found_case_insensitively() -> None:
    for text in texts(4000, seed=7) + [w.upper() for w in d.TOPIC_OF_WORD] + list(d.TOPIC_OF_WORD):
        assert d._topic_words(text) == {m.casefold() for m in d._TOPIC_WORDS.findall(text)}, repr(text)


def test_lowering_a_text_without_the_folding_characters_keeps_what_a_pattern_sees() -> None:
    """Every character a case-insensitive ASCII letter matches besides its cases, and every one whose lower case is
    another length, holds an ASCII character or changes whether it is a word character, is one `FOLDS_TO_ASCII`
    names (`lexicon.lowered` lowers no text holding one)."""
    every = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    named = set(FOLDS_TO_ASCII)
    assert all(lowered(f"x{c}") is None for c in named) and lowered("Never NPM") == "never npm"
    assert set(re.findall("[a-z]", every, re.I)) <= named
    word = re.compile(r"\w")
    for ch in every:
        low = ch.lower()
        if low != ch and ch not in named:
            assert len(low) == 1 and not low.isascii() and bool(word.match(ch)) == bool(word.match(low)), hex(ord(ch))


def test_the_library_walk_around_each_name_is_the_walk_over_every_word() -> None:
    """`_named_as_libraries` reads only the words around each place a name opens a word; over random texts of names,
    verbs, fillers and words for a library it finds what the walk over the text's every word finds."""
    names = {"moment", "dayjs", "lodash", "axios"}
    pieces = [
        *names,
        "Moment",
        "MOMENT",
        "moment.js",
        "add",
        "use",
        "new",
        "any",
        "imports",
        "library",
        "or",
        "and",
        ",",
        " ",
        "  ",
        "not",
        "don't",
        "\n",
        "-",
        "é",
        "\u0130",
        "ß",
        "x",
    ]
    rng = random.Random(5)
    for _ in range(4000):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        whole = d._libraries_among(d._casefolded(d._LIST_NAME.findall(text)), names)
        assert d._named_as_libraries(text, names) == whole, repr(text)
