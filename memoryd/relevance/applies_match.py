"""Whether a tool call or a prompt meets what a memory applies to: a path under its globs, a
command running what it names or forbids, an edit writing the code it names, a prompt naming its
programs or sharing its subject. Plain functions; `moments.py` and `applies_index.py` call them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

from memoryd.base.globs import glob_matches
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_derive import CAMEL_NAME, ELLIPSIS, PATH_RE, PM_NAMES, roles_of
from memoryd.relevance.applies_reason import Reason, Via
from memoryd.relevance.features import code_features
from memoryd.relevance.lexicon import matcher_subjects, programs, words
from memoryd.relevance.shell import command_paths, parse

# A prompt that asks to commit, push or open a pull request (not one that mentions "PR #3789"): words.toml `acts`.
PROMPT_ACTS = tuple((asks, command) for command, asks, _ in words().acts)
ACT_COMMANDS = frozenset(command for _, command in PROMPT_ACTS)
_PROGRAMS = programs()


@lru_cache(maxsize=256)
def command_facts(command: str) -> tuple[frozenset[str], tuple[tuple[str, ...], ...], tuple[str, ...]]:
    """A shell line read once per tool call, not once per memory, by the one command reader (`shell.parse`, as the
    guard reads it): the programs as typed, what each simple command runs (`command_key`), and its path-like words."""
    commands = parse(command)
    return frozenset(c.program for c in commands), tuple(c.runs for c in commands), command_paths(command)


def command_matches(pattern: str, command: str) -> bool:
    """Does a shell line run what `pattern` names: a bare program (`npm`, `psql`) as typed, or a
    program and its first word (`prisma generate`) however it is run. A manager's runner (`npx`) is met where the
    pattern names it: a choice against a manager names its runners too (`applies_derive._managers_not_chosen`)."""
    want = tuple(pattern.casefold().split())
    if not want:
        return False
    typed, keys, _ = command_facts(command)
    if len(want) == 1 and want[0] in typed:
        return True
    return any(key[: len(want)] == want for key in keys)


def path_matches(glob: str, rel: str) -> bool:
    """A project-relative path against a glob (`**/` matches any depth, a bare dir everything under it), in
    linear time (`memoryd.base.globs`: a glob is never a backtracking regex, issue 52)."""
    return glob_matches(glob, rel[2:] if rel.startswith("./") else rel)


def meets(applies: AppliesTo, tool: str, path: str = "", command: str = "", writes: str = "") -> str:
    """Why this tool call falls under the memory, in words ("" when it does not): `meeting`'s reason."""
    reason = meeting(applies, tool, path, command, writes)
    return reason.text() if reason else ""


def meeting(applies: AppliesTo, tool: str, path: str = "", command: str = "", writes: str = "") -> Reason | None:
    """Why this tool call falls under the memory (None when it does not): the first path, command or code
    it meets. An explicit `tools` list limits the tools it applies to."""
    if applies.tools and tool not in applies.tools:
        return None
    # a memory about one place ("apps/web: ...") reaches that place: the paths, kinds and code it names are the
    # place's (`src/**/*.ts` in a nested agent file is that folder's src), unless a person wrote its paths
    away = bool(path and applies.home) and not any(path_matches(g, path) for g in applies.home)
    if path and not (away and not applies.explicit):
        for glob in applies.paths:
            if path_matches(glob, path):
                return Reason(Via.PATH, path, glob)
        if applies.rule and applies.kinds and (kind := file_kind(path)) in applies.kinds:
            return Reason(Via.KIND, path, kind)
    if command:
        for pattern in applies.commands:
            if command_matches(pattern, command):
                return Reason(Via.COMMAND, pattern)
        for arg in command_facts(command)[2]:
            for glob in applies.paths:
                if path_matches(glob, arg):  # "./.env.local" as `.env.local` (path_matches drops the "./")
                    return Reason(Via.COMMAND_PATH, arg, glob)
    writes = "" if away else writes
    if writes and (cue := writes_cue(applies, writes)):
        return Reason(Via.CUE, cue)
    if (
        writes
        and (applies.code_forbids or applies.subjects_forbidden)
        and (broken := writes_ruled_out(applies, writes))
    ):
        return broken
    if applies.tools and not applies.paths and not applies.commands:
        return Reason(Via.TOOL, tool)
    return None


def file_kind(path: str) -> str:
    """A path's extension, lower case ("" when it has none)."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].casefold() if "." in name.strip(".") else ""


def contradicts(applies: AppliesTo, command: str) -> str:
    """The forbidden program a command runs ("" when none): the moment a rule is about to be broken."""
    if not applies.forbids:
        return ""
    typed, keys, _ = command_facts(command)
    family = _PROGRAMS.family  # a runner breaks its manager's ban: `npx eslint` against "never npm"
    hit = sorted((typed | {family(p) for p in typed} | {k[0] for k in keys if k}) & applies.forbids)
    return hit[0] if hit else ""


def prompt_meets(applies: AppliesTo, prompt: str, prompt_topics: Iterable[str]) -> str:
    """Why a prompt falls under the memory, in words ("" when not): `prompt_reason`'s reason."""
    reason = prompt_reason(applies, prompt, prompt_topics)
    return reason.text() if reason else ""


def prompt_reason(applies: AppliesTo, prompt: str, prompt_topics: Iterable[str]) -> Reason | None:
    """Why a prompt falls under the memory (None when not): it names a package manager the memory
    chooses against or a program it forbids, a path under its globs, code it names (`as any`,
    `@scope/pkg`, `dayjs`), asks to commit, push or open a pull request when the memory is about
    that, or shares one of its subjects."""
    said = prompt_facts(prompt)
    for pattern in applies.commands:
        program = pattern.split()[0].casefold()
        if program in said.words and (program in PM_NAMES or program in applies.forbids):
            return Reason(Via.PROMPT_PROGRAM, program)
    for token in said.paths:
        for glob in applies.paths:
            if path_matches(glob, token.strip("`'\".,;:()")):
                return Reason(Via.PROMPT_PATH, token, glob)
    if cue := writes_cue(applies, prompt, code_only=True):
        return Reason(Via.PROMPT_CUE, cue)
    for package in said.packages:
        if package in packages_of(applies):
            return Reason(Via.PROMPT_PACKAGE, package)
    for cmd in said.acts:
        if cmd in applies.commands:
            return Reason(Via.PROMPT_ACT, cmd)
    for code, role in said.roles:
        if role in applies.roles:
            return Reason(Via.PROMPT_ROLE, code, role)
    subjects = sorted(applies.topics.intersection(prompt_topics))
    return Reason(Via.SUBJECT, subjects[0]) if subjects else None


_PACKAGE_WORDS = re.compile(r"\b([a-z][\w-]*)\s+package\b", re.I)  # "our ui package"
_SCOPED_NAME = re.compile(r"^@[\w-]+/([\w-]+)")  # @scope/ui/components/button -> ui


def packages_of(applies: AppliesTo) -> frozenset[str]:
    """The packages a memory's scoped names stand for (`@scope/ui/components/button` is the ui package)."""
    return frozenset(m.group(1).casefold() for cue in applies.cues if (m := _SCOPED_NAME.match(cue)))


class PromptFacts(NamedTuple):
    """What a prompt names, read once per prompt (not once per memory, nor again by `Triggers`)."""

    words: frozenset[str]  # its words, case-folded ("npm", "pnpm")
    paths: tuple[str, ...]  # its path-like tokens
    acts: tuple[str, ...]  # the acts it asks for (git commit, gh pr, git push)
    packages: frozenset[str]  # the packages it names in words ("the ui package" names ui)
    tokens: frozenset[str]  # its \w+ runs, as a cue's first word is looked up
    roles: tuple[tuple[str, str], ...]  # its code names and the role each plays (BookingRepository, repository)


@lru_cache(maxsize=256)
def prompt_facts(prompt: str) -> PromptFacts:
    return PromptFacts(
        words=frozenset(w.casefold() for w in re.findall(r"[A-Za-z][\w-]*", prompt)),
        paths=tuple(PATH_RE.findall(prompt)),
        acts=tuple(cmd for rx, cmd in PROMPT_ACTS if rx.search(prompt)),
        packages=frozenset(m.casefold() for m in _PACKAGE_WORDS.findall(prompt)),
        tokens=frozenset(re.findall(r"\w+", prompt)),
        roles=tuple((code, role) for code in _CODE_NAME.findall(prompt) for role in sorted(roles_of(code))),
    )


_CODE_NAME = re.compile(CAMEL_NAME.pattern + r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")  # ... or user_repository


_BETWEEN = r"[^\n]{0,200}?"


@lru_cache(maxsize=65_536)
def _cue_rx(cue: str) -> re.Pattern[str]:
    """A cue as a whole word; one with an ellipsis as its literal parts in order on one line."""
    body = _BETWEEN.join(re.escape(part) for part in ELLIPSIS.split(cue) if part)
    return re.compile(r"(?<![\w@])" + body + r"(?![\w-])")


def _literal(cue: str) -> str:
    """The part of a cue a text must hold as is (the first literal part of one with an ellipsis)."""
    return next((part for part in ELLIPSIS.split(cue) if part), cue)


@lru_cache(maxsize=256)
def written_code(writes: str) -> frozenset[tuple[str, str]]:
    """What an edit's new text imports and calls, read once per tool call by the fitted features' extractor
    (`features.code_features`), and the subjects its code shows as the matcher reads them (`matcher_code`)."""
    names = {f for f in code_features(writes) if f[0] in ("import", "call")}
    return frozenset(names | {("subject", s) for rx, s in matcher_subjects().code if rx.search(writes)})


def writes_ruled_out(applies: AppliesTo, writes: str) -> Reason | None:
    """An edit writing what the memory rules out: importing or calling a name it forbids, or code of a subject whose
    words it forbids (None when it writes none)."""
    for kind, value in sorted(written_code(writes)):
        if kind == "subject" and value in applies.subjects_forbidden:
            return Reason(Via.CODE_SUBJECT, value)
        if kind != "subject" and value in applies.code_forbids:
            return Reason(Via.CODE, value, kind)
    return None


def reads_as_code(cue: str) -> bool:
    """A cue a prompt may name: code, not a CamelCase name ("GitHub", "OpenAI") or a commit prefix ("feat:")."""
    return not re.fullmatch(r"\w+:", cue) and (re.search(r"[.@:=_( /]", cue) is not None or cue.endswith("js"))


def writes_cue(applies: AppliesTo, text: str, *, code_only: bool = False) -> str:
    """The first cue of the memory that `text` (what an edit writes, or a prompt) holds, as a whole word;
    `code_only` (prompts): only cues that read as code (`reads_as_code`)."""
    for cue in sorted(applies.cues):
        if code_only and not reads_as_code(cue):
            continue
        if _literal(cue) in text and _cue_rx(cue).search(text):
            return cue
    return ""
