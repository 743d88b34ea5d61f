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
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+(?P<text>.+)$")
# A line that introduces a list of standing rules ("Some conventions for this repo:").
_RULES_INTRO = re.compile(r"\b(?:rules?|conventions?|guidelines?|preferences|standards|house style|style guide|remember|from now on|going forward|in future|always|never)\b[^:]*:\s*$", re.IGNORECASE)
# Discourse markers in front of the instruction ("Also, …", "Oh and …", "Btw …", "One more thing: …").
_MARKER = re.compile(
    r"^(?:also|and|oh|oh and|btw|by the way|one more thing|plus|ps|p\.s\.|ok(?:ay)?|ok so|so|actually|finally|lastly|fyi|"
    r"important|heads up|anyway|anyways|but|oh also|and also|alright|right)\b[,:;.!—-]*\s+",
    re.IGNORECASE,
)
# Sentences that look like rules but are not: questions, hypotheticals, reported speech, pleasantries.
_NOT_A_RULE = re.compile(
    r"^(?:(?:should|shall|can|could|would|will|did|does|is|are|was|were|what|why|how|when|where|which|who|whose|isn't|aren't|won't|wouldn't|shouldn't)\b"
    r"|do\b(?!\s+not\b)"
    r"|(?:if|what if|suppose|supposing|imagine|assuming|assume|maybe|perhaps|i wonder|wonder|in case|unless|whether|even if|hypothetically|let's say|say)\b"
    r"|(?:you|claude|the assistant|the model|it) (?:said|wrote|told me|replied|answered|mentioned)\b"
    r"|(?:don't|do not|never)\s+(?:worry|mind|bother|know|think|understand|see|care|get|guess|hesitate)\b"
    r"|(?:i|we) (?:don't|do not|never) (?:know|think|understand|care|mind)\b"
    r"|always (?:happy|glad|good|nice|fun|a pleasure|great)\b"
    r"|[\"'“‘>`])",
    re.IGNORECASE,
)
_DEICTIC = re.compile(r"^I (?:really )?(?:like|love|hate|dislike)\s+(?:it|that|this|these|those|how|what|the way|your|when)\b", re.IGNORECASE)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("remember", re.compile(r"^(?:please\s+)?(?:(?:can|could) you\s+)?(?:also\s+)?remember(?:\s+that)?[:,]?\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("remember", re.compile(r"^(?:(?:keep in mind|note for the future|for future reference)(?:\s+that)?[:,]?|(?:note|n\.?b\.?)(?:\s*:|\s+that))\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("from_now_on", re.compile(r"^(?:from now on|going forward|moving forward|in (?:the )?future|next time|henceforth|for next time)[:,]?\s+(?P<fact>.+)$", re.IGNORECASE)),
    ("from_now_on", re.compile(r"^(?P<fact>.+?)[,]?\s+(?:from now on|going forward|moving forward|in (?:the )?future|next time|henceforth)[.!]?$", re.IGNORECASE)),
    ("rule", re.compile(r"^(?:please\s+)?(?P<fact>(?:always|never|don't|do not|stop|avoid|make sure(?: to| you| that)?)\b.+)$", re.IGNORECASE)),
    ("rule", re.compile(r"^(?P<fact>(?:we|our team|the team|our (?:repo|codebase|project|company|org|stack))\s+(?:always|never|usually|generally|prefer|prefers|use|uses|don't|do not|require|requires|follow|follows|deploy|deploys|run|runs)\b.+)$", re.IGNORECASE)),
    ("prefer", re.compile(r"^(?P<fact>I(?:'d| would)? (?:really )?prefer\b.+)$", re.IGNORECASE)),
    ("prefer", re.compile(r"^(?P<fact>I (?:really )?(?:like|love|hate|dislike|can't stand)\b.+)$", re.IGNORECASE)),
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
        for kind, fact in _statements(text):
            reason = ""
            r = _REASON.search(fact)
            if r and r.start() > 8:
                reason = _clean(r.group(1))
                fact = _clean(fact[: r.start()])
            if len(fact) < 6:
                continue
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
    return list(found.values())


def _sentences(text: str) -> list[tuple[str, bool]]:
    """(sentence, is a bullet under a rules intro) for the prose of a prompt; fenced code is dropped."""
    out: list[tuple[str, bool]] = []
    in_rules = False
    for line in _FENCE.sub("\n", text).splitlines():
        bullet = _BULLET.match(line)
        if bullet:
            out.extend((s, in_rules) for s in _SENTENCE_SPLIT.split(bullet.group("text")))
            continue
        in_rules = bool(_RULES_INTRO.search(line))
        out.extend((s, False) for s in _SENTENCE_SPLIT.split(line))
    return out


def _statements(text: str) -> list[tuple[str, str]]:
    """(kind, fact) for each sentence that states a standing rule, preference or fact to keep."""
    found: list[tuple[str, str]] = []
    for sentence, listed in _sentences(text):
        sentence = sentence.strip()
        while (m := _MARKER.match(sentence)) and len(sentence) > m.end():
            sentence = sentence[m.end():].lstrip(" ,:-—")
        if len(sentence) < 8 or sentence.endswith("?") or _NOT_A_RULE.match(sentence) or _DEICTIC.match(sentence):
            continue
        for kind, pattern in _PATTERNS:
            m = pattern.match(sentence)
            if m:
                found.append((kind, _clean(m.group("fact"))))
                break
        else:
            if listed and len(sentence.split()) >= 2:
                found.append(("rule", _clean(sentence)))
    return found
