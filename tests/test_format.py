"""The tree keeps one format and one lint: `ruff format` changes nothing and `ruff check` finds nothing
(both configured in pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_format_leaves_the_tree_as_it_is() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, (
        f"run `ruff format .` — these files are not formatted:\n{result.stdout}{result.stderr}"
    )


def test_ruff_check_finds_nothing() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, (
        f"run `ruff check --fix .`, then fix the rest by hand ([tool.ruff.lint] in pyproject.toml):\n{result.stdout}"
    )
