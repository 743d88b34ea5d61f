"""The docs cannot drift: config.example.toml shows every setting with its default, the README's
test command is the one CI runs, the README stays a quickstart, docs/cli.md mentions every CLI
command, every command the docs show parses (and those that need no daemon run), and the MCP
page names only the clients `--print-config` knows."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path
from typing import Any

from memoryd.cli.app import build_parser
from memoryd.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def _file_fields(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(mode="json")  # `exclude=True` fields (env-only) are left out


def test_config_example_documents_every_setting_with_its_default() -> None:
    example = tomllib.loads((ROOT / "config.example.toml").read_text(encoding="utf-8"))
    defaults = _file_fields(Settings())
    missing, wrong = [], []
    for section, values in defaults.items():
        if not isinstance(values, dict) or section == "projects":
            continue
        for key, default in values.items():
            if key not in example.get(section, {}):
                missing.append(f"[{section}] {key}")
            elif example[section][key] != default:
                wrong.append(f"[{section}] {key} = {example[section][key]!r}, default is {default!r}")
    assert not missing, f"config.example.toml lacks: {missing}"
    assert not wrong, f"config.example.toml shows wrong defaults: {wrong}"
    extra = [
        f"[{s}] {k}"
        for s, vals in example.items()
        if isinstance(vals, dict) and s != "projects"
        for k in vals
        if k not in defaults.get(s, {})
    ]
    assert not extra, f"config.example.toml documents settings that do not exist: {extra}"
    assert "projects" in (ROOT / "config.example.toml").read_text(), "document the [projects] per-project overrides"
    # And the file really loads as a config.
    Settings.model_validate(example)


def _test_command_of_ci() -> str:
    lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return next(line for line in lines if "pytest" in line)


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = _test_command_of_ci()
    assert command in readme.splitlines(), f"README must contain the CI test command verbatim:\n{command}"


# ---------------------------------------------------------------------- the quickstart and docs/
DOCS = ROOT / "docs"
README_MAX_LINES = 150
DOC_PAGES = [
    "cli",
    "http-api",
    "configuration",
    "claude-code",
    "mcp",
    "recall",
    "extraction",
    "dream",
    "team",
    "security",
    "development",
    "web-view",
    "architecture",
]
# MCP clients people may look for; the docs may name one only when `--print-config` knows it.
OTHER_MCP_CLIENTS = ["Zed", "Cline", "Windsurf", "Continue.dev", "Goose", "VS Code", "Copilot"]


def _docs() -> dict[str, str]:
    pages = {f"docs/{p.name}": p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))}
    return {"README.md": (ROOT / "README.md").read_text(encoding="utf-8"), **pages}


def _shown_commands(text: str) -> list[str]:
    """Each `memoryd …` line of the fenced code blocks, without comments and shell plumbing."""
    commands, fenced, pending = [], False, ""
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            continue
        line = pending + line.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line.startswith("memoryd "):
            continue
        line = re.split(r"\s+#\s", line)[0]
        commands.append(re.split(r"\s(?:\||>|&&|;|<)\s?", line)[0].strip())
    return commands


def test_readme_is_a_quickstart() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README has {len(lines)} lines; move detail to docs/"
    first_half = "\n".join(lines[: len(lines) // 2])
    for step in (
        "uv tool install .",
        "memoryd setup",
        "claude plugin install memoryd@memoryd",
        "memoryd save ",
        "memoryd recall ",
    ):
        assert step in first_half, f"{step!r} belongs in the README's first half"
    clone_daemon = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/memoryd serve"
    assert clone_daemon in lines, "the README keeps the one command that runs the daemon from a clone"
    for page in DOC_PAGES:
        assert (DOCS / f"{page}.md").is_file() and f"(docs/{page}.md)" in readme, (
            f"docs/{page}.md: a page, linked from the README"
        )


def test_cli_doc_mentions_every_cli_command() -> None:
    cli = (DOCS / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = [name for name in sub.choices if not re.search(rf"memoryd {re.escape(name)}\b", cli)]
    assert not missing, f"docs/cli.md does not mention: {missing}"


def test_every_command_the_docs_show_parses() -> None:
    import shlex

    wrong = []
    parser = build_parser()  # parsing leaves a parser as it was: one for the ~90 commands (~15 ms to build each)
    for name, text in _docs().items():
        for command in _shown_commands(text):
            if "<" in command or "…" in command or " [" in command:
                continue  # a placeholder or optional parts, not a runnable line
            argv = shlex.split(command)[1:]
            try:
                parser.parse_args(argv)
            except SystemExit as exc:
                if exc.code != 0:  # --help and --version exit 0
                    wrong.append(f"{name}: {command}")
    assert not wrong, f"commands the docs show that memoryd does not take: {wrong}"


def test_the_commands_the_docs_show_run(tmp_path: Path) -> None:
    """The commands that need no daemon run as shown, in a fresh home."""
    import os
    import shlex
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")} | {
        "MEMORYD_HOME": str(tmp_path / "home"),
        "HOME": str(tmp_path),
    }
    offline = ("--help", "--version", "mcp --print-config", "config", "completion", "setup --dry-run")
    ran = set()
    for text in _docs().values():
        for command in _shown_commands(text):
            rest = command.removeprefix("memoryd ")
            if "<" in command or not rest.startswith(offline) or command in ran:
                continue
            ran.add(command)
            run = subprocess.run(
                [sys.executable, "-m", "memoryd", *shlex.split(rest)],
                env=env,
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert run.returncode == 0, f"{command}: {run.stderr}"
    assert {"memoryd setup --dry-run", "memoryd config", "memoryd mcp --print-config cursor"} <= ran, ran


def test_mcp_docs_name_only_clients_print_config_knows() -> None:
    from memoryd.mcp.configs import CLIENTS

    mcp = (DOCS / "mcp.md").read_text(encoding="utf-8")
    assert all(f"`{client}`" in mcp for client in CLIENTS), "docs/mcp.md names every --print-config client"
    for name, text in _docs().items():
        named = [client for client in OTHER_MCP_CLIENTS if re.search(rf"\b{re.escape(client)}\b", text)]
        assert not named, f"{name} names MCP clients without `memoryd mcp --print-config`: {named}"
        for client in re.findall(r"--print-config ([\w-]+)", text):
            assert client in CLIENTS or client == "CLIENT", f"{name}: --print-config {client} does not exist"


def test_the_example_config_at_the_root_is_the_packaged_one() -> None:
    assert (ROOT / "config.example.toml").read_bytes() == (ROOT / "memoryd" / "config.example.toml").read_bytes()
