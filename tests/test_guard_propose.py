"""Labelled cases for proposing forbid triggers from a rule's prose (issue 50, memoryd/guard/data/prose.toml):
each kind of row proposes what a forbidding clause names and nothing from a sentence that only mentions it."""

from __future__ import annotations

import pytest

from memoryd.guard.propose import propose, rows, save_forbid, will_stop
from memoryd.relevance.lexicon import load

PROPOSED = [  # (description, body, the save's "will stop" line)
    ("Use pnpm, never npm", "", "will stop: npm, npx — use pnpm"),
    ("Always use `pnpm` instead of `npm` or `yarn` for package management", "", "will stop: npm, npx, yarn — use pnpm"),
    (
        "Use yarn for installs and scripts, never npm or pnpm: a Yarn monorepo",
        "",
        "will stop: npm, npx, pnpm, pnpx — use yarn",
    ),
    ("This project uses pnpm, never npm", "", "will stop: npm, npx — use pnpm"),
    ("Manage dependencies with uv instead of pip", "", "will stop: pip, pip3"),
    ("Do NOT run `npx tsc` directly", "", "will stop: npx tsc"),
    ("Never force push", "", "will stop: git push --force|-f|--force-with-lease"),
    ("Never amend commits", "", "will stop: git commit --amend"),
    (
        "Never edit files under `db/migrations/`; add a new migration",
        "",
        "will stop: writes db/migrations/** — add a new migration",
    ),
    ("NEVER insert application logic into alembic/versions", "", "will stop: writes alembic/versions"),
    ("NEVER read or output `.env.local`", "", "will stop: reads .env.local"),
    ("Never commit secrets or .env files", "", "will stop: reads .env"),
    ("Never use moment.js, use date-fns", "", "will stop: import moment — use date-fns"),
    ("Don't import the `axios` package; use fetch", "", "will stop: import axios — use fetch"),
    (
        "Generated files",
        "Patterns to NEVER edit:\n- `src/gen/*.ts`\n- `api/client/`",
        "will stop: writes src/gen/*.ts, writes api/client/**",
    ),
]
NOT_PROPOSED = [  # sentences that mention a program, a path or a library without forbidding it
    ("Run `npm run build` before E2E tests", "Run `PLAYWRIGHT_HTML_OPEN=never npm run e2e`."),
    ("tsgo is not an npm package", "It is installed by `npm install` via a local package."),
    ("NEVER modify an existing alembic migration", ""),  # names no path; "alembic" is not run
    ("Never use `any` in TypeScript", "Use unknown."),  # a type, not a library
    ("React: use refs only when necessary", "Avoid useRef unless needed (read/write DOM)."),
    ("Keep positional order", "Never insert new params/fields in the middle of exported constructors."),
    ("No disabling constraints to satisfy tests", ""),
    ("Prisma: select, not include", "`include: { user: true }` pulls every column."),
    ("Renderer is React (not Next.js)", ""),
    ("Do not rewrite unrelated files", ""),
]


@pytest.mark.parametrize(("description", "body", "line"), PROPOSED)
def test_a_forbidding_clause_proposes_what_it_names(description: str, body: str, line: str) -> None:
    assert propose("rule", description, body).summary() == line


@pytest.mark.parametrize(("description", "body"), NOT_PROPOSED)
def test_a_sentence_that_only_mentions_proposes_nothing(description: str, body: str) -> None:
    assert not propose("rule", description, body), propose("rule", description, body)


def test_every_row_kind_has_a_case_above() -> None:
    r = rows()
    text = " ".join(d + " " + b for d, b, _ in PROPOSED).casefold()
    assert {"never", "don't", "do not", "instead of"} <= {w for w in r.negations if w in text}
    assert {"edit", "insert"} <= {v for v in r.writes if v in text} and {"read", "commit"} <= {
        v for v in r.reads if v in text
    }
    assert {"use", "import"} <= {v for v in r.imports if v in text} and "package" in r.library_cues
    assert {"force push", "amend commits"} <= set(r.phrases)
    assert propose("r", "Never run `yarn add <pkg>`", "").commands == ("yarn add",)  # the placeholder is dropped


def test_the_save_keeps_what_a_request_says_and_proposes_only_otherwise() -> None:
    assert save_forbid("n", "Use pnpm, never npm", "", None) == (
        {"commands": ["npm", "npx"], "instead": "use pnpm"},
        True,
    )
    assert save_forbid("n", "Use pnpm, never npm", "", {}) == ({}, False)
    assert save_forbid("n", "Use pnpm, never npm", "", {"commands": ["yarn"]}) == ({"commands": ["yarn"]}, False)
    assert save_forbid("n", "The team meets on Tuesdays", "", None) == (None, False)
    assert will_stop({"commands": ["npm"], "instead": "use pnpm"}) == "will stop: npm — use pnpm"
    assert will_stop({"command": ["npm"]}) == ""  # malformed: it holds nothing, so it says nothing


DOWN = "`docker compose down`"
# words.toml [negations] as the guard reads it: each row -> (a rule it makes forbid the command, one that does not)
NEGATIONS = {
    "never": (f"Never run {DOWN}", f"Always run {DOWN}"),
    "don't": (f"Don't run {DOWN}", f"Do run {DOWN}"),
    "dont": (f"dont run {DOWN}", f"do run {DOWN}"),
    "do not": (f"Do not run {DOWN}", f"Do run {DOWN}"),
    "must not": (f"You must not run {DOWN}", f"You must run {DOWN}"),
    "mustn't": (f"You mustn't run {DOWN}", f"You must run {DOWN}"),
    "should not": (f"You should not run {DOWN}", f"You should run {DOWN}"),
    "shouldn't": (f"You shouldn't run {DOWN}", f"You should run {DOWN}"),
    "avoid": (f"Avoid {DOWN}", f"Prefer {DOWN}"),
    "not": (f"Run `make test`, not {DOWN}", f"Run `make test`, then {DOWN}"),
    "no": (f"No {DOWN} here", f"A {DOWN} here"),
    "cannot": (f"You cannot run {DOWN}", f"You can run {DOWN}"),
    "can't": (f"You can't run {DOWN}", f"You can run {DOWN}"),
    "forbidden": (f"Forbidden: {DOWN}", f"Allowed: {DOWN}"),
    "instead of": (f"Use `make test` instead of {DOWN}", f"Use `make test` after {DOWN}"),
    "rather than": (f"Use `make test` rather than {DOWN}", f"Use `make test` more than {DOWN}"),
}
# the rows of [negations.guard_skip]: the guard proposes nothing from them
GUARD_SKIPPED = {
    "doesn't": f"The repo doesn't use {DOWN}",
    "nor": f"Run `make test` nor {DOWN}",  # alone; "neither ... nor" is a [correlatives] row of prose.toml
    "without": f"Deploy without {DOWN}",
    "stop using": f"Stop using {DOWN}",
}


def test_every_negation_the_guard_reads_or_skips_has_cases() -> None:
    assert set(NEGATIONS) == set(rows().negations)
    assert set(GUARD_SKIPPED) == set(load("words")["negations"]["guard_skip"]["words"])


@pytest.mark.parametrize("word", sorted(NEGATIONS))
def test_each_negation_the_guard_reads_forbids_what_follows(word: str) -> None:
    yes, no = NEGATIONS[word]
    assert propose("r", yes, "").commands == ("docker compose down",)
    assert not propose("r", no, "")


@pytest.mark.parametrize("word", sorted(GUARD_SKIPPED))
def test_a_negation_the_guard_skips_proposes_nothing(word: str) -> None:
    assert not propose("r", GUARD_SKIPPED[word], "")


# words.toml [library_cues] as the guard reads it: each row marks `moment` as a library to stop importing; the same
# rule without a row ("some" is none) proposes nothing. The rows of its guard_skip propose nothing either.
@pytest.mark.parametrize("word", sorted(rows().library_cues))
def test_each_library_word_marks_a_name_as_a_library(word: str) -> None:
    assert propose("r", f"Never use `moment` {word}", "").summary() == "will stop: import moment"
    assert not propose("r", "Never use `moment`", "")


@pytest.mark.parametrize("verb", sorted(rows().bare_verbs))
def test_each_library_verb_takes_a_bare_name(verb: str) -> None:
    assert propose("r", f"Don't {verb} moment", "").summary() == "will stop: import moment"
    assert not propose("r", "Don't use moment", "")


@pytest.mark.parametrize("filler", sorted(rows().fillers))
def test_each_library_filler_may_stand_before_the_name(filler: str) -> None:
    assert propose("r", f"Don't add {filler} moment imports", "").summary() == "will stop: import moment"
    assert not propose("r", "Don't add some moment imports", "")


def test_the_library_rows_the_guard_skips_propose_nothing() -> None:
    skip = load("words")["library_cues"]["guard_skip"]
    assert skip["words"] == ["modules"] and not propose("r", "Never use `moment` modules", "")
    assert not any(propose("r", f"Don't {verb} moment", "") for verb in skip["verbs"])
