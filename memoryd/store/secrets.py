"""The one secret check every write path goes through (REST save, extraction, dream), and the
one redaction (`redact_secrets`) every other door uses: notes, job records, logs, model prompts.

Findings name the kind and the place (field, line, column), never the value, so an error
message or a log line cannot leak what it refused.
"""

from __future__ import annotations

import functools
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


# memoryd's own patterns: what detect-secrets 1.5 lacks or matches too narrowly (newer token formats,
# Twilio keys in any case, Azure keys of any length, connection strings, webhooks).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b")),
    ("AWS secret access key", re.compile(r"(?i)aws_?secret_?access_?key\s*[=:]\s*['\"]?[A-Za-z0-9/+=]{40}")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("GitLab token", re.compile(r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas|sa)-[A-Za-z0-9_-]{20,}")),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("PyPI token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}")),
    ("Azure storage key", re.compile(r"(?i)\b(?:AccountKey|SharedAccessKey|sig)=[A-Za-z0-9+/%]{30,}={0,2}")),
    ("Twilio key", re.compile(r"\b(?:SK|AC)[0-9a-fA-F]{32}\b")),
    ("Discord token", re.compile(r"\b[MNO][A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}")),
    ("Discord webhook", re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}")),
    ("Slack token", re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{20,}")),
    ("Slack webhook", re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/]{20,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("Google OAuth secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}")),
    ("Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|\bwhsec_[A-Za-z0-9]{24,}")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("credentials in URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s/@]{3,}@[^\s/]+")),
    ("service token", re.compile(
        r"\b(?:shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dop_v1_[a-f0-9]{64}|hvs\.[A-Za-z0-9_-]{24,}|lin_api_[A-Za-z0-9]{40}|dapi[a-f0-9]{32}"
        r"|AGE-SECRET-KEY-1[0-9A-Z]{58}|ATATT3[A-Za-z0-9_=-]{40,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"
        r"|sbp_[a-f0-9]{40}|r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{48,}|ntn_[A-Za-z0-9]{40,}|sntrys_[A-Za-z0-9+/=_-]{40,}"
        r"|dp\.(?:st|ct|sa|scrt)\.[A-Za-z0-9_-]{40,}|tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}|sk\.eyJ[A-Za-z0-9_.-]{40,}"
        r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|AAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{100,})"
    )),
    ("connection string password", re.compile(r"(?i)(?<![\w-])(?:password|pwd)=(?!\$|\{|<)[^;\s'\"]{4,}(?=;|\s|$|['\"])")),
)
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
    r"(?i)\b(?P<key>[a-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|client[_-]?secret)[a-z0-9_]*)"
    r"['\"]?\s*(?:=|:|:=|=>)\s*(?P<q>['\"]?)(?P<value>[^\s'\",;]{6,})(?P=q)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\*+|x{4,}|\.{3,}|changeme|placeholder|example|dummy|redacted|none|null|true|false|"
    r"os\.environ.*|process\.env.*|getenv.*|env\(.*|settings\..*|config\..*|[a-z_]+\(.*|\{\{.*)$"
)
# "the staging db password is 4jI0SB7A0!94bxuQCxx7": a credential named in prose, then its value.
_PROSE = re.compile(
    r"(?i)\b(?P<key>password|passphrase|passwd|pwd|secret|api[ _-]?key|access[ _-]?token|auth[ _-]?token|token|pin)s?"
    r"(?:\s+(?:for|of|on|to|in)\s+(?:[\w.@/-]+\s+){0,2}[\w.@/-]+)?(?:\s*[:=]\s*|\s+(?:is|was|are|is set to|was set to|reads)\s+)(?:now\s+)?"
    r"(?:(?P<q>[`'\"])(?P<quoted>[^`'\"\n]{6,}?)(?P=q)|(?P<value>[^\s`'\"]{6,}))"
)
# A lowercase passphrase in prose ("… is correcthorsebatterystaple.") unless it reads as an ordinary word.
_ORDINARY_WORD = re.compile(r"(?i)^(?:[a-z]+(?:ly|ed|ing|able|ible|tion|sion|ment|ness|ful|less|ive|ous|al))$")
_TOKENISH = re.compile(r"[A-Za-z0-9=_-]{32,}")
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
def _detect_secrets_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """detect-secrets' regex plugins (imported on first use: ~0.2 s). Its keyword, hex-entropy and
    public-IP plugins are left out: they flag commit SHAs, IPs and `token_count = 1000`."""
    from detect_secrets.plugins import (
        artifactory, aws, azure_storage_key, basic_auth, cloudant, discord, github_token, gitlab_token, ibm_cloud_iam,
        ibm_cos_hmac, jwt, mailchimp, npm, openai, private_key, pypi_token, sendgrid, slack, softlayer, square_oauth,
        stripe, telegram_token, twilio,
    )

    plugins = (
        artifactory.ArtifactoryDetector, aws.AWSKeyDetector, azure_storage_key.AzureStorageKeyDetector, basic_auth.BasicAuthDetector,
        cloudant.CloudantDetector, discord.DiscordBotTokenDetector, github_token.GitHubTokenDetector, gitlab_token.GitLabTokenDetector,
        ibm_cloud_iam.IbmCloudIamDetector, ibm_cos_hmac.IbmCosHmacDetector, jwt.JwtTokenDetector, mailchimp.MailchimpDetector,
        npm.NpmDetector, openai.OpenAIDetector, private_key.PrivateKeyDetector, pypi_token.PypiTokenDetector, sendgrid.SendGridDetector,
        slack.SlackDetector, softlayer.SoftlayerDetector, square_oauth.SquareOAuthDetector, stripe.StripeDetector,
        telegram_token.TelegramBotTokenDetector, twilio.TwilioKeyDetector,
    )
    return tuple((plugin.secret_type, regex) for plugin in plugins for regex in plugin().denylist)


@functools.cache
def _quoted_base64() -> tuple[re.Pattern[str], Any]:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    plugin = Base64HighEntropyString(limit=QUOTED_ENTROPY_LIMIT)
    return re.compile(r"(['\"])([%s]{20,})\1" % re.escape(plugin.charset)), plugin.calculate_shannon_entropy


def _prose_value(value: str, *, quoted: bool, after: str) -> bool:
    """A value named in prose is credential-like when it mixes letters with digits or symbols
    (hunter2, 4jI0SB7A0!94bx), is quoted, or is one long lowercase run at the end of a clause;
    "in 1Password", "rotated" and "required" are not."""
    if quoted:
        return True
    if re.search(r"[A-Za-z]", value) and re.search(r"[0-9!@#$%^&*+=~_-]", value):
        return True
    return len(value) >= 12 and value.isalpha() and not _ORDINARY_WORD.match(value) and after in ("", ".", ",", ";", "\n")


def _position(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def _spans(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every credential-looking span, non-overlapping, in text order."""
    spans: list[tuple[str, int, int]] = []

    def add(kind: str, start: int, end: int) -> None:
        if any(s <= start < e or start <= s < end for _, s, e in spans):
            return
        spans.append((kind, start, end))

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            add(kind, m.start(), m.end())
    for kind, pattern in _detect_secrets_patterns():
        for m in pattern.finditer(text):
            start, end = m.span()
            while start < end and text[start] in " \t\"':=":  # some plugins match the delimiters around the value
                start += 1
            while end > start and text[end - 1] in " \t\"'":
                end -= 1
            add(kind, start, end)
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
    for m in _PROSE.finditer(text):
        group = "quoted" if m.group("quoted") else "value"
        value = m.group(group).rstrip(".,;:!?)") if group == "value" else m.group(group)
        end = m.start(group) + len(value)
        if _PLACEHOLDER.match(value) or not _prose_value(value, quoted=bool(m.group("q")), after=text[end:end + 1]):
            continue
        add(f"credential in prose ({m.group('key').lower()})", m.start(group), end)
    benign = [b.span() for b in _BENIGN.finditer(text)]

    def is_benign(start: int, end: int) -> bool:
        return any(s <= start and end <= e for s, e in benign)

    for m in _TOKENISH.finditer(text):
        if _looks_random(m.group(0)) and not is_benign(m.start(), m.end()):
            add("high-entropy token", m.start(), m.end())
    if "'" in text or '"' in text:
        quoted, entropy = _quoted_base64()
        for m in quoted.finditer(text):
            value = m.group(2)
            if entropy(value) > QUOTED_ENTROPY_LIMIT and not is_benign(m.start(2), m.end(2)) and not _WORDISH.fullmatch(value):
                if sum(len(w) for w in _WORDISH.findall(value)) < 0.5 * len(value):
                    add("high-entropy string", m.start(2), m.end(2))
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
