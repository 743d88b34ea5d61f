"""Which memory a person means: `show` and `forget` take the file name, its stem, the name or its slug
(any case), resolved against the project's listing; a name that fits several or none is said in CLI words."""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any

from memoryd.base.errors import Conflict, MemoryNotFound

TYPE_PREFIX = re.compile(r"^(user|feedback|project|reference)_")  # memoryd's own `<type>_<slug>.md`


def _key(text: str) -> str:
    """Case, accents and punctuation ignored: "Package manager" == "package-manager"."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode() or text
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def _keys(memory: dict[str, Any]) -> set[str]:
    stem = memory["filename"].removesuffix(".md")
    return {
        k for k in (_key(memory["filename"]), _key(stem), _key(TYPE_PREFIX.sub("", stem)), _key(memory["name"])) if k
    }


def resolve(given: str, listing: dict[str, Any]) -> str:
    """The file name of the one memory `given` names; raises with the candidates or the closest names."""
    memories = listing.get("memories", [])
    files = {m["filename"] for m in memories}
    if given in files or given in {bad["filename"] for bad in listing.get("invalid", [])}:
        return given  # exact (an invalid file: the daemon says what is wrong with it)
    if any(c in given for c in "/\\") or given.startswith("."):
        raise MemoryNotFound(
            f"{given!r} is not a memory of this project: name one by its bare file name as `memoryd list` shows it"
            " (<type>_<slug>.md or kebab-name.md, no '/', '\\' or leading '.'), or by its name.",
            code="invalid_filename",  # exit 1 and this code, as when the daemon refused such a name
        )
    wanted = _key(given)
    matches = [m for m in memories if wanted and wanted in _keys(m)]
    if len(matches) == 1:
        return str(matches[0]["filename"])
    if matches:
        listed = "; ".join(f"{m['filename']} ({m['name']}, {m['type']})" for m in matches)
        raise Conflict(
            f"{given!r} could be {len(matches)} memories: {listed}. Name one by its file name.", code="ambiguous_memory"
        )
    by_text = {text: m for m in memories for text in (m["filename"], m["name"])}
    close = [by_text[t] for t in difflib.get_close_matches(given, list(by_text), n=3, cutoff=0.6)]
    meant = ", ".join(f"{fn} ({name})" for fn, name in dict.fromkeys((m["filename"], m["name"]) for m in close))
    hint = f" Did you mean {meant}?" if meant else ""
    raise MemoryNotFound(
        f"no memory called {given!r} in this project.{hint} See them all with `memoryd list`"
        " (show and forget take the file name, or the name)."
    )
