"""Labelled cases for how the guard reads a shell line (issue 50, after the fresh2 held-out run): wrappers that
only run the rest of the line, in-place editors, a script with or without its manager's run verb, subcommands
that only name paths, and shell glob arguments against protected globs. Each row of memoryd/guard/data/acts.toml
has a case that is held and one that is not. Real files in a temp project; no daemon."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.guard.acts import Act, commands_of, rows
from memoryd.guard.glob_overlap import overlaps
from memoryd.guard.match import meets
from memoryd.guard.rules import parse_forbid
from memoryd.relevance.lexicon import programs


def held(root: Path, forbid: dict[str, list[str]], command: str) -> bool:
    act = Act("Bash", str(root), command=command, commands=commands_of(command))
    return meets(parse_forbid(forbid), act) is not None


WRAPPERS = {  # row -> (runs `yarn dev` through it: held, runs something else or only names yarn: not held)
    "timeout": ("timeout 60 yarn dev", "timeout -s KILL 60 yarn build"),
    "nice": ("nice -n 10 yarn dev", "nice yarn lint"),
    "env": ("env NODE_ENV=development yarn dev", "env -u CI yarn test"),
    "time": ("time yarn dev", "time -f %e yarn build"),
    "nohup": ("nohup yarn dev > /tmp/vite.log 2>&1 &", "nohup yarn preview &"),
    "exec": ("exec yarn dev", "exec -a web yarn start"),
    "command": ("command yarn dev", "command -v yarn"),  # -v only looks yarn up
    "sudo": ("sudo -u app yarn dev", "sudo -l yarn dev"),  # -l lists what may run
    "stdbuf": ("stdbuf -o L yarn dev", "stdbuf -oL yarn build"),
    "ionice": ("ionice -c 3 yarn dev", "ionice -c 3 yarn lint"),
    "xargs": ("echo | xargs -n 1 yarn dev", "echo a | xargs yarn add"),
    "bundle exec": ("bundle exec --gemfile Gemfile yarn dev", "bundle exec yarn build"),  # a subcommand's row
}


@pytest.mark.parametrize("row", sorted(WRAPPERS))
def test_a_wrapper_row_runs_the_rest_of_the_line(tmp_path: Path, row: str) -> None:
    run, other = WRAPPERS[row]
    assert held(tmp_path, {"commands": ["yarn dev"]}, run), run
    assert not held(tmp_path, {"commands": ["yarn dev"]}, other), other


def test_every_wrapper_row_has_cases_and_an_assignment_is_skipped(tmp_path: Path) -> None:
    assert set(WRAPPERS) == set(rows().wrappers)
    assert held(tmp_path, {"commands": ["npm"]}, "CI=1 timeout 5 env X=1 nice npm ci")
    assert not held(tmp_path, {"commands": ["npm"]}, "timeout 60 pnpm install")


@pytest.mark.parametrize(
    ("spec", "command", "is_held"),
    [
        ("rake db:reset", "bundle exec rake db:reset", True),
        ("bundle exec rake db:reset", "bin/rake db:reset", True),  # a trigger is read as an act is
        ("bundle exec rake db:reset", "bin/bundle exec rake db:reset", True),
        ("bundle exec rake db:reset", "bundle exec rake db:migrate", False),
        ("bundle install", "bundle install", True),  # another subcommand of the program runs nothing
        ("rake", "bundle install", False),
    ],
)
def test_a_subcommand_that_runs_the_rest_is_read_through(
    tmp_path: Path, spec: str, command: str, is_held: bool
) -> None:
    assert held(tmp_path, {"commands": [spec]}, command) is is_held


IN_PLACE = {  # row -> (changes db/a.sql in place, reads it or changes nothing there)
    "sed": ("sed -i 's/a/b/' db/a.sql", "sed 's/a/b/' db/a.sql"),
    "perl": ("perl -0pi -e 's/\\n{3,}/\\n\\n/g' db/a.sql", "perl -pe 's/a/b/' db/a.sql"),
    "ruby": ("ruby -pi -e 'gsub(/a/, \"b\")' db/a.sql", "ruby -pe 'gsub(/a/, \"b\")' db/a.sql"),
}


@pytest.mark.parametrize("row", sorted(IN_PLACE))
def test_an_in_place_editor_changes_its_files_only_with_its_flag(tmp_path: Path, row: str) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "a.sql").write_text("x")
    change, other = IN_PLACE[row]
    assert held(tmp_path, {"writes": ["db/**"]}, change)
    assert not held(tmp_path, {"writes": ["db/**"]}, other)


def test_in_place_flags_and_scripts(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "a.sql").write_text("x")
    assert set(IN_PLACE) == set(rows().in_place)
    for command in ("perl -pi -e 's/a/b/' db/a.sql", "perl -i.bak -pe 's/a/b/' db/a.sql", "sed -Ei 's/a/b/' db/a.sql"):
        assert held(tmp_path, {"writes": ["db/**"]}, command), command
    assert not held(tmp_path, {"writes": ["db/**"]}, "perl -Mstrict -e 'print 1' db/a.sql")  # -M is no -i
    assert not held(tmp_path, {"writes": ["db/**"]}, "sed -i 's/db\\/a.sql/x/' notes.txt")  # the script is no file


SCRIPT_RUNS = {  # row -> (a script through the run verb the trigger holds, a manager verb it does not)
    "npm": ("npm run dev", "npm run-script build"),
    "pnpm": ("pnpm run dev", "pnpm run build"),
    "yarn": ("yarn run dev", "yarn run build"),
    "bun": ("bun run dev", "bun run test"),
}


@pytest.mark.parametrize("manager", sorted(SCRIPT_RUNS))
def test_a_script_with_or_without_the_run_verb_is_one_act(tmp_path: Path, manager: str) -> None:
    assert set(SCRIPT_RUNS) == set(rows().script_runs)
    through_run, other = SCRIPT_RUNS[manager]
    assert held(tmp_path, {"commands": [f"{manager} dev"]}, through_run)
    assert held(tmp_path, {"commands": [f"{manager} run dev"]}, f"{manager} dev")
    assert not held(tmp_path, {"commands": [f"{manager} dev"]}, other)
    assert not held(tmp_path, {"commands": ["bun test"]}, "bun run test")  # bun's test runner is not the script
    assert not held(tmp_path, {"commands": [f"{manager} run test"]}, f"{manager} test")


def test_subcommands_that_only_name_paths_read_nothing(tmp_path: Path) -> None:
    forbid = {"reads": [".env.*"]}
    for sub in ("check-ignore -v", "ls-files", "check-attr -a"):
        assert not held(tmp_path, forbid, f"git {sub} apps/web/.env.local"), sub
    for command in ("git add apps/web/.env.local", "git diff apps/web/.env.local"):
        assert held(tmp_path, forbid, command), command


GLOBS = [  # (shell glob argument, protected glob, could it name a protected file)
    ("documents/ga-res-80/*.md", "documents/**/*.md", True),
    ("documents/ga-res-80/*.md", "documents/**", True),
    ("*/*.md", "documents/**/*.md", True),
    ("apps/*/.env*", ".env.*", True),
    ("db/*", "db/migrations/**", True),  # names the folder, which holds the files
    ("docs/[ab].md", "docs/a.md", True),
    ("x?.md", "x1.md", True),
    ("scripts/*.py", "documents/**", False),
    ("documents/ga-res-80/*.md", "*.pem", False),
    ("*", ".env", False),  # the shell's `*` never names a dotfile
    ("*.md", ".md", False),
    ("docs/[ab].md", "docs/c.md", False),
]


@pytest.mark.parametrize(("word", "glob", "could"), GLOBS)
def test_a_shell_glob_meets_a_protected_glob_when_some_path_matches_both(word: str, glob: str, could: bool) -> None:
    assert overlaps(word, glob) is could


def test_a_glob_argument_is_held_by_writes_and_reads_never_by_creates(tmp_path: Path) -> None:
    assert held(tmp_path, {"writes": ["documents/**/*.md"]}, "sed -i 's/\\r$//' documents/ga-res-80/*.md")
    assert not held(tmp_path, {"writes": ["documents/**/*.md"]}, "sed -i 's/\\r$//' scripts/*.py")
    assert not held(tmp_path, {"writes": ["documents/**/*.md"]}, "wc -l documents/ga-res-80/*.md")  # a read
    assert held(tmp_path, {"reads": [".env*"]}, "cat apps/*/.env*")
    assert not held(tmp_path, {"reads": [".env*"]}, "cat apps/web/*.ts")
    assert not held(tmp_path, {"reads": [".env*", "!.env.example*"]}, "cat .env.example*")  # kept out: that glob
    assert not held(tmp_path, {"creates": ["legacy/**"]}, "touch legacy/*.ts")  # a glob names no new file


def test_a_glob_argument_of_thousands_of_wildcards_gets_the_conservative_answer_not_a_long_search() -> None:
    # No path fits both (the argument ends in z, the glob in q), but telling so walks millions of state pairs
    # (3 s): past the bound the guard answers that it could, and holds the act with its reason.
    assert overlaps("a*" * 4000 + "z", "*a?" * 66 + "q") is True
    # stars in a row are one run to the shell and to memoryd's globs: the answer is the same as for one
    assert overlaps("docs/**.md", "docs/*.md") is overlaps("docs/*.md", "docs/*.md") is True
    assert overlaps("src/" + "*" * 400 + ".ts", "docs/**") is False


GLOBAL_OPTIONS = {  # row -> (the script `dev` under a global option with a value: held, another script: not held)
    "npm": ("npm --prefix apps/web run dev", "npm --prefix apps/web run build"),
    "pnpm": ("pnpm -C apps/web dev", "pnpm --filter @app/web build"),
    "yarn": ("yarn --cwd apps/web dev", "yarn --cwd apps/web build"),
    "bun": ("bun --cwd apps/web run dev", "bun --filter @app/web run build"),
}


RUNNER_OPTIONS = {  # row -> (runs mypy after an option with a value: held, runs another program: not held)
    "uv": ("uv --directory backend run mypy src", "uv --directory mypy run pytest"),
    "uv run": ("uv run --with mypy mypy src", "uv run --with mypy pytest"),  # --with installs mypy, runs pytest
    "uv tool run": ("uv tool run --with types-requests mypy src", "uv tool run --from mypy ruff check"),
    "uvx": ("uvx --python 3.12 mypy --strict src", "uvx --with mypy ruff check"),
    "poetry": ("poetry -C backend run mypy src", "poetry --directory mypy run pytest"),
}


@pytest.mark.parametrize("program", sorted(GLOBAL_OPTIONS))
def test_a_managers_global_option_and_its_value_stand_before_its_verb(tmp_path: Path, program: str) -> None:
    assert set(GLOBAL_OPTIONS) | set(RUNNER_OPTIONS) == set(programs().global_options)
    run, other = GLOBAL_OPTIONS[program]
    assert held(tmp_path, {"commands": [f"{program} dev"]}, run), run
    assert not held(tmp_path, {"commands": [f"{program} dev"]}, other), other
    for option in programs().global_options[program]:  # every option of the row takes its value
        assert held(tmp_path, {"commands": [f"{program} dev"]}, f"{program} {option} x run dev"), option
        assert not held(tmp_path, {"commands": [f"{program} dev"]}, f"{program} {option} dev run build"), option


def test_a_global_option_is_read_only_where_its_row_says(tmp_path: Path) -> None:
    # the smbc case (fresh4): the trigger is the rule's words
    assert held(tmp_path, {"commands": ["npm run dev"]}, "npm --prefix apps/mui-host-dev run dev")
    assert held(tmp_path, {"commands": ["npm run dev"]}, "npm -w apps/mui-host-dev run dev")
    assert not held(tmp_path, {"commands": ["npm run dev"]}, "npm --prefix apps/mui-host-dev run lint")
    # pnpm's `-w` (--workspace-root) takes no value: `pnpm -w add x` adds x, it runs no script `x`
    assert held(tmp_path, {"imports": ["moment"]}, "pnpm -w add moment")
    assert not held(tmp_path, {"commands": ["pnpm dev"]}, "pnpm -w dev-tools build")
    assert not held(tmp_path, {"commands": ["yarn dev"]}, "yarn --prefix apps dev")  # yarn's row has no --prefix


@pytest.mark.parametrize("row", sorted(RUNNER_OPTIONS))
def test_a_runners_options_stand_before_the_program_it_runs(tmp_path: Path, row: str) -> None:
    run, other = RUNNER_OPTIONS[row]
    assert held(tmp_path, {"commands": ["mypy"]}, run), run
    assert not held(tmp_path, {"commands": ["mypy"]}, other), other
    if " " in row or row == "uvx":  # every option of a runner's row takes its value
        for option in programs().global_options[row]:
            assert held(tmp_path, {"commands": ["mypy"]}, f"{row} {option} x mypy src"), option
            assert not held(tmp_path, {"commands": ["mypy"]}, f"{row} {option} mypy pytest"), option


def test_a_runner_reads_the_program_after_its_flags_and_wrappers(tmp_path: Path) -> None:
    # the crossbill-web acts (fresh5): each runs mypy
    for command in [
        "cd backend && uv run mypy src/",
        "cd backend && uvx mypy --strict src/application",
        "cd backend && python -m mypy src/domain",
        "cd backend && timeout 300 uv run mypy src/routers",
        "uv run --frozen -- mypy .",
    ]:
        assert held(tmp_path, {"commands": ["mypy"]}, command), command
    assert not held(tmp_path, {"commands": ["mypy"]}, "uv run --frozen pyright")
    assert not held(tmp_path, {"commands": ["mypy"]}, "uv run pytest --with mypy")  # after the program: its own


MANAGER_FLAGS = [  # (spec, a manager's flags typed before its runner verb, held)
    ("mypy", "uv --offline run mypy .", True),
    ("pytest", "uv --directory x run pytest", True),
    ("mypy", "uv -q --offline tool run mypy src", True),
    ("mypy", "poetry --no-ansi -C backend run mypy src", True),
    ("eslint", "pnpm --silent exec eslint .", True),
    ("npm dev", "npm --silent run dev", True),  # a script through the run verb
    ("mypy", "uv --offline run pytest", False),
    ("mypy", "uv --offline pip install mypy", False),  # no runner verb: mypy is a package, not run
    ("npm dev", "npm --silent run build", False),
    ("pnpm -r build", "pnpm -r build", True),  # a flag before a verb that runs nothing is kept
    ("pnpm -r build", "pnpm build", False),
]


@pytest.mark.parametrize(("spec", "command", "is_held"), MANAGER_FLAGS)
def test_a_managers_flags_before_its_runner_verb_are_its_own(
    tmp_path: Path, spec: str, command: str, is_held: bool
) -> None:
    assert held(tmp_path, {"commands": [spec]}, command) is is_held


EXPORTERS = {  # row -> (exports RAILS_ENV=test to a later rails: kept out, exports another value: held)
    "export": ("export RAILS_ENV=test && rails db:reset", "export RAILS_ENV=production && rails db:reset"),
}


@pytest.mark.parametrize("row", sorted(EXPORTERS))
def test_an_exported_assignment_reaches_the_later_commands_of_the_line(tmp_path: Path, row: str) -> None:
    assert set(EXPORTERS) == set(rows().exporters)
    forbid = {"commands": ["rails db:reset", "!RAILS_ENV=test rails db:reset"]}
    kept_out, other = EXPORTERS[row]
    assert not held(tmp_path, forbid, kept_out), kept_out
    assert held(tmp_path, forbid, other), other
    assert [c.program for c in commands_of(kept_out)] == ["rails"]  # the exporter is no program a rule names
    assert [c.env for c in commands_of(f"{row} A=1 && X=2 make && {row} A=3; make")] == [("A=1", "X=2"), ("A=3",)]


SHELLS = {  # row -> (a -c string running pip: held, a script, or a string that only names pip: not held)
    "bash": ("bash -c 'pip install .[dev] && pytest'", "bash scripts/pip-install.sh"),
    "sh": ('sh -c "cd backend && pip install -r requirements.txt"', "sh -c 'echo pip is not used'"),
    "zsh": ("zsh -lc 'pip3 install pytest'", "zsh -c 'uv pip install pytest'"),  # uv's own pip is no pip
    "dash": ("dash -ec 'pip freeze > req.txt'", "dash -c 'uv sync'"),
    "ksh": ("ksh -c 'timeout 60 pip install x'", "ksh -c pip.sh"),
}


@pytest.mark.parametrize("row", sorted(SHELLS))
def test_a_shells_command_string_is_read_as_commands(tmp_path: Path, row: str) -> None:
    assert set(SHELLS) == set(rows().shell_strings)
    run, other = SHELLS[row]
    assert held(tmp_path, {"commands": ["pip", "pip3"]}, run), run
    assert not held(tmp_path, {"commands": ["pip", "pip3"]}, other), other


def test_a_shells_string_is_read_for_paths_too(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("KEY=1\n")
    assert held(tmp_path, {"reads": [".env"]}, "bash -c 'cat .env | grep KEY'")
    assert held(tmp_path, {"writes": [".env"]}, 'sh -c "echo KEY=2 >> .env"')
    assert not held(tmp_path, {"reads": [".env"]}, "bash -c 'cat .env.example'")
    # the string itself is no path: writing notes.env reads no `*.env`, though the glob's `*` spans its spaces
    assert not held(tmp_path, {"reads": ["*.env"]}, "bash -c 'echo KEY=1 > notes.env'")
    assert held(tmp_path, {"reads": ["*.env"]}, "bash -c 'grep KEY notes.env'")


INLINE = {  # row -> (an inline program naming .env as a string literal: held, one naming none: not held)
    "python": ("python -c \"from dotenv import dotenv_values; print(dotenv_values('.env'))\"", 'python -c "print(1)"'),
    "python3": ("python3 -c \"open('.env.local').read()\"", "python3 -c \"import os; print(os.getenv('API_KEY'))\""),
    "node": ("node -e \"require('fs').readFileSync('.env', 'utf8')\"", 'node -e "console.log(process.env.PORT)"'),
    "bun": ("bun -e \"await Bun.file('.env').text()\"", 'bun -e "console.log(Bun.version)"'),
    "ruby": ("ruby -e \"puts File.read('.env')\"", "ruby -e \"puts ENV.fetch('HOME')\""),
    "perl": ("perl -e 'open(F, \".env\"); print <F>'", "perl -e 'print \"env\"'"),
}


@pytest.mark.parametrize("program", sorted(INLINE))
def test_a_path_an_inline_program_names_is_read(tmp_path: Path, program: str) -> None:
    assert set(INLINE) == set(rows().inline_programs)
    reads, other = INLINE[program]
    assert held(tmp_path, {"reads": [".env*"]}, reads), reads
    assert not held(tmp_path, {"reads": [".env*"]}, other), other


def test_an_interpreter_under_a_version_suffix_runs_its_inline_program(tmp_path: Path) -> None:
    forbid = {"reads": [".env*"]}
    assert held(tmp_path, forbid, "python3.12 -c \"open('.env').read()\"")
    assert held(tmp_path, forbid, "/usr/bin/python3.11 -c \"print(open('.env.local').read())\"")
    assert not held(tmp_path, forbid, "python3.12-config -c \"open('.env')\"")  # no version suffix: no interpreter
    assert not held(tmp_path, forbid, "python3.12 -c \"print('no env here')\"")


def test_only_an_inline_programs_literals_are_read_as_paths(tmp_path: Path) -> None:
    forbid = {"reads": [".env*", "secrets/**"]}
    assert held(tmp_path, forbid, "perl -ne 'print if /KEY/; open(F, \"secrets/key\")'")  # a cluster ending in -e
    assert held(tmp_path, forbid, "python3 -c 'import json; json.load(open(\"secrets/sa.json\"))'")
    assert not held(tmp_path, forbid, "echo \"open('.env')\" >> notes.txt")  # echo runs no program
    assert not held(tmp_path, forbid, "python -c \"print('environment')\"")
    assert not held(tmp_path, forbid, "node -e \"console.log('the .env file is ignored')\"")  # a sentence, no path


CLAUDE_MD_CHANGES = [  # the kubernetes-vault-stack acts (fresh4): each changes CLAUDE.md
    "sed -i 's/colour/color/g' CLAUDE.md",
    'echo "- Always run task status after task unseal" >> CLAUDE.md',
    "perl -pi -e 's/claude-<random_string>/claude-<id>/' CLAUDE.md",
    "cat > CLAUDE.md <<'EOF'\n# Project Configuration\n\nUse task up to deploy.\nEOF",
    "cp README.md CLAUDE.md",
    "rm CLAUDE.md",
]
CLAUDE_MD_READS = [
    "cat CLAUDE.md",
    "grep -n 'task up' CLAUDE.md",
    "wc -l CLAUDE.md",
    "cp CLAUDE.md /tmp/CLAUDE.md.orig",
]


def test_a_file_protected_by_its_name_holds_every_change_and_no_read(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_text("# rules\n")
    (tmp_path / "README.md").write_text("# readme\n")
    forbid = parse_forbid({"writes": ["CLAUDE.md"]})
    for command in CLAUDE_MD_CHANGES:
        assert held(tmp_path, {"writes": ["CLAUDE.md"]}, command), command
    for command in CLAUDE_MD_READS:
        assert not held(tmp_path, {"writes": ["CLAUDE.md"]}, command), command
    for tool in ("Edit", "Write"):
        assert meets(forbid, Act(tool, str(tmp_path), path="CLAUDE.md")) is not None, tool
    assert meets(forbid, Act("Read", str(tmp_path), path="CLAUDE.md")) is None
    assert meets(forbid, Act("Write", str(tmp_path), path="docs/proposed-claude-md-changes.md", created=True)) is None
