"""A memory's path globs matched in time linear in the glob and the path (issue 52): a glob a memory, a
teammate or a repository wrote is never turned into a backtracking regex (`*/**/*/**/...` once held the
daemon 13.6 s). The set of path positions each part of the glob can reach is kept as one integer's bits.

Semantics (those of `fnmatch.translate`, as memoryd always read a glob): a relative glob matches at the
root or under any folder, `/x` only at the root; a dir or `dir/**` holds everything under it; `a/**/b`
also matches `a/b`; `*` is any run of characters (`/` included), `?` one, `[...]` as fnmatch reads it.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import lru_cache

from memoryd.base import limits

_STAR = "*"  # any run of characters, `/` included
_DIRS = "/**/"  # a `/`, then nothing or any run ending in `/`
WILDCARDS = frozenset("*?[{")  # what makes a glob's part more than a literal name (`{a,b}` as a brace list)


def is_wild(text: str) -> bool:
    """Does this glob, or part of one, hold a wildcard (it is not one literal path)?"""
    return not WILDCARDS.isdisjoint(text)


@dataclass(frozen=True)
class _One:
    """One character: any (`?`) or one a `[...]` class holds (its fnmatch regex, run on one character)."""

    holds: re.Pattern[str] | None


_Token = str | _One  # a literal run, _STAR, _DIRS or one character


@dataclass(frozen=True)
class _PathFacts:
    """What every glob reads of one path, built once per path: its length, each character's positions."""

    n: int
    at: dict[str, int]  # character -> bit p set where path[p] is that character
    slashes: int


@lru_cache(maxsize=limits.GLOB_PATHS_CACHED)
def _facts(path: str) -> _PathFacts:
    at: dict[str, int] = {}
    for p, ch in enumerate(path):
        at[ch] = at.get(ch, 0) | (1 << p)
    return _PathFacts(n=len(path), at=at, slashes=at.get("/", 0))


def _tokens(part: str) -> list[_Token]:
    """A glob part as fnmatch reads it, literal characters joined into runs and `**` read as `*`."""
    out: list[_Token] = []
    i, n = 0, len(part)
    while i < n:
        c, i = part[i], i + 1
        if c == "*":
            if not out or out[-1] is not _STAR:
                out.append(_STAR)
            continue
        if c == "?":
            out.append(_One(None))
            continue
        if c == "[":
            j = i + (i < n and part[i] == "!")
            j += j < n and part[j] == "]"
            while j < n and part[j] != "]":
                j += 1
            if j < n:  # a class; unclosed, `[` is a literal (fnmatch's reading)
                out.append(_One(re.compile(fnmatch.translate(part[i - 1 : j + 1]))))
                i = j + 1
                continue
        if out and isinstance(out[-1], str) and out[-1] not in (_STAR, _DIRS):
            out[-1] += c
        else:
            out.append(c)
    return out


class Glob:
    """One glob compiled once into its tokens; `matches` walks them over a path's position sets."""

    __slots__ = ("anywhere", "tokens", "literals", "min_len")

    def __init__(self, glob: str) -> None:
        g = glob.rstrip("/")
        self.anywhere = not g.startswith("/")
        g = g.lstrip("/").removeprefix("**/").removesuffix("/**")
        tokens: list[_Token] = []
        for k, part in enumerate(g.split(_DIRS)):
            tokens += ([_DIRS] if k else []) + _tokens(part)
        self.tokens = tuple(tokens)
        runs = (t for t in tokens if isinstance(t, str) and t not in (_STAR, _DIRS))
        self.literals = tuple(sorted(runs, key=len, reverse=True))  # the longest first: it rules most paths out
        self.min_len = sum(1 if t is _DIRS or isinstance(t, _One) else len(t) for t in tokens if t is not _STAR)

    def matches(self, path: str) -> bool:
        """Does a project-relative path match: each literal run is first looked for as a substring."""
        if len(path) < self.min_len:
            return False
        for lit in self.literals:
            if lit not in path:
                return False
        f = _facts(path)
        full = (1 << (f.n + 1)) - 1  # positions 0..n: before each character, and the end
        reach = 1 | (f.slashes << 1) if self.anywhere else 1
        for t in self.tokens:
            if t is _STAR:
                reach = full & ~((reach & -reach) - 1)
            elif t is _DIRS:
                at_slash = reach & f.slashes
                reach = (f.slashes & ~((at_slash & -at_slash) - 1)) << 1 if at_slash else 0
            elif isinstance(t, _One):
                reach = (reach & _one_mask(t, path, f)) << 1
            else:
                reach = (reach & _run_starts(t, f)) << len(t)
            if not reach:
                return False
        return bool((reach >> f.n) & 1 or reach & f.slashes)  # at the end, or before a `/` (a dir holds its files)


def _run_starts(run: str, f: _PathFacts) -> int:
    """The positions where a literal run starts, as bits."""
    starts = -1
    for k, ch in enumerate(run):
        starts &= f.at.get(ch, 0) >> k
        if not starts:
            return 0
    return starts


def _one_mask(t: _One, path: str, f: _PathFacts) -> int:
    """The positions of the characters one `?` or `[...]` accepts, as bits."""
    if t.holds is None:
        return (1 << f.n) - 1
    mask = 0
    for ch, bits in f.at.items():
        if t.holds.match(ch):
            mask |= bits
    return mask


@lru_cache(maxsize=limits.GLOBS_CACHED)
def compile_glob(glob: str) -> Glob:
    """A glob's matcher, built once per glob (a store of 10,000 globs compiles each once)."""
    return Glob(glob)


def glob_matches(glob: str, path: str) -> bool:
    """A project-relative path against a glob, in time linear in both (see the module's docstring)."""
    return compile_glob(glob).matches(path)
