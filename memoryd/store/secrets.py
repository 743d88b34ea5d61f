"""The one secret check every write path goes through (REST save, extraction, dream), and the
one redaction (`redact_secrets`) every other door uses: notes, job records, logs, model prompts.

Findings name the kind and the place (field, line, column), never the value, so an error
message or a log line cannot leak what it refused.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memoryd.errors import SecretDetected


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    field: str
    line: int
    column: int

    def describe(self) -> str:
        return f"{self.kind} in {self.field} at line {self.line}, column {self.column}"


_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b")),
    ("AWS secret access key", re.compile(r"(?i)aws_?secret_?access_?key\s*[=:]\s*['\"]?[A-Za-z0-9/+=]{40}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Google OAuth secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),
    ("Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("credentials in URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s/@]{3,}@[^\s/]+")),
)

# `password = hunter2`, `"api_key": "…"`, `export TOKEN=…`: a credential-named key with a literal value.
_ASSIGNMENT = re.compile(
    r"(?i)\b(?P<key>[a-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|client[_-]?secret)[a-z0-9_]*)"
    r"['\"]?\s*(?:=|:|:=|=>)\s*(?P<q>['\"]?)(?P<value>[^\s'\",;]{6,})(?P=q)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\*+|x{4,}|\.{3,}|changeme|placeholder|example|dummy|redacted|none|null|true|false|"
    r"os\.environ.*|process\.env.*|getenv.*|env\(.*|settings\..*|config\..*|[a-z_]+\(.*)$"
)
# "the staging db password is 4jI0SB7A0!94bxuQCxx7": a credential named in prose, then its value.
_PROSE = re.compile(
    r"(?i)\b(?P<key>password|passphrase|passwd|pwd|secret|api[ _-]?key|access[ _-]?token|auth[ _-]?token|token)s?"
    r"(?:\s+(?:for|of|on|to)\s+[\w.@/-]+)?\s+(?:is|was|are|=|:)\s+(?:now\s+)?(?P<q>[`'\"]?)(?P<value>[^\s`'\"]{6,})(?P=q)"
)
_TOKENISH = re.compile(r"[A-Za-z0-9=_-]{32,}")


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """High-entropy and mixed classes; excludes hex digests (entropy ≤ 4) and plain words."""
    if len(token) < 32 or _entropy(token) < 4.3:
        return False
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes == 3


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


# Lowercase substrings without which a pattern cannot match: checked with `in` (memchr-fast) so
# the regexes run only on the rare text that could hold a secret (transcripts are mostly not).
_PATTERN_HINTS: dict[str, tuple[str, ...]] = {
    "private key block": ("-----begin",), "Anthropic API key": ("sk-ant-",), "OpenAI API key": ("sk-",),
    "AWS access key id": ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"), "AWS secret access key": ("secret",),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), "Slack token": ("xox",), "Slack webhook": ("hooks.slack.com",), "Google API key": ("aiza",),
    "Google OAuth secret": ("gocspx-",), "Stripe key": ("_live_", "_test_"), "JSON web token": ("eyj",), "credentials in URL": ("://",),
}
_KEY_HINTS = ("pass", "pwd", "secret", "key", "token")
_ALL_HINTS = tuple(dict.fromkeys([h for hints in _PATTERN_HINTS.values() for h in hints] + list(_KEY_HINTS)))


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every credential-looking span, non-overlapping, in text order."""
    spans: list[tuple[str, int, int]] = []
    lowered = text.lower()
    present = {hint for hint in _ALL_HINTS if hint in lowered}
    # A token is one run of 32+ word characters: only text with a whitespace-free stretch that long can hold one.
    long_stretch = max(map(len, text.split()), default=0) >= 32
    if not present and not long_stretch:
        return spans  # the common case: most text cannot hold a secret

    def add(kind: str, start: int, end: int) -> None:
        if any(s <= start < e or start <= s < end for _, s, e in spans):
            return
        spans.append((kind, start, end))

    for kind, pattern in _PATTERNS:
        if not present.isdisjoint(_PATTERN_HINTS[kind]):
            for m in pattern.finditer(text):
                add(kind, m.start(), m.end())
    keyed = not present.isdisjoint(_KEY_HINTS)
    for m in _ASSIGNMENT.finditer(text) if keyed else ():
        value = m.group("value")
        if _PLACEHOLDER.match(value) or value.lower() in {"required", "optional"}:
            continue
        key = m.group("key").lower()
        if ("token" in key or "key" in key) and not ("pass" in key or "secret" in key or "pwd" in key):
            # `token_count: 100000` is not a secret; a token/key value is long and mixes letters and digits.
            if len(value) < 12 or not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value)):
                continue
        add(f"credential assignment ({m.group('key')})", m.start("value"), m.end("value"))
    for m in _PROSE.finditer(text) if keyed else ():
        value = m.group("value").rstrip(".,;:!?)")
        # A value is credential-like when it mixes classes (hunter2, 4jI0SB7A0!94bx); "in 1Password" or "rotated" are not.
        if _PLACEHOLDER.match(value) or not re.search(r"[0-9]", value) or not re.search(r"[A-Za-z]", value):
            continue
        add(f"credential in prose ({m.group('key').lower()})", m.start("value"), m.start("value") + len(value))
    for m in _TOKENISH.finditer(text) if long_stretch else ():
        if _looks_random(m.group(0)):
            add("high-entropy token", m.start(), m.end())
    spans.sort(key=lambda span: span[1])
    return spans


def find_secrets(text: str, *, field: str = "body") -> list[SecretFinding]:
    """Every credential-looking span in `text`, by kind and position."""
    return [SecretFinding(kind, field, *_position(text, start)) for kind, start, _ in _spans(text)]


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


def redact_record(value: Any) -> Any:
    """`redact_secrets` over every string inside a JSON-shaped record (job and run records)."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [redact_record(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_record(v) for k, v in value.items()}
    return value
