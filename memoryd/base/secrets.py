"""The one secret check every write path goes through (REST save, extraction, dream), and the
one redaction (`redact_secrets`) every other door uses: notes, job records, logs, model prompts.

The fixed-format rules it runs are in secret_rules.py; here are the credential words, the entropy checks
and redaction. Findings name the kind and the place (field, line, column), never the value, so an error
message or a log line cannot leak what it refused.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memoryd.base.errors import SecretDetected
from memoryd.base.secret_rules import RUN_MIN, all_rules, lowered, rules_may_match


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    field: str
    line: int
    column: int

    def describe(self) -> str:
        return f"{self.kind} in {self.field} at line {self.line}, column {self.column}"


# Benign look-alikes, skipped by the entropy check only: lockfile integrity and other digests, data URIs,
# public keys, Go module sums, UUIDs, and URL paths (a document id is not a credential).
_BENIGN = re.compile(
    r"\b(?:sha(?:1|224|256|384|512)[-:][A-Za-z0-9+/=]{20,}|h1:[A-Za-z0-9+/=]{40,}|data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+"
    r"|ssh-(?:ed25519|rsa|dss)\s+AAAA[A-Za-z0-9+/=]+|ecdsa-sha2-nistp\d+\s+AAAA[A-Za-z0-9+/=]+"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|eyJ[A-Za-z0-9_-]+(?![.\w-]))"
    r"|\bhttps?://[^\s?#]+",
    re.IGNORECASE,
)

# `password = hunter2`, `"api_key": "…"`, `export TOKEN=…`: a credential-named key with a literal value.
_ASSIGNMENT = re.compile(
    r"(?<![a-z0-9_.-])(?P<key>[a-z0-9_.-]*?(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|client[_-]?secret)[a-z0-9_]*)"
    r"['\"]?\s*(?:=|:|:=|=>)\s*(?P<q>['\"]?)(?P<value>[^\s'\",;]{6,})(?P=q)"
)  # matched on the lowercased text
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "key", "token", "pin")
_CREDENTIAL_WORD = re.compile("|".join(_CREDENTIAL_WORDS))
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\*+|x{4,}|\.{3,}|changeme|placeholder|example|dummy|redacted|none|null|true|false|"
    r"os\.environ.*|process\.env.*|getenv.*|env\(.*|settings\..*|config\..*|[a-z_]+\(.*|\{\{.*)$"
)
# "the staging db password is 4jI0SB7A0!94bxuQCxx7": a credential named in prose, then its value.
_PROSE = re.compile(  # matched on the lowercased text
    r"\b(?P<key>password|passphrase|passwd|pwd|secret|api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|pin)s?"
    r"(?:\s+(?:for|of|on|to|in)\s+(?:[\w.@/-]+\s+){0,2}[\w.@/-]+)?(?:\s*[:=]\s*|\s+(?:is|was|are|is set to|was set to"
    r"|reads)\s+)(?:now\s+)?"
    r"(?:(?P<q>[`'\"])(?P<quoted>[^`'\"\n]{6,}?)(?P=q)|(?P<value>[^\s`'\"]{6,}))"
)
# A lowercase passphrase in prose ("… is correcthorsebatterystaple.") unless it reads as an ordinary word.
_ORDINARY_WORD = re.compile(r"(?i)^(?:[a-z]+(?:ly|ed|ing|able|ible|tion|sion|ment|ness|ful|less|ive|ous|al))$")
_TOKENISH = re.compile(r"(?<![A-Za-z0-9=_-])[A-Za-z0-9=_-]{32,}")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")
ENTROPY_LIMIT = 4.3  # bits per character of an unquoted token (random base62 of 32+ chars: ~5.2; hex digests: ≤ 4)
QUOTED_ENTROPY_LIMIT = 4.5  # detect-secrets' own default for quoted base64 strings


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """High-entropy and mixed classes; excludes hex digests (entropy ≤ 4), plain words and
    identifiers built from words (`20240115093000_AddUserPreferencesTableWithIndexes`)."""
    if len(token) < 32 or _entropy(token) < ENTROPY_LIMIT:
        return False
    if sum(len(w) for w in _WORDISH.findall(token)) >= 0.5 * len(token):
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes == 3


@functools.cache
def _quoted_base64() -> re.Pattern[str]:
    """detect-secrets' Base64HighEntropyString: a quoted run of its charset (entropy checked by the caller)."""
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    charset = re.escape(Base64HighEntropyString(limit=QUOTED_ENTROPY_LIMIT).charset)
    return re.compile(r"(['\"])([" + charset + r"]{20,})\1")


def _prose_value(value: str, *, quoted: bool, after: str) -> bool:
    """A value named in prose is credential-like when it mixes letters with digits or symbols
    (hunter2, 4jI0SB7A0!94bx), is quoted, or is one long lowercase run at the end of a clause;
    "in 1Password", "rotated" and "required" are not."""
    if quoted:
        return True
    if re.search(r"[A-Za-z]", value) and re.search(r"[0-9!@#$%^&*+=~_-]", value):
        return True
    return (
        len(value) >= 12 and value.isalpha() and not _ORDINARY_WORD.match(value) and after in ("", ".", ",", ";", "\n")
    )


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def _credential_words(text: str, low: str, add: Callable[[str, int, int], None]) -> None:
    """`password = …` assignments and "the password is …" in prose: found from each credential word
    (one fast literal scan of the lowercased text), then matched there."""
    starts: set[int] = set()
    for word in _CREDENTIAL_WORD.finditer(low):
        start = word.start()
        while start and low[start - 1] in _KEY_CHARS:
            start -= 1
        if start not in starts and (m := _ASSIGNMENT.match(low, start)):  # first: `password=…` is an assignment
            starts.add(start)
            _assignment(text, m, add)
        if m := _PROSE.match(low, word.start()):
            _prose(text, m, add)


def _assignment(text: str, m: re.Match[str], add: Callable[[str, int, int], None]) -> None:
    value = text[m.start("value") : m.end("value")]
    if _PLACEHOLDER.match(value) or value.lower() in {"required", "optional"}:
        return
    key = m.group("key")
    # `token_count: 100000` is not a secret; a token/key value is long and mixes letters and digits.
    token_like = ("token" in key or "key" in key) and not ("pass" in key or "secret" in key or "pwd" in key)
    if token_like and (len(value) < 12 or not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value))):
        return
    add(f"credential assignment ({text[m.start('key') : m.end('key')]})", m.start("value"), m.end("value"))


def _prose(text: str, m: re.Match[str], add: Callable[[str, int, int], None]) -> None:
    group = "quoted" if m.group("quoted") else "value"
    start = m.start(group)
    value = text[start : m.end(group)]
    value = value.rstrip(".,;:!?)") if group == "value" else value
    end = start + len(value)
    if _PLACEHOLDER.match(value) or not _prose_value(value, quoted=bool(m.group("q")), after=text[end : end + 1]):
        return
    add(f"credential in prose ({m.group('key')})", start, end)


# Issue 31: a token split across lines or spaced out passed every rule. Two shapes are joined and the
# fixed-format rules run again on the join (never the entropy checks: a join of words is not a token):
# a run of 4+ short fragments ("g h p _ a 1 …", "ghp_ a1B2 c3D4 …") and a token continued on the next line(s).
_SPACED = re.compile(r"(?<!\S)[A-Za-z0-9_-]{1,8}(?:[ \t]+[A-Za-z0-9_-]{1,8}){3,}(?!\S)")
_WRAPPED = re.compile(r"(?<![A-Za-z0-9_=+/.-])[A-Za-z0-9_=+/.-]{4,}(?:[ \t]*\r?\n[ \t]*[A-Za-z0-9_=+/.-]{4,}(?=\s|$))+")
_WHITESPACE = re.compile(r"\s+")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")


def _split_spans(text: str, add: Callable[[str, int, int], None]) -> None:
    """Fixed-format rules over tokens split by whitespace, each finding mapped back to the original span."""
    rules, triggers = all_rules()
    for m in (*_SPACED.finditer(text), *_WRAPPED.finditer(text)):
        window = m.group(0)
        joined = _WHITESPACE.sub("", window)
        if len(joined) < RUN_MIN or not (_DIGIT.search(joined) and _LETTER.search(joined)):
            continue
        low = lowered(joined)
        if not rules_may_match(joined, low, len(joined)):
            continue
        offsets = [m.start() + i for i, c in enumerate(window) if not c.isspace()]
        present = {t for t in triggers if t in low}
        for kind, pattern, wanted, on_lower in rules:
            if present.isdisjoint(wanted):
                continue
            for found in pattern.finditer(low if on_lower else joined):
                start, end = found.span()
                if not any(window[offsets[start] - m.start() : offsets[end - 1] - m.start()].split()[1:2]):
                    continue  # within one fragment: the main pass judged it
                add(f"{kind} (split by whitespace)", offsets[start], offsets[end - 1] + 1)


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every credential-looking span, non-overlapping, in text order."""
    spans: list[tuple[str, int, int]] = []

    def add(kind: str, start: int, end: int) -> None:
        if any(s <= start < e or start <= s < end for _, s, e in spans):
            return
        spans.append((kind, start, end))

    low = lowered(text)
    # A token is a run of 32+ word characters: text with no whitespace-free stretch that long (most text) skips the
    # scan.
    longest = max(map(len, text.split()), default=0)
    if rules_may_match(text, low, longest):
        rules, triggers = all_rules()
        present = {t for t in triggers if t in low}  # one pass per trigger, not per rule
        for kind, pattern, wanted, on_lower in rules:
            if present.isdisjoint(wanted):
                continue
            for m in pattern.finditer(low if on_lower else text):
                start, end = m.span()
                while start < end and text[start] in " \t\"':=/":  # some patterns match the delimiters around the value
                    start += 1
                while end > start and text[end - 1] in " \t\"'":
                    end -= 1
                add(kind, start, end)
    if longest < len(text):  # before the prose rules, so the whole split token is redacted
        _split_spans(text, add)
    if any(w in low for w in _CREDENTIAL_WORDS):
        _credential_words(text, low, add)
    benign: list[tuple[int, int]] | None = None

    def is_benign(start: int, end: int) -> bool:
        nonlocal benign
        if benign is None:  # only texts with a random-looking token pay for the look-alike scan
            benign = [b.span() for b in _BENIGN.finditer(text)]
        return any(s <= start and end <= e for s, e in benign)

    for m in _TOKENISH.finditer(text) if longest >= 32 else ():
        if _looks_random(m.group(0)) and not is_benign(m.start(), m.end()):
            add("high-entropy token", m.start(), m.end())
    if "'" in text or '"' in text:
        for m in _quoted_base64().finditer(text):
            value = m.group(2)
            if (
                sum(len(w) for w in _WORDISH.findall(value)) < 0.5 * len(value)
                and _entropy(value) > QUOTED_ENTROPY_LIMIT
                and not is_benign(m.start(2), m.end(2))
            ):
                add("high-entropy string", m.start(2), m.end(2))
    spans.sort(key=lambda span: span[1])
    return spans


def find_secrets(text: str, *, field: str = "body") -> list[SecretFinding]:
    """Every credential-looking span in `text`, by kind and position."""
    return [SecretFinding(kind, field, *_position(text, start)) for kind, start, _ in _spans(text)]


# A file name is a slug of short words joined by '-': only a long unbroken run or a credential word
# can carry a secret, so the common name skips the full scan (20,000 names load in ~20 ms, not 1.3 s).
_NAME_SCREEN = re.compile(r"[^-\s]{16,}")


def name_secrets(filename: str) -> list[SecretFinding]:
    """Credential-looking spans in a file name (issue 31: a team file's name reached the remote, MEMORY.md
    and the model's context); the slug's '-' read as spaces too, so `password-is-hunter22` is prose."""
    stem = filename[:-3] if filename.endswith(".md") else filename
    rest = stem.split("_", 1)[-1]  # after a `<type>_` prefix (a '_' before a token hides its word boundary)
    if _NAME_SCREEN.search(rest) is None and not any(w in stem.lower() for w in _CREDENTIAL_WORDS):
        return []
    for text in dict.fromkeys((stem, rest, rest.replace("-", " "))):
        if findings := find_secrets(text, field="file name"):
            return findings
    return []


def redact_name(filename: str) -> str:
    """A file name fit for a report or a state file: one carrying a secret keeps only its type prefix."""
    if not (findings := name_secrets(filename)):
        return filename
    return (
        f"{filename.split('_', 1)[0] + '_' if '_' in filename else ''}{REDACTED} ({findings[0].kind} in the file "
        "name).md"
    )


def check_no_secrets(fields: dict[str, str]) -> None:
    """Raise SecretDetected naming kind and place when any field holds a credential."""
    findings = [f for name, value in fields.items() for f in find_secrets(value or "", field=name)]
    if findings:
        where = "; ".join(f.describe() for f in findings[:5])
        raise SecretDetected(
            f"refused: the memory contains what looks like a secret ({where}). "
            "Remove the credential (keep a pointer such as 'the key is in 1Password, item X') and save again."
        )


REDACTED = "[secret removed]"
SECRET_SCAN_MARGIN = 8 * 1024  # past a cut, what a secret may still span (a PEM key block is ~3.3 KB)


def redact_secrets(text: str) -> str:
    """Replace each credential-looking span with a marker. The one redaction every door uses
    where dropping beats refusing: session notes, job records, logs, text sent to a model."""
    if not text:
        return text
    spans = _spans(text)
    if not spans:
        return text
    out, last = [], 0
    for _, start, end in spans:
        out.append(text[last:start])
        out.append(REDACTED)
        last = end
    out.append(text[last:])
    return "".join(out)


def secret_parts(text: str) -> list[str]:
    """The credential-looking spans of `text` themselves: a word matched inside one (the recall log's
    `why.terms`, issue 41) is as secret as the span it came from."""
    return [text[start:end] for _, start, end in _spans(text)] if text else []


def redact_prefix(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, redacted BEFORE the cut (a secret straddling it is found
    whole): the scan sees `limit` plus SECRET_SCAN_MARGIN characters, never an unbounded text."""
    return redact_secrets(text[: limit + SECRET_SCAN_MARGIN])[:limit]


def redact_record(value: Any) -> Any:
    """`redact_secrets` over every string inside a JSON-shaped record (job and run records)."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [redact_record(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_record(v) for k, v in value.items()}
    return value
