"""The one project ↔ transcript-folder mapping: Claude Code keeps a project's sessions in
`<root>/<sanitized project root>/`, and launches from a subdirectory in `<…>-<subdir>/`."""

from __future__ import annotations

import os
from pathlib import Path

from memoryd.store.paths import project_root, sanitize_path


def belongs_to(folder_name: str, project: Path) -> bool:
    """Is a transcript folder one of this project's (its root or a subdirectory of it)?"""
    prefix = sanitize_path(str(project))
    return folder_name == prefix or folder_name.startswith(prefix + "-")


def project_folders(roots: list[Path], project: Path | None) -> list[Path]:
    """The project's transcript folders under every root, sorted; every folder when `project` is None."""
    folders: list[Path] = []
    for root in roots:
        try:
            entries = sorted(os.scandir(root), key=lambda e: e.name)
        except OSError:  # a root that does not exist (yet)
            continue
        for entry in entries:  # links are not followed out of a root
            if entry.is_dir(follow_symlinks=False) and (project is None or belongs_to(entry.name, project)):
                folders.append(Path(entry.path))
    return folders


def folders_for_cwd(roots: list[Path], cwd: str | None) -> list[Path]:
    """`project_folders` of the project an agent's cwd belongs to; every folder without a cwd."""
    return project_folders(roots, project_root(cwd) if cwd else None)


def is_sidechain_path(path: Path) -> bool:
    """Subagent transcripts (`<session>/subagents/…` or legacy `agent-*.jsonl`)."""
    return "subagents" in path.parts or path.name.startswith("agent-")
