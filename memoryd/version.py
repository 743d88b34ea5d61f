"""memoryd's version as people and the upgrade check see it: the package's release plus the commit it runs from
(`0.5.0+g1a2b3c4`), so two installs of one release from different commits never look alike.

A clone (an editable install) asks git at run time; a wheel built from a clone carries the commit in
`_commit.txt` (written by the build hook, hatch_build.py); an install from elsewhere is its release alone.
Stdlib only: the build hook loads this file by path, before any dependency is installed.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

DISTRIBUTION = "memoryd"
UNKNOWN_RELEASE = "0+unknown"  # no package metadata: run from a copy of the source that was never installed
COMMIT_FILENAME = "_commit.txt"  # inside the package of a wheel built from a clone
GIT_TIMEOUT_SECONDS = 5
PACKAGE_DIR = Path(__file__).resolve().parent


def git_commit(root: Path) -> str | None:
    """`g<short sha>` of the commit checked out in a clone at `root`; None elsewhere. Uncommitted edits are not
    marked: a daemon started before an edit would then differ from every command run after it."""
    if not (root / ".git").exists():
        return None
    try:  # --exclude '*': the commit alone, whatever tags say (the release comes from the package)
        proc = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--abbrev=9", "--exclude", "*"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    described = proc.stdout.strip()
    if proc.returncode != 0 or not described:
        return None
    return "g" + described


def _packaged_commit() -> str | None:
    try:
        return (PACKAGE_DIR / COMMIT_FILENAME).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def release() -> str:
    """The installed distribution's version (pyproject's `version` when it was installed)."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_RELEASE


@functools.cache
def version() -> str:
    """`<release>+<commit>` when the commit is known, else the release: computed once per process."""
    commit = git_commit(PACKAGE_DIR.parent) or _packaged_commit()
    return f"{release()}+{commit}" if commit else release()
