"""The deterministic extractor: explicit requests and standing instructions in the user's
own words ("remember …", "from now on …", "always / never / don't …", "I prefer …",
"I'm a … engineer"), typed, named, with the reason when one is given.

It works on prose only (the parser already removed injected text) and proposes
`Candidate`s; the job decides what to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from memoryd.dates import absolutize_dates, code_spans_kept

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_REASON = re.compile(r"\s*(?:,\s*)?\b(?:because|since|as|so that)\b\s+(.+)$", re.IGNORECASE)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("remember", re.compile(r"^(?:please\s+)?(?:(?:can|could) you\s+)?(?:also\s+)?remember(?:\s+that)?[:,]?\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("remember", re.compile(r"^(?:keep in mind|note for the future|for future reference)(?:\s+that)?[:,]?\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("from_now_on", re.compile(r"^(?:and\s+)?from now on[:,]?\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("from_now_on", re.compile(r"^(?P<fact>.+?)\s+from now on[.!]?$", re.IGNORECASE)),
    ("rule", re.compile(r"^(?:please\s+)?(?P<fact>(?:always|never|don't|do not|stop|avoid)\b.+)$", re.IGNORECASE)),
    ("prefer", re.compile(r"^(?P<fact>I(?:'d| would)? (?:really )?prefer\b.+)$", re.IGNORECASE)),
    ("identity", re.compile(r"^(?P<fact>I(?:'m| am) (?:a|an|the) (?:[\w/+#-]+ ){0,4}(?:engineer|developer|scientist|designer|manager|architect|researcher|analyst|admin|administrator|sre|devops|student|lead|maintainer|founder|cto|ceo)\b.*)$", re.IGNORECASE)),
]

_PROJECT_HINTS = re.compile(r"\b(deadline|freeze|release|launch|due|sprint|milestone|migration|incident|deploy(?:ment)?s?|on[- ]call|\d{4}-\d{2}-\d{2})\b", re.IGNORECASE)
_REFERENCE_HINTS = re.compile(r"(https?://|\b(?:dashboard|tracker|linear|jira|grafana|runbook|wiki|confluence|notion|slack channel|#[a-z0-9-]+)\b)", re.IGNORECASE)
_STOP = set("a an the to of and or in on for with that this is are be it i you we my our your me please just also really".split())


@dataclass(frozen=True)
class Candidate:
    name: str
    type: str
    description: str
    body: str


def _clean(fact: str) -> str:
    fact = fact.strip().strip('"').strip()
    return re.sub(r"\s+", " ", fact).rstrip(" .!")


def _classify(kind: str, fact: str) -> str:
    if kind == "identity":
        return "user"
    if kind == "prefer":
        return "user"
    if kind in ("rule", "from_now_on"):
        return "feedback"
    if _REFERENCE_HINTS.search(fact):
        return "reference"
    if _PROJECT_HINTS.search(fact):
        return "project"
    if re.match(r"^(?:I|my|I'm|I am)\b", fact, re.IGNORECASE):
        return "user"
    return "feedback"


def _title(fact: str) -> str:
    words = [w for w in re.findall(r"[\w'+#./-]+", fact)]
    keep = [w for w in words if w.lower() not in _STOP] or words
    title = " ".join(keep[:7])
    return (title[:1].upper() + title[1:])[:80] or "Note"


def _body(type_: str, statement: str, reason: str, said_on: date | None) -> str:
    when = f" on {said_on.isoformat()}" if said_on else ""
    if type_ in ("feedback", "project"):
        why = reason or f"the user asked for this explicitly{when}"
        how = f"apply this whenever it is relevant: {statement[0].lower() + statement[1:]}" if statement else "apply it"
        return f"{statement}.\n\n**Why:** {why}.\n**How to apply:** {how}."
    note = f"\n\n(Stated by the user{when}.)" if when else ""
    return f"{statement}.{(' Reason: ' + reason + '.') if reason else ''}{note}"


def extract_explicit(prompts: list[tuple[str, date | None]]) -> list[Candidate]:
    """Candidates from the user's prompts, each with the date it was said (for absolute dates)."""
    found: dict[tuple[str, str], Candidate] = {}
    for text, said_on in prompts:
        for sentence in _SENTENCE_SPLIT.split(text):
            sentence = sentence.strip()
            if len(sentence) < 8 or sentence.endswith("?"):
                continue
            for kind, pattern in _PATTERNS:
                m = pattern.match(sentence)
                if not m:
                    continue
                fact = _clean(m.group("fact"))
                reason = ""
                r = _REASON.search(fact)
                if r and r.start() > 8:
                    reason = _clean(r.group(1))
                    fact = _clean(fact[: r.start()])
                if len(fact) < 6:
                    break
                if said_on is not None:
                    dated = absolutize_dates(fact, said_on), absolutize_dates(reason, said_on)
                    if code_spans_kept(fact, dated[0]) and code_spans_kept(reason, dated[1]):  # the write-path guard
                        fact, reason = dated
                type_ = _classify(kind, fact)
                statement = fact[:1].upper() + fact[1:]
                name = _title(fact) if kind != "identity" else "User role: " + re.sub(r"(?i)^I(?:'m| am) (?:a|an|the) ", "", fact)[:60]
                description = statement if len(statement) <= 200 else statement[:197] + "…"
                cand = Candidate(name=name, type=type_, description=description, body=_body(type_, statement, reason, said_on))
                found[(type_, name.casefold())] = cand
                break
    return list(found.values())
