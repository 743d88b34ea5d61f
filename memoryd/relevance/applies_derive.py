"""What a memory applies to when its file says nothing: derived offline from what it names — paths
and file kinds, the commands in its backticks, package managers (a choice among them applies to the
ones it does not prefer), the programs it forbids, the code it names and the subjects it is about.
Plain functions over text; no files, no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar, cast

from memoryd.base import limits
from memoryd.base.digest_cache import DigestCache
from memoryd.base.globs import is_wild
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.features import code_name, prose, prose_polarity
from memoryd.relevance.lexicon import (
    alternation,
    case_free,
    lowered,
    matcher_subjects,
    openers,
    opening_at,
    programs,
    trie_pattern,
    words,
)
from memoryd.relevance.shell import command_key

__all__ = ["trie_pattern"]  # re-exported: the subjects' one-pass pattern is built by the lexicon

# Every word list read here comes from memoryd/relevance/data/*.toml (one home, each row with its labelled cases
# in tests/test_applies_data.py); only grammar (paths, backticks, code names) is written as patterns below.
PROGRAMS_TABLE = programs()
WORDS = words()
SUBJECTS = matcher_subjects()
PM_FAMILIES = PROGRAMS_TABLE.managers  # per ecosystem, its package managers (family names: npm, pnpm, yarn, bun)
PM_NAMES = PROGRAMS_TABLE.manager_members  # every program typed to run one (npx is npm's, bunx bun's)
# per manager, every program typed to run it: its own acts and its runner (`npx eslint` uses npm, as the guard reads it)
_MEMBERS = {
    f: tuple(m for m, fam in PROGRAMS_TABLE.family_of.items() if fam == f)
    for ecosystem in PM_FAMILIES
    for f in ecosystem
}
PROGRAMS = PROGRAMS_TABLE.named  # the other programs a rule may name: a word counts only when it is one of these
_PROGRAM_NAMES = PROGRAMS | PM_NAMES  # every program a rule may name
_COMMAND_STARTS = _PROGRAM_NAMES | PROGRAMS_TABLE.prefixes  # what a backticked command may start with
RULE_WORDS = WORDS.rule
RULE_TYPES = frozenset({"feedback", "user", ""})  # a memory of these types states a rule (a correction, a preference)
# Each path holds a dot or a slash after its first run of name characters: the lookahead says so first (possessive, so
# a plain word fails at once instead of each way of splitting it being tried: a third of a cold derive's time).
PATH_RE = re.compile(
    r"(?<![\w/.:@-])(?=[\w@*-]*+[./])(?:"
    r"(?:\*\*/|\*\.)?\.?[\w@*-][\w.@*-]*(?:/[\w.@*\[\]-]+)+/?"  # a/b/c, db/migrations/, **/x
    r"|\*\.[\w.]+"  # *.generated.ts
    r"|\.env[\w.*-]*"  # .env, .env.local
    r"|[\w*-]+(?:\.[\w*-]+)*\.(?:tsx?|jsx?|mjs|cjs|json|sql|py|prisma|ya?ml|toml|css|scss|lock|go|rs|rb|sh|html|vue|svelte)\b"
    r")"
)
# a word that may name a program (its first letter, then what stands before it, as in `_KIND_RE`)
_NAMED_WORD = re.compile(r"[A-Za-z](?<![\w.@/-][A-Za-z])[\w-]*(?![\w/])")
_WORD = re.compile(r"[A-Za-z][\w-]*")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # the words of a code name (BookingRepository)
_CODE_MARK = re.compile(r"[A-Z.@:=_(/ ]")  # past its first letter, what makes a cue code, not a word
_TWO_LETTERS = re.compile(r"[A-Za-z]{2}")
_TITLED_PAIR = re.compile(r"[A-Z][a-z]+(?:/[A-Z][a-z]+)+")  # "Yarn/Turbo": names, not a path
_TITLED_JS = re.compile(r"[A-Z]\w*\.js")  # "Day.js": a name, not a file
_TITLED_DOC = re.compile(r"(?<![\w/.-])[\w-]+\.md\b")
_WORD_PAIR = re.compile(r"[A-Za-z]+/[A-Za-z]+")
_TICKS = re.compile(r"`([^`\n]{1,200})`")
ELLIPSIS = re.compile(r"\.\.\.|…")  # in a cue (`style={{...}}`): anything between its literal parts
# A placeholder in a named path: `changelog/{PR_NUMBER}.{type}.md`, `tests/<path>/test_<module>.py`.
# (each way opens with its bracket, the lookbehind after it: the engine then looks only at brackets, 7x faster)
_PLACEHOLDER = re.compile(r"\{[\w|.-]{1,40}\}|<[\w-]{1,30}>(?=[/_.\w-])|<(?<=[/_.\w-]<)[\w-]{1,30}>")
# File kinds a rule may name on their own ("plain .css", "`.snap` files"): kinds of a place or a tool, not a language.
# (the dot first, then what stands before it: the engine then looks only at dots, not at every position)
_KIND_RE = re.compile(r"\.(?<![\w/.*-]\.)(" + "|".join(sorted(WORDS.named_kinds)) + r")(?![\w/.-])")
# A folder named alone, with its slash: `tests_integ/`, `collections/` (not "and/or", not "a/b").
_DIR_RE = re.compile(r"(?<![\w/.:@*-])[A-Za-z_][\w.-]*/(?![\w.*{<-])")
# File kinds by language: a rule whose name or description names the language ("Write plain CSS", "No
# !important in CSS") applies to an edit of any file of it. Not the everyday kinds (.py, .ts): those say nothing.
_PLACE_KINDS = WORDS.place_kinds
_KIND_NAMED = re.compile(r"(?<![\w-])(" + alternation(_PLACE_KINDS) + r")(?![\w-])", re.I)
# A headline about writing one language ("Go Development Instructions"): its words, a language's and guidance's.
_LANGUAGES = WORDS.languages
_FRAMEWORKS = WORDS.frameworks
_HEADLINE_WORD = re.compile(r"[A-Za-z][A-Za-z#+]*")
_LEADING_PLACE = re.compile(r"\s*`?(\.?[a-z0-9_@-][\w.@-]*(?:/[\w.@-]+)+/?|[a-z][a-z0-9_-]*)`?:\s")  # "web/app: ..."
# What a rule about a subject applies to when it names no program: committing, pull requests, pushing.
SUBJECT_COMMANDS = tuple((about, command) for command, _, about in WORDS.acts)
# A rule for making a new thing ("Checklist for adding a new AI service") applies when a file is created,
# not to every later edit of the things it made.
CREATING = WORDS.creating
# The layers code is split into: a rule whose name is about one ("No business logic in repositories") applies
# to its files (BookingRepository.ts, user_service.py, repositories/) and to prompts naming its code.
CODE_ROLES = WORDS.layers
_ROLES_NAMED = re.compile(
    r"\b(" + "|".join(sorted(r[:-1] + "ies" if r.endswith("y") else r + "s" for r in CODE_ROLES)) + r")\b", re.I
)
# (the first letter, then what stands before it, as in `_KIND_RE`)
CAMEL_RE = re.compile(r"[A-Z](?<![\w.][A-Z])[a-z0-9]*[A-Z][A-Za-z0-9]*\b")  # TRPCError, ErrorWithCode, OAuthClient
CAMEL_NAME = re.compile(r"\b[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")  # a code name of words: BookingRepository
_SCOPED = re.compile(r"@(?<![\w/]@)[\w-]+/[\w./-]*\w")  # @scope/ui, @scope/ui/components/button
# Cues that are not code (`cue_not_code`): an acronym or emphasis in capitals (JSON, NEVER), a host name.
_NOT_CODE = re.compile(r"[A-Z]{2,}s?|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:" + alternation(WORDS.host_suffixes) + ")")
_NAMES_NOT_CODE = WORDS.products | frozenset(WORDS.languages)
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z]\w*\.(?:js|[a-z]\w*)\b")  # Day.js, credential.key
# A kind so common that a rule naming it ("*.py", "*.ts") is about the language, not about a place.
EVERY_FILE_OF_A_KIND = frozenset(f"**/*.{ext}" for ext in WORDS.everyday_kinds)
EVERY_FOLDER_FILES = WORDS.folder_files
GENERIC_DIRS = WORDS.generic_dirs | WORDS.named_alone

# Every subject's words in one pattern, read in a single pass (a pass per subject was ten times the work).
TOPIC_OF_WORD = SUBJECTS.of_word
_TOPIC_WORDS = SUBJECTS.words


# ----------------------------------------------------------------------------- derived offline
DERIVED_KEPT = 32_768  # memories whose derivation is kept by digest (a file touched but unchanged, a store re-read)
_derived: DigestCache[AppliesTo] = DigestCache(DERIVED_KEPT)


def derive(name: str, description: str, body: str, type_: str = "") -> AppliesTo:
    """What a memory applies to, from its text; the same text is derived once (keyed by its digest, so the cache
    holds 16 bytes a memory, not its body)."""
    return _derived.get((name, description, body[: limits.APPLIES_DERIVE_MAX_CHARS], type_), _derive)


def _derive(name: str, description: str, body: str, type_: str) -> AppliesTo:
    """What a memory applies to, from what it names: paths and file kinds, the commands in its
    backticks, package managers (a choice among them applies to the ones it does not prefer) and
    other programs, and the subjects (`SUBJECTS`) it is about."""
    text = f"{name}\n{description}\n{body}"
    reading = _reading(text)  # backticks and the words of paths read once for every reader below
    snippets = reading.snippets
    cased = _cased(text)
    rule = states_rule(type_, text, cased)
    home = () if type_ == "reference" else _headline_place(name)
    paths = (
        ()
        if type_ == "reference"
        else home + _below_titled_folder(name, _places(name, description, reading))
        if rule
        else home + _specific_places(name, description)
    )
    named = set(_casefolded(_NAMED_WORD.findall(text)))
    # a program that is also an English word counts only in backticks ("never go back" names no Go)
    if english := named & PROGRAMS_TABLE.english:
        ticked = {w.casefold() for snippet in snippets for w in snippet.split()}
        named -= {w for w in english if w not in ticked}
    pms = PM_NAMES & named
    forbids = _forbidden(cased, pms | (PROGRAMS & named))
    commands = _managers_not_chosen(text, pms, forbids)
    for snippet in snippets:
        first = snippet.split(maxsplit=1)[0].casefold() if snippet.strip() else ""
        if first not in _COMMAND_STARTS and "=" not in first:
            continue  # not a command (`src/db.ts`, `as any`): spares the shell parse, most of derive's time
        key = command_key(snippet)
        if key and key[0] in PROGRAMS and " ".join(key) not in commands:
            commands.append(" ".join(key))
    commands += sorted(n for n in (PROGRAMS & named) - {c.split()[0] for c in commands} if n in forbids)
    head = f"{name}\n{description}"
    commands += [cmd for rx, cmd in SUBJECT_COMMANDS if rx.search(head)]
    weights = shared(topic_weights(text, cased))  # the subjects and how strongly: read once for both fields
    code_forbids, subjects_forbidden = _code_ruled_out(cased, snippets, forbids, frozenset(t for t, _ in weights))
    applies = AppliesTo(
        paths=paths,
        commands=tuple(dict.fromkeys(commands)),
        tools=("Write",) if paths and CREATING.search(name) else (),
        forbids=shared(frozenset(forbids)),
        topics=shared(frozenset(t for t, _ in weights)),
        weights=weights,
        about=shared(topics_of(f"{name}\n{description}")),
        kinds=shared(kinds_named(name) | language_headline_kinds(name, description)),
        roles=shared(frozenset(singular(w) for w in _ROLES_NAMED.findall(name)) if rule else frozenset()),
        rule=rule,
        names=shared(frozenset(_PROGRAM_NAMES & named)),
        cues=shared(cues_of(text, reading)),
        code_forbids=code_forbids,
        subjects_forbidden=subjects_forbidden,
        home=home,
    )
    return shared(applies)


def _code_ruled_out(
    cased: _Cased, snippets: tuple[str, ...], programs_forbidden: set[str], topics: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """What written code may break of the rule, as the fitted features' polarity reads it (`prose_polarity`): the
    names it rules out standing right after its negation and named as a library, in backticks or by a cue
    ("date-fns, not moment; no new moment imports", "do not add moment or dayjs"), which an edit imports or calls;
    and the subjects of the words it rules out ("never raw hex values": styling), whose code an edit writes
    (`subjects.toml` `matcher_code`: `#3b82f6`). The polarity pass runs only when one may be found (it is most of
    a cold derive's time)."""
    text = cased.text
    negated = {
        n
        for g in cased.negated(lambda: _NEGATED_LIST, _NEGATED_LIST_LOW)
        for t in _LIST_NAME.findall(g)
        if (n := code_name(t))
    }
    negated -= _PROGRAM_NAMES | programs_forbidden
    if negated:
        ticked = {code_name(w) for snippet in snippets for w in _LIST_NAME.findall(snippet)}
        library = _named_as_libraries(text, negated)
        negated &= ticked | library
    coded = topics & _CODED_SUBJECTS
    if not negated and not coded:
        return frozenset(), frozenset()
    ruled = {value for kind, value in prose_polarity(prose(text, tokens=False)) if kind == "code_forbidden"}
    subjects = {TOPIC_OF_WORD[w] for w in ruled if w in TOPIC_OF_WORD} & coded
    return shared(frozenset(negated & ruled)), shared(frozenset(subjects))


_CODED_SUBJECTS = frozenset(subject for _, subject in SUBJECTS.code)  # the matcher sees them in code (`matcher_code`)
_LIST_NAME = re.compile(r"[\w.@/-]+")
# a negation, maybe a verb and fillers, then a list of names ("never npm or pnpm", "do not add new moment imports")
_NEGATED_LIST = re.compile(
    WORDS.negation.pattern
    + rf"\s+(?:(?:{WORDS.negation_verbs})\s+)?(?:(?:{alternation(WORDS.library_fillers)})\s+)*"
    + r"(`?[\w.@/-]+`?(?:\s*(?:,|/|\bor\b|\bnor\b|\band\b)\s*`?[\w.@/-]+`?)*)",
    re.I,
)


def _casefolded(words: list[str]) -> list[str]:
    """Words without spaces, each casefolded, in one call (a casefold never gives a space)."""
    return " ".join(words).casefold().split(" ") if words else []


def _named_as_libraries(text: str, names: set[str]) -> set[str]:
    """Of these names, those the text names as a library (words.toml `library_cues`): after a verb that adds one,
    maybe past fillers and a list ("don't add moment or dayjs"), or before a word for one ("moment imports"); a
    ruled-out English word ("not escaped") is none. A walk over the words, not a pattern per name: over those
    around each place a name opens a word when casefolding keeps each character one (the text's length), over the
    whole text's otherwise (its every word read was most of this walk)."""
    folded = text.casefold()
    if "" in names or len(folded) != len(text):
        return _libraries_among(_casefolded(_LIST_NAME.findall(text)), names)
    out: set[str] = set()
    for at in opening_at(folded, tuple(names)):
        if (at and _LIST_NAME.match(text, at - 1)) or (word := _LIST_NAME.match(text, at)) is None:
            continue  # not where a word opens
        if not (name := _name_of(folded[at : word.end()], names)) or name in out:
            continue
        after = _LIST_NAME.search(text, word.end())
        following = folded[after.start() : after.end()] if after else None
        if following in WORDS.library_words or _added(_words_before(text, at), names):
            out.add(name)
    return out


def _libraries_among(tokens: list[str], names: set[str]) -> set[str]:
    """`_named_as_libraries` over a text's every word (casefolded, in order)."""
    # code_name gives a token or its stem: a token that is neither a name nor a name's stem names none (most tokens)
    distinct = set(tokens)
    naming = distinct & names | {t for t in distinct if "." in t and t.rpartition(".")[0] in names}
    if "" in names:  # every token without a dot is a stem of ""
        naming |= {t for t in distinct if "." not in t}
    out: set[str] = set()
    for i in [i for i, token in enumerate(tokens) if token in naming] if naming else ():
        if not (name := _name_of(tokens[i], names)) or name in out:
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if following in WORDS.library_words or _added(tokens[max(0, i - _LIBRARY_REACH) : i], names):
            out.add(name)
    return out


def _name_of(token: str, names: set[str]) -> str:
    """The one of these names a word (casefolded) gives, as code names it; "" for none."""
    if not (token in names or token.rpartition(".")[0] in names) or (name := code_name(token)) not in names:
        return ""
    return name


def _added(before: list[str], names: set[str]) -> bool:
    """Whether the words before a name end with a verb that adds a library, maybe past fillers and a list's names."""
    for word in reversed(before):
        if word in WORDS.library_verbs:
            return True
        if not (word in WORDS.library_fillers or word in _JOINERS or code_name(word) in names):
            return False
    return False


def _words_before(text: str, at: int) -> list[str]:
    """The `_LIBRARY_REACH` words (casefolded) before the one opening at `at`, read in a window grown until it
    holds them."""
    start, reach = at, 64
    while True:
        start = max(0, start - reach)
        words = _LIST_NAME.findall(text, start, at)
        if start and _LIST_NAME.match(text, start - 1) and _LIST_NAME.match(text, start):
            words = words[1:]  # a word cut by the window
        if len(words) >= _LIBRARY_REACH or not start:
            return _casefolded(words[-_LIBRARY_REACH:])
        reach *= 4


_LIBRARY_REACH = 6  # words back from a name to the verb that adds it ("add new moment, dayjs or luxon")
_JOINERS = frozenset({"or", "and", ","})


def states_rule(type_: str, text: str, cased: _Cased | None = None) -> bool:
    """Whether a memory states a rule, so the places it names are places it rules: a feedback or user memory
    always (it is a correction or a preference); a project memory when it says "never", "always", "only"
    (words.toml `rule_words`). One that states none describes how things are: of its places only the folder its
    title is about and a specific place its headline writes as code count (`_specific_places`), as a passing
    mention of a place in a description is not what it governs (coding dev, every project memory's places:
    precision 0.46 -> 0.36, silence 0.77 -> 0.57).
    A reference memory points where to look (a dashboard, the docs, where a package lives): its places are where
    the information is, not acts it governs, so none count (strands' "model providers live in
    src/strands/models/" at every edit there: coding dev precision 0.46 -> 0.44). `cased`: the text's, when the
    caller has read it."""
    if type_ in RULE_TYPES or type_ != "project":
        return type_ in RULE_TYPES
    cased = cased if cased is not None else _cased(text)
    if cased.low is None or _RULE_LOW is None or _RULE_STARTS is None:
        return RULE_WORDS.search(text) is not None
    return any(_RULE_LOW.match(cased.low, at) for at in opening_at(cased.low, _RULE_STARTS))


def _managers_not_chosen(text: str, named: set[str] | frozenset[str], forbids: set[str]) -> list[str]:
    """A choice among an ecosystem's package managers (two of them named, or one and "package manager") applies to
    each manager it does not prefer, however typed (`pip3`; its runner `npx`, as a runner belongs to its manager:
    issue 49): "use pnpm, never npm" gives npm, npx, yarn, bun, bunx. A rule that only names a manager
    (`npm test`) is not met by its runner: `command_key` strips the runner."""
    out: list[str] = []
    family = PROGRAMS_TABLE.family
    for ecosystem in PM_FAMILIES:
        mine = {family(n) for n in named} & set(ecosystem)
        if len(mine) >= 2 or (mine and PROGRAMS_TABLE.choice.search(text)):
            preferred = {family(n) for n in named if n not in forbids} & mine - {family(n) for n in forbids}
            out += [m for f in ecosystem if f not in preferred or not preferred for m in _MEMBERS[f]]
    return out


Shared = TypeVar("Shared", bound=Hashable)


def shared(values: Shared) -> Shared:
    """One object for equal values: most memories' sets are empty or among a few subjects (each frozenset
    costs ~216 bytes: 20,000 memories held ~40 MB of them, issue 42), and many memories derive the same
    applies-to as another, whole."""
    return cast(Shared, _interned(values))


@lru_cache(maxsize=8192)
def _interned(values: Hashable) -> Hashable:
    return values


def singular(word: str) -> str:
    """A plural code role as its singular (repositories: repository, services: service)."""
    word = word.casefold()
    return (
        word[:-3] + "y"
        if word.endswith("ies")
        else word[:-1]
        if word.endswith("s") and word[:-1] in CODE_ROLES
        else word
    )


def roles_of(name: str) -> frozenset[str]:
    """The code roles a name (BookingRepository, user_service.py, repositories/) plays: its last word, a folder's."""
    out = set()
    for part in name.split("/"):
        stem = part.rsplit(".", 1)[0] if "." in part.strip(".") else part
        words = _NAME_PARTS.findall(stem)
        if words and (role := singular(words[-1])) in CODE_ROLES:
            out.add(role)
    return frozenset(out)


def kinds_named(headline: str) -> frozenset[str]:
    """The file kinds (extensions) whose language a rule's headline names: "CSS" gives css, scss, sass, ..."""
    return frozenset(kind for w in _KIND_NAMED.findall(headline) for kind in _PLACE_KINDS[w.casefold()])


def language_headline_kinds(*headlines: str) -> frozenset[str]:
    """The file kinds of the language a headline is only about ("Python coding conventions", "Ktor Framework
    Patterns", a file name such as `php.instructions.md`): a language's or a framework's name with nothing but words
    of guidance (`headline_guidance`) around it."""
    for headline in headlines:
        if " " not in headline.strip():
            headline = headline.split(".", 1)[0]  # a file's name: its stem
        tokens = [w.casefold() for w in _HEADLINE_WORD.findall(headline)]
        named = [t for t in tokens if t in _LANGUAGES or t in _FRAMEWORKS]
        if named and all(t in named or t in WORDS.headline_guidance for t in tokens):
            return frozenset(kind for t in named for kind in _LANGUAGES.get(t) or _FRAMEWORKS[t])
    return frozenset()


def cues_of(text: str, reading: _Reading | None = None) -> frozenset[str]:
    """Code a rule names, that an edit may write: CamelCase identifiers, scoped packages, dotted
    names (`Day.js` also as `dayjs`), and short backticked snippets (`as any`, `include:`). `reading`: the text's,
    when the caller has read it."""
    reading = reading if reading is not None else _reading(text)
    found = set(CAMEL_RE.findall(text)) | set(_SCOPED.findall(text))
    for dotted in _in_marked(_DOTTED, reading):
        if not PATH_RE.fullmatch(dotted):
            found.add(dotted)
        if dotted.casefold().endswith(".js"):
            found.add(dotted[:-3].casefold().replace(".", "") + "js")
    for snippet in reading.snippets:
        snippet = snippet.strip()
        words = snippet.split()
        if len(words) <= 2 and len(snippet) >= 4 and not PATH_RE.fullmatch(snippet) and not snippet.startswith("-"):
            found.add(snippet)
        elif words and words[0].endswith(":") and len(words[0]) > 3:
            found.add(words[0])  # `include: { user: true }`
    return frozenset(
        c
        for c in found
        if len(c) >= 4
        and c.split()[0].casefold() not in _PROGRAM_NAMES
        and (_CODE_MARK.search(c, 1) or c.endswith("js"))
        and (not ELLIPSIS.search(c) or _TWO_LETTERS.search(ELLIPSIS.sub("", c)))  # `'...'` is any string
        and not _NOT_CODE.fullmatch(c)
        and c.casefold() not in _NAMES_NOT_CODE
    )


def _places(name: str, description: str, reading: _Reading) -> tuple[str, ...]:
    """The globs a rule names: its paths (placeholders such as `{PR}` or `<module>` read as `*`), the file
    kinds it names on their own (`.css`), and a folder named alone (`tests_integ/`) when it is in backticks
    or the memory's headline, not a passing mention in a list."""
    if (placed := _without_placeholders(reading.text)) != reading.text:
        reading = _reading(placed)
    text = reading.text
    headline = _without_placeholders(f"{name}\n{description}")
    ticked = " ".join(reading.snippets)
    # a name pattern without a folder (`test_{module}.py`) is a naming convention, not a place
    places = [p for p in _in_marked(PATH_RE, reading) if "/" in p or "*" not in p or p.startswith("*.")]
    # two words with a slash in prose are alternatives ("lint/format", "if/else", "mysql/postgres"), not a path
    places = [p for p in places if not (_WORD_PAIR.fullmatch(p) and p not in ticked)]
    places += [f"*.{kind}" for kind in _KIND_RE.findall(text)]
    places += _TITLED_DOC.findall(name)  # "Keep the AGENTS.md directory tree current": a document the rule keeps
    places += [
        d for d in _in_marked(_DIR_RE, reading) if d.rstrip("/") not in GENERIC_DIRS and (d in ticked or d in headline)
    ]
    return tuple(dict.fromkeys(g for p in places if (g := _glob_of(p)) and not _everywhere(g)))


def _specific_places(name: str, description: str) -> tuple[str, ...]:
    """The places a project memory that states no rule is about (issue 49 item 3): the folder its title names, and a
    specific place its name or description writes as code (`src/payments/`: a folder or a file of two or more
    literal segments). Any place of its description in prose took coding dev precision 0.458 -> 0.43 and silence
    0.768 -> 0.683 (its labels read "transports live in src/pipecat/transports/" as a layout, not a scope)."""
    headline = f"{name}\n{description}"
    ticked = " ".join(_TICKS.findall(headline))
    specific = tuple(
        g
        for g in _places(name, description, _reading(ticked))
        if _literal_depth(g) >= 2 and (g.endswith("/**") or "." in g.rsplit("/", 1)[-1])
    )
    return tuple(dict.fromkeys(_titled_folders(name) + specific))


def _headline_place(name: str) -> tuple[str, ...]:
    """The place a headline opens with, before a colon ("apps/webapp: Webapp", "frontend: Guidelines",
    "`src/payments/`: how payments work"): what the memory is about. A path there is a place even where two words
    with a slash would read as alternatives in prose; one lowercase word is a folder (a label is capitalised)."""
    lead = _LEADING_PLACE.match(name)
    if not lead:
        return ()
    place = lead[1] if "/" in lead[1] else f"{lead[1]}/"
    return (glob,) if (glob := _glob_of(place)) and not _everywhere(glob) else ()


def _below_titled_folder(name: str, places: tuple[str, ...]) -> tuple[str, ...]:
    """A memory titled with its place ("cli/azd/extensions/x: Agent instructions") reaches that place: a place
    above it that its text names ("use this with `cli/azd/AGENTS.md`", "land the core change in `cli/azd`
    first") is a reference up the tree, not more of its reach."""
    titled = [t for g in _places(name, "", _reading(name)) if not is_wild(t := g.removesuffix("/**"))]

    def above(glob: str) -> bool:
        literal = glob.removesuffix("/**")
        if is_wild(literal) or any(literal == t or literal.startswith(f"{t}/") for t in titled):
            return False
        folder = literal if "." not in literal.rsplit("/", 1)[-1] else literal.rpartition("/")[0]
        return any(t.startswith(f"{folder}/") for t in titled)

    return tuple(g for g in places if not above(g)) if titled else places


@dataclass(frozen=True, slots=True)
class _Reading:
    """A text read once for every reader of it: its backticked snippets, and its words (split at white space) that
    hold a dot or a slash, joined by a space, where each of its paths, folders and dotted names lies (`_in_marked`)."""

    text: str
    snippets: tuple[str, ...]
    marked: str


def _reading(text: str) -> _Reading:
    return _Reading(text, tuple(_TICKS.findall(text)), " ".join([w for w in text.split() if "." in w or "/" in w]))


def _in_marked(rx: re.Pattern[str], reading: _Reading) -> list[str]:
    """What a path, folder or dotted-name pattern finds in the text, in order, found in its marked words only: such a
    pattern matches no white space, nor looks for one beside a match (an edge of the text or a space reads the
    same), and a match holds a dot or a slash. A pass over the whole text cost ~0.05 ms each, a pass over each word
    ~1 us a word."""
    return rx.findall(reading.marked)


def _without_placeholders(text: str) -> str:
    """The text with each placeholder (`{PR_NUMBER}`, `<module>`) as `*`; the text itself when it has none."""
    return _PLACEHOLDER.sub("*", text) if "{" in text or "<" in text else text


def _literal_depth(glob: str) -> int:
    """How many literal segments a glob's path holds before any wildcard (`src/payments/**`: 2)."""
    depth = 0
    for part in glob.split("/"):
        if not part or is_wild(part):
            break
        depth += 1
    return depth


def _titled_folders(name: str) -> tuple[str, ...]:
    """The one folder a project memory's title is about ("Integration tests in tests_integ/"): edits there
    meet it. Files it names and folder patterns (`test/<feature>/`) describe a layout, not a place."""
    return tuple(g for g in _places(name, "", _reading(name)) if g.endswith("/**") and "*" not in g[:-3])


def _everywhere(glob: str) -> bool:
    """A glob every project has files under: a whole language (`**/*.py`) or a file name each folder may hold
    (`**/index.tsx`, `**/__init__.py`): a rule naming one names an example, not a place. A glob of wildcards alone
    (`**/*`, from a placeholder such as `"<package-name>..."`) is every file, and one of each folder under folders
    every project has (`src/*`, `apps/*`: a layout's units) is, as memoryd reads a glob (under any folder), every
    project's code; a literal place (`packages/core`) is one."""
    parts = glob.split("/")
    return (
        glob in EVERY_FILE_OF_A_KIND
        or glob.removeprefix("**/").split(".")[0] in EVERY_FOLDER_FILES
        or not glob.strip("*?/")
        or ("*" in parts and all(part.casefold() in WORDS.generic_dirs or not part.strip("*?") for part in parts))
    )


def _glob_of(token: str) -> str:
    """A path a rule names as a glob relative to the project; "" for what is not a project path."""
    token = token.strip("`'\";:,()").rstrip(".")
    if _TITLED_PAIR.fullmatch(token) or _TITLED_JS.fullmatch(token):
        return ""  # "Yarn/Turbo", "Day.js": names, not paths
    if not token or token.casefold() in WORDS.not_paths or "://" in token or token.startswith("@"):
        return ""
    if token.count("/") == 0 and not token.startswith((".", "*")) and "." not in token:
        return ""
    if token.startswith(".env"):
        return "**/.env*"
    if token.startswith("*."):
        return "**/" + token
    if token.endswith("/"):
        return token + "**"
    if "/" not in token:
        return "**/" + token
    return token


def _forbidden(cased: _Cased, candidates: set[str] | frozenset[str]) -> set[str]:
    """The programs a rule forbids: right after a negation ("never npm or pnpm", "do not use npm",
    "not prettier or eslint"), a list of them joined by commas, slashes, "or", "nor"."""
    if not candidates:
        return set()
    out: set[str] = set()
    names = frozenset(candidates)
    rx_low = _forbidding(names, case_free_form=True) if cased.low is not None else None
    for named in cased.negated(lambda: cast(re.Pattern[str], _forbidding(names, case_free_form=False)), rx_low):
        out |= {w.casefold() for w in _WORD.findall(named)} & candidates
    return out


@lru_cache(maxsize=1024)
def _forbidding(candidates: frozenset[str], case_free_form: bool) -> re.Pattern[str] | None:
    """The pattern of a negation and a list of these programs, built once per set; `case_free_form`: its form
    (`case_free`), None when it has none."""
    name = r"`?(?:" + "|".join(re.escape(c) for c in sorted(candidates, key=len, reverse=True)) + r")`?"
    pattern = (
        WORDS.negation.pattern
        + r"\s+(?:(?:"
        + WORDS.negation_verbs
        + r")\s+)?("
        + name
        + r"(?:\s*(?:,|/|\bor\b|\bnor\b|\band\b)\s*"
        + name
        + r")*)(?![\w-])"
    )
    return case_free(pattern) if case_free_form else re.compile(pattern, re.I)


# A product's name mid-sentence: Recoil, Lingui, TypeORM, GraphQL, NestJS (not code like EventTypeService).
_PROPER = re.compile(r"(?<=[\w,] )[A-Z][a-z]+(?:[A-Z]{2,})?(?![\w-])")
_QUOTED_TEXT = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")


def named_tech(prompt: str) -> list[str]:
    """The product names a prompt gives (capitalised mid-sentence), quoted text aside:
    a technology the project's memories never mention says the prompt is about another stack."""
    text = _QUOTED_TEXT.sub(" ", prompt)
    return [w for w in _PROPER.findall(text) if w.casefold() not in TOPIC_OF_WORD]


def topics_of(text: str) -> frozenset[str]:
    return frozenset(t for t, _ in topic_weights(text))


def topic_weights(text: str, cased: _Cased | None = None) -> tuple[tuple[str, int], ...]:
    """The subjects a text is about, each with how many distinct words of it the text uses (`cased`: the text's,
    when the caller has read it)."""
    found: dict[str, set[str]] = {}
    for word in _topic_words(text, cased):
        found.setdefault(TOPIC_OF_WORD[word], set()).add(word)
    for rx, subject in SUBJECTS.code:  # a hex colour in prose is styling too
        if rx.search(text):
            found.setdefault(subject, set()).add("#")
    # a weak word alone ("my LaTeX table") gives no subject: only beside another of its words
    return tuple(sorted((t, len(ws)) for t, ws in found.items() if len(ws) > 1 or not ws <= SUBJECTS.weak))


# A text lowered (`lexicon.lowered`) is read by lower-case patterns without re.I (half the time: the engine compares
# no case).
_TOPIC_WORDS_LOWER = (
    re.compile(_TOPIC_WORDS.pattern, _TOPIC_WORDS.flags & ~re.I)
    if all(w.isascii() and w == w.lower() for w in TOPIC_OF_WORD)
    else None
)


def _topic_words(text: str, cased: _Cased | None = None) -> set[str]:
    """The subjects' words and phrases a text uses, casefolded."""
    low = cased.low if cased is not None else lowered(text)
    if _TOPIC_WORDS_LOWER is not None and low is not None:
        return set(_TOPIC_WORDS_LOWER.findall(low))
    return {m.casefold() for m in _TOPIC_WORDS.findall(text)}


@dataclass(frozen=True, slots=True)
class _Cased:
    """A text and, when lowering it keeps what a pattern sees (`lexicon.lowered`), its lower case and the places
    a negation word begins there: the patterns opening with a negation are tried at those places only."""

    text: str
    low: str | None
    negations: tuple[int, ...]

    def negated(self, rx: Callable[[], re.Pattern[str]], rx_low: re.Pattern[str] | None) -> list[str]:
        """Group 1 of each match `rx().finditer(self.text)` gives, for a pattern opening with a negation (`rx_low`
        its case-free form): found at the negations' places when the text was lowered, as a scan would find them
        (`rx` is called only when not, as compiling a pattern costs a millisecond)."""
        if self.low is None or rx_low is None or _NEGATION_STARTS is None:
            return [m.group(1) for m in rx().finditer(self.text)]
        out, end = [], 0
        for at in self.negations:
            if at >= end and (m := rx_low.match(self.low, at)) is not None:
                out.append(self.text[m.start(1) : m.end(1)])
                end = m.end()
        return out


def _cased(text: str) -> _Cased:
    low = lowered(text)
    negations = opening_at(low, _NEGATION_STARTS) if low is not None and _NEGATION_STARTS is not None else []
    return _Cased(text, low, tuple(negations))


_NEGATED_LIST_LOW = case_free(_NEGATED_LIST.pattern, _NEGATED_LIST.flags)
_NEGATION_STARTS = openers(WORDS.negation_words) if case_free(WORDS.negation.pattern, WORDS.negation.flags) else None
_RULE_LOW = case_free(RULE_WORDS.pattern, RULE_WORDS.flags)
_RULE_STARTS = openers(WORDS.rule_words) if _RULE_LOW else None
