"""The fixed-format secret rules: memoryd's own token patterns and detect-secrets' regex plugins, each with
the trigger strings that let it run, and the screen that lets most text skip them all (`rules_may_match`)."""

from __future__ import annotations

import functools
import re
from typing import Any

# memoryd's own patterns: what detect-secrets 1.5 lacks or matches too narrowly (newer token formats,
# Twilio keys in any case, Azure keys of any length, webhooks; `Password=…;` in connection strings is a credential
# assignment, found in secrets.py). Each runs only when one of its trigger strings is in the lowercased text (the
# check runs on every save and model prompt);
# the patterns marked `low` match the lowercased text (same offsets), which is ~10x faster than (?i).
Rule = tuple[str, re.Pattern[str], tuple[str, ...], bool]
_SERVICE_PREFIXES = (
    "shpat_",
    "shpca_",
    "shppa_",
    "shpss_",
    "dop_v1_",
    "hvs.",
    "lin_api_",
    "dapi",
    "age-secret-key-",
    "atatt3",
    "pmak-",
    "glsa_",
    "sbp_",
    "r8_",
    "gsk_",
    "ntn_",
    "sntrys_",
    "dp.st.",
    "dp.ct.",
    "dp.sa.",
    "dp.scrt.",
    "tskey-",
    "sk.eyj",
    "sg.",
    "sq0atp-",
    "sq0csp-",
    "aaaa",
)
_GITLAB_PREFIXES = (
    "glpat-",
    "gldt-",
    "glft-",
    "glsoat-",
    "glrt-",
    "glcbt-",
    "glimt-",
    "glptt-",
    "gloas-",
    "glsa-",
    "glagent-",
    "gr1348941",
)
_PATTERNS: tuple[Rule, ...] = (
    (
        "private key block",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("private key",),
        False,
    ),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), ("sk-ant-",), False),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"), ("sk-",), False),
    (
        "AWS access key id",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
        False,
    ),
    (
        "AWS secret access key",
        re.compile(r"aws_?secret_?access_?key\s*[=:]\s*['\"]?[a-z0-9/+=]{40}"),
        ("secret",),
        True,
    ),
    (
        "GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        False,
    ),
    (
        "GitLab token",
        re.compile(r"\bgl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|oas|sa)-[A-Za-z0-9_-]{20,}"),
        _GITLAB_PREFIXES,
        False,
    ),
    ("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), ("hf_",), False),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",), False),
    ("PyPI token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"), ("pypi-",), False),
    (
        "Azure storage key",
        re.compile(r"\b(?:accountkey|sharedaccesskey|sig)=[a-z0-9+/%]{30,}={0,2}"),
        ("accountkey=", "sharedaccesskey=", "sig="),
        True,
    ),
    ("Twilio key", re.compile(r"(?:SK|AC)(?<![A-Za-z0-9]..)[0-9a-fA-F]{32}\b"), ("sk", "ac"), False),
    (
        "Discord token",
        re.compile(r"[MNO](?<![A-Za-z\d_-].)[A-Za-z\d_-]{23,27}\.[A-Za-z\d_-]{6}\.[A-Za-z\d_-]{27,40}"),
        (".",),
        False,
    ),
    (
        "Discord webhook",
        re.compile(r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{30,}"),
        ("discord",),
        False,
    ),
    (
        "Slack token",
        re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{20,}"),
        ("xox", "xapp-"),
        False,
    ),
    (
        "Slack webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/]{20,}"),
        ("hooks.slack.com",),
        False,
    ),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ("aiza",), False),
    ("Google OAuth secret", re.compile(r"\bGOCSPX-[A-Za-z0-9_-]{20,}"), ("gocspx-",), False),
    (
        "Stripe key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}|\bwhsec_[A-Za-z0-9]{24,}"),
        ("k_live_", "k_test_", "whsec_"),
        False,
    ),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ("eyj",), False),
    ("credentials in URL", re.compile(r"://(?<=[a-z0-9+.-]://)[^\s:/@]+:[^\s/@]{3,}@[^\s/]+"), ("://",), False),
    (
        "service token",
        re.compile(
            r"\b(?:shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|dop_v1_[a-f0-9]{64}|hvs\.[A-Za-z0-9_-]{24,}|lin_api_[A-Za-z0-9]{40}|dapi[a-f0-9]{32}"
            r"|AGE-SECRET-KEY-1[0-9A-Z]{58}|ATATT3[A-Za-z0-9_=-]{40,}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}"
            r"|sbp_[a-f0-9]{40}|r8_[A-Za-z0-9]{37}|gsk_[A-Za-z0-9]{48,}|ntn_[A-Za-z0-9]{40,}|sntrys_[A-Za-z0-9+/=_-]{40,}"
            r"|dp\.(?:st|ct|sa|scrt)\.[A-Za-z0-9_-]{40,}|tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,}|sk\.eyJ[A-Za-z0-9_.-]{40,}"
            r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}|AAAA[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{100,})"
        ),
        _SERVICE_PREFIXES,
        False,
    ),
)


@functools.cache
def _detect_secrets_patterns() -> tuple[Rule, ...]:
    """detect-secrets' regex plugins, each with its trigger strings (imported on first use: ~0.2 s).
    Left out: keyword, hex-entropy and public-IP (they flag commit SHAs, IPs and `token_count = 1000`)
    and Artifactory (`AP` + 9 letters flags upper-case identifiers)."""
    from detect_secrets.plugins import (
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    plugins: tuple[tuple[Any, tuple[str, ...]], ...] = (
        (aws.AWSKeyDetector, ("akia", "asia", "abia", "acca", "a3t", "aws")),
        (azure_storage_key.AzureStorageKeyDetector, ("accountkey",)),
        (basic_auth.BasicAuthDetector, ("://",)),
        (cloudant.CloudantDetector, ("cloudant", "cl_", "cl-")),
        (discord.DiscordBotTokenDetector, (".",)),
        (github_token.GitHubTokenDetector, ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
        (gitlab_token.GitLabTokenDetector, _GITLAB_PREFIXES),
        (ibm_cloud_iam.IbmCloudIamDetector, ("ibm",)),
        (ibm_cos_hmac.IbmCosHmacDetector, ("cos_", "cos-", "cossecret", "cosaccess", "coshmac")),
        (jwt.JwtTokenDetector, ("eyj",)),
        (mailchimp.MailchimpDetector, ("-us",)),
        (npm.NpmDetector, ("_authtoken",)),
        (openai.OpenAIDetector, ("t3blbkfj",)),
        (private_key.PrivateKeyDetector, ("private", "putty")),
        (pypi_token.PypiTokenDetector, ("pypi-",)),
        (sendgrid.SendGridDetector, ("sg.",)),
        (slack.SlackDetector, ("xox", "hooks.slack.com")),
        (softlayer.SoftlayerDetector, ("softlayer", "sl_", "sl-")),
        (square_oauth.SquareOAuthDetector, ("sq0csp-",)),
        (stripe.StripeDetector, ("k_live_",)),
        (telegram_token.TelegramBotTokenDetector, (":",)),
        (twilio.TwilioKeyDetector, ("ac", "sk")),
    )
    return tuple(
        (plugin.secret_type, regex, triggers, False) for plugin, triggers in plugins for regex in plugin().denylist
    )


# The screen that lets most texts skip the rules: every rule above (ours and detect-secrets') matches either a
# run of 20+ of these characters (the key material of every fixed-format token) or text holding one of
# _UNBOUNDED_TRIGGERS (rules whose value may be short or broken by '/', '+', '.', '%', '\\': URLs with
# credentials, webhooks, JWTs, assignments named aws/secret/accountkey/sig, private key blocks, Slack xox-,
# npm _authToken, Sentry and Square tokens). Adding a rule means checking it against this screen
# (tests/test_security.py checks each rule's own examples).
_RUN = re.compile(r"[A-Za-z0-9_=-]{20}")
RUN_MIN = 20
_UNBOUNDED_TRIGGERS = (
    "://",
    "private",
    "putty",
    "secret",
    "accountkey",
    "sharedaccesskey",
    "sig=",
    "xox",
    "hooks.slack.com",
    "eyj",
    "sntrys_",
    "aws",
    "_authtoken",
    "sq0csp-",
)


def rules_may_match(text: str, low: str, longest: int) -> bool:
    """False only when no rule can match `text` (see _RUN): the common prose and code line skips them all."""
    return (longest >= RUN_MIN and _RUN.search(text) is not None) or any(t in low for t in _UNBOUNDED_TRIGGERS)


@functools.cache
def all_rules() -> tuple[tuple[Rule, ...], frozenset[str]]:
    """Every rule (ours, then detect-secrets'), and the union of their trigger strings."""
    rules = (*_PATTERNS, *_detect_secrets_patterns())
    return rules, frozenset(t for _, _, triggers, _ in rules for t in triggers)


def lowered(text: str) -> str:
    """`text.lower()` with the same offsets (the few characters whose lower case is longer keep their case)."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
