"""Build hook: a wheel built from a git clone carries the commit it was built from (memoryd/_commit.txt), which
memoryd/version.py adds to the release; the file is made in a temp folder, so the clone stays as it was."""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


def _version_module(root: Path) -> Any:
    """memoryd/version.py loaded by path: the package's own imports are not installed while it builds."""
    spec = importlib.util.spec_from_file_location("_memoryd_version", root / "memoryd" / "version.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CommitHook(BuildHookInterface):  # type: ignore[misc]
    """Adds `memoryd/_commit.txt` to a wheel built from a clone (an editable install asks git itself)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        module = _version_module(Path(self.root))
        commit = module.git_commit(Path(self.root))
        if commit is None:
            return
        self._temp = tempfile.mkdtemp(prefix="memoryd-build-")
        path = Path(self._temp) / module.COMMIT_FILENAME
        path.write_text(commit + "\n", encoding="utf-8")
        build_data["force_include"][str(path)] = f"memoryd/{module.COMMIT_FILENAME}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_temp", None):
            shutil.rmtree(self._temp, ignore_errors=True)
