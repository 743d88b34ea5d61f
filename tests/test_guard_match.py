"""Labelled cases for the guard's matching (issue 50): every row of memoryd/guard/data/acts.toml held and not
held, command specs with families, runners, words and alternatives, paths written vs created, reads with `!`,
and imports where only new ones count. Real files in a temp project; no daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.base.errors import InvalidRequest
from memoryd.guard.acts import Act, commands_of, imports_in, rows
from memoryd.guard.match import meets
from memoryd.guard.mode import effective_mode
from memoryd.guard.reason import same_act_in
from memoryd.guard.rules import parse_forbid
from memoryd.relevance.shell import parse


def bash(root: Path, command: str) -> Act:
    return Act("Bash", str(root), command=command, commands=commands_of(command))


COMMANDS = [  # (spec, command, held)
    ("npm", "npm install lodash", True),
    ("npm", "npx eslint .", True),  # npx is npm's family
    ("npm", "cd web && npm ci", True),
    ("npm", "pnpm add lodash", False),
    ("npm", 'echo "never npm"', False),
    ("npm", "grep -rn npm package.json", False),
    ("npx", "npm install", False),  # a member names only itself
    ("prisma migrate reset", "npx prisma migrate reset --force", True),  # what a runner runs
    ("prisma migrate reset", "npx prisma migrate dev", False),
    ("git push --force|-f", "git push -f origin main", True),
    ("git push --force|-f", "git push -fu origin x", True),  # combined short options
    ("git push --force|-f", "git push origin main", False),
    ("git push --force|-f", "git push --force-with-lease", False),  # words are exact
    ("brew services", "brew services start postgresql", True),
    ("brew services", "brew install jq", False),
    ("pip install", "python -m pip install requests", True),
    ("pip install", "uv pip install requests", False),
]


@pytest.mark.parametrize(("spec", "command", "held"), COMMANDS)
def test_command_specs(tmp_path: Path, spec: str, command: str, held: bool) -> None:
    forbid = parse_forbid({"commands": [spec]})
    assert (meets(forbid, bash(tmp_path, command)) is not None) is held


EXCEPTIONS = [  # (commands, command, held): a `!` item keeps out what the other items would hold
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "rails db:reset", True),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "RAILS_ENV=test bin/rails db:reset", False),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "env RAILS_ENV=test rails db:reset", False),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "RAILS_ENV=development rails db:reset", True),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "RAILS_ENV=test rails db:reset && rails db:reset", True),
    (["rails db:reset|db:drop", "!RAILS_ENV=test"], "RAILS_ENV=test rails db:drop", False),  # assignments alone
    (["rails db:reset|db:drop", "!RAILS_ENV=test"], "RAILS_ENV=testing rails db:drop", True),  # the value is a word
    (["mix ecto.reset", "!MIX_ENV=test|ci"], "MIX_ENV=ci mix ecto.reset", False),  # alternatives
    (["mix ecto.reset", "!MIX_ENV=test|ci"], "MIX_ENV=prod mix ecto.reset", True),
    (["git push", "!git push --dry-run"], "git push --dry-run origin main", False),  # words, no assignment
    (["git push", "!git push --dry-run"], "git push origin main", True),
    (["RAILS_ENV=production rails db:reset"], "RAILS_ENV=production rails db:reset", True),  # a trigger's own
    (["RAILS_ENV=production rails db:reset"], "rails db:reset", False),
    # an exported assignment reaches the later commands of the line ([exporters] rows of data/acts.toml)
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "export RAILS_ENV=test && rails db:reset", False),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "export RAILS_ENV=test; bin/rails db:reset", False),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "export RAILS_ENV=production && rails db:reset", True),
    (["rails db:reset", "!RAILS_ENV=test rails db:reset"], "rails db:reset; export RAILS_ENV=test", True),  # too late
    (["rails db:reset", "!RAILS_ENV=test"], "export RAILS_ENV=test && RAILS_ENV=production rails db:reset", True),
    (["rails db:reset", "!RAILS_ENV=test"], "export RAILS_ENV=test; export RAILS_ENV=production; rails db:reset", True),
    (["rails db:reset", "!RAILS_ENV=test"], "RAILS_ENV=test; rails db:reset", True),  # not exported: not known
    (["rails db:drop", "!RAILS_ENV=test"], "cd app && export CI=1 RAILS_ENV=test && timeout 60 rails db:drop", False),
    (["rails db:reset", "!RAILS_ENV=test"], "export RAILS_ENV=test && bash -c 'rails db:reset'", False),
    (["rails db:reset", "!RAILS_ENV=test"], "bash -c 'export RAILS_ENV=test; rails db:reset'", False),
    (["RAILS_ENV=production rails db:reset"], "export RAILS_ENV=production && rails db:reset", True),
    (["RAILS_ENV=production rails db:reset"], "export RAILS_ENV=staging && rails db:reset", False),
    (["export"], "export RAILS_ENV=test && rails db:reset", False),  # export itself runs no program
]


@pytest.mark.parametrize(("commands", "command", "held"), EXCEPTIONS)
def test_a_kept_out_command_is_not_held(tmp_path: Path, commands: list[str], command: str, held: bool) -> None:
    assert (meets(parse_forbid({"commands": commands}), bash(tmp_path, command)) is not None) is held


def test_the_summary_says_what_is_kept_out() -> None:
    forbid = parse_forbid({"commands": ["rails db:reset", "!RAILS_ENV=test rails db:reset"], "instead": "ask first"})
    assert forbid.summary() == "will stop: rails db:reset (not: RAILS_ENV=test rails db:reset) — ask first"
    assert (
        parse_forbid({"reads": [".env*", "!.env.example"]}).summary()
        == "will stop: reads .env* (not: reads .env.example)"
    )


def test_every_writer_row_holds_a_change_and_not_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    for name in ("a.sql", "b.sql"):
        (tmp_path / "db" / name).write_text("x")
    forbid = parse_forbid({"writes": ["db/**"]})
    cases = {
        "rm": ("rm db/a.sql", "rm tmp/a.sql"),
        "unlink": ("unlink db/a.sql", "unlink x.sql"),
        "shred": ("shred db/a.sql", "shred x"),
        "truncate": ("truncate -s 0 db/a.sql", "truncate -s 0 x"),
        "mv": ("mv db/a.sql old.sql", "mv x.sql y.sql"),
        "tee": ("echo x | tee db/a.sql", "echo x | tee out.log"),
        "cp": ("cp x.sql db/a.sql", "cp db/a.sql x.sql"),  # cp changes its destination only
        "install": ("install -m 644 x db/a.sql", "install -m 644 db/a.sql x"),
        "rsync": ("rsync -a x/ db/a.sql", "rsync -a db/a.sql backup/"),
        "git rm": ("git rm db/a.sql", "git rm x.sql"),
        "git mv": ("git mv db/a.sql db/c.sql", "git mv x y"),
        "git restore": ("git restore db/a.sql", "git restore src/x.ts"),
        "git checkout": ("git checkout -- db/a.sql", "git checkout main"),
    }
    assert set(cases) == set(rows().writers), "each writer row needs its cases"
    for row, (held, free) in cases.items():
        assert meets(forbid, bash(tmp_path, held)) is not None, row
        assert meets(forbid, bash(tmp_path, free)) is None, row
    assert meets(forbid, bash(tmp_path, "echo x > db/a.sql")) is not None  # a redirect onto an existing file
    assert meets(forbid, bash(tmp_path, "echo x > db/new.sql")) is None  # a new file is not a change
    edit = Act("Edit", str(tmp_path), "db/a.sql")
    assert meets(forbid, edit) is not None
    assert meets(forbid, Act("Write", str(tmp_path), "db/new.sql", created=True)) is None


def test_reads_with_a_kept_out_glob_and_every_non_reader_row(tmp_path: Path) -> None:
    forbid = parse_forbid({"reads": [".env*", "!.env.example"]})
    for command in ("cat .env.local", "git add .env", "source .env.local", "docker compose --env-file=.env.local up"):
        assert meets(forbid, bash(tmp_path, command)) is not None, command
    for command in ("cat .env.example", "cp .env.example .env.local", "git add src/env.ts"):
        assert meets(forbid, bash(tmp_path, command)) is None, command
    for program in sorted(rows().non_readers):
        assert meets(forbid, bash(tmp_path, f"{program} .env.local")) is None, program
    assert meets(forbid, Act("Read", str(tmp_path), "apps/web/.env.local")) is not None
    assert meets(forbid, Act("Read", str(tmp_path), ".env.example")) is None


def test_only_new_imports_count_in_every_language(tmp_path: Path) -> None:
    forbid = parse_forbid({"imports": ["moment", "requests"]})
    added = {
        "js import": "import moment from 'moment'",
        "js side effect": "import 'moment/locale/fr'",
        "require": 'const m = require("moment")',
        "dynamic": "const m = await import('moment')",
        "re-export": "export { default } from 'moment'",
        "python import": "import requests",
        "python from": "from requests.adapters import HTTPAdapter",
    }
    for label, text in added.items():
        assert meets(forbid, Act("Edit", str(tmp_path), "a.ts", old="x", new=text)) is not None, label
        assert meets(forbid, Act("Edit", str(tmp_path), "a.ts", old=text, new=text + "\nx = 1")) is None, label
    assert imports_in("import { momentum } from './physics'") == {"./physics"}
    assert meets(forbid, Act("Edit", str(tmp_path), "a.ts", old="", new="// a moment of truth")) is None
    for verb in sorted(rows().install_verbs):
        assert meets(forbid, bash(tmp_path, f"pnpm {verb} moment@2")) is not None, verb
    assert meets(forbid, bash(tmp_path, "pnpm remove moment")) is None


FAMILY = {  # each family_separators row: (a module of the family, a name that only starts like it)
    "/": ("lodash/fp", "lodashed"),
    ".": ("lodash.debounce", "lodashed"),
    "::": ("lodash::fp", "lodash_fp"),
    "-": ("moment-timezone", "momentum"),
}


def test_a_module_of_the_forbidden_ones_family_is_held_and_a_lookalike_is_not(tmp_path: Path) -> None:
    assert set(FAMILY) == set(rows().family_separators), "each separator row needs its cases"
    forbid = parse_forbid({"imports": ["moment", "lodash"]})
    for family, lookalike in FAMILY.values():
        for name, held in ((family, True), (lookalike, False)):
            edit = Act("Edit", str(tmp_path), "a.ts", old="", new=f"import x from '{name}'")
            assert (meets(forbid, edit) is not None) is held, name
            assert (meets(forbid, bash(tmp_path, f"npm install {name}")) is not None) is held, name


def test_a_write_reads_its_target_so_an_import_it_had_is_not_new(tmp_path: Path) -> None:
    (tmp_path / "a.ts").write_text("import moment from 'moment'\n")
    payload = {
        "tool_name": "Write",
        "tool_input": {"file_path": str(tmp_path / "a.ts"), "content": "import moment from 'moment'\nx()"},
    }
    act = Act.from_payload(payload, str(tmp_path))
    assert not act.created and meets(parse_forbid({"imports": ["moment"]}), act) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["npm"], "forbid must be an object"),
        ({"command": ["npm"]}, "forbid.command is not a field"),
        ({"writes": ["/etc/passwd"]}, "must be a glob relative to the project"),
        ({"reads": ["../x"]}, "must be a glob relative to the project"),
        ({"creates": ["/tmp/x"]}, "must be a glob relative to the project"),
        ({"created": ["legacy/**"]}, "use commands, writes, reads, imports, creates"),
        ({"commands": [""]}, "list of non-empty strings"),
        ({"commands": ["rails db:reset", "!"]}, r"forbid.commands: '!' keeps nothing out; write what it keeps out"),
        ({"reads": [".env*", "! "]}, r"forbid.reads: '! ' keeps nothing out"),
        ({"commands": ["!RAILS_ENV=test"]}, r"forbid.commands holds only '!' items.*add the command they narrow"),
        (
            {"commands": ["RAILS_ENV=test"]},
            r"forbid.commands: 'RAILS_ENV=test' names no program.*\('!RAILS_ENV=test'|\"!RAILS_ENV=test\"\)",
        ),
        ({"commands": ["npm"], "enforce": "block"}, "is not a mode"),
        ({"commands": ["npm"], "instead": "a\nb"}, "must be one line"),
    ],
)
def test_a_bad_forbid_names_the_field_and_the_fix(value: object, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        parse_forbid(value)


def test_modes_session_then_memory_then_config() -> None:
    assert effective_mode("deny", None, "") == "deny"
    assert effective_mode("deny", None, "ask") == "ask"
    assert effective_mode("deny", "off", "ask") == "off"
    assert effective_mode("off", None, "deny") == "off"
    assert effective_mode("off", "ask", "") == "ask"
    assert effective_mode("context", "bogus", "") == "context"


@pytest.mark.parametrize(
    ("instead", "command", "again"),
    [
        ("use pnpm", "npm install lodash", "pnpm add lodash"),
        ("use pnpm", "npm i -D vitest", "pnpm add -D vitest"),
        ("use pnpm", "npx eslint .", "pnpm dlx eslint ."),
        ("use pnpm", "npm run build", "pnpm run build"),
        ("use pnpm", "npm ci", "pnpm install --frozen-lockfile"),
        ("use yarn", "npm uninstall x", "yarn remove x"),
        ("use bun", "npx vite", "bunx vite"),
        ("use uv", "pip install requests", ""),  # pip has no row: no guess
        ("ask the team first", "npm install", ""),  # names no manager
        ("use npm", "pnpm add lodash", "npm install lodash"),
        ("use poetry", "uv add httpx", "poetry add httpx"),
    ],
)
def test_the_same_act_in_the_manager_the_rule_names(instead: str, command: str, again: str) -> None:
    assert same_act_in(instead, parse(command)[0]) == again


def test_creates_holds_a_new_file_there_and_never_a_change_to_an_existing_one(tmp_path: Path) -> None:
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "old.ts").write_text("x")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("x")
    forbid = parse_forbid({"creates": ["legacy/**", "*.module.css"]})

    def write(rel: str) -> Act:
        payload = {"tool_name": "Write", "tool_input": {"file_path": str(tmp_path / rel), "content": "x"}}
        return Act.from_payload(payload, str(tmp_path))

    hit = meets(forbid, write("legacy/new.ts"))
    assert hit is not None and hit.describe() == "it creates the new file legacy/new.ts, which matches `legacy/**`"
    assert meets(forbid, write("src/button.module.css")) is not None
    assert meets(forbid, write("legacy/old.ts")) is None  # a change to an existing file is writes:' business
    assert meets(forbid, write("src/new.ts")) is None
    assert meets(forbid, Act("Edit", str(tmp_path), "legacy/old.ts", old="x", new="y")) is None
    cases = {  # each creator row: (creates a new file there, names only existing files or other places)
        "touch": ("touch legacy/b.ts", "touch legacy/old.ts"),
        "tee": ("echo x | tee legacy/b.ts", "echo x | tee out.log"),
        "cp": ("cp src/a.ts legacy/b.ts", "cp legacy/old.ts src/b.ts"),  # cp creates its destination only
        "mv": ("mv src/a.ts legacy/b.ts", "mv legacy/old.ts src/b.ts"),
        "install": ("install -m 644 src/a.ts legacy/b.ts", "install -m 644 legacy/old.ts src/b.ts"),
        "rsync": ("rsync -a src/a.ts legacy/b.ts", "rsync -a legacy/old.ts backup/"),
    }
    assert set(cases) == set(rows().creators), "each creator row needs its cases"
    for row, (held, free) in cases.items():
        assert meets(forbid, bash(tmp_path, held)) is not None, row
        assert meets(forbid, bash(tmp_path, free)) is None, row
    assert meets(forbid, bash(tmp_path, "echo x > legacy/c.ts")) is not None  # a redirect onto a new file
    assert meets(forbid, bash(tmp_path, "echo x >> legacy/old.ts")) is None
    assert meets(forbid, bash(tmp_path, "cat legacy/old.ts")) is None
