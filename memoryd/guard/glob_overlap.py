"""Could a shell glob an act names (`sed -i … documents/ga-res-80/*.md`) name a file a protected glob holds? The
shell expands the argument to existing files the guard does not list, so the conservative reading is taken: the
act meets the glob when SOME path could match both. The argument is read as the shell reads it (`*`, `?`, `[…]`
within one folder; a name starting with `.` only when the pattern's part starts with `.`); the protected glob as
memoryd reads every glob (`memoryd.base.globs`: at any depth, `*` across folders, a dir holds its files).

Both are small automata over one alphabet (printable ASCII and one stand-in for any other character); their
product is searched breadth first, so the cost is bounded by the two lengths, never by backtracking.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from memoryd.base import limits
from memoryd.base.globs import Glob

_ALPHABET = [chr(c) for c in range(32, 127)] + ["\u00e9"]  # the last stands for every other character
_ALL = (1 << len(_ALPHABET)) - 1
_SLASH = 1 << _ALPHABET.index("/")
_DOT = 1 << _ALPHABET.index(".")
_GLOB_CHARS = frozenset("*?[")


def has_glob(word: str) -> bool:
    """A word the shell would expand (`*.md`, `file?.txt`, `[ab].ts`)."""
    return any(c in _GLOB_CHARS for c in word)


@dataclass
class _Automaton:
    """States by index: `moves[s]` are (characters as bits, next state), `empty[s]` the states reached on none."""

    moves: list[list[tuple[int, int]]] = field(default_factory=list)
    empty: list[list[int]] = field(default_factory=list)
    accept: int = -1

    def state(self) -> int:
        self.moves.append([])
        self.empty.append([])
        return len(self.moves) - 1

    def move(self, a: int, bits: int, b: int) -> None:
        self.moves[a].append((bits, b))

    def skip(self, a: int, b: int) -> None:
        self.empty[a].append(b)

    def closure(self, s: int) -> frozenset[int]:
        seen, todo = {s}, [s]
        while todo:
            for t in self.empty[todo.pop()]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        return frozenset(seen)


def _bits(ch: str) -> int:
    return 1 << (_ALPHABET.index(ch) if ch in _ALPHABET else len(_ALPHABET) - 1)


def _class_bits(bracket: str) -> int:
    rx = re.compile(fnmatch.translate(bracket))
    return sum(1 << i for i, ch in enumerate(_ALPHABET) if rx.match(ch))


@lru_cache(maxsize=256)
def _protected(glob: str) -> _Automaton:
    """A memory's glob as memoryd.base.globs matches it."""
    g = Glob(glob)
    a = _Automaton()
    start = cur = a.state()
    if g.anywhere:  # at the root or under any folder
        under, body = a.state(), a.state()
        a.skip(start, body)
        a.skip(start, under)
        a.move(under, _ALL, under)
        a.move(under, _SLASH, body)
        cur = body
    for k, t in enumerate(g.tokens):
        if t == "*" and k and g.tokens[k - 1] == "*":
            continue  # a second star in a row matches nothing the first does not
        nxt = a.state()
        if t == "*":
            a.move(cur, _ALL, cur)
            a.skip(cur, nxt)
        elif t == "/**/":
            deeper = a.state()
            a.move(cur, _SLASH, deeper)
            a.skip(deeper, nxt)
            a.move(deeper, _ALL, deeper)
            a.move(deeper, _SLASH, nxt)
        elif isinstance(t, str):
            for ch in t[:-1]:
                step = a.state()
                a.move(cur, _bits(ch), step)
                cur = step
            a.move(cur, _bits(t[-1]), nxt)
        else:
            a.move(cur, _ALL if t.holds is None else _class_bits(t.holds.pattern), nxt)
        cur = nxt
    end, files = a.state(), a.state()
    a.skip(cur, end)
    a.move(cur, _SLASH, files)  # a dir holds everything under it
    a.move(files, _ALL, files)
    a.skip(files, end)
    a.accept = end
    return a


def _pattern_tokens(part: str) -> list[tuple[str, int]]:
    """One folder of a shell glob: ("*", bits) any run, ("1", bits) one character."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(part):
        c = part[i]
        if c == "*":
            if not out or out[-1][0] != "*":  # `**` is `*` to the shell: one run, however many stars spell it
                out.append(("*", _ALL & ~_SLASH))
        elif c == "?":
            out.append(("1", _ALL & ~_SLASH))
        elif c == "[" and (j := part.find("]", i + 2)) > 0:
            out.append(("1", _class_bits(part[i : j + 1]) & ~_SLASH))
            i = j
        else:
            out.append(("1", _bits(c)))
        i += 1
    return out


@lru_cache(maxsize=256)
def _argument(word: str) -> _Automaton:
    """A shell glob argument as the shell expands it, relative to the project."""
    a = _Automaton()
    cur = a.state()
    for k, part in enumerate(word.removeprefix("./").split("/")):
        if k:
            nxt = a.state()
            a.move(cur, _SLASH, nxt)
            cur = nxt
        hidden_ok = not part or part[0] not in _GLOB_CHARS  # `*` never names `.env`; `.env*` may
        first: int | None = cur  # nothing of this folder read yet: a `.` only if the pattern spells it
        later: int | None = None  # some of it read
        for kind, bits in _pattern_tokens(part):
            lead = bits if hidden_ok else bits & ~_DOT
            after = a.state()
            if kind == "*":
                run, still_first = a.state(), a.state() if first is not None else None
                a.move(run, bits, run)
                a.skip(run, after)
                if first is not None and still_first is not None:
                    a.skip(first, still_first)
                    a.move(first, lead, run)
                if later is not None:
                    a.skip(later, after)
                    a.move(later, bits, run)
                first = still_first
            else:
                if first is not None:
                    a.move(first, lead, after)
                if later is not None:
                    a.move(later, bits, after)
                first = None
            later = after
        end = a.state()
        for s in (first, later):
            if s is not None:
                a.skip(s, end)
        cur = end
    a.accept = cur
    return a


def overlaps(word: str, glob: str) -> bool:
    """Could the shell glob `word` name a path that `glob` holds? Past `limits.GLOB_OVERLAP_MAX_PAIRS` pairs of
    states (only an argument of thousands of wildcards gets there) the conservative answer: it could."""
    arg, prot = _argument(word), _protected(glob)
    start = (0, 0)
    seen, todo = {start}, deque([start])
    while todo:
        if len(seen) > limits.GLOB_OVERLAP_MAX_PAIRS:
            return True
        sa, sp = todo.popleft()
        ca, cp = arg.closure(sa), prot.closure(sp)
        if arg.accept in ca and prot.accept in cp:
            return True
        for x in ca:
            for bits_a, ta in arg.moves[x]:
                for y in cp:
                    for bits_p, tp in prot.moves[y]:
                        if bits_a & bits_p and (ta, tp) not in seen:
                            seen.add((ta, tp))
                            todo.append((ta, tp))
    return False
