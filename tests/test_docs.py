"""The docs cannot drift: config.example.toml shows every setting with its default, the README's
test command is the one CI runs, and the README mentions every CLI command."""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path
from typing import Any

from memoryd.cli import build_parser
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
    extra = [f"[{s}] {k}" for s, vals in example.items() if isinstance(vals, dict) and s != "projects" for k in vals if k not in defaults.get(s, {})]
    assert not extra, f"config.example.toml documents settings that do not exist: {extra}"
    assert "projects" in (ROOT / "config.example.toml").read_text(), "document the [projects] per-project overrides"
    # And the file really loads as a config.
    Settings.model_validate(example)


def _test_command_of_ci() -> str:
    lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return next(line for line in lines if "pytest" in line)


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = _test_command_of_ci()
    assert command in readme.splitlines(), f"README must contain the CI test command verbatim:\n{command}"


def test_readme_mentions_every_cli_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = [name for name in sub.choices if not re.search(rf"memoryd {re.escape(name)}\b", readme)]
    assert not missing, f"README does not mention: {missing}"
