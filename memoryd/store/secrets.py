"""The one secret check every write path goes through (REST save, extraction, dream).

Findings name the kind and the place (field, line, column), never the value, so an error
message or a log line cannot leak what it refused.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

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


def find_secrets(text: str, *, field: str = "body") -> list[SecretFinding]:
    """Every credential-looking span in `text`, by kind and position."""
    findings: list[SecretFinding] = []
    covered: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int) -> None:
        if any(s <= start < e for s, e in covered):
            return
        covered.append((start, end))
        findings.append(SecretFinding(kind, field, *_position(text, start)))

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            add(kind, m.start(), m.end())
    for m in _ASSIGNMENT.finditer(text):
        value = m.group("value")
        if _PLACEHOLDER.match(value) or value.lower() in {"required", "optional"}:
            continue
        key = m.group("key").lower()
        if ("token" in key or "key" in key) and not ("pass" in key or "secret" in key or "pwd" in key):
            # `token_count: 100000` is not a secret; a token/key value is long and mixes letters and digits.
            if len(value) < 12 or not (re.search(r"[A-Za-z]", value) and re.search(r"[0-9]", value)):
                continue
        add(f"credential assignment ({m.group('key')})", m.start("value"), m.end("value"))
    for m in _TOKENISH.finditer(text):
        if _looks_random(m.group(0)):
            add("high-entropy token", m.start(), m.end())
    findings.sort(key=lambda f: (f.line, f.column))
    return findings


def check_no_secrets(fields: dict[str, str]) -> None:
    """Raise SecretDetected naming kind and place when any field holds a credential."""
    findings = [f for name, value in fields.items() for f in find_secrets(value or "", field=name)]
    if findings:
        where = "; ".join(f.describe() for f in findings[:5])
        raise SecretDetected(
            f"refused: the memory contains what looks like a secret ({where}). "
            "Remove the credential (keep a pointer such as 'the key is in 1Password, item X') and save again."
        )


def redact_secrets(text: str) -> str:
    """Replace each finding's line with a marker; used where dropping is better than refusing."""
    findings = find_secrets(text)
    if not findings:
        return text
    bad = {f.line for f in findings}
    return "\n".join("[line removed: it held a secret]" if i + 1 in bad else line for i, line in enumerate(text.split("\n")))
