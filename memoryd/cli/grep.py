"""`memoryd grep TERM [--regex] [--all]`: search raw transcripts of this project (or all)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.cli.output import EXIT_FAIL, EXIT_OK, client_of, common, cwd_of, emit

DIALECT = """\
regex dialect (--regex): what ripgrep and Python's re read alike, matched per line on bytes
  literal characters (non-ASCII ones match their UTF-8 bytes)   .  ^  $  |  (...)  (?:...)
  a leading (?i)   [abc] [^a-z0-9_] [\\d\\w\\s]   \\d \\w \\s \\D \\W \\S \\b \\B \\t \\xHH   \\ before punctuation
  * + ? {n} {n,} {n,m} (a trailing ? makes them lazy)
\\w, \\d, \\s, \\b and -i are ASCII only. Lookaround, backreferences, named groups, \\A \\Z, possessive
repeats, POSIX classes and Unicode escapes are refused with a hint: rewrite, or drop --regex."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser(
            "grep",
            help="search past session transcripts for a narrow term",
            epilog=DIALECT,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    p.add_argument("pattern", help="a narrow literal term (or a regex with --regex)")
    p.add_argument("--regex", "-E", action="store_true", help="treat the pattern as a regex (dialect below)")
    p.add_argument("--ignore-case", "-i", action="store_true", help="case-insensitive match")
    p.add_argument("--all", action="store_true", help="search every project's transcripts, not just this one")
    p.add_argument("--limit", "-n", type=int, default=None, help="max results (default 20, max 100)")
    p.set_defaults(func=cmd_grep)


def _human(data: dict[str, Any]) -> str:
    lines = [
        f"{h['timestamp'] or '-'}  {h['session_id']}:{h['line']}  [{h['role'] or '?'}]  {h['snippet']}"
        for h in data["results"]
    ]
    if not lines:
        lines.append(f"No matches ({data['files_scanned']} transcripts searched).")
    if data["truncated"]:
        why = "result limit reached" if data["reason"] == "limit" else "time limit reached"
        lines.append(f"… more may exist ({why}); narrow the term or raise --limit.")
    return "\n".join(lines)


def cmd_grep(args: argparse.Namespace) -> int:
    cwd = None if args.all else cwd_of(args)
    with client_of(args, timeout=60.0) as client:
        data = client.grep(args.pattern, cwd=cwd, limit=args.limit, regex=args.regex, ignore_case=args.ignore_case)
    emit(args, data, _human)
    return EXIT_OK if data["results"] else EXIT_FAIL  # like grep and rg: 1 when nothing matched
