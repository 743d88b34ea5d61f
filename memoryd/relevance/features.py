"""Memories and acts read into one set of typed features `(kind, value)`, by the extractors of ONE registry
(`EXTRACTORS`): each reads one input (prose, a Bash line, a path, written code) and yields features. Word
lists live in `data/`; no word, product or repository is named in this code."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from memoryd.base import limits
from memoryd.base.text import STOPWORDS
from memoryd.relevance.lexicon import (
    Polarity,
    code,
    lowered,
    opening_at,
    polarity,
    programs,
    subjects,
    words,
)
from memoryd.relevance.shell import parse

Feature = tuple[str, str]  # (kind, value): ("program", "npm"), ("path", "src/payments/charge.ts")

# Kinds a memory and an act share (the matcher's inputs, one weight each per channel): `place` is a memory's
# glob meeting an act's path; `import` and `call` are written code naming a word of the memory. The same value
# weighs differently by how the memory names it: a place or program it rules out (`place_forbidden`,
# `program_forbidden`, `code_forbidden`) or prefers (`program_preferred`), a file kind it names only by its
# language ("TypeScript": `langkind`, weak) rather than as a kind or path (`.ts`: `filekind`); a package manager
# an act only runs a tool through by its runner's own name (`npx eslint`: `runner`) rather than uses itself
# (`npm install`, `npm run build`).
KINDS = (
    "place",
    "place_forbidden",
    "segment",
    "filekind",
    "langkind",
    "role",
    "program",
    "mention",
    "program_forbidden",
    "program_preferred",
    "runner",
    "runner_forbidden",
    "subcommand",
    "import",
    "call",
    "code_forbidden",
    "ident",
    "subject",
    "word",
)
CHANNELS = ("prompt", "command", "edit")
# a memory's kind -> the act's kind it meets (what the triggers look it up by)
MET_BY = {"langkind": "filekind", "program_forbidden": "program", "program_preferred": "program"}
PROSE, COMMAND, PATH, CODE = "prose", "command", "path", "code"

_TICKS = re.compile(r"`([^`\n]{1,200})`")
_PLACEHOLDER = re.compile(r"\{[\w|.-]{1,40}\}|<[\w-]{1,30}>")
_TOKEN = re.compile(r"[^\s`'\"(),;!?\[\]|=]+")
_CAMEL = re.compile(r"^[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]*)+$|^[A-Z]{2,}[a-z][A-Za-z0-9]*$")
_WORD_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_ALPHA = re.compile(r"^[a-z][a-z-]*[a-z]$")
_PAIR = re.compile(r"^[A-Za-z]+/[A-Za-z]+$")  # "lint/format", "Yarn/Turbo": alternatives, not a path
_PROPER = re.compile(r"(?<=[\w,] )[A-Z][a-z]+(?:[A-Z]{2,})?(?![\w-])")  # a product named mid-sentence
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_NAME = re.compile(r"^@?[a-z][\w./-]*[a-z0-9]$")  # a module or function name as code writes it


@dataclass(frozen=True, slots=True)
class Prose:
    """A text read once for every prose extractor: its tokens (outside and inside backticks) and snippets."""

    text: str
    headline: str  # what the text is about: a memory's name and description, a prompt whole
    tokens: tuple[str, ...]
    ticked: frozenset[str]  # tokens written inside backticks
    snippets: tuple[str, ...]  # backticked text


def prose(text: str, headline: str | None = None, *, tokens: bool = True) -> Prose:
    """`tokens=False`: a reading without its tokens, for a reader of its clauses only (`prose_polarity`), which
    spares a pass over every word of the text."""
    text = _PLACEHOLDER.sub("*", text[: limits.APPLIES_DERIVE_MAX_CHARS])
    snippets = tuple(_TICKS.findall(text))
    ticked = frozenset(t.strip(".:") for s in snippets for t in _TOKEN.findall(s))
    words = tuple(t for raw in _TOKEN.findall(text) if (t := raw.strip(".:*").strip())) if tokens else ()
    return Prose(text, text if headline is None else _PLACEHOLDER.sub("*", headline), words, ticked, snippets)


def singular(word: str) -> str:
    """A plural as its singular (repositories: repository, tests: test)."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def is_path(token: str, ticked: frozenset[str] = frozenset()) -> bool:
    """A project path or file name (`src/db.ts`, `db/migrations/`, `.env.local`, `*.sql`), not a URL,
    a scoped package or two words joined by a slash ("lint/format")."""
    if "://" in token or token.startswith("@") or len(token) < 3:
        return False
    if "/" in token:
        return not _PAIR.match(token) or token in ticked
    if token.startswith(".env"):
        return True
    name = token.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].casefold() if "." in name.strip(".") else ""
    w = words()
    return bool(ext) and (ext in w.everyday_kinds or ext in w.named_kinds) and not token[0].isupper()


def file_kind(path: str) -> str:
    """A path's extension, lower case ("" when it has none)."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].casefold() if "." in name.strip(".") else ""


def roles_of(name: str) -> set[str]:
    """The code roles a path or code name plays by its words (BookingRepository, user_service.py, tests/)."""
    known = words().roles
    return {r for part in _WORD_PARTS.findall(name) if (r := singular(part.casefold())) in known}


# ----------------------------------------------------------------------------- prose extractors
def prose_paths(p: Prose) -> Iterator[Feature]:
    """Paths and file names the text names (`src/payments/`, `*.generated.ts`, `.env.local`)."""
    for t in p.tokens:
        if is_path(t, p.ticked):
            yield ("path", t)


def prose_kinds(p: Prose) -> Iterator[Feature]:
    """File kinds the text names alone (`.css`, `*.snap`) and languages its headline names ("plain CSS")."""
    w = words()
    english = programs().english
    for t in _TOKEN.findall(p.text):  # the raw tokens: `p.tokens` have their leading dot stripped
        low = t.casefold().rstrip(".:")
        if low.startswith(".") and low[1:] in w.named_kinds:
            yield ("filekind", low[1:])
    for t in _TOKEN.findall(p.headline):
        low = t.casefold().strip(".:")
        if low in w.language_kinds and (low not in english or t[:1].isupper() or t in p.ticked):
            yield from (("langkind", k) for k in w.language_kinds[low])


def prose_roles(p: Prose) -> Iterator[Feature]:
    """The code roles the headline is about ("business logic in repositories", "BookingRepository")."""
    for t in _TOKEN.findall(p.headline):
        yield from (("role", r) for r in roles_of(t))


def prose_programs(p: Prose) -> Iterator[Feature]:
    """Programs the text names: in a backticked command (`program`, with its subcommand) or in prose
    (`mention`); a program that is an English word only in backticks."""
    table = programs()
    for snippet in p.snippets:
        for c in parse(snippet)[:2]:
            if c.program in table.known or c.program in table.english or c.family in table.known:
                yield ("program", c.family)
                if c.runner and c.runs:
                    yield ("program", c.runs[0])
                if len(c.runs) > 1:
                    yield ("subcommand", " ".join(c.runs[:2]))
    for t in p.tokens:
        low = t.casefold()
        if low in table.known or (low in table.english and t in p.ticked):
            yield ("mention", table.family(low))


def prose_polarity(p: Prose) -> Iterator[Feature]:
    """What a clause rules out after its first forbidding word ("never npm", "not moment", "instead of yarn":
    programs, code names, paths) and the programs it prefers before it ("use pnpm, not npm")."""
    pol = polarity()
    for clause in _cued_clauses(p.text, pol):
        cue = pol.forbid.search(clause)
        if cue is None:
            continue
        tail = clause[cue.end() :]
        if back := pol.resume.search(tail):
            tail = tail[: back.start()]
        for t in _TOKEN.findall(clause[: cue.start()]):
            if program := _program(t.strip(".:*"), p.ticked):
                yield ("program_preferred", program)
        for t in _ruled_out(_TOKEN.findall(tail), pol.scope_end):
            t = t.strip(".:*,")
            if program := _program(t, p.ticked):
                yield ("program_forbidden", program)
            elif is_path(t, p.ticked):
                yield ("path_forbidden", t)
            elif name := code_name(t):
                yield ("code_forbidden", name)


def _cued_clauses(text: str, pol: Polarity) -> list[str]:
    """The text's clauses (`pol.clause.split`) but those in which no `pol.forbid` cue begins: it matches at none of
    the places one of its words opens in the lowered text (a search per clause was most of the polarity pass). A
    clause's edges read as its separators do (none is a word character), so a cue in it matches there too."""
    low = lowered(text)
    if pol.openers is None or pol.forbid_low is None or low is None:
        return pol.clause.split(text)
    starts = [at for at in opening_at(low, pol.openers) if pol.forbid_low.match(low, at)]
    if not starts:
        return []
    cued, begin = [], 0
    for end, after in [(m.start(), m.end()) for m in pol.clause.finditer(text)] + [(len(text), len(text))]:
        if (i := bisect_left(starts, begin)) < len(starts) and starts[i] < end:
            cued.append(text[begin:end])
        begin = after
    return cued


def _ruled_out(tokens: list[str], scope_end: frozenset[str]) -> Iterator[str]:
    """The tokens a forbidding word rules out: up to the first word that ends its scope after something was
    named ("No secrets in git": secrets, not git; "never in `layout.tsx`": layout.tsx)."""
    named = False
    for t in tokens:
        if t.casefold() in scope_end:
            if named:
                return
            continue
        named = named or t.casefold() not in STOPWORDS
        yield t


def _program(token: str, ticked: frozenset[str]) -> str:
    """The family of a program a token names ("" when it names none; an English word only in backticks)."""
    table, low = programs(), token.casefold()
    return table.family(low) if low in table.known or (low in table.english and token in ticked) else ""


@lru_cache(maxsize=8192)  # the same words recur in every memory
def code_name(token: str) -> str:
    """A token as the name code would import or call it by (`Moment.js`: moment), "" for a plain word."""
    low = token.casefold()
    stem, _, ext = low.rpartition(".")
    if stem and ext in words().everyday_kinds:
        low = stem
    if len(low) < 3 or not _NAME.match(low) or low in words().plain or low in STOPWORDS:
        return ""
    return low


def prose_acts(p: Prose) -> Iterator[Feature]:
    """Acts the text is about (committing, pushing, pull requests) as the commands that do them."""
    for command, _, about in words().acts:
        if about.search(p.headline):
            yield ("subcommand", command)


def prompt_acts(p: Prose) -> Iterator[Feature]:
    """Acts a prompt asks for ("commit this", "open a PR") as the commands that do them."""
    for command, asks, _ in words().acts:
        if asks.search(p.text):
            yield ("subcommand", command)


def prose_idents(p: Prose) -> Iterator[Feature]:
    """Code names (CamelCase, snake_case, dotted, scoped packages), case-folded."""
    for t in p.tokens:
        if t.startswith("@") and "/" in t:
            yield ("ident", "/".join(t.casefold().split("/")[:2]))
        elif _CAMEL.match(t) or ("_" in t.strip("_") and any(c.isalpha() for c in t) and "/" not in t):
            yield ("ident", t.casefold())


def prose_subjects(p: Prose) -> Iterator[Feature]:
    """The classes of coding work the headline names (`data/subjects.toml`)."""
    s = subjects()
    for m in s.words.findall(p.headline):
        yield ("subject", s.of_word[m.casefold()])


def prose_words(p: Prose) -> Iterator[Feature]:
    """The headline's informative words (plain and stop words aside), singular."""
    plain = words().plain
    for t in _TOKEN.findall(p.headline):
        low = t.casefold().strip(".:")
        if len(low) >= 4 and _ALPHA.match(low) and low not in plain and low not in STOPWORDS:
            yield ("word", singular(low))


# ----------------------------------------------------------------------------- act extractors
def command_features(line: str) -> Iterator[Feature]:
    """A Bash line's programs by family and as run (`npx eslint` is npm's and eslint's), subcommands, paths."""
    for c in parse(line):
        yield ("runner" if c.runner and c.program != c.family else "program", c.family)  # npx: npm's runner
        if c.runner and c.runs:
            yield ("program", programs().family(c.runs[0]))
        if len(c.runs) > 1:
            yield ("subcommand", " ".join(c.runs[:2]))
        for path in c.paths():
            yield from path_features(path)


def path_features(path: str) -> Iterator[Feature]:
    """A path, its file kind and the code roles its folders and name play."""
    path = path.removeprefix("./")
    yield ("path", path)
    generic = words().generic_dirs
    for part in path.split("/")[:-1]:
        if part.casefold() not in generic and len(part) >= 3:
            yield ("segment", part.casefold())
    if kind := file_kind(path):
        yield ("filekind", kind)
    yield from (("role", r) for r in roles_of(path))


def code_features(text: str) -> Iterator[Feature]:
    """What written code imports (by top module), calls, names (CamelCase) and the subjects it shows."""
    text = text[: limits.TOOL_RECALL_EDIT_CHARS]
    table = code()
    for rx, _ in table.imports:
        for m in rx.findall(text):
            yield ("import", _top_module(m))
    for rx in table.calls:
        for m in rx.findall(text):
            yield ("call", m.casefold())
    for t in _TOKEN.findall(text):
        t = t.strip(".:{}<>")
        if _CAMEL.match(t):
            yield ("ident", t.casefold())
    for rx, subject in subjects().code:
        if rx.search(text):
            yield ("subject", subject)


def _top_module(module: str) -> str:
    """A module by the name a memory gives its package: `@scope/pkg`, `date-fns` of `date-fns/format`."""
    module = module.casefold()
    if module.startswith("@"):
        return "/".join(module.split("/")[:2])
    for sep in ("/", "::", "."):
        if sep in module and not module.startswith((".", "/")):
            return module.split(sep)[0] if "." not in module.split("/")[0] or sep != "/" else module
    return module


# ----------------------------------------------------------------------------- the registry
Extractor = Callable[..., Iterable[Feature]]
# name -> (the input it reads, who it reads: "memory", "prompt" or both, the function)
EXTRACTORS: dict[str, tuple[str, frozenset[str], Extractor]] = {
    "paths": (PROSE, frozenset({"memory", "prompt"}), prose_paths),
    "kinds": (PROSE, frozenset({"memory"}), prose_kinds),
    "roles": (PROSE, frozenset({"memory", "prompt"}), prose_roles),
    "programs": (PROSE, frozenset({"memory", "prompt"}), prose_programs),
    "polarity": (PROSE, frozenset({"memory"}), prose_polarity),
    "memory_acts": (PROSE, frozenset({"memory"}), prose_acts),
    "prompt_acts": (PROSE, frozenset({"prompt"}), prompt_acts),
    "idents": (PROSE, frozenset({"memory", "prompt"}), prose_idents),
    "subjects": (PROSE, frozenset({"memory", "prompt"}), prose_subjects),
    "words": (PROSE, frozenset({"memory", "prompt"}), prose_words),
    "command": (COMMAND, frozenset({"command"}), command_features),
    "path": (PATH, frozenset({"edit"}), path_features),
    "code": (CODE, frozenset({"edit"}), code_features),
}


def run(reader: str, value: object) -> frozenset[Feature]:
    """Every feature the registry's extractors for this reader yield from one input."""
    return frozenset(f for _, readers, fn in EXTRACTORS.values() if reader in readers for f in fn(value))


@lru_cache(maxsize=256)
def prompt_features(prompt: str) -> frozenset[Feature]:
    return run("prompt", prose(prompt))


def named_products(prompt: str) -> list[str]:
    """Products a prompt names (capitalised mid-sentence, quotes aside), for the `unknown` input."""
    return [w for w in _PROPER.findall(_QUOTED.sub(" ", prompt)) if w.casefold() not in subjects().of_word]
