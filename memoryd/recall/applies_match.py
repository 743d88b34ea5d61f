"""Whether a project path meets a glob (the places a memory names or its `applies_to` writes); read by
`memoryd.relevance.match`."""

from __future__ import annotations

import fnmatch
import re
from functools import lru_cache


@lru_cache(maxsize=65_536)
def _glob_rx(glob: str) -> re.Pattern[str]:
    """A glob as one compiled pattern. A relative glob matches at the root or under any folder (a rule's
    `src/rules/` is also a package's `crates/x/src/rules/`); `/x` only at the root. A dir (or `dir/**`)
    holds everything under it, `a/**/b` also `a/b`; `*` as fnmatch reads it."""
    g = glob.rstrip("/")
    anywhere = not g.startswith("/")
    g = g.lstrip("/").removeprefix("**/").removesuffix("/**")
    core = "/(?:.*/)?".join(
        fnmatch.translate(part).removeprefix("(?s:").removesuffix(")\\Z") for part in g.split("/**/")
    )
    return re.compile(("(?:.*/)?" if anywhere else "") + core + r"(?:/.*)?\Z")


def path_matches(glob: str, rel: str) -> bool:
    """A project-relative path against a glob (`**/` matches any depth, a bare dir everything under it)."""
    rel = rel[2:] if rel.startswith("./") else rel
    return _glob_rx(glob).match(rel) is not None
