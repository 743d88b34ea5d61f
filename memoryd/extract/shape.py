"""How a memory built without a model reads: a short title, one statement, a body that says it once.

Used by the offline extractor, the dream's daily-log distillation and plain-note imports, so the
rules live here once: request phrases go, the user's words, code spans, paths and case stay.
"""

from __future__ import annotations

import re
from datetime import date

from memoryd.base.text import COMMON_WORDS, STOPWORDS, sentences

TITLE_MAX_WORDS = 8
DESCRIPTION_MAX_CHARS = 200
# Leading phrases that ask rather than state: never the start of a description or title.
REQUEST_PHRASES = (
    "please",
    "kindly",
    "remember that",
    "remember",
    "keep in mind that",
    "keep in mind",
    "note for the future that",
    "note for the future",
    "for future reference",
    "from now on",
    "going forward",
    "moving forward",
    "in the future",
    "in future",
    "henceforth",
    "for next time",
    "next time,",
    "note that",
    "note:",
    "n.b.",
    "nb:",
    "fyi",
    "can you",
    "could you",
    "would you",
    "i want you to",
    "i'd like you to",
    "i need you to",
    "make sure to",
    "make sure you",
)
_REQUEST = re.compile(
    r"^(?:"
    + "|".join(re.escape(p) for p in sorted(REQUEST_PHRASES, key=len, reverse=True))
    + r")(?![\w'])[\s,:;.!—-]*",
    re.IGNORECASE,
)
_TRAILING_REQUEST = re.compile(
    r"[\s,]+(?:please|from now on|going forward|moving forward|in (?:the )?future|henceforth)[.!]?$", re.IGNORECASE
)
_CODE = re.compile(r"`[^`\n]+`")
_TOKEN = re.compile(r"`[^`\n]+`|[^\s]+")

# Leading subjects turned into the third person ("I prefer" → "The user prefers", "We never" → "Never").
_I_AM = re.compile(r"^I(?:'m| am) ", re.IGNORECASE)
_I_LIKE = re.compile(
    r"^I(?:'d| would)? (?P<adv>(?:really |also |strongly )?)(?P<verb>prefer|like|love|hate|dislike|can't stand"
    r"|cannot stand)\b",
    re.IGNORECASE,
)
_I_DID = re.compile(
    r"^I(?P<aux>'ve| have)? (?=(?:decided|agreed|chose|picked|settled|opted|went|switched|moved)\b)", re.IGNORECASE
)
_WE_ADVERB = re.compile(r"^(?:we|our team|the team) (?P<rule>(?:always|never|don't|do not)\b)", re.IGNORECASE)
_WE_AUX = re.compile(r"^we(?:'re| are|'ve| have|'ll| will|'d| would)\b", re.IGNORECASE)
_WE = re.compile(
    r"^(?P<who>we|our team) (?P<adv>(?:usually |generally |normally |also |now |still |no longer )?)(?P<verb>[a-z]+)\b",
    re.IGNORECASE,
)
_LETS = re.compile(r"^let(?:'s| us) (?=go with|stick with|standardi[sz]e on|switch to|move to)", re.IGNORECASE)
_OUR = re.compile(r"^our (?=repo|codebase|project|company|org|stack|api|service|team|ci|app)", re.IGNORECASE)
_MY = re.compile(r"^my (?=[a-z])", re.IGNORECASE)
_AUX = {
    "'re": "is",
    "are": "is",
    "'ve": "has",
    "have": "has",
    "'ll": "will",
    "will": "will",
    "'d": "would",
    "would": "would",
}
_PAST_OR_MODAL = re.compile(r"(?:ed|can|must|should|may|might)$")

# What a title may drop: fillers, and "always" (the rule is the title); never negations or prepositions.
_TITLE_FILLER = {"please", "just", "really", "also", "always", "actually", "basically"}
_ARTICLES = {"a", "an", "the"}
# Words a title must not end on after a cut (they promise a continuation).
_DANGLING = {
    "a",
    "an",
    "the",
    "to",
    "on",
    "in",
    "at",
    "of",
    "for",
    "from",
    "with",
    "without",
    "by",
    "and",
    "or",
    "but",
    "before",
    "after",
    "when",
    "while",
    "into",
    "onto",
    "than",
    "that",
    "as",
    "over",
    "under",
    "your",
    "our",
    "my",
    "its",
    "their",
    "this",
    "these",
    "those",
    "is",
    "are",
    "be",
    "not",
    "no",
    "never",
    "don't",
    "per",
    "via",
}
# Words a title may end on only where the statement itself ends ("from the release branch only"), never after a
# cut ("SSO login only", "… works when you"): the dangling words, and adverbs, subjects and auxiliaries.
_CUT_DANGLING = _DANGLING | set(
    "only just you we i it they was were will would can should must has have do does if so because unless until since "
    "where which whenever when while".split()
)
# Words whose loss between two kept words changes what a title says ("works on VPN" is not "works VPN").
_MEANING = set(
    "to on from in for with without not never no don't before after under over into by at of instead than until "
    "unless only except".split()
)
_SAY_NOTHING = STOPWORDS | COMMON_WORDS  # a clause of only these adds nothing to a title
_EMPTY_CLAUSE_START = {"when", "whenever", "while", "if"}
# Words that start a new phrase: a title may stop just before one.
_PHRASE_START = {
    "only",
    "to",
    "on",
    "in",
    "for",
    "from",
    "with",
    "without",
    "when",
    "whenever",
    "before",
    "after",
    "because",
    "until",
    "unless",
    "and",
    "but",
    "so",
    "which",
    "at",
    "by",
    "via",
    "instead",
    "over",
    "into",
    "than",
    "since",
    "while",
    "where",
    "if",
    "or",
    "during",
    "except",
    "unlike",
}
_CLAUSE_BREAK = re.compile(r",\s+|;\s+|\s+—\s+|\s+-\s+|:\s+")


# An unquoted command line: a few words, then flags ("run linter ruff check --fix before …").
_COMMAND = re.compile(
    r"(?<![`\w./-])(?P<cmd>(?:[a-z][\w.+-]*\s+){0,3}[a-z][\w.+-]*(?:\s+--?[A-Za-z][\w=.:/,-]*(?:\s+[a-z][\w.+/-]*(?=\s+--?[A-Za-z]))?)+)(?![\w`])"
)
_NOT_COMMAND = {
    "run",
    "the",
    "a",
    "an",
    "linter",
    "formatter",
    "command",
    "with",
    "use",
    "using",
    "via",
    "call",
    "execute",
    "tool",
    "script",
    "and",
    "or",
    "then",
    "always",
    "never",
    "to",
    "please",
    "just",
    "also",
    "don't",
    "do",
    "not",
    "only",
    "by",
    "pass",
    "add",
    "skip",
    "set",
    "enable",
    "disable",
    "include",
    "omit",
    "try",
    "prefer",
    "avoid",
    "keep",
    "drop",
    "flag",
    "option",
}


def mark_commands(text: str) -> str:
    """Unquoted command lines put in backticks, their characters unchanged; code spans left alone."""
    parts = re.split(r"(`[^`\n]+`)", text)

    def wrap(m: re.Match[str]) -> str:
        words = m.group("cmd").split(" ")
        lead = 0
        while lead < len(words) - 1 and words[lead].lower() in _NOT_COMMAND:
            lead += 1
        return " ".join(words[:lead] + [f"`{' '.join(words[lead:])}`"])

    return "".join(p if p.startswith("`") else _COMMAND.sub(wrap, p) for p in parts)


def clip(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut at a word boundary (never inside a word or code span)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    out = ""
    for m in _TOKEN.finditer(text):
        if m.end() + 1 > limit:
            break
        out = text[: m.end()]
    return (out or text[: limit - 1]).rstrip(" ,;:—-") + "…"


def strip_request(text: str) -> str:
    """`text` without the request phrases in front ("Please remember that …") or at its end (", please")."""
    text = text.strip()
    while (m := _REQUEST.match(text)) and m.end() < len(text):
        text = text[m.end() :].lstrip()
    return _TRAILING_REQUEST.sub("", text).strip()


def starts_with_request(text: str) -> bool:
    """Whether a description still opens with a request phrase."""
    return bool(_REQUEST.match(text.strip()))


def _code_like(word: str) -> bool:
    """A word whose case is part of what it names: code, a path, an acronym, a tool without vowels (npm)."""
    return (
        bool(re.search(r"[`_./\\\d$@#:=<>(){}\[\]]", word))
        or word.startswith("-")
        or word[1:] != word[1:].lower()
        or not re.search(r"[aeiouy]", word, re.IGNORECASE)
    )


def upper_first(text: str) -> str:
    """Capitalise the first word only when that changes no code, acronym or name."""
    first = text.split(" ", 1)[0]
    if not first or not first[0].islower() or _code_like(first):
        return text
    return text[0].upper() + text[1:]


def _third(verb: str) -> str:
    low = verb.lower()
    if low in ("have",):
        return "has"
    if low in ("do", "go"):
        return low + "es"
    if low.endswith(("s", "sh", "ch", "x", "z")):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str) -> str:
    """The statement as memory keeps it: the user in the third person, the team's rules imperative
    ("We never deploy on Fridays" → "Never deploy on Fridays"); the rest of the words as said."""
    if m := _I_AM.match(text):
        return "The user is " + text[m.end() :]
    if m := _I_LIKE.match(text):
        verb = m.group("verb")
        verb = "prefers" if verb.lower() == "prefer" else verb if " " in verb else _third(verb)
        return f"The user {m.group('adv')}{verb}{text[m.end() :]}"
    if m := _I_DID.match(text):
        return "The user " + ("has " if m.group("aux") else "") + text[m.end() :]
    if m := _WE_ADVERB.match(text):
        return upper_first(text[m.start("rule") :])
    if m := _WE_AUX.match(text):
        aux = m.group(0)[2:].strip()
        return "The team " + _AUX[aux if aux.startswith("'") else aux.lower()] + text[m.end() :]
    if m := _WE.match(text):
        verb = m.group("verb")
        if (
            m.group("who").lower() == "we"
            and not _PAST_OR_MODAL.search(verb.lower())
            and verb.lower() not in ("went", "chose", "made", "picked", "moved", "will", "can", "did")
        ):
            verb = _third(verb)
        return f"The team {m.group('adv')}{verb}{text[m.end() :]}"
    if m := _LETS.match(text):
        return upper_first(text[m.end() :])
    if m := _OUR.match(text):
        return "The " + text[m.end() :]
    if m := _MY.match(text):
        return "The user's " + text[m.end() :]
    return upper_first(text)


def title(text: str, max_words: int = TITLE_MAX_WORDS) -> str:
    """A short title a person would write: the statement's own words in order, fillers and the
    subject dropped, at most `max_words`, cut only between words and never on a dangling word."""
    text = strip_request(text).rstrip(" .!")
    text = re.sub(r"^The user (?:is |has |will )?(?=[a-z])", "", text)
    text = re.sub(r"^The (?:\w+ )?team (?:has |is |will )?", "", text)
    text = re.sub(r"^(?:decided|agreed|chose|opted for|settled on|went with)\s+(?:to |that |on )?", "", text)
    text = re.sub(r"^(?:you|we) (?:should|must|need to|have to|ought to) (?=[a-z])", "", text, flags=re.IGNORECASE)
    words = [w for w in _TOKEN.findall(text)]
    while words and words[0].lower().strip(",") in _TITLE_FILLER:
        words = words[1:]
    if len(words) > max_words:
        # A clause break inside the limit is where a person would stop.
        first = _CLAUSE_BREAK.split(" ".join(words), maxsplit=1)[0]
        if 3 <= len(first.split()) <= max_words:
            words = _TOKEN.findall(first)
    if len(words) > max_words:
        words = [w for w in words if w.lower() not in _ARTICLES]
    if len(words) > max_words:
        words = _shorten(words, max_words)
    out = plain_code(" ".join(words).rstrip(",;:—-"))
    return upper_first(out) or "Note"


def plain_code(name: str) -> str:
    """A name without Markdown code marks: a title reads as words (`ruff check` → ruff check)."""
    return " ".join(_CODE.sub(lambda m: m.group(0).strip("`"), name).split())


def _phrases(words: list[str]) -> list[list[str]]:
    """The words cut into phrases, each new one at a phrase-starting word or after a comma."""
    out: list[list[str]] = [[]]
    for i, word in enumerate(words):
        if out[-1] and (word.lower() in _PHRASE_START or words[i - 1].endswith((",", ";", ":"))):
            out.append([])
        out[-1].append(word)
    return out


def _empty_phrase(phrase: list[str]) -> bool:
    """A clause that says nothing a title needs ("when you're", "if you run it"): it opens with
    "when", "if" …, and the rest are stopwords and words any prompt has, none whose loss changes the meaning."""
    keys = [w.lower().strip(",;:") for w in phrase]
    return keys[0] in _EMPTY_CLAUSE_START and all(
        k not in _MEANING and all(part in _SAY_NOTHING for part in re.split(r"['’]", k) if part) for k in keys
    )


def _shorten(words: list[str], max_words: int) -> list[str]:
    """At most `max_words`, whole phrases in order: a phrase that says nothing is left out so the ones
    after it still fit ("SSO login only works [when you're] on corporate VPN"); the title stops before
    the first phrase that does not fit, and never ends on a dangling word ("… works when you")."""
    phrases = _phrases(words)
    kept = phrases[0][:max_words]
    for phrase in phrases[1:]:
        if _empty_phrase(phrase):
            continue
        if len(kept) + len(phrase) > max_words:
            break
        kept = kept + phrase
    while len(kept) > 2 and kept[-1].lower().strip(",;:") in _CUT_DANGLING:
        kept.pop()
    return kept


def body(statement: str, *, reason: str = "", condition: str = "", said_on: date | None = None) -> str:
    """The rule or fact once; **Why:** the reason given (else when it was said); **How to apply:**
    only for a stated when or where."""
    statement = statement.rstrip()
    if statement and statement[-1] not in ".!?":
        statement += "."
    why = reason.rstrip(" .") or ("stated by the user on " + said_on.isoformat() if said_on else "stated by the user")
    out = f"{statement}\n\n**Why:** {why}."
    if condition:
        out += f"\n**How to apply:** {condition.rstrip(' .')}."
    return out


def repeated_sentences(text: str) -> list[str]:
    """Sentences a body says twice (compared without case, punctuation or the Why/How labels)."""
    seen: set[str] = set()
    repeats: list[str] = []
    for sentence, key in sentences(text):
        if len(key.split()) < 3:
            continue
        if key in seen:
            repeats.append(sentence)
        seen.add(key)
    return repeats


def code_and_acronyms(text: str) -> list[str]:
    """The spans whose case must come through unchanged: code spans and words with an inner capital."""
    return _CODE.findall(text) + [
        w
        for w in re.findall(r"[\w.+#/-]+", _CODE.sub(" ", text))
        if sum(c.isupper() for c in w) >= 2 or (any(c.isupper() for c in w[1:]) and any(c.islower() for c in w))
    ]
