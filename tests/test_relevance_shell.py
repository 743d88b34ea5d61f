"""The shell reader of relevance: labelled cases for every family row of data/programs.toml and for
the line's syntax (quotes, operators, heredocs, redirects), and bounded time on hostile lines."""

from __future__ import annotations

import pytest

from memoryd.base import limits
from memoryd.relevance.lexicon import load, programs
from memoryd.relevance.shell import parse, split_line

# (command, what the first simple command is: (typed program, family, runs, runner))
CASES = [
    ("npm install lodash", ("npm", "npm", ("npm", "install"), "")),
    ("npx eslint src", ("npx", "npm", ("eslint", "src"), "npm")),
    ("npm run lint", ("npm", "npm", ("lint",), "npm")),
    ("pnpm add lodash", ("pnpm", "pnpm", ("pnpm", "add"), "")),
    ("pnpm dlx prisma migrate dev", ("pnpm", "pnpm", ("prisma", "migrate"), "pnpm")),
    ("pnpx tsc --noEmit", ("pnpx", "pnpm", ("tsc",), "pnpm")),
    ("yarn vitest run", ("yarn", "yarn", ("vitest", "run"), "yarn")),
    ("yarn install", ("yarn", "yarn", ("yarn", "install"), "")),
    ("bunx tsc", ("bunx", "bun", ("tsc",), "bun")),
    ("bun add zod", ("bun", "bun", ("bun", "add"), "")),
    ("python -m pip install requests", ("pip", "pip", ("pip", "install"), "")),
    # an interpreter under a version suffix is that interpreter ([interpreters])
    ("python3.11 -m pip install x", ("pip", "pip", ("pip", "install"), "")),
    ("python3.12 -m pytest -q", ("pytest", "pytest", ("pytest",), "")),
    ("python3.9 manage.py migrate", ("python3", "python3", ("python3", "manage.py"), "")),
    ("python2.7 -m http.server 8000", ("http.server", "http.server", ("http.server", "8000"), "")),
    ("python3.12-config --includes", ("python3.12-config", "python3.12-config", ("python3.12-config",), "")),
    ("pyenv install 3.12", ("pyenv", "pyenv", ("pyenv", "install"), "")),  # no version suffix: another program
    ("pip3 install -r requirements.txt", ("pip3", "pip", ("pip3", "install"), "")),
    ("uv run pytest -q", ("uv", "uv", ("pytest",), "uv")),
    ("uvx ruff check .", ("uvx", "uv", ("ruff", "check"), "uv")),
    ("poetry run mypy src", ("poetry", "poetry", ("mypy", "src"), "poetry")),
    ("pipenv run pytest", ("pipenv", "pipenv", ("pytest",), "pipenv")),
    ("conda install numpy", ("conda", "conda", ("conda", "install"), "")),
    ("mamba install numpy", ("mamba", "conda", ("mamba", "install"), "")),
    ("docker-compose up -d", ("docker-compose", "docker-compose", ("docker-compose", "up"), "")),
    ("brew services start postgresql@14", ("brew", "brew", ("brew", "services"), "")),
    ("FOO=1 sudo npm i -D x", ("npm", "npm", ("npm", "i"), "")),
    ("env CI=1 time make check", ("make", "make", ("make", "check"), "")),
    ("/usr/local/bin/Git status", ("git", "git", ("git", "status"), "")),
]


@pytest.mark.parametrize(("command", "want"), CASES)
def test_the_first_command_is_read_as_its_program_family_and_runner(command: str, want: tuple[object, ...]) -> None:
    first = parse(command)[0]
    assert (first.program, first.family, first.runs, first.runner) == want


def test_every_family_row_has_a_labelled_case() -> None:
    families = set(load("programs")["families"])
    assert families <= {want[1] for _, want in CASES}
    assert {m for f in families for m in load("programs")["families"][f]["members"]} <= set(programs().family_of)


def test_operators_split_a_line_and_quotes_hold_words_together() -> None:
    line = "npm test 2>&1 | tee log.txt && git push --force origin main; echo 'a && b' \"c\" # npm i"
    assert [c.program for c in parse(line)] == ["npm", "tee", "git", "echo"]
    assert parse(line)[3].args == ("a && b", "c")
    assert parse(line)[2].subcommand == "push"


def test_redirects_are_files_written_or_read_not_arguments() -> None:
    echo = parse("echo x >> db/migrations/001.sql 2>/dev/null")[0]
    assert echo.writes == ("db/migrations/001.sql", "/dev/null")
    assert parse("psql < dump.sql")[0].writes == ()
    assert "dump.sql" in parse("psql < dump.sql")[0].paths()
    assert parse("make check &> out.log")[0].writes == ("out.log",)


def test_a_heredoc_body_is_not_run() -> None:
    line = "cat <<'EOF' > x.sh\nnpm install\nEOF\nls -la"
    assert [c.program for c in parse(line)] == ["cat", "ls"]


def test_path_like_words() -> None:
    assert parse("cat .env.local")[0].paths() == (".env.local",)
    assert parse("git add -A")[0].paths() == ()


@pytest.mark.parametrize(
    "hostile",
    [
        "cat <<EOF\n" + "x'" * 90_000 + "\nEOF",  # issue 52: a 175 KB heredoc with apostrophes (20 s in shlex)
        "a" * 250_000,  # a 250 KB word (88 s in shlex)
        "'" * 100_001,
        "\\" * 100_000,
    ],
)
def test_hostile_lines_are_cut_to_the_parse_limit(hostile: str) -> None:
    words = [w for c in split_line(hostile) for w in c]
    assert sum(len(w) for w in words) <= limits.COMMAND_PARSE_MAX_CHARS
