"""Where tests keep what is slow to make and safe to reuse across runs and clones (the Claude Code
CLI, mypy's incremental cache): ~/.cache/memoryd-tests, or $MEMORYD_TEST_CACHE."""

from __future__ import annotations

import os
from pathlib import Path

TEST_CACHE = Path(os.environ.get("MEMORYD_TEST_CACHE", Path.home() / ".cache" / "memoryd-tests"))
