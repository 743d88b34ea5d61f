"""The package type-checks under `mypy --strict` (`strict = true` in pyproject.toml): type hints are part of the
style, so mypy runs with the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.cache import TEST_CACHE

ROOT = Path(__file__).resolve().parents[1]
# mypy's incremental cache outside the checkout (beside the cached Claude Code CLI): a fresh clone checks
# in ~1 s instead of ~16 s. mypy re-checks whatever changed (by content hash), so the answer is the same.
CACHE = TEST_CACHE / "mypy"


def test_mypy_finds_no_errors_in_the_package() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), "memoryd"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
