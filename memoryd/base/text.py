"""Text analysis shared by the local ranker: tokenising, stopwords, stemming, dates.

Snowball (PyStemmer, a small C extension) when installed; a crude suffix stripper otherwise,
so the daemon still ranks without it.
"""

from __future__ import annotations

import re
from functools import lru_cache

try:  # PyStemmer: ~0.7 MB wheel, Snowball English
    import Stemmer as _pystemmer

    _STEMMER = _pystemmer.Stemmer("english")
    STEMMER = "snowball"

    def _stem(word: str) -> str:
        stemmed: str = _STEMMER.stemWord(word)  # PyStemmer has no type hints
        return stemmed

except ImportError:  # pragma: no cover - exercised only without the dependency
    STEMMER = "suffix-strip (PyStemmer not installed: weaker recall)"

    def _stem(word: str) -> str:
        for suffix in ("ingly", "edly", "ing", "ies", "ed", "es", "ly", "s"):
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
        return word


STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more
most my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves s t don ve ll re d m""".split()
)

# Words common in any prompt ("always use pnpm, never npm", "please remember ...", "add ...", "fix ..."):
# they say how, not what about, so a memory never matches on them (issues 17, 27). Query side only.
COMMON_WORDS = frozenset(
    """use used using uses never always please like want wanted need needs make made get got go going went come
take took know think thought thing things see look let try keep say said tell told give put also really actually
maybe instead even much many lot lots still already usually often sometimes ever remember thank thanks ok okay yes
yeah sure well good great new one way time day today now
add adds added adding write writes wrote writing fix fixes fixed fixing create creates created update updates updated
implement implements implemented change changes changed remove removes removed refactor refactors refactored
support supports handle handles handling improve improves improved ensure ensures allow allows
feat chore per via app apps run runs running start starts started locally show""".split()
)

_WORD = re.compile(r"[a-z0-9]+")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_NUM = {m: i + 1 for i, m in enumerate(MONTHS)} | {m[:3]: i + 1 for i, m in enumerate(MONTHS) if m != "may"}


# A vocabulary's worth of stems (~4.5 MB when full; 65,536 had been ~18 MB, filled over days by new words)
STEM_CACHE_WORDS = 16_384
_DIGIT = re.compile(r"\d").search


@lru_cache(maxsize=STEM_CACHE_WORDS)
def _stem_cached(word: str) -> str:
    return _stem(word)


def stem(word: str) -> str:
    """A word's stem. Numbers have none and never enter the cache: each save's ids and counts
    are new words, and they filled it by a megabyte a minute under load (issue 31). Nor do words
    with a digit (`ticket4821`, `v2`, a hash's pieces): each is mostly a word of its own (issue 42)."""
    if word.isdigit():
        return word
    return _stem(word) if _DIGIT(word) else _stem_cached(word)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def terms(text: str) -> list[str]:
    """Content terms: lowercased words minus stopwords, stemmed."""
    return [stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def query_terms(text: str) -> list[str]:
    """A query's content terms without the common words."""
    return [t for t in terms(text) if t not in _COMMON_STEMS]


_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")


def date_keys(text: str) -> set[str]:
    """Year and year-month keys named in a text ('2023', '2023-05'), for temporal matching."""
    keys: set[str] = set()
    if not _YEAR.search(text):
        return keys
    toks = words(text)
    for i, tok in enumerate(toks):
        if len(tok) == 4 and tok[:2] in ("19", "20") and tok.isdigit():
            keys.add(tok)
            for j in (i - 1, i - 2):
                if j >= 0 and toks[j] in MONTH_NUM:
                    keys.add(f"{tok}-{MONTH_NUM[toks[j]]:02d}")
    for m in re.finditer(r"\b(20\d\d|19\d\d)-(\d\d)-\d\d", text):
        keys.add(m.group(1))
        keys.add(f"{m.group(1)}-{m.group(2)}")
    return keys


_COMMON_STEMS = frozenset(stem(w) for w in COMMON_WORDS)


_LABELS = re.compile(r"\*\*(?:Why|How to apply):\*\*")


def sentences(text: str) -> list[tuple[str, str]]:
    """(sentence, key) pairs: the key compares sentences without case, punctuation or the
    **Why:** / **How to apply:** labels, so a body can be checked for what it says twice."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", _LABELS.sub("", text)):
        out.append((sentence.strip(), " ".join(re.findall(r"\w+", sentence.lower()))))
    return out
