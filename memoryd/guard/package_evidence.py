"""When a name said bare in a forbidding clause ("don't use dotenv", "instead of execa", "not moment") is a package:
"use" takes language features as often as packages ("never use any", "never use var"), so a bare name is a
package only with evidence the prose gives: the memory's own code imports or installs it, the name has a form
only a package has (`@scope/name`), or the clause contrasts it with a package or a runtime's own API ("Use
Bun.env, not dotenv", "date-fns, not moment").

It does NOT find the forbidding clause (`propose.py`); it only judges the names in one.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from memoryd.guard.acts import imports_in, installed
from memoryd.relevance.lexicon import programs
from memoryd.relevance.shell import parse

_CODE = re.compile(r"`([^`\n]{1,120})`")
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class EvidenceRows:
    """The [bare_names] rows of data/prose.toml."""

    leads: tuple[str, ...]
    package_forms: tuple[re.Pattern[str], ...]
    contrast_forms: tuple[re.Pattern[str], ...]
    contrast_leads: tuple[str, ...]
    programs: frozenset[str]
    reason: re.Pattern[str]  # a subject, its clause, a reason join, then at most a few words (the negation)


@cache
def rows() -> EvidenceRows:
    text = resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    d = data["bare_names"]
    return EvidenceRows(
        tuple(sorted(d["leads"], key=len, reverse=True)),
        tuple(re.compile(f) for f in d["package_forms"]),
        tuple(re.compile(f) for f in d["contrast_forms"]),
        tuple(d["contrast_leads"]),
        frozenset(data["programs"]["words"]) | frozenset(programs().family_of),
        re.compile(
            rf"^\W*(?P<subject>[\w-]+)\b(?:[^.;:!?]|\.(?=\w))*?\b(?:{'|'.join(map(re.escape, d['reason_joins']))})\b"
            r"(?P<tail>(?:\s+[\w']+){0,3})\s*$",
            re.I,
        ),
    )


def code_packages(text: str) -> frozenset[str]:
    """The packages a memory's own code imports or installs (`import axios from 'axios'`, `npm install axios`),
    each also by its root (`dotenv/config` -> dotenv, `@a/b/c` -> @a/b)."""
    found: set[str] = set()
    for span in _CODE.findall(text) + _FENCE.findall(text):
        found |= imports_in(span)
        for cmd in parse(span):
            found.update(installed(cmd))
    return frozenset(found | {_root(m) for m in found})


def _root(module: str) -> str:
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") else parts[0]


def lead_stripped(part: str) -> str:
    """The clause without the words that may lead a bare name ("use dotenv" -> "dotenv")."""
    text = part.strip()
    for lead in rows().leads:
        if text.casefold().startswith(lead + " "):
            return text[len(lead) + 1 :].strip()
    return text


def is_package(name: str, known: frozenset[str], contrast: str, before: str = "") -> bool:
    """A bare name is a package when the memory's code names it so, its form says so, the clause's other side
    (`contrast`: what to use instead) is a package or a runtime's own API, or what the sentence says `before` the
    negation is a runtime doing its job."""
    if name in known or any(f.fullmatch(name) for f in rows().package_forms):
        return True
    return bool(contrast) and contrasts_a_package(contrast) or a_runtime_does_its_job(before)


def a_runtime_does_its_job(before: str) -> bool:
    """ "Bun automatically loads .env, so don't ...": a reason join ends the text before the negation, and the
    clause before it has a program of the rows as its subject (its first word)."""
    m = rows().reason.search(before)
    return m is not None and m.group("subject").casefold() in rows().programs


def contrasts_a_package(before: str) -> bool:
    """The other side of "X, not Y" / "X instead of Y" is one package or runtime API (`Bun.env`, `Bun.$`, `date-fns`),
    not a phrase ("server-side validation, not client")."""
    text = before.strip().rstrip(",").strip()
    words = text.split()
    while words and words[0].casefold() in rows().contrast_leads:
        words = words[1:]
    if len(words) != 1:
        return False
    token = _CODE.sub("", words[0]).strip("`*")
    for form in rows().contrast_forms:
        m = form.fullmatch(token)
        if m and ("program" not in m.groupdict() or m.group("program").casefold() in rows().programs):
            return True
    return False
