"""Which kinds of the hand-written matcher's reasons fire for a memory and an act (a path under its globs, a file
kind, a command, a forbidden program, code it names, a shared subject, a role ...), from its typed `AppliesTo` and
the same predicates `applies_match.meets` uses: the fitted matcher's indicator inputs (issue 49, policy d)."""

from __future__ import annotations

from collections.abc import Iterable

from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_derive import PM_NAMES
from memoryd.relevance.applies_match import (
    command_facts,
    command_matches,
    contradicts,
    file_kind,
    packages_of,
    path_matches,
    prompt_facts,
    writes_cue,
)

TOOL_REASONS = ("old_path", "old_kind", "old_command", "old_command_path", "old_cue", "old_forbids")
PROMPT_REASONS = ("old_p_program", "old_p_path", "old_p_cue", "old_p_package", "old_p_act", "old_p_role", "old_topic")
REASONS = TOOL_REASONS + PROMPT_REASONS


def tool_reasons(a: AppliesTo, path: str, command: str, writes: str) -> frozenset[str]:
    """Every kind of reason `meets` (and `contradicts`) would give for this edit or command, not only the first."""
    out: set[str] = set()
    if path:
        if any(path_matches(g, path) for g in a.paths):
            out.add("old_path")
        if a.rule and a.kinds and file_kind(path) in a.kinds:
            out.add("old_kind")
    if command:
        if any(command_matches(c, command) for c in a.commands):
            out.add("old_command")
        if any(path_matches(g, arg) for arg in command_facts(command)[2] for g in a.paths):
            out.add("old_command_path")
        if contradicts(a, command):
            out.add("old_forbids")
    if writes and writes_cue(a, writes):
        out.add("old_cue")
    return frozenset(out)


def prompt_reasons(a: AppliesTo, prompt: str, topics: Iterable[str]) -> frozenset[str]:
    """Every kind of reason `prompt_meets` would give for this prompt, not only the first."""
    said, out = prompt_facts(prompt), set[str]()
    if any((p := c.split()[0].casefold()) in said.words and (p in PM_NAMES or p in a.forbids) for c in a.commands):
        out.add("old_p_program")
    if any(path_matches(g, t.strip("`'\".,;:()")) for t in said.paths for g in a.paths):
        out.add("old_p_path")
    if writes_cue(a, prompt, code_only=True):
        out.add("old_p_cue")
    if said.packages & packages_of(a):
        out.add("old_p_package")
    if any(c in a.commands for c in said.acts):
        out.add("old_p_act")
    if any(role in a.roles for _, role in said.roles):
        out.add("old_p_role")
    if a.topics.intersection(topics):
        out.add("old_topic")
    return frozenset(out)
