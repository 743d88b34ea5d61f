"""The words a held act is answered with: the rule, what to do instead (the same act in the package manager the
rule names, when it names one), and the way out: the memory file, how to change or drop the rule.

It does NOT decide whether an act is held (`match.py`, `mode.py`).
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from memoryd.base.text import words
from memoryd.guard.index import Rule
from memoryd.guard.match import COMMAND, Hit
from memoryd.relevance.shell import SimpleCommand

SWITCH_HINT = "MEMORYD_GUARD=off claude starts a session without the guard"


@cache
def _equivalents() -> dict[str, Any]:
    text = resources.files("memoryd.guard").joinpath("data", "acts.toml").read_text(encoding="utf-8")
    return dict(tomllib.loads(text)["equivalents"])


def same_act_in(instead: str, cmd: SimpleCommand) -> str:
    """`npm install lodash` as the manager `instead` names would run it (`pnpm add lodash`); "" when `instead`
    names none, or the command is not a package manager's."""
    table = _equivalents()
    if cmd.family not in table:
        return ""
    named = [w for w in words(instead) if w in table and w != cmd.family]
    if not named:
        return ""
    target = named[0]
    row = table[target]
    if cmd.runner and cmd.runs and cmd.subcommand.casefold() != "run":  # `npm run build` stays a script run
        start = next((i for i, w in enumerate(cmd.words) if i and w.casefold() == cmd.runs[0]), len(cmd.words))
        return " ".join([row["runner"], *cmd.words[start:]])
    args = list(cmd.args)
    verb = cmd.subcommand
    if verb:
        at = args.index(verb)
        args[at] = row["verbs"].get(verb.casefold(), verb)
    return " ".join([target, *args])


def reason(rule: Rule, hit: Hit) -> str:
    """Why the act is held, what to do instead, and how to change or drop the rule."""
    about = rule.description or rule.name
    lines = [f'memoryd held this act: {hit.describe()}, which the memory "{rule.name}" forbids ({about}).']
    instead = rule.forbid.instead
    again = same_act_in(instead, hit.command) if instead and hit.kind == COMMAND and hit.command else ""
    if instead and again:
        lines.append(f"Instead: {instead}: run `{again}`.")
    elif instead:
        lines.append(f"Instead: {instead}.")
    lines.append(
        f"If the rule is wrong or no longer holds, edit or remove `forbid:` in {rule.path} (or on its page in "
        f"memoryd's web view); `memoryd guard` lists every rule; {SWITCH_HINT}."
    )
    return " ".join(lines)


def also_broken(rule: Rule, hit: Hit) -> str:
    """Another memory the same act breaks, said after the first one's reason: its name, what to do instead, and where
    to change it (a held act never leaves the person without a way forward)."""
    about = rule.description or rule.name
    instead = f" Instead: {rule.forbid.instead}." if rule.forbid.instead else ""
    return (
        f'It also breaks "{rule.name}" ({about}): {hit.describe()}.{instead} If that rule is wrong, edit or remove '
        f"`forbid:` in {rule.path} too."
    )
