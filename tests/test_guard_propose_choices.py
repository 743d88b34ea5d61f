"""Labelled cases for the classes the fresh4 held-out run exposed in the proposer (issue 50): a clause inside a
bracket ends at its close, so the command a rule prefers beside "(not X)" is never forbidden, nor is the manager a
sentence chooses; a file named by its name and extension after a verb of change is protected (`writes`). Each row
of memoryd/guard/data/prose.toml these read ([verbs] file_edits, [files] extensions) has cases each way."""

from __future__ import annotations

import pytest

from memoryd.guard.propose import propose, rows

TAK = (
    "`yarn install` (not `npm install`), `yarn build` (not `npm run build`), `yarn dev` (not `npm run dev`), "
    "`yarn lint` (not `npm run lint`)."
)
CHOICES = [  # (rule, the save's "will stop" line): the preferred side is never forbidden
    (TAK, "will stop: npm install|i|add|in|isntall"),  # not `yarn build`: its bracket closed the clause
    ("`yarn install`, not `npm install` and `yarn build`", "will stop: npm install|i|add|in|isntall — yarn install"),
    ("Use pnpm (not npm)", "will stop: npm, npx — use pnpm"),  # what to use ends at the bracket
    ("Use `pnpm lint`, not `pnpm dev`", "will stop: pnpm dev — use pnpm lint"),  # one manager: no choice among them
    ("Never run `pnpm dev`, use `pnpm lint`", "will stop: pnpm dev — use pnpm lint"),
    ("Never start the dev server (`pnpm dev`) or run builds", "will stop: pnpm dev"),  # a bracket of code stays in
    ("Keep the key the real executable (cursor-agent, not cursor) so it works", ""),  # an aside names no package
    ("Use date-fns (not moment)", ""),
    ("Use date-fns, not moment", "will stop: import moment — use date-fns"),  # no bracket: the contrast is evidence
]


@pytest.mark.parametrize(("rule", "line"), CHOICES)
def test_the_preferred_side_of_a_choice_is_never_forbidden(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


def test_the_fresh4_yarn_rule_proposes_npm_and_never_yarn() -> None:
    forbid = propose(
        "Yarn, not npm",
        "This project uses Yarn as the package manager. Always use `yarn` commands instead of `npm`.",
        TAK,
    )
    assert forbid.commands[:2] == ("npm", "npx")
    assert not [c for c in forbid.commands if c.startswith("yarn")]


@pytest.mark.parametrize("verb", sorted(rows().file_edits))
def test_each_verb_of_change_protects_the_file_it_names(verb: str) -> None:
    assert propose("rule", f"Never {verb} CLAUDE.md", "").writes == ("CLAUDE.md",)
    assert propose("rule", f"Don't {verb} `AGENTS.md`", "").writes == ("AGENTS.md",)


@pytest.mark.parametrize("extension", sorted(rows().file_extensions))
def test_each_extension_names_a_file(extension: str) -> None:
    assert propose("rule", f"Do not modify settings.{extension}", "").writes == (f"settings.{extension}",)


NAMED_FILES = [  # (rule, the save's "will stop" line)
    (
        "NEVER modify CLAUDE.md: it is managed by the developer only. Read and follow it, but never edit it.",
        "will stop: writes CLAUDE.md",
    ),
    ("Never overwrite the CLAUDE.md file", "will stop: writes CLAUDE.md"),
    ("don't edit or delete package.json", "will stop: writes package.json"),  # a writes verb joins
    (  # a list of files after the verb (the public corpus's dotnet/aspire)
        "Never change package.json or package-lock.json files unless explicitly asked to.",
        "will stop: writes package.json, writes package-lock.json",
    ),
    ("Do not change the `global.json` file.", "will stop: writes global.json"),
    ("Do not edit package.json or package-lock.json.", "will stop: writes package.json, writes package-lock.json"),
    ("Never modify CLAUDE.md or files in `.claude/`", "will stop: writes .claude/**, writes CLAUDE.md"),  # by code
    ("Never modify `.claude/` or CLAUDE.md", "will stop: writes .claude/**, writes CLAUDE.md"),
    ("never run `npm ci` or edit package.json", "will stop: npm ci, writes package.json"),
    ("never run `npm ci` on package.json", "will stop: npm ci"),  # beside code, no verb of change before it
    ("Never edit CLAUDE.md.bak", ""),  # `bak` is no extension of the rows
    ("Never edit CLAUDE.md and then run README.md checks", "will stop: writes CLAUDE.md"),  # the list ends
    ("For tasks that do not involve changes to the `package.json` file, run the build", ""),  # a noun, no verb
    ("2. **Never modify CLAUDE.md** — it is user-owned", "will stop: writes CLAUDE.md"),  # bold is no glob
    ("| **Never modify CLAUDE.md mid-session.** | breaks the cache |", "will stop: writes CLAUDE.md"),
    ("**never edit src/gen/**", "will stop: writes src/gen/**"),  # a glob's own `**` stands by its slash
    ("Never delete CLAUDE.md", ""),  # no verb of the file_edits row before it
    ("Never modify process.env", ""),  # a member, not a file: `env` is no extension of the rows
    ("Don't change console.log calls", ""),
    ("Never use moment.js", "will stop: import moment"),  # a library, not a file
    ("Read CLAUDE.md before you start", ""),
    ("Do not read CLAUDE.md aloud, but edit it freely", ""),  # a read verb: no change is forbidden
]


@pytest.mark.parametrize(("rule", "line"), NAMED_FILES)
def test_a_file_named_after_a_verb_of_change_is_protected(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line
