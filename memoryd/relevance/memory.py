"""A memory and an act read into the same features (`features.py`): a memory's globs, the features it
names and the words an import or a call may meet; an act's channel, features and paths."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar, cast

from memoryd.base import limits
from memoryd.base.digest_cache import DigestCache
from memoryd.base.text import STOPWORDS
from memoryd.relevance.features import (
    Feature,
    code_features,
    command_features,
    file_kind,
    path_features,
    prompt_features,
    prose,
    run,
)
from memoryd.relevance.lexicon import words

MEMORY_TYPES = ("user", "feedback", "project", "reference")


@dataclass(frozen=True, slots=True)
class Memory:
    """A memory's features: `globs` its places, `names` the words of its headline and code an edit may
    import or call (`moment`, `date-fns`), `rule` whether it states one ("never", "only")."""

    features: frozenset[Feature]
    globs: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    type: str = ""
    rule: bool = False


@dataclass(frozen=True, slots=True)
class Act:
    """What is asked or done: a prompt, a Bash line, or an edit of `path` writing `writes`."""

    channel: str  # "prompt" | "command" | "edit"
    features: frozenset[Feature]
    paths: tuple[str, ...] = ()
    text: str = ""  # what the lexical input reads


READ_KEPT = 32_768  # memories whose features are kept by the digest of their text
_read: DigestCache[Memory] = DigestCache(READ_KEPT)


def memory(name: str, description: str, body: str, type_: str = "") -> Memory:
    """A memory's features; the same text is read once (keyed by its digest: 16 bytes a memory, not its body)."""
    return _read.get((name, description, body[: limits.APPLIES_DERIVE_MAX_CHARS], type_), _memory)


def _memory(name: str, description: str, body: str, type_: str) -> Memory:
    """A memory's features, from its text (its places count whatever its type: a project memory naming
    `src/payments/` applies to edits there)."""
    text = f"{name}\n{description}\n{body}"
    headline = f"{name}\n{description}"
    p = prose(text, headline)
    found = run("memory", p)
    globs = tuple(dict.fromkeys(g for kind, v in found if kind == "path" and (g := glob_of(v))))
    plain = words().plain
    names = {t.casefold() for t in p.tokens if len(t) >= 3 and (t in p.ticked or t in headline)}
    names = {n for n in names if n not in plain and n not in STOPWORDS}
    ruled_out = {("place_forbidden", g) for kind, v in found if kind == "path_forbidden" and (g := glob_of(v))}
    kept = frozenset(f for f in found if f[0] not in ("path", "path_forbidden")) | ruled_out
    return shared(Memory(shared(kept), globs, shared(frozenset(names)), type_, words().rule.search(text) is not None))


def glob_of(token: str) -> str:
    """A path a memory names as a glob relative to the project; "" for one every project holds (`*.py`,
    `index.ts`): naming one names an example, not a place."""
    token = token.strip("`'\";:,()").rstrip(".").removeprefix("./").lstrip("/")
    if not token or ".." in token.split("/"):
        return ""
    if token.startswith(".env"):
        return "**/.env*"
    name = token.rstrip("/").rsplit("/", 1)[-1]
    w = words()
    if "/" not in token.rstrip("/") and (
        name.split(".")[0] in w.folder_files or (name.startswith("*.") and file_kind(name) in w.everyday_kinds)
    ):
        return ""
    if token.endswith("/"):
        return token + "**"
    return token if "/" in token else "**/" + token


def prompt_act(prompt: str) -> Act:
    found = prompt_features(prompt)
    return Act("prompt", found, tuple(v for k, v in found if k == "path"), prompt)


def command_act(command: str) -> Act:
    found = frozenset(command_features(command))
    return Act("command", found, tuple(v for k, v in found if k == "path"), command)


def edit_act(path: str, writes: str) -> Act:
    """An edit: its path and what it writes (its new text, bounded)."""
    found = frozenset(path_features(path)) | frozenset(code_features(writes))
    spread = path.replace("/", " ").replace(".", " ").replace("_", " ").replace("-", " ")
    return Act("edit", found, (path.removeprefix("./"),), f"{spread}\n{writes[:500]}")


Shared = TypeVar("Shared", bound=Hashable)


def shared(values: Shared) -> Shared:
    """One object for equal values: most memories' sets are among a few (each frozenset costs ~216 bytes;
    20,000 memories held ~40 MB of them, issue 42)."""
    return cast(Shared, _interned(values))


@lru_cache(maxsize=8192)
def _interned(values: Hashable) -> Hashable:
    return values


def reaches(mem: Memory) -> dict[str, tuple[str, ...]]:
    """For people (the save answer, the web view): the places and commands a memory's features name."""
    programs = sorted({v for k, v in mem.features if k in ("program", "mention")})
    commands = sorted({v for k, v in mem.features if k == "subcommand"})
    return {"paths": mem.globs, "commands": tuple(programs + commands), "tools": (), "forbids": ()}
