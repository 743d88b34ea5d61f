"""`--help` for people: each subcommand's one-line description and an example, and "did you mean"
for a mistyped command or choice. Examples live here, one line each, so `--help` shows them all alike."""

from __future__ import annotations

import argparse
import difflib
import re

EXAMPLES: dict[str, str] = {
    "serve": "memoryd serve --port 7377       # foreground; Ctrl-C stops it",
    "status": "memoryd status --cwd ~/shop",
    "stop": "memoryd stop",
    "install-service": "memoryd install-service --dry-run",
    "uninstall-service": "memoryd uninstall-service",
    "setup": "memoryd setup --dry-run",
    "uninstall": "memoryd uninstall --dry-run       # --purge removes $MEMORYD_HOME and its memories too",
    "save": 'memoryd save -t feedback -n "Package manager" -d "Use pnpm, never npm"',
    "list": "memoryd list --type feedback",
    "show": 'memoryd show "Package manager"     # or its file name, as `memoryd list` shows it',
    "forget": 'memoryd forget "Package manager"',
    "index": "memoryd index",
    "prompt": "memoryd prompt > memory-section.md",
    "recall": 'memoryd recall "how do we deploy?"',
    "dream": "memoryd dream status",
    "dream status": "memoryd dream status",
    "dream run": "memoryd dream run",
    "dream cancel": "memoryd dream cancel",
    "dream runs": "memoryd dream runs",
    "dream undo": "memoryd dream undo <run id from `memoryd dream runs`>",
    "hooks": "memoryd hooks --install",
    "hook": "memoryd hook claude-code < event.json",
    "doctor": "memoryd doctor --cwd ~/shop",
    "grep": 'memoryd grep "pnpm-lock"',
    "mcp": "memoryd mcp --print-config cursor",
    "backfill": "memoryd backfill --since 30d",
    "team": "memoryd team status",
    "team init": "memoryd team init --remote git@github.com:acme/shop-memory.git",
    "team sync": "memoryd team sync",
    "team status": "memoryd team status",
    "team list": "memoryd team list",
    "ui": "memoryd ui",
    "review": "memoryd review list",
    "review list": "memoryd review list",
    "review approve": "memoryd review approve <id from `memoryd review list`>",
    "review reject": "memoryd review reject <id>",
    "review edit": 'memoryd review edit <id> --description "Use pnpm, never npm"',
    "stale": "memoryd stale",
    "guard": "memoryd guard --json",
    "import": "memoryd import --from ~/.memoryd/projects/-home-me-shop/memory --dry-run",
    "export": "memoryd export -o shop.jsonl",
    "config": "memoryd config",
    "config init": "memoryd config init",
    "logs": "memoryd logs -f",
    "completion": "memoryd completion zsh > ~/.zfunc/_memoryd",
}


def subcommands(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(name path, its parser, its one-line help) for every subcommand, nested ones too."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                path = f"{prefix}{name}"
                found.append((path, sub, helps.get(name, "")))
                found += subcommands(sub, path + " ")
    return found


def describe(parser: argparse.ArgumentParser) -> None:
    """Give every subcommand a description (its help line, when it has none) and its example."""
    for path, sub, help_line in subcommands(parser):
        if not sub.description and help_line:
            sub.description = help_line[0].upper() + help_line[1:] + ("" if help_line.endswith(".") else ".")
        example = EXAMPLES.get(path)
        if example and "example:" not in (sub.epilog or ""):
            sub.epilog = (sub.epilog + "\n\n" if sub.epilog else "") + f"example:\n  {example}"
            sub.formatter_class = argparse.RawDescriptionHelpFormatter


def chosen_subparser(parser: argparse.ArgumentParser, parsed: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest subcommand the parsed line chose (`team sync` -> team's sync parser), else `parser`."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(getattr(parsed, action.dest, None) or "")
            if sub is not None:
                return chosen_subparser(sub, parsed)
    return parser


def suggestion(parser: argparse.ArgumentParser, message: str, given: list[str] | None = None) -> str:
    """ "; did you mean 'list'?" for argparse's invalid-choice message, "; did you mean --type?" for an
    unknown flag, or for a required one missing because it was mistyped (`save --tpye`), else ""."""
    m = re.search(r"invalid choice: '([^']*)'", message)
    if m:
        choices = [str(c) for a in parser._actions if a.choices for c in a.choices]
        close = difflib.get_close_matches(m.group(1), choices, n=1, cutoff=0.6)
        return f"; did you mean '{close[0]}'?" if close else ""
    known = {flag for a in parser._actions for flag in a.option_strings}
    m = re.search(r"unrecognized arguments: (.*)", message)
    if m:
        words = m.group(1).split()
    elif "arguments are required" in message:  # argparse reports the missing flag before the typo that caused it
        words = [w for w in given or () if w.startswith("--") and w.split("=", 1)[0] not in known]
    else:
        return ""
    guesses = [_close_flag(known, w) for w in words if w.startswith("-")]
    found = [f"{g} (not {w.split('=', 1)[0]})" if m is None else g for w, g in zip(words, guesses) if g]
    return f"; did you mean {' '.join(dict.fromkeys(found))}?" if found else ""


def _close_flag(known: set[str], word: str) -> str | None:
    close = difflib.get_close_matches(word.split("=", 1)[0], sorted(f for f in known if f.startswith("--")), 1, 0.6)
    return close[0] if close else None
