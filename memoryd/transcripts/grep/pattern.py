"""The grep dialect: the part of regex syntax that ripgrep and Python `re` read the same way.

Matching is per line, on bytes: `.`, `\\w`, `\\d`, `\\s`, `\\b` and case folding are ASCII only.
Accepted: literal characters (non-ASCII ones match their UTF-8 bytes), `.`, `^`, `$`, `|`,
`(...)`, `(?:...)`, a leading `(?i)`, classes `[...]`/`[^...]` of ASCII characters, ranges and
`\\d\\w\\s\\D\\W\\S`, escapes `\\d\\w\\s\\D\\W\\S\\b\\B\\t\\xHH` and a backslash before punctuation,
repeats `* + ? {n} {n,} {n,m}` (lazy `?` allowed). Anything else is refused with a hint, so
both engines always see a pattern they parse alike. This module is our own small parser: no
private CPython internals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryd.base import limits
from memoryd.base.errors import InvalidPattern

_CLASS_ESCAPES = frozenset("dwsDWS")
_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ")
_HEX = frozenset("0123456789abcdefABCDEF")
_HINTS = {
    "n": "a line never holds a newline: search one line at a time",
    "A": "use ^ (start of line)",
    "Z": "use $ (end of line)",
    "z": "use $ (end of line)",
    "u": "write the character itself",
    "U": "write the character itself",
    "N": "write the character itself",
    "p": "Unicode classes differ between the engines: use ASCII classes like [A-Za-z]",
}
# Lines any sane narrow pattern should not all match; a pattern matching all of them is catch-all.
_CATCH_ALL_PROBES = (b"hello world", b"0123456789", b"{}[]();,", b"ZZZ QQQ")


@dataclass(frozen=True)
class Pattern:
    """A validated search pattern. `regex` is the Python bytes regex (MULTILINE, IGNORECASE
    when `ignore_case`), `rg` the same pattern in ripgrep's syntax; `literal` is a byte string
    every matching line holds (lowered when `ignore_case`), or None; `exact` says it is the
    whole pattern."""

    text: str
    regex: re.Pattern[bytes]
    rg: str
    ignore_case: bool
    literal: bytes | None
    exact: bool


def _refuse(text: str, why: str) -> InvalidPattern:
    return InvalidPattern(
        f"q {text!r} {why}; see `memoryd grep --help` for the regex dialect, or search literally (regex=false; no "
        "--regex)."
    )


def _byte(value: int) -> str:
    """One byte in ripgrep's syntax: letters, digits, '_' and space as is, anything else as \\xHH."""
    return chr(value) if value in _PLAIN else f"\\x{value:02x}"


class _Parser:
    """Recursive descent over the dialect; builds ripgrep's pattern and finds the required literal."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def peek(self, n: int = 0) -> str:
        i = self.at + n
        return self.text[i] if i < len(self.text) else ""

    def fail(self, why: str) -> InvalidPattern:
        return _refuse(self.text, f"{why} (at character {self.at + 1})")

    def parse(self) -> tuple[str, bytes | None]:
        rg, literal, _ = self.alternation(top=True)
        if self.at < len(self.text):
            raise self.fail("has an unbalanced ')': escape it as \\)")
        return rg, literal

    def alternation(self, top: bool = False) -> tuple[str, bytes | None, bool]:
        """(rg text, required literal of a plain sequence, holds a repeat)."""
        branches = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            branches.append(self.sequence())
        rg = "|".join(b[0] for b in branches)
        literal = branches[0][1] if len(branches) == 1 else None
        return rg, literal, any(b[2] for b in branches)

    def sequence(self) -> tuple[str, bytes | None, bool]:
        parts: list[str] = []
        best, run = b"", bytearray()
        repeats = False
        while self.peek() not in ("", "|", ")"):
            rg, data, inner_repeat, repeatable = self.atom()
            quantifier = self.quantifier()
            if quantifier:
                if data is not None and len(data) > 1:
                    raise self.fail("repeats a non-ASCII character: group it, as in (?:é)+")
                if not repeatable:
                    raise self.fail("repeats an anchor or a word boundary, which cannot repeat: remove the repeat")
                if inner_repeat and (quantifier[0] in "*+" or "," in quantifier):
                    raise self.fail(
                        "has a repeat inside a repeat such as (a+)+, which can backtrack for ever: remove one"
                    )
                rg = f"(?:{rg}){quantifier}"
                repeats = True
            repeats = repeats or inner_repeat
            parts.append(rg)
            if data is not None and not quantifier:
                run += data
            else:
                best, run = max(best, bytes(run), key=len), bytearray()
        best = max(best, bytes(run), key=len)
        return "".join(parts), best or None, repeats

    def atom(self) -> tuple[str, bytes | None, bool, bool]:
        """(rg text, its bytes when a literal character, holds a repeat, may be repeated)."""
        c = self.peek()
        self.at += 1
        if c == "(":
            if self.peek() == "?":
                if self.text.startswith("?:", self.at):
                    self.at += 2
                else:
                    raise self.fail("uses a (?...) group: only (?:...) and a leading (?i) are in the dialect")
            rg, _, repeats = self.alternation()
            if self.peek() != ")":
                raise self.fail("has an unclosed '(': close it or escape it as \\(")
            self.at += 1
            return f"(?:{rg})", None, repeats, True
        if c == "[":
            return self.char_class(), None, False, True
        if c == ".":
            return ".", None, False, True
        if c in "^$":
            return c, None, False, False
        if c in "*+?":
            raise self.fail(f"has {c!r} with nothing to repeat: escape it as \\{c}")
        if c == "{":
            raise self.fail("has a '{' that is not a repeat like {2,5}: escape it as \\{")
        if c == "\\":
            return self.escape()
        if c == "\n":
            raise self.fail("holds a newline: a line never holds one")
        data = c.encode("utf-8")
        return "".join(_byte(b) for b in data), data, False, True

    def escape(self) -> tuple[str, bytes | None, bool, bool]:
        c = self.peek()
        self.at += 1
        if c in _CLASS_ESCAPES:
            return "\\" + c, None, False, True
        if c in ("b", "B"):
            return "\\" + c, None, False, False
        byte = self.escaped_byte(c)
        return _byte(byte), bytes((byte,)), False, True

    def escaped_byte(self, c: str) -> int:
        """The byte of `\\t`, `\\xHH` or a backslash before ASCII punctuation (c follows the backslash)."""
        if c == "t":
            return 9
        if c == "x":
            digits = self.text[self.at : self.at + 2]
            if len(digits) != 2 or not set(digits) <= _HEX:
                raise self.fail("has \\x without two hex digits: write \\x41")
            self.at += 2
            return int(digits, 16)
        if c and c.isascii() and not c.isalnum() and c not in "\n":
            return ord(c)
        if not c:
            raise self.fail("ends with a lone backslash: escape it as \\\\")
        hint = _HINTS.get(
            c,
            "backreferences, \\A/\\Z and Unicode escapes are outside the dialect"
            if c.isdigit() or c.isalpha()
            else "escape only ASCII punctuation",
        )
        raise self.fail(f"uses \\{c}, which the transcript search dialect lacks: {hint}")

    def class_item(self) -> tuple[str, int | None]:
        """One member of a class: (rg text, its byte, or None for \\d-like sets)."""
        c = self.peek()
        self.at += 1
        if c == "\\":
            e = self.peek()
            self.at += 1
            if e in _CLASS_ESCAPES:
                return "\\" + e, None
            byte = self.escaped_byte(e)
            return _byte(byte), byte
        if c == "[":
            raise self.fail("has '[' inside a class: escape it as \\[")
        if not c.isascii():
            raise self.fail("has a non-ASCII character in a class: write the choices as (?:é|è)")
        if c == "\n":
            raise self.fail("holds a newline: a line never holds one")
        return _byte(ord(c)), ord(c)

    def char_class(self) -> str:
        out = ["["]
        if self.peek() == "^":
            out.append("^")
            self.at += 1
        first = True
        while True:
            c = self.peek()
            if not c:
                raise self.fail("has an unclosed '[': close it with ] or escape it as \\[")
            if c == "]" and not first:
                self.at += 1
                return "".join(out) + "]"
            if self.text.startswith(("--", "&&", "~~", "||"), self.at):
                raise self.fail(
                    f"has {self.text[self.at : self.at + 2]!r} in a class (set syntax differs between engines): "
                    "escape one of them"
                )
            rg, lo = self.class_item()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                rg_hi, hi = self.class_item()
                if lo is None or hi is None or lo > hi:
                    raise self.fail("has a bad range in a class: write it low-high, like a-z")
                rg = f"{rg}-{rg_hi}"
            out.append(rg)
            first = False

    def quantifier(self) -> str:
        c = self.peek()
        if c in ("*", "+", "?"):
            self.at += 1
            q = c
        elif c == "{":
            m = re.match(r"\{(\d+)(,(\d*))?\}", self.text[self.at :])
            if m is None:
                raise self.fail(
                    "has a '{' that is not a repeat like {2,5}: escape it as \\{ (and write {0,m}, not {,m})"
                )
            lo, hi = int(m.group(1)), int(m.group(3)) if m.group(3) else None
            if max(lo, hi or 0) > limits.GREP_REPEAT_MAX or (hi is not None and hi < lo):
                raise self.fail(
                    f"has a repeat {m.group()} out of range: counts go low to high, up to {limits.GREP_REPEAT_MAX}"
                )
            self.at += m.end()
            q = m.group()
        else:
            return ""
        if self.peek() == "?":
            self.at += 1
            q += "?"
        if self.peek() in ("*", "+", "?", "{"):
            raise self.fail("repeats a repeat (possessive and double repeats are outside the dialect): remove one")
        return q


def compile_pattern(pattern: str, *, regex: bool, ignore_case: bool = False) -> Pattern:
    """Validate a search pattern in the dialect; refuse empty, catch-all and unsafe ones (400)."""
    text = (pattern or "").strip() if not regex else (pattern or "")
    if not text.strip():
        raise InvalidPattern("q is empty: pass a narrow term, e.g. q=ConnectionResetError.")
    if len(text) > limits.GREP_PATTERN_MAX_CHARS:
        raise InvalidPattern(f"q is {len(text)} chars; keep it at most {limits.GREP_PATTERN_MAX_CHARS}.")
    literal: bytes | None
    if not regex:
        if len(text) < limits.GREP_MIN_TERM_CHARS:
            raise InvalidPattern(
                f"q {text!r} is too short to be useful: use a term of at least {limits.GREP_MIN_TERM_CHARS} characters."
            )
        if "\n" in text:
            raise _refuse(text, "holds a newline: a line never holds one")
        data = text.encode("utf-8")
        source, rg, literal, exact = re.escape(data), "".join(_byte(b) for b in data), data, True
    else:
        body = text
        if body.startswith("(?i)"):
            body, ignore_case = body[4:], True
        rg, literal = _Parser(body).parse()
        source, exact = body.encode("utf-8"), False
    flags = re.MULTILINE | (re.IGNORECASE if ignore_case else 0)
    try:
        compiled = re.compile(source, flags)
    except re.error as exc:  # the parser accepts only what Python reads alike: a bug if this is reached
        raise _refuse(text, f"is not a valid regex ({exc})") from None
    if regex:
        if compiled.search(b"") is not None:
            raise InvalidPattern(
                f"q {text!r} matches the empty string, so it matches every line: make it require text, e.g. "
                "'timeout\\w+'."
            )
        if all(compiled.search(p) for p in _CATCH_ALL_PROBES) or any(
            compiled.fullmatch(c) for c in (b"a", b"Z", b"0", b" ")
        ):
            raise InvalidPattern(
                f"q {text!r} is catch-all (it matches almost any text): name a word that occurs in the lines you want."
            )
    if literal is not None and not exact and len(literal) < limits.GREP_MIN_TERM_CHARS:
        literal = None  # too short to narrow the lines down
    if literal is not None and ignore_case:
        literal = literal.lower()
    return Pattern(
        text=text,
        regex=compiled,
        rg=("(?i-u)" if ignore_case else "(?-u)") + rg,
        ignore_case=ignore_case,
        literal=literal,
        exact=exact,
    )
