"""The deterministic extractor: explicit requests and standing instructions in the user's
own words ("remember …", "from now on …", "always / never / don't …", "I prefer …",
"I'm a … engineer"), typed, named, with the reason when one is given.

It works on prose only (the parser already removed injected text) and proposes
`Candidate`s; the job decides what to write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date

from memoryd.base.dates import absolutize_dates, code_spans_kept
from memoryd.base.similarity import terms
from memoryd.extract import shape as shaping
from memoryd.store.model import MemoryText

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
# A sentence whose negations stack up ("don't not wait … unless nobody isn't …") says neither "do" nor "don't"
# for sure: past this many, the extractor abstains rather than save a rule that may say the opposite.
POLARITY_MAX_NEGATIONS = 2
_NEGATION = re.compile(r"\b(?:not|never|no|nobody|nothing|none|nor|neither|cannot)\b|n't\b|n’t\b", re.IGNORECASE)
_STACKED = re.compile(r"\b(?:don't|do not|never|not)\s+(?:not|never)\b", re.IGNORECASE)  # "don't not wait"
_CLAUSE_SPLIT = re.compile(r";\s*")  # a clause after ";" that states nothing itself belongs to the rule before it
# Conversational filler around a rule ("I told you before", "as I said", ", please remember"): never kept.
_FILLER = re.compile(
    r"(?:^|[\s,;:—-]+)(?:"
    r"I(?:'ve| have)? (?:already |just )?(?:told|said to) you(?: this| that| so)?(?: (?:before|already|earlier|twice"
    r"|again|many times|a (?:hundred|thousand|million) times))+"
    r"|(?:as|like) (?:I|we)(?:'ve| have)? (?:already |just )?(?:said|mentioned|told you|explained|discussed)(?: "
    r"(?:before|earlier|already|above|yesterday))*"
    r"|how many times do I have to (?:tell|say|repeat)(?: (?:you|it|this))?"
    r"|for the (?:last|hundredth|nth|tenth|third|second) time"
    r"|(?:please )?(?:remember|keep in mind|don't forget)(?: (?:this|that))?(?=[\s.!]*$)"
    r")\b(?P<end>[\s,;:—.!-]*)",
    re.IGNORECASE,
)
# The reason a rule or decision was given: "because …", "due to …", ", since …", ", as …", or a
# comma splice that starts a new clause ("…, we got burned last quarter").
_FINITE = (
    r"(?:is|are|was|were|would|will|can|can't|cannot|won't|keeps?|has|have|had|doesn't|don't|didn't|needs?"
    r"|takes?|costs?|breaks?)"
)
_REASON = re.compile(
    r"(?:\s*[,—-]\s*|\s+)(?:because(?:\s+of)?|due to|given that|so that)\s+(?P<r>.+)$"
    r"|\s+since\s+(?!\d|then\b|last\b|yesterday\b|this\b)(?P<r2>(?!the\b|v\d|version\b)\w.+|(?:the|v\d|version)\S*\s.*?\b"
    + _FINITE
    + r"\b.*)$"
    r"|\s*,\s*(?:since|as)\s+(?P<r3>.+)$"
    r"|\s*[,—]\s*(?P<r4>(?:we|it|they|that|this|there|those)(?:'s|'re|'ve)?\s+(?!always\b|never\b|don't\b)\w.+)$",
    re.IGNORECASE,
)
# A comma splice that states why ("…, the caching story is too weak"): a short subject and a finite verb.
_SPLICE = re.compile(
    r"\s*[,—]\s*(?P<r>(?:nobody|no one|everyone|everything|nothing|(?:the\s+)?\w+(?:\s+\w+){0,3})\s+"
    + _FINITE
    + r"\b.+)$",
    re.IGNORECASE,
)
# When or where a rule applies, as said: leading ("When you touch the parser, …", "In the API layer, …")
# or trailing ("… before you commit", "… when releasing").
_LEAD_WHEN = re.compile(
    r"^(?P<c>(?:when|whenever|before|after|once|each time|every time|any ?time|next time|while"
    r"|during)\s[^,]{2,80}),\s+(?P<rule>\S.+)$",
    re.IGNORECASE,
)
_LEAD_WHERE = re.compile(
    r"^(?P<c>(?:in|on|for|inside|within|across)\s+(?!general\b|short\b|fact\b|particular\b|now\b|example\b|instance\b"
    r"|(?:the )?future\b"
    r"|second thought\b|that case\b|this case\b|any case\b|case\b|summary\b|addition\b)[^,]{2,60}),\s+(?P<rule>\S.+)$",
    re.IGNORECASE,
)
_TRAIL_WHEN = re.compile(
    r"^(?P<rule>.{6,}?),?\s+(?P<c>(?:when|whenever|each time|every time|any ?time|during)\s.+|(?:before|after)\s+"
    r"(?:you|we|I|every|each|any|\w+ing)\b.*)$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+(?P<text>.+)$")
# A line that introduces a list of standing rules ("Some conventions for this repo:").
_RULES_INTRO = re.compile(
    r"\b(?:rules?|conventions?|guidelines?|preferences|standards|house style|style guide|remember|from now on"
    r"|going forward|in future|always|never|decisions?)\b[^:]*:\s*$",
    re.IGNORECASE,
)
# Discourse markers in front of the instruction ("Also, …", "Oh and …", "Btw …", "One more thing: …").
_MARKER = re.compile(
    r"^(?:also|and|oh|oh and|btw|by the way|one more thing|plus|ps|p\.s\.|ok(?:ay)?|ok so|so|actually|finally|lastly"
    r"|fyi|"
    r"important|heads up|anyway|anyways|but|oh also|and also|alright|right|update|quick update|for context"
    r"|context)\b[,:;.!—-]*\s+",
    re.IGNORECASE,
)
# Sentences that look like rules but are not: questions, hypotheticals, hedges, reported speech,
# pleasantries, quotes and code comments.
_NOT_A_RULE = re.compile(
    r"^(?:(?:should|shall|can|could|would|will|did|does|is|are|was|were|what|why|how|when|where|which|who|whose|isn't|aren't|won't|wouldn't|shouldn't|have|has|had)\b(?!\s*,)"
    r"|do\b(?!\s+not\b)"
    r"|(?:if|what if|suppose|supposing|imagine|assuming|assume|maybe|perhaps|i wonder|wonder|in case|unless|whether"
    r"|even if|hypothetically|let's say|say|once we|until we|after we decide|before we decide)\b"
    r"|(?:i|we) (?:think|guess|suspect|believe|feel|might|may|could|should|would|need to decide|haven't|have not"
    r"|still need|were|was)\b"
    r"|(?:we're|we are|i'm|i am) (?:not sure|thinking|considering|debating|discussing|evaluating|wondering"
    r"|still deciding|undecided|talking about)\b"
    r"|(?:apparently|probably|possibly|it seems|seems like|looks like|not sure)\b"
    r"|(?:you|claude|the assistant|the model|it|they|he|she|someone|the (?:pr|docs?|changelog|comment|ticket|issue"
    r"|commit)) (?:said|says|wrote|writes|told me|replied|answered|mentioned|claims|claimed)\b"
    r"|(?:don't|do not|never)\s+(?:worry|mind|bother|know|think|understand|see|care|get|guess|hesitate)\b"
    r"|(?:i|we) (?:don't|do not|never) (?:know|think|understand|care|mind)\b"
    r"|always (?:happy|glad|good|nice|fun|a pleasure|great)\b"
    r"|[\"'“‘>`#]|//|/\*|--\s)",
    re.IGNORECASE,
)
_DEICTIC = re.compile(
    r"^I (?:really )?(?:like|love|hate|dislike)\s+(?:it|that|this|these|those|how|what|the way|your|when)\b",
    re.IGNORECASE,
)

# A decision the team made, or a standing fact about the project (deprecated, owned by, replaced by).
_DECISION = re.compile(
    r"^(?:(?:we|i|the team|our team|the \w+ team)(?:'ve| have)?\s+(?:just\s+|finally\s+|now\s+|officially\s+)?"
    r"(?:decided|agreed|chose|settled on|opted|went with|picked|standardi[sz]ed on|committed to)\b"
    r"|(?:we|the team|our team)(?:'re| are| is)\s+(?:now\s+|officially\s+|finally\s+)?(?:going with|moving (?:to|off"
    r"|away from|from)|migrating|switching (?:to|from|over)"
    r"|dropping (?:support|\S+(?: \S+)? support)|deprecating|sunsetting|retiring|phasing out|standardi[sz]ing on"
    r"|replacing|adopting|consolidating)\b"
    r"|(?:we|the team|our team)(?:'ve| have)?\s+(?:moved|migrated|switched|dropped support|deprecated|retired"
    r"|replaced|adopted|standardi[sz]ed on|sunset|no longer)\b"
    r"|(?:we|the team)(?:'ll| will| are going to|'re going to)\s+(?:move|migrate|switch|drop|deprecate|retire|replace"
    r"|adopt|standardi[sz]e|stop|no longer)\b"
    r"|(?:the\s+)?decision(?:\s+is|:)\s"
    r"|(?:let's|let us)\s+(?:go with|stick with|standardi[sz]e on|switch to|move to)\b"
    r"|going with\s|decided (?:to|against|on)\b)",
    re.IGNORECASE,
)
_FACT = re.compile(
    r"^(?!(?:it|this|that|there|he|she|they|i|you)\b)\S.{0,80}?\s(?:is|are)\s+(?:now\s+)?(?:deprecated"
    r"|being deprecated|going away|end-of-life|EOL|frozen|read-only"
    r"|legacy|obsolete|unmaintained|no longer (?:used|supported|maintained)|(?:the )?(?:single )?source of truth"
    r"|owned by)\b"
    r"|^(?!(?:it|this|that|there|he|she|they|i|you|we)\b)\S.{0,60}?\s(?:owns|replaces|supersedes)\s",
    re.IGNORECASE,
)

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "remember",
        re.compile(
            r"^(?:please\s+)?(?:(?:can|could) you\s+)?(?:also\s+)?remember(?:\s+to(?=\s+\w)|(?:\s+that)?[:,]?)"
            r"\s+(?P<fact>.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "remember",
        re.compile(
            r"^(?:(?:keep in mind|note for the future|for future reference)(?:\s+that)?[:,]?|(?:note|n\.?b\.?)(?:\s*:"
            r"|\s+that))\s+(?P<fact>.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "from_now_on",
        re.compile(
            r"^(?:from now on|going forward|moving forward|in (?:the )?future|henceforth|for next time|next time"
            r"(?=\s*[,:]))[:,]?\s+(?P<fact>.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "from_now_on",
        re.compile(
            r"^(?P<fact>.+?)[,]?\s+(?:from now on|going forward|moving forward|in (?:the )?future|next time"
            r"|henceforth)[.!]?$",
            re.IGNORECASE,
        ),
    ),
    ("decision", _DECISION),
    ("fact", _FACT),
    (
        "rule",
        re.compile(
            r"^(?:please\s+)?(?P<fact>(?:always|never|don't|do not|stop|avoid|make sure(?: to| you| that)?)\b.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "rule",
        re.compile(
            r"^(?P<fact>(?:(?:next time|whenever|every time|each time) you\b|in\s+[^,]{2,60},\s+(?:always|never|don't"
            r"|do not|use|prefer|keep|put)\b).+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "rule",
        re.compile(
            r"^(?P<fact>(?:we|our team|the team|our (?:repo|codebase|project|company|org|stack))\s+(?:always|never"
            r"|usually|generally|prefer|prefers|use|uses|don't|do not|require|requires|follow|follows|deploy|deploys"
            r"|run|runs)\b.+)$",
            re.IGNORECASE,
        ),
    ),
    ("preference", re.compile(r"^(?P<fact>I(?:'d| would)? (?:really )?prefer\b.+)$", re.IGNORECASE)),
    ("preference", re.compile(r"^(?P<fact>I (?:really )?(?:like|love|hate|dislike|can't stand)\b.+)$", re.IGNORECASE)),
    (
        "identity",
        re.compile(
            r"^(?P<fact>I(?:'m| am) (?:a|an|the) (?:[\w/+#-]+ ){0,4}(?:engineer|developer|scientist|designer|manager"
            r"|architect|researcher|analyst|admin|administrator|sre|devops|student|lead|maintainer|founder|cto|ceo)\b.*)$",
            re.IGNORECASE,
        ),
    ),
]
_KINDS = {"from_now_on": "rule"}  # the pattern families a kind has more than one of

_PROJECT_HINTS = re.compile(
    r"\b(deadline|freeze|release|launch|due|sprint|milestone|migration|incident|deploy(?:ment)?s?|on[- ]call"
    r"|\d{4}-\d{2}-\d{2})\b",
    re.IGNORECASE,
)
_REFERENCE_HINTS = re.compile(
    r"(https?://|\b(?:dashboard|tracker|linear|jira|grafana|runbook|wiki|confluence|notion|slack channel"
    r"|#[a-z0-9-]+)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Candidate:
    name: str
    type: str
    description: str
    body: str
    kind: str = ""  # what the offline extractor recognised (rule, preference, decision, …); "" from a model


_WHY_SAID = re.compile(r"^\*\*Why:\*\* stated by the user\b")
_LABEL = re.compile(r"^\*\*(?:Why|How to apply):\*\*\s*")


def update_of(existing: MemoryText, cand: Candidate) -> Candidate | None:
    """What an offline candidate adds to the memory it matched: None when that memory already says
    it (same rule, other words); else the memory with its own name and description (a person may
    have named it) and the new lines after its body. The body a person wrote is never replaced."""
    known = terms(f"{existing.name}. {existing.description}. {existing.body}")
    lines = [line for line in cand.body.splitlines() if line.strip() and not _WHY_SAID.match(line)]
    new = [line for line in lines if terms(_LABEL.sub("", line)) - known]
    if not new:
        return None
    body = "\n\n".join(part for part in (existing.body.rstrip(), "\n".join(new)) if part)
    return replace(cand, name=existing.name, description=existing.description, body=body)


def _clean(fact: str) -> str:
    fact = fact.strip().strip('"').strip()
    return re.sub(r"[ \t]+", " ", fact).rstrip(" .!,")


def _classify(kind: str, fact: str) -> str:
    if kind in ("identity", "preference"):
        return "user"
    if kind in ("decision", "fact"):
        return "project"
    if kind == "rule":
        return "feedback"
    if _REFERENCE_HINTS.search(fact):
        return "reference"
    if _PROJECT_HINTS.search(fact):
        return "project"
    if re.match(r"^(?:I|my|I'm|I am)\b", fact, re.IGNORECASE):
        return "user"
    return "feedback"


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return (
        text[0].lower() + text[1:]
        if first[:1].isupper() and first[1:] == first[1:].lower() and first.isalpha()
        else text
    )


def split_reason(fact: str) -> tuple[str, str]:
    """(fact, reason) when the sentence gives one; the reason keeps its words and case."""
    r = _REASON.search(fact)
    if r is None and not (_LEAD_WHEN.match(fact) or _LEAD_WHERE.match(fact)):
        r = _SPLICE.search(fact)
    if r is None or r.start() <= 8 or len(fact[: r.start()].split()) < 3:
        return fact, ""
    reason = next(g for g in r.groups() if g)
    return _clean(fact[: r.start()]), _clean(reason)


def split_condition(fact: str) -> tuple[str, str, bool]:
    """(rule, when or where it applies, whether that came first) as the user said it."""
    for pattern, leading in ((_LEAD_WHEN, True), (_LEAD_WHERE, True), (_TRAIL_WHEN, False)):
        m = pattern.match(fact)
        if m:
            return _clean(m.group("rule")), _lower_first(_clean(m.group("c"))), leading
    return fact, "", False


def shape(kind: str, fact: str, said_on: date | None = None) -> Candidate:
    """One recognised statement as a memory: title, one-line description, body that says it once."""
    fact = shaping.mark_commands(shaping.strip_request(fact))
    fact, reason = split_reason(fact) if kind != "identity" else (fact, "")
    rule, condition, _ = split_condition(fact) if kind in ("rule", "remember", "preference") else (fact, "", False)
    if said_on is not None:
        dated = [absolutize_dates(t, said_on) for t in (rule, reason, condition)]
        if all(code_spans_kept(t, d) for t, d in zip((rule, reason, condition), dated)):  # the write-path guard
            rule, reason, condition = dated
    type_ = _classify(kind, rule)
    statement = shaping.third_person(shaping.strip_request(rule))
    whole = f"{statement} {condition}" if condition else statement  # a leading "When …," follows the rule
    description = shaping.clip(whole, shaping.DESCRIPTION_MAX_CHARS)
    if kind == "identity":
        role = re.sub(r"^The user is (?:a |an |the )?", "", statement)
        name = "User role: " + _lower_first(shaping.title(role, max_words=6))
    else:
        name = shaping.title(whole)
    return Candidate(
        name=name,
        type=type_,
        description=description,
        body=shaping.body(statement, reason=reason, condition=condition, said_on=said_on),
        kind=kind,
    )


def extract_explicit(prompts: list[tuple[str, date | None]]) -> list[Candidate]:
    """Candidates from the user's prompts, each with the date it was said (for absolute dates)."""
    found: dict[tuple[str, str], Candidate] = {}
    for text, said_on in prompts:
        for kind, fact in _statements(text):
            if len(fact) < 6:
                continue
            cand = shape(kind, fact, said_on)
            found[(cand.type, cand.name.casefold())] = cand
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


def drop_filler(sentence: str) -> str:
    """The sentence without conversational filler ("we don't use jest, I told you before: …" keeps
    the ":" and what follows; a filler that leads or ends the sentence goes with its punctuation)."""

    def cut(m: re.Match[str]) -> str:
        if m.start() == 0 or m.end() == len(sentence):
            return ""
        end = m.group("end")
        return ": " if ":" in end else "; " if ";" in end else ", "

    return _FILLER.sub(cut, sentence).strip()


def _statement(sentence: str, listed: bool) -> tuple[str, str] | None:
    """(kind, fact) when the sentence (or clause) states a standing rule, preference or fact to keep."""
    sentence = drop_filler(sentence.strip())
    while (m := _MARKER.match(sentence)) and len(sentence) > m.end():
        sentence = sentence[m.end() :].lstrip(" ,:-—")
    if len(sentence) < 8 or sentence.endswith("?") or _NOT_A_RULE.match(sentence) or _DEICTIC.match(sentence):
        return None
    for kind, pattern in _PATTERNS:
        m = pattern.match(sentence)
        if m:
            fact = _clean(m.group("fact") if "fact" in pattern.groupindex else sentence)
            if kind in ("remember", "from_now_on", "rule"):  # "Remember that we decided …" is a decision
                kind = "decision" if _DECISION.match(fact) else "fact" if _FACT.match(fact) else _KINDS.get(kind, kind)
            return kind, fact
    return ("rule", _clean(sentence)) if listed and len(sentence.split()) >= 2 else None


def _continues(clause: str) -> str:
    """A clause after ";" that goes with the rule before it ("…; use `unknown` and narrow it"), or ""."""
    clause = _clean(drop_filler(clause.strip()))
    if len(clause.split()) < 2 or clause.endswith("?") or _NOT_A_RULE.match(clause):
        return ""
    return clause


def undecided_polarity(sentence: str) -> bool:
    """Whether a sentence holds more negations than a reader can resolve into "do" or "don't" for sure."""
    return len(_NEGATION.findall(sentence)) > POLARITY_MAX_NEGATIONS or bool(_STACKED.search(sentence))


def _statements(text: str) -> list[tuple[str, str]]:
    """(kind, fact) for each sentence that states a standing rule, preference or fact to keep; a
    clause after ";" that states nothing by itself stays with the statement before it."""
    found: list[tuple[str, str]] = []
    for sentence, listed in _sentences(text):
        if undecided_polarity(sentence):
            continue
        previous: int | None = None
        for clause in _CLAUSE_SPLIT.split(sentence):
            statement = _statement(clause, listed)
            if statement is not None:
                found.append(statement)
                previous = len(found) - 1
            elif previous is not None and (more := _continues(clause)):
                kind, fact = found[previous]
                found[previous] = (kind, f"{fact}; {more}")
            else:
                previous = None
    return found
