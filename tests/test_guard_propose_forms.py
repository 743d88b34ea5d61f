"""Labelled cases for the general forms a rule's prose forbids with (issue 50, round 2) and for every alias and
implied-program row of memoryd/guard/data/prose.toml: each row stops its other spellings (a positive case) and
nothing beside them (a negative one)."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from memoryd.guard.acts import Act, commands_of
from memoryd.guard.match import command_matches, meets
from memoryd.guard.package_evidence import rows as evidence_rows
from memoryd.guard.propose import propose, rows
from memoryd.relevance.shell import parse

FORMS = [  # (the rule, the save's "will stop" line)
    ("Start Postgres with docker compose up -d, not brew services", "will stop: brew services — docker compose up -d"),
    ("date-fns, not moment; don't add new moment imports", "will stop: import moment — date-fns"),
    ("do not add moment or dayjs", "will stop: import moment, import dayjs"),
    ("never import lodash", "will stop: import lodash"),
    ("NEVER use `--no-verify` when committing", "will stop: git commit --no-verify|-n"),
    ("When using `git add` in worktrees, NEVER use `git add -A`", "will stop: git add -A|--all|."),
    ("`npm` is forbidden", "will stop: npm, npx"),
    ("Editing `db/migrations/` is not allowed", "will stop: writes db/migrations/**"),
    ("Instead of yarn, use pnpm", "will stop: yarn — use pnpm"),
    ("Use pnpm, not npm", "will stop: npm, npx — use pnpm"),
    ("Never git push --force to main", "will stop: git push --force|-f|--force-with-lease"),
    (
        "Never run a command that discards work, including: `git restore .`, `git reset --hard`",
        "will stop: git restore ., git reset --hard",
    ),
    ("Do not use npm, yarn, or `bun test` here", "will stop: bun test, npm, npx, yarn"),
]
NOT_PROPOSED = [
    "handlers in src/api never import src/db",  # an import scoped to a place: no trigger can say so
    "no CSS modules",  # a technology's name, not a path, command or module
    "don't add comments or docstrings",  # words an add verb takes that name no library
    "Never go to prod on a Friday",  # a program word followed by a word of place is no command
    "avoid backticks in inline `--body`",  # the flag stands beside what is forbidden
    "Never add new dependencies without asking",
    "Avoid lodash",  # a bare name after "avoid" has no library cue
    # from the public corpus (bench/corpus): prose that reads like the forms above and forbids no trigger
    "we MUST NEVER make an integration depend on a security",  # an article: a common noun, no package
    "Domain must never depend on Infrastructure",  # a capitalised concept, no package
    "Use this when you don't require repo or write permissions",  # a list that is not all names
    "Do NOT go through guidelines one by one",  # a program word followed by a preposition
    "Do not use data providers if they make the test harder to understand",  # the clause ends at "if"
    # "use" takes language features as often as packages, so a bare name after it proposes no import
    "never use var",
    "don't use eval",
    "Do not use mocks",
]


@pytest.mark.parametrize(("rule", "line"), FORMS)
def test_each_general_form_proposes_what_it_names(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


@pytest.mark.parametrize("rule", NOT_PROPOSED)
def test_a_form_without_a_nameable_object_proposes_nothing(rule: str) -> None:
    assert not propose("rule", rule, ""), propose("rule", rule, "")


ALIASES = {  # row -> (the rule, a command it now stops, a command beside it that goes on)
    "npm install": ("Never run `npm install`", "npm i lodash", "npm run build"),
    "npm uninstall": ("Never run `npm uninstall`", "npm rm lodash", "npm update"),
    "npm -g": ("Never run `npm install -g`", "npm i --global pnpm", "npm install pnpm"),
    "pnpm install": ("Don't run `pnpm install`", "pnpm i", "pnpm add zod"),
    "pnpm -g": ("Never run `pnpm add -g`", "pnpm add --global zx", "pnpm add zx"),
    "git add -A": ("Never use `git add -A`", "git add --all", "git add src/a.ts"),
    "git commit --no-verify": ("Never run `git commit --no-verify`", "git commit -n -m x", "git commit -m x"),
    "git push --force": ("Never run `git push --force`", "git push -f origin main", "git push origin main"),
    "git push -f": ("Never run `git push -f`", "git push --force-with-lease", "git push"),
    "git checkout -f": ("Never run `git checkout -f`", "git checkout --force main", "git checkout main"),
    "apt": ("Do not run `apt install`", "apt-get install -y curl", "apt-get update"),
    "apt-get": ("Do not run `apt-get install`", "apt install ripgrep", "apt list --installed"),
}
IMPLIED = {  # an implied-program row -> (the rule, a command it stops, one it lets go)
    "commit": ("Don't use `--no-verify` to commit", "git commit --no-verify", "git push --no-verify"),
    "commits": ("Never use `--no-verify` for commits", "git commit --no-verify -m x", "git commit -m x"),
    "committing": ("NEVER use `--no-verify` when committing", "git commit -n -m x", "git commit -am x"),
    "push": ("Never use `--no-verify` to push", "git push --no-verify", "git commit --no-verify"),
    "pushing": ("Never pass `--no-verify` when pushing", "git push --no-verify origin", "git push origin"),
    "pushes": ("Never use `--no-verify` for pushes", "git push --no-verify", "git push"),
}


def _held(rule: str, command: str) -> bool:
    specs = propose("rule", rule, "").commands
    return any(command_matches(spec, cmd) for spec in specs for cmd in parse(command))


@pytest.mark.parametrize("row", sorted(ALIASES))
def test_an_alias_row_stops_its_spellings_and_nothing_beside(row: str) -> None:
    rule, stopped, goes = ALIASES[row]
    assert _held(rule, stopped), (row, propose("rule", rule, "").commands)
    assert not _held(rule, goes), (row, propose("rule", rule, "").commands)


@pytest.mark.parametrize("row", sorted(IMPLIED))
def test_an_implied_row_gives_a_lone_flag_its_program(row: str) -> None:
    rule, stopped, goes = IMPLIED[row]
    assert _held(rule, stopped) and not _held(rule, goes), propose("rule", rule, "").commands


def test_every_alias_and_implied_row_has_cases() -> None:
    r = rows()
    assert set(r.word_aliases) | set(r.program_aliases) == set(ALIASES)
    assert set(r.implied) == set(IMPLIED)


@pytest.mark.parametrize(
    ("spec", "command", "held"),
    [
        ("git clean -fd", "git clean -df", True),
        ("git clean -fd", "git clean -fdx", True),
        ("git clean -fd", "git clean -n", False),
        ("git clean -fd", "git clean -f", False),
        ("bun test", "bun test src/", True),
        ("bun test", "bun run test", False),  # the spec's subcommand is the command's, not any word
        ("bun test", "bunx playwright test", False),
        ("git restore .", "git restore apps/web/src/main.tsx", False),
    ],
)
def test_a_short_flag_cluster_matches_in_any_order(spec: str, command: str, held: bool) -> None:
    assert command_matches(spec, parse(command)[0]) is held


def test_every_word_row_kind_has_a_case_above() -> None:
    r = rows()
    text = " ".join([rule for rule, _ in FORMS] + NOT_PROPOSED).casefold()
    assert {"is forbidden", "is not allowed"} <= {w for w in r.after if w in text}
    assert {"add", "import"} <= {v for v in r.bare_verbs if f"{v} " in text}
    assert {"new"} <= {f for f in r.fillers if f" {f} " in text}
    assert {"comments", "docstrings", "dependencies"} <= r.not_names and "to" in r.not_subcommands
    assert "including" in r.list_leads and not propose("r", "Never edit generated files: run `pnpm gen` instead", "")


BARE_PACKAGES = [  # (rule, body, "will stop" line or "" for nothing): a bare name is a package only with evidence
    # contrast_forms: the other side is a runtime's API, a dashed package, a scoped one
    ("Use Bun.env, not dotenv", "", "will stop: import dotenv — use Bun.env"),
    ("use Bun.$ instead of execa", "", "will stop: import execa — use Bun.$"),
    ("Use date-fns, not moment", "", "will stop: import moment — use date-fns"),
    ("Use @tanstack/react-query, not swr", "", "will stop: import swr — use @tanstack/react-query"),
    ("Use Array.from, not spread", "", ""),  # Array is no program: a language API, and spread no package
    ("Use server-side validation, not client", "", ""),  # a phrase on the other side, no package
    ("Use `unknown`, not any", "", ""),
    ("Use @types/node, not any", "", ""),
    ("Use lodash-es, not lodash", "", ""),  # the trigger would hold the alternative, of lodash's family
    (
        "the key is the executable (`cursor-agent`, not `cursor`)",
        "",
        "",
    ),  # a scoped package on the other side, but `any` stays no name
    # package_forms: a scope makes a package on its own; `@ts-ignore` is no scope
    ("Don't use @emotion/styled", "", "will stop: import @emotion/styled"),
    ("never use @ts-ignore", "", ""),
    # the memory's own code imports or installs it; leads: use, using, the; "no" takes a known name bare
    ("Don't use axios", "Replace `import axios from 'axios'` with fetch.", "will stop: import axios"),
    ("Avoid using lodash", "```ts\nimport _ from 'lodash'\n```", "will stop: import lodash"),
    ("Use fetch, not the request library", "`npm install request` is out", "will stop: import request — use fetch"),
    ("Never the request library", "Old code: `const r = require('request')`.", "will stop: import request"),
    ("Never use the request library", "", ""),
    ("No axios", "`pnpm add axios` was reverted.", "will stop: import axios"),
    ("No axios", "", ""),
    ("Don't use dotenv", "`import { z } from 'zod'`", ""),  # the code names another package
    ("never use any", "`import { any } from './types'`", ""),  # a word of the not_names rows stays no name
    # reason_joins: a runtime (a program of the rows) said to do the package's job before "so"
    ("Bun automatically loads .env, so don't use dotenv.", "", "will stop: import dotenv"),
    ("Deno reads env files itself, therefore never use dotenv", "", "will stop: import dotenv"),
    ("Node has fetch built in, thus don't use axios", "", "will stop: import axios"),
    ("bun runs shell commands itself hence do not use execa", "", "will stop: import execa"),
    ("The server loads .env, so don't use dotenv", "", ""),  # the subject is no program
    ("Bun loads .env. Don't use dotenv", "", ""),  # the reason is another sentence
    ("We use Bun, so never use dotenv", "", ""),  # the subject is "We"
    ("Bun is fast, so never use any", "", ""),  # a word of the not_names rows stays no name
]


@pytest.mark.parametrize(("rule", "body", "line"), BARE_PACKAGES)
def test_a_bare_name_is_a_package_only_with_evidence(rule: str, body: str, line: str) -> None:
    assert propose("rule", rule, body).summary() == line


def test_every_bare_name_row_has_a_case_above() -> None:
    r = evidence_rows()
    rules = [(rule + " " + body, line) for rule, body, line in BARE_PACKAGES]
    for lead in r.leads:
        assert any(f" {lead} " in f" {t.casefold()} " and line for t, line in rules), lead
    for form in r.contrast_forms + r.package_forms:
        assert any(form.search(t) and line for t, line in rules), form.pattern
        assert any(form.search(t) and not line for t, line in rules), form.pattern
    table = tomllib.loads(resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text())
    for join in table["bare_names"]["reason_joins"]:
        assert any(f" {join} " in f" {t.casefold()} " and line for t, line in rules), join
    assert any(" so " in t.casefold() and not line for t, line in rules)


NEW_FILES = [  # (rule, "will stop" line or ""): the creates verbs and file nouns of prose.toml [verbs]
    ("Never create files under `legacy/`", "will stop: creates legacy/**"),
    ("The old app creates nothing new: never creates a file in src/old/", "will stop: creates src/old/**"),
    ("Avoid creating modules inside `src/v1/`", "will stop: creates src/v1/**"),
    ("don't add files under legacy/", "will stop: creates legacy/**"),
    ("Stop adding a new module to pages/", ""),  # "stop" is no negation
    ("Never adding a new module to pages/ without review", "will stop: creates pages/**"),
    ("Never add new `.css` files", "will stop: creates *.css"),
    ("never create new .module.css files", "will stop: creates *.module.css"),
    ("Never add new `src/**/*.module.css` files", "will stop: creates src/**/*.module.css"),
    ("Never add secrets to .env files", ""),  # the verb's object is secrets, not files
    ("Never add secrets to files under legacy/", ""),
    ("never add .env to git", ""),  # one file names no place
    ("Never add `legacy/` to the build", ""),  # a dir only as the place of files
    ("never create new CSS modules", ""),  # a technology's name, no extension or place
    ("Never create a file without tests", ""),
    ("Avoid creating a helper in utils/ for one caller", ""),  # the object is a helper, not files
    ("The build creates files in out/; never edit them", ""),  # creating, said without a negation
    ("Never add a module to `package.json` by hand", ""),  # one file names no place
    # from public rule files, after the forms above were written (a probe, then these fixes: see docs/guard.md)
    (
        "Do not create files inside `features/`, `ideas/`, or `decisions/`",  # a list of places
        "will stop: creates features/**, creates ideas/**, creates decisions/**",
    ),
    ('DO NOT create files in random locations like "hows/", "output/"', ""),  # `output/` is a place, not a verb
    ("never create files or README/*.md docs unless requested", ""),  # a second object, not a place of files
]


@pytest.mark.parametrize(("rule", "line"), NEW_FILES)
def test_a_rule_against_new_files_proposes_creates(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


def test_every_creates_row_has_a_case_above() -> None:
    said = [(set(re.findall(r"[a-z]+", rule.casefold())), line) for rule, line in NEW_FILES]
    for word in rows().creates | rows().file_nouns:
        assert any(word in words and line for words, line in said), word
        assert any(word in words and not line for words, line in said), word


CODE_LISTS = [  # (rule, "will stop" line or ""): the [code_lists] rows of prose.toml (issue 50, fresh3)
    # a bracket of code after what it names stays in the clause; a bracket with other words ends it
    ("Never start the dev server (`pnpm dev`) or run builds (`pnpm build`)", "will stop: pnpm dev, pnpm build"),
    ("Do not start the server (`npm run dev` or `npm start`)", "will stop: npm run dev, npm start"),
    ("Never start the development server (`npm run dev`)", "will stop: npm run dev"),  # a server, no environment
    ("Never commit secrets (`.env`, `.env.local`)", "will stop: reads .env, reads .env.local"),
    ("Never start the dev server (it is already running)", ""),
    ("Never hardcode URLs (use `config.apiUrl`)", ""),
    ("Avoid barrel exports (`export *`)", ""),  # code that names no program
    ("bot accounts can't push to upstream (`git push --force-with-lease -u origin HEAD`)", ""),  # ability: instead
    ("Bots cannot push (`git push`)", ""),
    ("You cannot run `docker compose down -v` here", "will stop: docker compose down -v"),  # still a negation
    ("Agents can't run `npm publish`", "will stop: npm publish"),
    # code listed under a forbidding lead: after its colon, or as bullets under its line
    (
        "NEVER reset the database: `rails db:drop`, `rails db:reset`, or `rails db:setup`",
        "will stop: rails db:drop, rails db:reset, rails db:setup",
    ),
    ("Never wipe data: never run `rails db:drop` and `rails db:reset`", "will stop: rails db:drop, rails db:reset"),
    (
        "Do not run the following commands\n- `npm run dev` - the server is started by hand\n- `npm run build`",
        "will stop: npm run dev, npm run build",
    ),
    (
        "## Commands to avoid\n- `npm run dev` (already running)\n- Any command that starts a server",
        "will stop: npm run dev",
    ),
    ("Never wipe the database\n- `prisma migrate reset` — drops every table", "will stop: prisma migrate reset"),
    ("Never wipe the database\n- `prisma migrate reset` – drops every table", "will stop: prisma migrate reset"),
    ("Never wipe the database\n- `prisma migrate reset`: drops every table", "will stop: prisma migrate reset"),
    ("Never wipe the database\n- `prisma migrate reset` drops every table", ""),  # a sentence, no explanation mark
    ("Never wipe the database\n\n- `rails db:reset`\n\nTo undo:\n- `rails db:rollback`", "will stop: rails db:reset"),
    ("Always use:\n- `rails db:migrate`\n- `rails test`", ""),  # a positive lead
    # a line that names what it forbids is a rule, not a lead: the bullets under it are what to do
    ("Use pnpm, never npm\n- `pnpm install`\n- `pnpm add <pkg>`", "will stop: npm, npx — use pnpm"),
    ("Never use npm:\n- `pnpm install`", "will stop: npm, npx"),  # on main: also `pnpm install|i`
    ("Never use npm: `pnpm install`, `pnpm add`", "will stop: npm, npx"),
    ("Do not use yarn. Commands:\n- `npm ci`", "will stop: yarn"),
    ("Never edit generated files\n- `pnpm gen`", ""),  # the lead keeps files from a change: its items are files
    ("Never wipe the database\n- the data matters\n- `db/schema.rb`", ""),  # prose and a path name no command
    ("Never edit generated files: run `pnpm gen` instead", ""),  # what follows the colon is no list
    # a program the lexicon knows is a command in code, never in prose
    ("never run `bundle exec rake db:reset`", "will stop: bundle exec rake db:reset"),
    ("never bundle secrets into the client build", ""),
    # a command forbidden in one environment: a trigger alone would hold it in all of them, so only a program whose
    # environment variable a row names is proposed, with the row's `!` exceptions ([environment_variables])
    ("Never run `rails db:reset` in development", "will stop: rails db:reset (not: RAILS_ENV=test)"),
    (
        "NEVER wipe the development database: `rails db:drop`, `rails db:reset`",
        "will stop: rails db:drop, rails db:reset (not: RAILS_ENV=test)",
    ),
    ("Never wipe the dev database\n- `rails db:reset`", "will stop: rails db:reset (not: RAILS_ENV=test)"),
    ("Never run `prisma migrate reset` against production", ""),
    ("Never run `prisma migrate reset` on staging", ""),
    ("Never run `prisma migrate reset` in dev", ""),
    ("Never run `prisma migrate reset` in development", ""),  # prisma names no environment variable
    ("Never run `prisma db push` on the prod db", ""),
    ("Never run `rails db:seed` on production data", ""),
    ("Never run `rails db:drop` in the production environment", ""),
    ("Never run `rails runner` in the development console", "will stop: rails runner (not: RAILS_ENV=test)"),
    ("Never run `prisma migrate reset` on production databases", ""),
]
ENVIRONMENT_ROWS = [  # (rule, "will stop" line or ""): each [environment_variables] row, each way
    ("Never run `rails db:reset` in dev", "will stop: rails db:reset (not: RAILS_ENV=test)"),
    ("Never run `rails db:seed` on production data", ""),  # not the default environment: the host sets it
    ("Never run `rake db:drop` against the development database", "will stop: rake db:drop (not: RAILS_ENV=test)"),
    ("Never run `rake db:drop` in staging", ""),
    ("Never run `mix ecto.reset` in development", "will stop: mix ecto.reset (not: MIX_ENV=test)"),
    ("Never run `mix ecto.reset` on prod", ""),
    ("Never run `mix ecto.reset`", "will stop: mix ecto.reset"),  # no environment: no exception
    # the program a wrapper row runs picks the environment (`bundle exec rake`: rake's row)
    (
        "Never run `bundle exec rake db:reset` in development",
        "will stop: bundle exec rake db:reset (not: RAILS_ENV=test)",
    ),
    ("Never run `bundle exec rspec` in development", ""),  # rspec has no row
]


@pytest.mark.parametrize(("rule", "line"), ENVIRONMENT_ROWS)
def test_a_command_forbidden_in_the_default_environment_keeps_the_disposable_ones_out(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


def test_every_environment_variable_row_has_cases_each_way() -> None:
    for program in rows().environment_variables:
        said = [line for rule, line in ENVIRONMENT_ROWS if f"`{program} " in rule]
        assert any("(not: " in line for line in said) and "" in said, program


def test_a_proposed_exception_keeps_the_disposable_environment_out(tmp_path: Path) -> None:
    forbid = propose("rule", "Never run `rails db:reset` in development", "")
    for command, held in (("bin/rails db:reset", True), ("RAILS_ENV=test bin/rails db:reset", False)):
        act = Act("Bash", str(tmp_path), command=command, commands=commands_of(command))
        assert (meets(forbid, act) is not None) is held


@pytest.mark.parametrize(("rule", "line"), CODE_LISTS)
def test_code_in_a_bracket_or_under_a_forbidding_lead_is_what_it_forbids(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


def test_every_code_list_row_has_a_case_above() -> None:
    r = rows()
    said = [(f" {rule.casefold()} ", line) for rule, line in CODE_LISTS]
    words = tomllib.loads(resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text())["code_lists"]
    for join in words["joins"]:
        assert any(f"` {join} `" in text and line for text, line in said), join
    for mark in r.explanations:
        assert any(f"`{mark}" in text and line for text, line in said), mark
    for word in r.ability:
        assert any(word in text and not line for text, line in said), word
        assert any(word in text and line for text, line in said), word
    for env in words["environments"]:
        assert any(re.search(rf"\b{env}\b", text) and not line for text, line in said), env
    for noun in words["environment_nouns"]:
        assert any(re.search(rf"\b(?:{'|'.join(words['environments'])}) {noun}\b", text) for text, _ in said), noun
    assert any("development server" in text and line for text, line in said)  # a server is no environment noun


CORRELATIVES = [  # (rule, "will stop" line or ""): the [correlatives] rows of prose.toml, each way
    ("Use neither npm nor yarn", "will stop: npm, npx, yarn"),
    ("Neither `npm` or `yarn`: this repo uses pnpm", "will stop: npm, npx, yarn — use pnpm"),
    ("Neither npm nor yarn, use pnpm", "will stop: npm, npx, yarn — use pnpm"),
    ("Run neither `rails db:drop` nor `rails db:reset`", "will stop: rails db:drop, rails db:reset"),
    ("Add neither moment nor dayjs", "will stop: import moment, import dayjs"),
    ("Edit neither `db/schema.rb` nor `db/migrate/`", "will stop: writes db/schema.rb, writes db/migrate/**"),
    ("Neither the tests nor the build need docker", ""),  # a description: no forbidden name in it
    ("The build is neither fast nor small", ""),
    ("This is neither here nor there", ""),
    ("Never run `make neither` in CI", "will stop: make neither"),  # code says no "neither"
]


@pytest.mark.parametrize(("rule", "line"), CORRELATIVES)
def test_neither_forbids_every_name_of_its_list(rule: str, line: str) -> None:
    assert propose("rule", rule, "").summary() == line


def test_every_correlative_row_has_cases_each_way() -> None:
    table = tomllib.loads(resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text())
    for word in table["correlatives"]["words"]:
        said = [line for rule, line in CORRELATIVES if re.search(rf"\b{word}\b", rule, re.I)]
        assert any(said) and "" in said, word


TOOL_KINDS = {  # kind -> (a tool said NOT beside a chosen one of the kind, its line; a tool of another kind: nothing)
    "type_checkers": (
        ("This project uses pyright (not mypy).", "will stop: mypy — use pyright"),
        "Check types with pyright, not pytest",
    ),
    "linters": (("Lint with ruff, not flake8", "will stop: flake8 — ruff"), "Lint with pylint, not pytest"),
    "formatters": (("Format with ruff (not black)", "will stop: black"), "Format with black (not pylint)"),
    "test_runners": (
        ("Tests run with pytest (not nose2)", "will stop: nose2 — run with pytest"),
        "Our tests prefer pytest fixtures (not unittest.TestCase)",
    ),
}


@pytest.mark.parametrize("kind", sorted(TOOL_KINDS))
def test_a_tool_said_not_beside_a_chosen_one_of_its_kind_is_forbidden(kind: str) -> None:
    table = tomllib.loads(resources.files("memoryd.guard").joinpath("data", "prose.toml").read_text())
    assert set(TOOL_KINDS) == set(table["tool_kinds"])
    (rule, line), other = TOOL_KINDS[kind]
    assert propose("rule", rule, "").summary() == line
    assert not propose("rule", other, ""), propose("rule", other, "")


def test_a_tool_after_a_negated_run_verb_is_forbidden_and_held_through_its_runners() -> None:
    # the crossbill-web rule (fresh5)
    forbid = propose("pyright, never mypy", "Run `pyright` after changing Python files; never suggest or run mypy.", "")
    assert forbid.commands == ("mypy",)
    assert not propose("rule", "never suggest mypy", "")  # no run verb: a word, not a command
    assert not propose("rule", "never use black", "")  # an English word is a program only in a contrast
    assert not propose("rule", "Use pyright (not strict mode)", "")
    for command in ["uv run mypy src/", "uvx mypy", "python -m mypy src", "timeout 300 uv run mypy", "dmypy run"]:
        held = meets(forbid, Act("Bash", command=command, commands=commands_of(command))) is not None
        assert held is (command != "dmypy run"), command  # dmypy is another program: the hand trigger names it
    for command in ["uv run pyright", "uv run --with mypy pytest", "basedpyright src"]:
        assert meets(forbid, Act("Bash", command=command, commands=commands_of(command))) is None, command
