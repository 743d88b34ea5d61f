"""The word lists relevance reads, loaded once from `data/*.toml` (one home for every list: adding a
program or a word is a data row with its labelled cases, never a code branch)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


def load(name: str) -> dict[str, Any]:
    """One data file of `memoryd/relevance/data/`, parsed."""
    text = resources.files("memoryd.relevance").joinpath("data", f"{name}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@dataclass(frozen=True, slots=True)
class Programs:
    """Program families (npx belongs to npm), runner word sequences, and the words a command line strips."""

    family_of: dict[str, str]  # typed program -> family name
    ecosystem_of: dict[str, str]  # family name -> ecosystem
    runners: tuple[tuple[tuple[str, ...], str], ...]  # (words, family), longest first
    prefixes: frozenset[str]
    manager_verbs: frozenset[str]
    interpreters: frozenset[str]

    def family(self, program: str) -> str:
        """The family a typed program belongs to (itself when it has none)."""
        return self.family_of.get(program, program)


@cache
def programs() -> Programs:
    data = load("programs")
    family_of: dict[str, str] = {}
    ecosystem_of: dict[str, str] = {}
    runners: list[tuple[tuple[str, ...], str]] = []
    for name, row in data["families"].items():
        ecosystem_of[name] = row.get("ecosystem", "")
        for member in row["members"]:
            family_of[member] = name
        runners.extend((tuple(words), name) for words in row.get("runners", []))
    runners.sort(key=lambda r: -len(r[0]))
    return Programs(
        family_of,
        ecosystem_of,
        tuple(runners),
        frozenset(data["prefixes"]["words"]),
        frozenset(data["package_manager_verbs"]["words"]),
        frozenset(data["interpreters"]["words"]),
    )
