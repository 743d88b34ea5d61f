"""The tree keeps one format: `ruff format` (configured in pyproject.toml) changes nothing."""

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
