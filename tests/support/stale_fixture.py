"""The stale-memory dev set: a small fixture repo (committed to a fresh git repo) and memories
labelled stale or fresh against it. Shared by tests/test_stale.py and bench/stale_bench.py."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "stale"


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        check=True,
        capture_output=True,
        timeout=30,
    )


def make_repo(dest: Path) -> Path:
    """Copy the fixture repo to `dest` and commit it."""
    shutil.copytree(FIXTURE / "repo", dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "fixture")
    return dest


def labelled_memories() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((FIXTURE / "memories.json").read_text(encoding="utf-8"))
    return data
