"""Forbid triggers proposed from a rule's prose ("use pnpm, never npm" → commands [npm, npx], instead "use
pnpm"), for `memoryd save`, the HTTP save and extraction to write beside the memory and to say so. Only what a
forbidding clause names is proposed: a program, a protected path with its verb, a library with an import cue.

It does NOT write files; the caller puts the proposal through the one write path, where a person reviews it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest
from memoryd.guard.acts import unwrapped
from memoryd.guard.match import module_spec
from memoryd.guard.package_evidence import code_packages, is_package, lead_stripped
from memoryd.guard.package_evidence import rows as evidence_rows
from memoryd.guard.products import conditional, listed_products, main_package
from memoryd.guard.rules import KEEP_OUT, Forbid, parse_forbid
from memoryd.relevance.lexicon import programs, shared_rows

_CODE = re.compile(r"`([^`\n]{1,120})`")
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z*`])|\n+|;\s*")
# A forbidding clause ends at a dash, a colon, a bracket (opened, or closed: "`yarn build` (not `npm run
# build`), `yarn dev`" ends at its own bracket) or a turn ("but", "so", ", use ..."); a bare comma does not end it
# ("never read, display, or output `.env`, `.env.local`").
_CLAUSE_END = re.compile(
    r"\s[-–—]\s|:|[()]|\binstead\b|\bbut\b|\bso\b|\bbecause\b|\bwhen\b|\bunless\b|\bif\b"
    r"|,\s*(?=(?:use|prefer|run|always|only|then|which|and\s+use)\b)",
    re.I,
)
# Markdown's marks at a line's start: a bullet, a heading, a quote (each before a space), or bold; a `*` right
# before a name is a glob's (`*.generated.ts files are written by ...`), not a mark.
_MARKS = re.compile(r"^(?:[-*+#>]+(?=\s)|\*\*|__|\s)+")
_BULLET = re.compile(r"\s*(?:[-*+]|\d+[.)])\s")
_TOOL_LEAD = frozenset({"", "use", "run", "or", "and", "nor", "with", "via", "using", "ever", "call", "never"})
_RUN_VERBS = frozenset({"run", "use", "call", "execute", "invoke", "type", "using", "running"})
_PLACES = "in|into|under|inside|within|to|from"  # prepositions that lead a place ("files under legacy/")
_WORD = re.compile(r"[\w@./*<>{}\[\]$-]+")
_INSTEAD = re.compile(  # what to use ends at a turn, a stop or a bracket that turns ("use pnpm (not npm)")
    r"\b(uses?|prefers?|run)\b\s+((?:[^,.;:\n]|\.(?=[\w$]))(?:[^,.;:\n]|\.(?=[\w$])){0,79}?)"
    r"(?=\s+(?:instead|for|rather|over|not)\b|\s*\(\s*not\b|[,;:\n]|\.(?![\w$])|$)",
    re.I,
)


@dataclass(frozen=True)
class EnvironmentVariable:
    """How a program picks its environment (an [environment_variables] row of prose.toml)."""

    variable: str
    default: frozenset[str]  # the clause's words for the environment it runs in when the variable is unset
    disposable: tuple[str, ...]  # values of environments whose data a test run throws away


@dataclass(frozen=True)
class ProseRows:
    negations: tuple[str, ...]
    writes: frozenset[str]
    reads: frozenset[str]
    imports: frozenset[str]
    creates: frozenset[str]
    file_nouns: frozenset[str]
    library_cues: frozenset[str]
    library_suffixes: tuple[str, ...]
    phrases: dict[str, str]
    programs: frozenset[str]
    placeholders: tuple[str, ...]
    after: tuple[str, ...]
    bare_verbs: tuple[str, ...]
    not_names: frozenset[str]
    fillers: tuple[str, ...]
    implied: dict[str, str]
    program_aliases: dict[str, str]
    word_aliases: dict[str, str]
    not_subcommands: frozenset[str]
    list_leads: tuple[str, ...]
    adverb_suffixes: tuple[str, ...]
    pronouns: tuple[str, ...]
    subject_ends: frozenset[str]
    code_list: re.Pattern[str]  # code spans (masked to `x`s) and their joins: a list of code and nothing else
    code_bracket: re.Pattern[str]  # a bracket that only holds such a list ("(`pnpm dev`)")
    explanations: tuple[str, ...]
    ability: frozenset[str]
    environment: re.Pattern[str]  # a clause that names one environment: a command in it is scoped
    environments: tuple[str, ...]
    environment_variables: dict[str, EnvironmentVariable]
    correlative: re.Pattern[str]  # "neither" and the one word before it ("use neither ..."), read as `correlated`
    correlated: str
    file_edits: frozenset[str]  # verbs that keep a file named by name and extension from a change
    file_extensions: frozenset[str]  # extensions of a file a clause may name without a `/` (`CLAUDE.md`)
    place_pronouns: tuple[str, ...]  # objects that name the memory's own place ("this directory")
    tool_kinds: dict[str, frozenset[str]]  # a tool's name -> the kinds it is of (a type checker, a linter)


def _environment_form(d: dict[str, Any]) -> re.Pattern[str]:
    envs = "|".join(re.escape(e) for e in d["environments"])
    nouns = "|".join(re.escape(n) for n in d["environment_nouns"])
    place = rf"\b(?:in|on|against)\s+(?:the\s+|an?\s+)?(?:{envs})\b"
    return re.compile(rf"{place}|\b(?:{envs})\s+(?:{nouns})\b", re.I)


def _code_list_forms(d: dict[str, Any]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The `[code_lists]` rows as two patterns over masked text: a list of code spans, and a bracket holding one."""
    joins = "|".join(rf"\b{re.escape(j)}\b" for j in d["joins"])
    listed = rf"`x+`(?:\s*(?:,|/|{joins})(?:\s*(?:{joins}))?\s*`x+`)*"
    return re.compile(rf"[\s,;.]*{listed}[\s,;.]*", re.I), re.compile(rf"\(\s*{listed}\s*\)", re.I)


def _kinds_of_tools(d: dict[str, list[str]]) -> dict[str, frozenset[str]]:
    """The `[tool_kinds]` rows by tool: `ruff` -> {linters, formatters}."""
    out: dict[str, set[str]] = {}
    for kind, names in d.items():
        for name in names:
            out.setdefault(name, set()).add(kind)
    return {name: frozenset(kinds) for name, kinds in out.items()}


@cache
def rows() -> ProseRows:
    text = resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text(encoding="utf-8")
    d: dict[str, Any] = tomllib.loads(text)
    negations, cues = shared_rows("negations", "guard"), shared_rows("library_cues", "guard")
    tools = _kinds_of_tools(d["tool_kinds"])
    return ProseRows(
        tuple(sorted(negations["words"], key=len, reverse=True)),
        frozenset(d["verbs"]["writes"]),
        frozenset(d["verbs"]["reads"]),
        frozenset(d["verbs"]["imports"]),
        frozenset(d["verbs"]["creates"]),
        frozenset(d["verbs"]["file_nouns"]),
        frozenset(cues["words"]),
        cues["suffixes"],
        dict(d["phrases"]),
        frozenset(d["programs"]["words"]) | frozenset(programs().family_of) | (frozenset(tools) - programs().english),
        tuple(d["placeholders"]["prefixes"]),
        negations["after"],
        tuple(sorted(cues["verbs"], key=len, reverse=True)),
        frozenset(cues["not_names"]),
        cues["fillers"],
        dict(d["implied"]),
        dict(d["aliases"]["programs"]),
        dict(d["aliases"]["words"]),
        frozenset(d["programs"]["not_subcommands"]),
        tuple(d["list_leads"]["words"]),
        tuple(d["programs"]["adverb_suffixes"]),
        tuple(sorted(d["pronouns"]["words"], key=len, reverse=True)),
        frozenset(d["pronouns"]["subject_ends"]),
        *_code_list_forms(d["code_lists"]),
        tuple(d["code_lists"]["explanations"]),
        frozenset(d["code_lists"]["ability"]),
        _environment_form(d["code_lists"]),
        tuple(d["code_lists"]["environments"]),
        {
            program: EnvironmentVariable(row["variable"], frozenset(row["default"]), tuple(row["disposable"]))
            for program, row in d["environment_variables"].items()
        },
        re.compile(rf"(?:\b([A-Za-z]+)[ \t]+)?\b(?:{'|'.join(map(re.escape, d['correlatives']['words']))})\b", re.I),
        d["correlatives"]["as"],
        frozenset(d["verbs"]["file_edits"]),
        frozenset(d["files"]["extensions"]),
        tuple(sorted(d["pronouns"]["places"], key=len, reverse=True)),
        tools,
    )


@dataclass
class _Found:
    commands: list[str]
    writes: list[str]
    reads: list[str]
    imports: list[str]
    creates: list[str] = field(default_factory=list)
    instead: str = ""
    contrasts: list[tuple[str, str]] = field(default_factory=list)  # (Y, X) of an "X, not Y" that named nothing
    known: frozenset[str] = frozenset()  # packages the memory's own code imports or installs
    place: str = ""  # the memory's own place, which its headline opens with (`packages/clients/**`)

    def size(self) -> int:
        return len(self.commands) + len(self.writes) + len(self.reads) + len(self.imports) + len(self.creates)


def propose(name: str, description: str, body: str) -> Forbid:
    """The forbid triggers a rule's text states (empty when it forbids nothing a trigger can name)."""
    text = f"{name}\n{description}\n{body}"
    found = _Found([], [], [], [], known=code_packages(text), place=_headline_place(name, description))
    heading_neg, lead_neg, previous = "", "", ""
    for line in text.splitlines():
        stripped = _correlated(_unmarked(line))
        if not stripped:
            heading_neg = ""
            continue
        bullet = _BULLET.match(line) is not None
        inherited = heading_neg if line.lstrip().startswith(("-", "*")) else ""
        if bullet and lead_neg and _negated(stripped) is None:
            _listed_commands(lead_neg, stripped, found)
        size = found.size()
        for sentence, lead in _pieces(stripped):
            if lead and _negated(sentence, found.known) is None:
                if found.size() == size:  # the lead named nothing itself: its list is what it forbids
                    _listed_commands(lead, sentence, found)
            else:
                _read_sentence(sentence, inherited, previous, found)
            previous = sentence
        heading, lead = _lead_of(stripped) if found.size() == size else ("", "")
        if stripped.endswith(":"):
            heading_neg = heading  # a bullet may lead too ("- Never touch:" over nested bullets)
        if not bullet:
            lead_neg = lead
    aliased = [a for c in _collapse(found.commands) for a in _aliased(c)]
    commands = [c for c in aliased if not c.startswith(KEEP_OUT)] + [c for c in aliased if c.startswith(KEEP_OUT)]
    forbid = Forbid(
        tuple(dict.fromkeys(commands))[:20],
        tuple(dict.fromkeys(found.writes))[:20],
        tuple(dict.fromkeys(found.reads))[:20],
        tuple(dict.fromkeys(found.imports))[:20],
        tuple(dict.fromkeys(found.creates))[:20],
    )
    if not forbid:
        return forbid
    named = [*forbid.imports, *(c.split()[0] for c in forbid.commands if not c.startswith(KEEP_OUT))]
    said = next((x for y, x in found.contrasts if any(re.search(rf"\b{re.escape(n)}\b", y) for n in named)), "")
    instead = found.instead or said or _instead_of(f"{description}\n{body}", forbid)
    return replace(forbid, instead=instead)


def _correlated(line: str) -> str:
    """A two-part negation read as one: "Use neither npm nor yarn" as "never use npm nor yarn" ([correlatives])."""
    r = rows()
    for m in reversed(list(r.correlative.finditer(_masked(line)))):  # code (`neither=1`) says no "neither"
        line = line[: m.start()] + f"{r.correlated} {m.group(1) or ''}".rstrip() + line[m.end() :]
    return line


def _lead_of(line: str) -> tuple[str, str]:
    """(heading, lead): the verbs a line that forbids but names nothing itself gives the bullets under it. A line
    ending in a colon ("Never touch:") gives them as a clause's; another ("NEVER wipe the database", "## Commands to
    avoid") only to bullets of code. A line that names what it forbids ("Use pnpm, never npm") is a rule, not a lead:
    the bullets under it (`pnpm install`) are not forbidden."""
    last = _SENTENCES.split(line)[-1]
    neg = _negated(last)
    if neg is None:
        return "", ""
    return (neg[0], "") if line.endswith(":") else ("", neg[0])


def _read_sentence(sentence: str, inherited: str, previous: str, found: _Found) -> None:
    """What one sentence (or the piece of it before or after a lead's colon) forbids, and its instead line."""
    neg = _negated(sentence, found.known)
    if neg is None and inherited:
        neg = (inherited, sentence)
    if neg is None:
        return
    size, proposed = found.size(), len(found.commands)
    _read_clause(neg[0], neg[1], found, sentence)
    found.commands[proposed:] = _not_chosen(found.commands[proposed:], sentence, neg[1])
    if found.size() == size:
        _pronoun_object(neg[0], neg[1], sentence, previous, found)
    if found.size() == size:
        found.commands += _contrasted_tools(sentence, neg[1])
    grew = found.size() > size
    said, contrast = _instead_in(sentence, neg[1])
    if contrast and not grew:
        found.contrasts.append((neg[1].casefold(), said))  # kept if the memory forbids its Y elsewhere
    else:
        found.instead = found.instead or said


def _not_chosen(commands: list[str], sentence: str, part: str) -> list[str]:
    """The commands a clause forbids, less those of the package manager the sentence chooses before its negation
    ("`yarn build` (not `npm run build`)", "`pnpm i`, not `npm i` or `pnpm install --shamefully-hoist`"): when the
    clause forbids another manager too, the chosen one's own commands are the rule's, never what it forbids."""
    at = sentence.rfind(part) if part.strip() else -1
    family = programs().family_of
    chosen = {family[w] for w in re.findall(r"[\w-]+", sentence[:at].casefold()) if w in family} if at > 0 else set()
    forbidden = {family.get(c.split()[0], "") for c in commands} - {""}
    if not chosen or not forbidden - chosen:
        return commands
    return [c for c in commands if family.get(c.split()[0], "") not in chosen]


def _pieces(line: str) -> list[tuple[str, str]]:
    """(piece, lead) for each sentence of a line: a forbidding lead before a colon followed by its own forbidding
    clause or by a list ("NEVER wipe the database: never run `rails db:drop`, ..." or "...: `rails db:drop`,
    `rails db:reset`") is two pieces, the second with the lead's verbs; any other sentence is one piece."""
    out = []
    for sentence in _SENTENCES.split(line):
        at = _clause_masked(sentence).find(":")
        lead = _negated(sentence[:at]) if at > 0 else None
        rest = sentence[at + 1 :].strip()
        if lead is None or _leads_a_list(lead[1]) or _negated(rest) is None and not _listed(rest):
            out.append((sentence, ""))
        else:
            out += [(sentence[:at], ""), (rest, lead[0])]
    return out


def _listed(item: str) -> list[str]:
    """The code spans of a list item that is only code and separators ("`rails db:drop`", "`a`, `b`, or `c`"; an
    explanation after a dash, colon or bracket allowed), else none: "`pnpm gen` regenerates them" is a sentence."""
    r = rows()
    head = re.split("|".join(re.escape(e) for e in r.explanations), _masked(item), maxsplit=1)[0]
    if not r.code_list.fullmatch(head):
        return []
    return _CODE.findall(item[: len(head)])


def _listed_commands(lead: str, item: str, found: _Found) -> None:
    """The commands a list under a forbidding lead names; a lead that keeps files from a change or a read ("never
    edit generated files") lists files, so its items propose no command."""
    if _verb_words(lead) & (rows().writes | rows().reads):
        return
    commands = [c for span in _listed(item) if (c := _command(span.strip(), code=True, run=True))]
    scope = _environment_of(lead + " " + item)
    found.commands += _in_environment(commands, scope) if scope else commands


def _environment_of(text: str) -> str:
    """The one environment a clause scopes its commands to ("in development", "the dev database"), "" for none."""
    m = rows().environment.search(_masked(text))
    if m is None:
        return ""
    return next(e for e in rows().environments if re.search(rf"\b{re.escape(e)}\b", m.group(0), re.I))


def _in_environment(commands: list[str], scope: str) -> list[str]:
    """The commands a clause forbids in one environment that a trigger can say: those whose program picks its
    environment by a variable ([environment_variables] rows) when `scope` is the one it runs in by default, with
    `!VARIABLE=value` for each disposable environment (`rails db:reset`, `!RAILS_ENV=test`); the others none."""
    out = []
    for command in commands:
        program = next(iter(unwrapped(command.split())[0]), "")  # `bundle exec rake x` runs rake
        row = rows().environment_variables.get(program.rsplit("/", 1)[-1])
        if row is not None and scope.casefold() in row.default:
            out += [command, *(f"!{row.variable}={value}" for value in row.disposable)]
    return out


def _masked(text: str) -> str:
    """The text with each code span's inside blanked to `x`s, the same length: prose marks found in it are not
    in code."""
    return _CODE.sub(lambda m: "`" + "x" * (len(m.group(0)) - 2) + "`", text)


def _clause_masked(text: str) -> str:
    """The text masked for finding a clause's end: code blanked, and the brackets that only hold code ("start the
    dev server (`pnpm dev`)") made spaces, so the code in them stays in the clause."""
    return rows().code_bracket.sub(lambda m: " " + m.group(0)[1:-1] + " ", _masked(text))


def _unmarked(line: str) -> str:
    return _MARKS.sub("", line.strip()).strip()


def _negated(sentence: str, known: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(the verb phrase around the object, the forbidden part) of a sentence that forbids, else None. `known`: the
    packages the memory's code names, which "no" forbids bare ("no axios")."""
    lowered = _masked(sentence.casefold())  # code says no "never"
    for word in rows().after:
        m = re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", lowered)
        if m is not None:  # "axios is forbidden": the forbidden part is the clause before the words
            part = re.split(r"[,:]", sentence[: m.start()])[-1]
            return part.casefold(), part
    for word in rows().negations:
        m = re.search(rf"(?<![\w=-]){re.escape(word)}(?![\w-])", lowered)
        if m is None:
            continue
        if word == "no" and not _code_follows(sentence, m.end()) and not _known_follows(sentence, m.end(), known):
            continue  # "no" forbids only a named thing ("no `npm install`"), not "no disabling constraints"
        tail = sentence[m.end() :]
        cut = _CLAUSE_END.search(
            _clause_masked(tail) if word not in rows().ability else _masked(tail)
        )  # a colon inside code (`npm run build:client`) ends nothing
        part = tail[: cut.start()] if cut and cut.start() > 0 else tail
        if cut and tail[cut.start()] == ":" and _leads_a_list(part):
            rest = tail[cut.end() :]  # "never run commands that discard work, including: `git restore .`, ..."
            after = _CLAUSE_END.search(re.sub(r"[:()]", " ", rest))  # a bracket in the list holds its items
            part = part + " " + (rest[: after.start()] if after and after.start() > 0 else rest)
        if word in ("instead of", "rather than"):
            part = part.split(",", 1)[0]  # "instead of yarn, use pnpm": the comma turns the sentence
        verbs = word if word in ("instead of", "rather than") else _verb_phrase(sentence[: m.start()], part)
        return verbs, part
    return None


def _leads_a_list(part: str) -> bool:
    """The words before a colon lead a list of what the clause forbids: a list word ("including:") or the verb
    itself ("never request or read: .env, secrets/")."""
    r = rows()
    lowered = part.casefold().rstrip()
    last = lowered.rsplit(None, 1)[-1] if lowered else ""
    return lowered.endswith(r.list_leads) or last in r.writes | r.reads | r.creates | r.imports


def _code_follows(sentence: str, at: int) -> bool:
    return sentence[at:].lstrip().startswith("`")


def _known_follows(sentence: str, at: int, known: frozenset[str]) -> bool:
    following = sentence[at:].split()
    return bool(following) and following[0].strip(".,;:").casefold() in known


def _verb_phrase(before: str, part: str) -> str:
    return f"{before[-40:]} {part[:60]}".casefold()


def _read_clause(verbs: str, part: str, found: _Found, sentence: str = "") -> None:
    r = rows()
    size = found.size()
    code = _CODE.findall(part)
    spans = [(c, True) for c in code] + [(w, False) for w in _bare_words(_CODE.sub(" ", part) if code else part)]
    lowered = part.casefold()
    for phrase, spec in r.phrases.items():
        if phrase in lowered:
            found.commands.append(spec)
    vwords = _verb_words(verbs)
    scope: str | None = None  # read once, at the first command: a search of the whole clause
    scoped: list[str] = []  # the commands of a clause scoped to one environment
    if not code and (said := _prose_command(part)):
        found.commands.append(said)
        return
    for span, in_code in spans:
        span = span.strip() if in_code else _prose_word(span)  # `git restore .` keeps its dot
        if not span or code and not in_code and span.casefold() not in programs().family_of:
            if span and _edited_file(span, part):  # or as a file after a verb of change ("CLAUDE.md or `.claude/`")
                found.writes.append(span)
            continue  # beside code, a bare word counts only as a package manager ("never npm, yarn or `bun test`")
        if _is_path(span, code=in_code) or not code and _placed(span, part):
            for kind in _path_kinds(vwords, part):
                if kind == "writes":
                    found.writes.append(_glob(span))
                elif kind == "reads":
                    found.reads.append(_glob(span))
                elif kind == "creates" and (glob := _new_files_glob(span, part)):
                    found.creates.append(glob)
            continue
        if _edited_file(span, part):
            found.writes.append(span)
            continue
        if code and span.startswith("-") and _leads(span, part) and (flagged := _flag_command(span, sentence or part)):
            found.commands.append(flagged)
            continue
        command = _command(span, code=in_code, run=bool(vwords & _RUN_VERBS))
        if command and scope is None:
            scope = _environment_of(part)
        if command and scope:
            scoped.append(command)  # forbidden in one environment: a trigger alone would hold it in all
            continue
        if command:
            found.commands.append(command)
            continue
        library = _library(span, part, code=in_code)
        if library and not _scoped(sentence, part):
            found.imports.append(library)
    found.commands += _in_environment(scoped, scope) if scope else []
    if not code and not _scoped(sentence, part) and not _bracketed(sentence, part):
        named = _bare_libraries(part)
        if not named and found.size() == size:
            named = _evidenced_names(part, sentence, found.known)
        found.imports += named
    if not _scoped(sentence, part) and not _bracketed(sentence, part):
        found.imports += _product_imports(part, sentence, vwords, found.known)


def _product_imports(part: str, sentence: str, vwords: set[str], known: frozenset[str]) -> list[str]:
    """The packages of the products a forbidding clause names (products.py): as its own list ("don't use MUI or
    Chakra UI"), or in the bracket after its library word ("NEVER use other icon libraries (Font Awesome, Heroicons,
    etc.)": its other items are examples, skipped). A package the memory's code or the words before the negation
    use ("Use `react-redux` hooks, not Redux Toolkit") is never proposed, nor any after a clause with an exception."""
    r = rows()
    leads = frozenset(r.imports | set(r.bare_verbs) | set(r.fillers) | set(evidence_rows().leads))
    at = sentence.rfind(part) if part.strip() else -1
    after = re.sub(r"^\s*\([^()]*\)", "", sentence[at + len(part) :]) if at >= 0 else ""
    if conditional(after):
        return []  # "instead of Day.js unless timezone handling is needed": a trigger would hold the exception
    products = listed_products(_after_list_lead(_CODE.sub(" ", part)), leads, whole=True)
    products += listed_products(_library_bracket(part, sentence, vwords), leads, whole=False)
    used = known | {w.strip("`,*.;:()") for w in sentence[: max(at, 0)].split()}
    return [p for product in products for p in product.packages if not any(module_spec((p,), u) for u in used if u)]


def _library_bracket(part: str, sentence: str, vwords: set[str]) -> str:
    """The list in the bracket right after a clause that forbids importing a kind of library ("use other icon
    libraries (Font Awesome, ...)"): the clause ends at the bracket, whose items are what it forbids."""
    words = part.split()
    if not vwords & rows().imports or not words or words[-1].casefold().strip(".,") not in rows().library_cues:
        return ""
    at = sentence.rfind(part)
    m = re.match(r"\s*\(([^()]*)\)", sentence[at + len(part) :]) if at >= 0 else None
    return _after_list_lead(m.group(1)) if m else ""


def _after_list_lead(text: str) -> str:
    """The list after its lead ("libraries such as MUI or Chakra" -> "MUI or Chakra"), else the text."""
    leads = "|".join(re.escape(w) for w in rows().list_leads)
    cut = list(re.finditer(rf"(?<!\w)(?:{leads})(?!\w)", text, re.I))
    return text[cut[-1].end() :] if cut else text


def _bracketed(sentence: str, part: str) -> bool:
    """The clause is an aside its bracket closes ("the real executable (cursor-agent, not cursor)"): its bare words
    name no package, as a bracket of prose proposes none ([code_lists])."""
    at = sentence.rfind(part) if part.strip() else -1
    return at >= 0 and sentence[at + len(part) :].lstrip().startswith(")")


def _prose_word(word: str) -> str:
    """A word of prose without the stops and the bold marks around it ("**Never modify CLAUDE.md**" names
    `CLAUDE.md`, not the glob `CLAUDE.md**`); a glob's own `**` stands by a slash (`src/**`, `**/x.ts`)."""
    word = word.strip().rstrip(".,:;")
    word = re.sub(r"^(?:\*\*|__)(?!/)", "", word)
    return re.sub(r"(?<!/)(?:\*\*|__)$", "", word).rstrip(".,:;")


def _pronoun_object(verbs: str, part: str, sentence: str, previous: str, found: _Found) -> None:
    """A forbidding verb whose object is a pronoun ("Do not edit them") forbids its antecedent: the subject places
    of the same sentence before the negation ("Files under gen/ are generated, never edit them"), else of the
    sentence before ("The markdown files in documents/ ... are auto-generated ... Do not edit them"), else for a
    place pronoun ("this directory") the memory's own place (`_headline_place`)."""
    r = rows()
    verb = "|".join(re.escape(v) for v in sorted(r.writes | r.reads, key=len, reverse=True))
    pronoun = "|".join(re.escape(p) for p in (*r.place_pronouns, *r.pronouns))
    m = re.match(rf"\s*(?:(?:{verb})\s+(?:or|and)\s+)*(?:{verb})\s+({pronoun})(?![\w'’-])", part, re.I)
    if m is None:
        return
    at = sentence.rfind(part) if part.strip() else -1
    places = _subject_places(sentence[:at]) if at > 0 else []
    places = places or _subject_places(previous)
    if not places and found.place and m.group(1).casefold() in r.place_pronouns:
        places = [found.place]  # "Do not edit this directory": the place the headline opens with
    for kind in _path_kinds(_verb_words(verbs), part):
        target = found.writes if kind == "writes" else found.reads if kind == "reads" else None
        if target is not None:
            target += places


def _subject_places(sentence: str) -> list[str]:
    """The places a sentence's subject names: those before its first subject-ending verb ("The markdown files in
    documents/ and its subdirectories are ..." -> documents/**); none when no such verb ends a subject."""
    masked = _masked(sentence.casefold())
    ends = "|".join(re.escape(w) for w in rows().subject_ends)
    m = re.search(rf"(?<![\w-])(?:{ends})(?![\w-])", masked)
    if m is None:
        return []
    subject = sentence[: m.start()]
    code = _CODE.findall(subject)
    spans = [c.strip() for c in code if _is_path(c.strip(), code=True)]
    spans += [w.rstrip(".,:;") for w in _WORD.findall(_CODE.sub(" ", subject))]
    return [_glob(s) for s in spans if _is_path(s, code=s in code) and not _kind_of_files(s, subject)]


def _kind_of_files(span: str, text: str) -> bool:
    """`.md` before a file noun ("All `.md` files in this directory") names a kind of file, not a place: with no
    place beside it, the kind alone would widen the rule to every such file."""
    nouns = "|".join(re.escape(n) for n in rows().file_nouns)
    kind = re.fullmatch(r"\.[a-z0-9]+(?:\.[a-z0-9]+)*", span)
    return kind is not None and re.search(rf"{re.escape(span)}`?\s+(?:{nouns})\b", text) is not None


def _evidenced_names(part: str, sentence: str, known: frozenset[str]) -> list[str]:
    """Names said bare after the negation ("don't use dotenv", "instead of execa", "Use Bun.env, not dotenv"),
    each a package by evidence (package_evidence.py): the whole list or none."""
    names = _name_list(lead_stripped(part), article=False)
    at = sentence.rfind(part) if part.strip() else -1
    before = sentence[:at] if at > 0 else ""
    contrast = re.sub(r"(?:\bnot|\binstead of|\brather than)\s*$", "", before, flags=re.I) if before else ""
    contrast = contrast if contrast != before else ""
    alternative = [w.strip("`,*") for w in contrast.split()]
    if any(module_spec(tuple(names), w) for w in alternative):
        return []  # the trigger would hold what the rule says to use ("lodash-es, not lodash")
    if names and all(is_package(n, known, contrast, before) for n in names):
        return names
    return []


def _verb_words(verbs: str) -> set[str]:
    """The words of the verb phrase, less those of the paths in it (`output/` names a place, not "output")."""
    kept = [w for w in verbs.split() if not _is_path(w.strip("`'\",;:()"), code=False)]
    return set(re.findall(r"[a-z-]+", " ".join(kept)))


def _prose_command(part: str) -> str:
    """A program and its words named in prose right after the negation ("not brew services", "never git push
    --force", "never run yarn dev"): every word up to a word of place or manner ("never go to prod", "never run
    yarn dev automatically"), so the trigger is never wider than the words the rule says."""
    r = rows()
    words = part.split()
    while words and words[0].casefold() in _RUN_VERBS:
        words = words[1:]
    if len(words) < 2 or words[0].casefold() not in r.programs or words[0].casefold() in programs().english:
        return ""  # `make`, `go` are commands only in code: "do not make any suggestions" names no make
    sub = words[1].rstrip(".,;")
    if not re.fullmatch(r"[a-z][a-z0-9:-]*", sub) or sub in r.not_subcommands or sub in programs().family_of:
        return ""
    kept = [words[0].casefold(), sub]
    ended = sub != words[1]
    for word in words[2:]:
        bare = word.rstrip(".,;")
        if ended or not bare or _ends_command(bare):
            break
        kept.append(bare)
        ended = bare != word
    return " ".join(kept)


def _ends_command(word: str) -> bool:
    """A word after a command in prose that is no word of it: of place or manner ("to", "automatically")."""
    lowered = word.casefold()
    return lowered in rows().not_subcommands or lowered.endswith(rows().adverb_suffixes)


def _names_a_subcommand(part: str, end: int) -> bool:
    """A package manager's name right before its subcommand ("never run yarn dev"): the command is the two, not
    the manager alone."""
    m = re.match(r"[ \t]+([a-z][a-z0-9:-]*)", part[end:].casefold())
    return m is not None and m.group(1) not in rows().not_subcommands and m.group(1) not in programs().family_of


def _leads(span: str, part: str) -> bool:
    """The span is what the clause forbids, not a word beside it ("never use `--no-verify`", not "avoid backticks
    in `--body`"): only run verbs stand before it."""
    words = part.split("`" + span + "`", 1)[0].casefold().split()
    return all(w in _RUN_VERBS or w in ("pass", "the", "flag", "option") for w in words)


def _flag_command(flag: str, sentence: str) -> str:
    """A flag named alone gets its program from the sentence: a command in code beside it (`git commit`), else
    a word the implied rows map ("when committing" -> git commit)."""
    r = rows()
    for span in _CODE.findall(sentence):
        head = span.split()
        if len(head) > 1 and head[0].casefold() in r.programs and not head[1].startswith("-"):
            return f"{head[0].casefold()} {head[1]} {flag.split()[0]}"
    for word in re.findall(r"[a-z]+", _CODE.sub(" ", sentence.casefold())):
        if word in r.implied:
            return f"{r.implied[word]} {flag.split()[0]}"
    return ""


def _scoped(sentence: str, part: str) -> bool:
    """An import rule scoped to a place ("handlers in src/api never import src/db") is not expressible as a
    trigger (imports are project-wide), so it proposes none rather than a wider one."""
    before = sentence.split(part, 1)[0] if part and part in sentence else ""
    return re.search(r"\b(?:in|under|inside|within|from)\s+`?[\w.-]+/", before, re.I) is not None or (
        re.search(r"\b(?:import|require)\s+`?[\w.-]+/", part, re.I) is not None and "@" not in part
    )


def _bare_libraries(part: str) -> list[str]:
    """Libraries named bare after add/install/import ("don't add moment or dayjs"): lower case, the whole list or
    none, and after an article only with a library word ("a security" is no package, "the axios package" is)."""
    r = rows()
    verbs = "|".join(re.escape(v) for v in r.bare_verbs)
    fill = "|".join(re.escape(f) for f in r.fillers)
    m = re.search(rf"\b(?:{verbs})\s+((?:(?:{fill})\s+)*)(.+)$", part, re.I)
    if m is None:
        return []
    return _name_list(m.group(2), article=bool(re.search(r"\b(?:the|a|an)\b", m.group(1), re.I)))


def _name_list(text: str, *, article: bool) -> list[str]:
    """The names of a list said bare ("moment or dayjs"): lower case, each a name or a name and a library word,
    none a program or a word of the not_names rows; the whole list or none."""
    r = rows()
    out = []
    for name in re.split(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", text.strip(" .;")):
        words = name.strip().split()
        cue = len(words) == 2 and words[1].casefold() in r.library_cues
        word = words[0].strip(".;") if words else ""
        if len(words) > 2 or len(words) == 2 and not cue or article and not cue:
            return []
        if not re.fullmatch(r"@?[a-z][a-z0-9.\-]*(?:/[a-z0-9.\-]+)?", word) or word in r.not_names:
            return []
        if word.endswith("ing") or word in r.programs:
            return []
        out.append(word.removesuffix(".js"))
    return out


def _instead_in(sentence: str, part: str) -> tuple[str, bool]:
    """What the same sentence says to do instead ("Use pnpm, never npm" → "use pnpm"), outside the forbidden part;
    in a contrast ("X, not Y") the X, from its first program on ("docker compose up -d, not brew services")."""
    at = sentence.rfind(part) if part.strip() else -1
    if part.strip() and at < 0:
        return "", False  # a part joined from a list after a colon: the sentence's verbs are the forbidden ones
    rest = sentence[:at] + " " + sentence[at + len(part) :] if at >= 0 else sentence
    m = _INSTEAD.search(_masked(rest))  # a verb inside code (`npm run build`) says nothing to do instead
    if m:
        verb = m.group(1).lower().removesuffix("s")  # "this project uses pnpm" -> "use pnpm"
        said = rest[m.start(2) : m.end(2)]
        return f"{verb} {said.replace('`', '').strip(' *')}".strip(), False
    before = sentence[:at] if at >= 0 else ""
    c = re.fullmatch(r"\s*(.+?),\s*(?:but\s+)?not\s*", before, re.I | re.S)
    if c is None or re.match(r"(?:when|if|while|for|in|on)\b", c.group(1), re.I):
        return "", False
    words = c.group(1).replace("`", "").split()
    start = next((i for i, w in enumerate(words) if w.casefold() in rows().programs), 0)
    return " ".join(words[start:]).strip(" *.")[:120], True


def _bare_words(part: str) -> list[str]:
    """The words of a clause without code spans; a package manager only where a clause names it as the tool
    ("never npm or pnpm"), not as a qualifier ("not an npm package") nor before its subcommand ("never run yarn
    dev" forbids `yarn dev`, never all of yarn)."""
    matches = list(_WORD.finditer(part))
    fam = programs().family_of
    out = []
    for i, m in enumerate(matches):
        w = m.group(0)
        before = matches[i - 1].group(0).casefold() if i else ""
        if w.casefold() in fam and (
            before not in _TOOL_LEAD and before not in fam or _names_a_subcommand(part, m.end())
        ):
            continue
        out.append(w)
    return out


def _placed(span: str, part: str) -> bool:
    """A prose `a/b` is a place when a preposition of place leads it ("into alembic/versions"), not a pair of
    words ("read/write", "if/else")."""
    if "/" not in span or not _is_path(span + "/", code=False):
        return False
    return re.search(rf"\b(?:{_PLACES})\s+{re.escape(span)}", part, re.I) is not None


def _is_path(span: str, *, code: bool) -> bool:
    """A project path a clause names: in code, anything path-like; in prose, only what cannot be a phrase
    (`read/write`, `if/else` are not paths): a dotfile, a glob, a dir ending in `/`, or a file with its extension."""
    if " " in span.strip() or span.startswith(("-", "@", "/", "<", "~")) or "<" in span or ".." in span.split("/"):
        return False
    if span.endswith(".js") and "/" not in span:
        return False
    dotfile = span.startswith(".") and len(span) > 1 and span[1].isalpha()
    if code:
        return "/" in span or dotfile or "*" in span
    last = span.rstrip("/").rsplit("/", 1)[-1]
    has_ext = "/" in span and "." in last and last.rsplit(".", 1)[-1].isalpha()
    return dotfile or "*" in span or ("/" in span and (span.endswith("/") or has_ext))


def _named_file(span: str) -> bool:
    """A file named by its name and an extension of the [files] rows, with no `/` (`CLAUDE.md`, `package.json`)."""
    m = re.fullmatch(r"[\w][\w.-]*\.([A-Za-z0-9]+)", span)
    return m is not None and m.group(1).casefold() in rows().file_extensions


def _edited_file(span: str, part: str) -> bool:
    """A named file right after a verb of change, or in the list of files after it ("NEVER modify CLAUDE.md", "don't
    edit or delete `AGENTS.md`", "never change package.json or package-lock.json files"): the clause keeps it from a
    change; a `writes` verb may join a `file_edits` one."""
    if not _named_file(span):
        return False
    r = rows()
    verbs = "|".join(re.escape(v) for v in sorted(r.writes | r.file_edits, key=len, reverse=True))
    joined = r"(?:\s*,\s*|\s+)(?:(?:or|and)\s+)?"
    listed = rf"(?:(?:`[^`]+`|[\w][\w.-]*\.[A-Za-z0-9]+){joined}(?:the\s+)?)*"  # files, or code, before it
    m = re.search(
        rf"\b((?:(?:{verbs}){joined})*(?:{verbs}))\s+(?:the\s+)?{listed}`?{re.escape(span)}`?(?![\w-]|\.\w)", part, re.I
    )
    return m is not None and bool(set(re.findall(r"[a-z-]+", m.group(1).casefold())) & r.file_edits)


def _path_kinds(vwords: set[str], part: str) -> list[str]:
    """What a clause keeps its paths from: the kind of its verb phrase, and the kind of every verb of the list the
    clause opens with ("DO NOT read, write, or modify `.env`" keeps it from a read and a change)."""
    kinds = [_path_kind(vwords)]
    for word in re.findall(r"[\w-]+|,", part):
        lowered = word.casefold()
        if lowered in (",", "or", "and", "nor"):
            continue
        kind = _path_kind({lowered})
        if not kind:
            break
        kinds.append(kind)
    return [k for k in dict.fromkeys(kinds) if k]


def _path_kind(vwords: set[str]) -> str:
    r = rows()
    if vwords & r.writes:
        return "writes"
    if vwords & r.reads:
        return "reads"
    if vwords & r.creates:
        return "creates"
    return ""


def _new_files_glob(span: str, part: str) -> str:
    """Where new files must not go: a place after a file noun and a preposition ("files under `legacy/`, `old/`
    or `tmp/`"), or a kind as the verb's own object (`src/**/*.module.css`; "new `.css` files" -> `*.css`). The
    verb's object must be files: "add secrets to files under legacy/", "add .env to git", "create files or
    README/*.md docs" name no new files of a place or kind."""
    r = rows()
    verbs = "|".join(re.escape(v) for v in sorted(r.creates, key=len, reverse=True))
    nouns = "|".join(re.escape(n) for n in r.file_nouns)
    fillers = "|".join(re.escape(f) for f in r.fillers)
    placed = rf"(?:(?:{fillers})\s+)*(?:{nouns})\s+(?:{_PLACES})\s+(?:(?:{fillers}|`[^`]+`,?|or|and|nor)\s+)*"
    lead = rf"\b(?:{verbs})\s+"
    if re.search(rf"{lead}{placed}`?{re.escape(span)}`?", part, re.I):
        return _glob(span) if span.endswith("/") or "*" in span else ""
    m = re.search(rf"{lead}(?:(?:{fillers})\s+)*`?{re.escape(span)}`?", part, re.I)
    if m is None:
        return ""
    if "*" in span:
        return _glob(span)
    kind = re.fullmatch(r"\.[a-z0-9]+(?:\.[a-z0-9]+)*", span)
    return "*" + span if kind and re.match(rf"\s+(?:{nouns})\b", part[m.end() :], re.I) else ""


def _glob(span: str) -> str:
    """A directory named as `db/migrations/` protects everything under it."""
    span = span.removeprefix("./")
    return span.rstrip("/") + "/**" if span.endswith("/") else span


def _command(span: str, *, code: bool, run: bool) -> str:
    """A program a span names (`npm install` → `npm install`; `npm` → `npm`), placeholders dropped. A package
    manager is forbidden by its bare name ("never npm"); another program only in code or after a run verb
    ("never run `docker compose down -v`"), so "never modify an alembic migration" forbids no alembic."""
    r = rows()
    words = [w for w in span.split() if not w.startswith(r.placeholders)]
    if not words or words[0].casefold() not in (r.programs | programs().known if code else r.programs):
        return ""  # in code, a program the lexicon knows (`rails db:drop`); in prose, only the rows' own
    if words[0].casefold() not in programs().family_of and not (code or run):
        return ""
    kept = " ".join(w if w.startswith("-") else w.casefold() for w in words)
    return kept if len(kept) <= limits.FORBID_ITEM_MAX_CHARS else ""  # every word, or none: never a wider one


def _library(span: str, part: str, *, code: bool) -> str:
    """A library a clause forbids: right after an import verb ("never use moment.js", "don't import `lodash`"),
    named in code or as `x.js`, or beside a library word ("the `axios` package")."""
    r = rows()
    name = span.casefold()
    if not re.fullmatch(r"@?[a-z0-9][\w.\-/]*", name):
        return ""
    lowered = part.casefold()
    verbs = "|".join(re.escape(v) for v in sorted(r.imports, key=len, reverse=True))
    if not re.search(rf"\b(?:{verbs})\s+(?:the\s+|a\s+)?`?{re.escape(name)}\b", lowered):
        return ""
    if name.endswith(r.library_suffixes):  # a product's package comes from its row (`Day.js` -> dayjs)
        return main_package(name) or name.rsplit(".", 1)[0]
    cue = any(re.search(rf"\b{re.escape(c)}\b", lowered) for c in r.library_cues)
    return name if code and cue or code and name in _known_modules() else ""


def _known_modules() -> frozenset[str]:
    return frozenset()  # no package list ships; a library word or `.js` is the cue


def _collapse(commands: list[str]) -> list[str]:
    """A package manager forbidden by name covers its verbs (`npm` covers `npm install`) and gains its runner
    (`npx`), so the rule says once what it stops."""
    fam = programs().family_of
    managers = {c for c in commands if c in fam}
    out: list[str] = []
    for c in commands:
        head = c.split()[0]
        if " " in c and head in managers:
            continue
        out.append(c)
        if c in fam and c == programs().family(c):
            out += [m for m, f in fam.items() if f == c and m != c]
    return out


def _aliased(spec: str) -> list[str]:
    """A proposed command in every spelling the alias rows know (`apt install` -> also `apt-get install`; `npm
    install -g` -> `npm install|i|add|in|isntall -g|--global`)."""
    r = rows()
    head, *rest = spec.split()
    heads = [head] + ([r.program_aliases[head]] if head in r.program_aliases else [])
    if "|" in spec or not rest:
        return [" ".join([h, *rest]) for h in heads]
    words = []
    for i, w in enumerate(rest):
        keys = (f"{head} {rest[0]} {w}", f"{head} {w}") if i else (f"{head} {w}",)
        words.append(next((r.word_aliases[k] for k in keys if k in r.word_aliases), w))
    return [" ".join([h, *words]) for h in heads]


def _instead_of(text: str, forbid: Forbid) -> str:
    """What to do instead, from a sentence of the memory that says so ("Use pnpm", "Create a new migration")."""
    for sentence in _SENTENCES.split(text):
        s = _correlated(_unmarked(sentence))
        if _negated(s) is None and re.match(r"(use|prefer|always|create|run|add a new|instead)\b", s, re.I):
            return s.rstrip(".")[:120]
    return ""


def save_forbid(name: str, description: str, body: str, requested: Any) -> tuple[dict[str, Any] | None, bool]:
    """What a save writes as `forbid` and whether only when the file has none: the request's own (checked; {}
    clears), else a proposal from the text, which never replaces what a person wrote or removed."""
    if requested is not None:
        return (parse_forbid(requested).to_meta() if requested else {}), False
    proposal = propose(name, description, body)
    return (proposal.to_meta(), True) if proposal else (None, False)


def will_stop(held: dict[str, Any]) -> str:
    """The save answer's line for what the file now holds ("will stop: npm, npx — use pnpm"), "" for nothing."""
    try:
        return parse_forbid(held).summary() if held else ""
    except InvalidRequest:
        return ""


def _headline_place(name: str, description: str) -> str:
    """The memory's own place: a path its name opens with ("packages/clients is generated: ...") or a place before
    a colon that opens its name or description ("packages/clients: Treat this directory as ..."), as a glob: a
    directory's whole tree, a file itself."""
    ends = "|".join(re.escape(w) for w in rows().subject_ends)
    for text, form in ((name, rf"\s+(?:{ends})\b|\s*:"), (description, r"\s*:")):
        m = re.match(rf"\s*`?([\w.-]+(?:/[\w.*-]+)+/?)`?(?:{form})", _unmarked(text), re.I)
        if m is None or ".." in m.group(1).split("/"):
            continue
        place = m.group(1)
        return (
            _glob(place)
            if place.endswith("/") or "*" in place or _named_file(place.rsplit("/", 1)[-1])
            else (place + "/**")
        )
    return ""


def _contrasted_tools(sentence: str, part: str) -> list[str]:
    """The tools a clause says NOT beside a tool of the same kind the sentence chooses before it ("uses pyright (not
    mypy)", "pytest, not unittest"; [tool_kinds]): every name of the clause such a tool, or none."""
    kinds = rows().tool_kinds
    at = sentence.rfind(part) if part.strip() else -1
    if at <= 0:
        return []
    chosen = {w for w in re.findall(r"[\w.-]+", sentence[:at].casefold()) if w in kinds}
    names = [n.strip("`*.,;:()").casefold() for n in re.split(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", part.strip())]
    names = [n for n in names if n]
    of_kind = set().union(*(kinds[c] for c in chosen)) if chosen else set()
    if not names or not all(n in kinds and n not in chosen and kinds[n] & of_kind for n in names):
        return []
    return names
