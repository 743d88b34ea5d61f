"""The package type-checks: type hints are part of the style, so mypy runs with the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_errors_in_the_package() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "memoryd"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
