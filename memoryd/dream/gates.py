"""The four Auto-Dream gates, cheapest first (seeds: autoDream.ts): time, scan throttle,
sessions, lock. Each returns its current value so `dream status` can show why it waits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.transcripts.folders import is_sidechain_path, project_folders


@dataclass
class Gate:
    name: str
    passes: bool
    value: Any
    threshold: Any
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passes": self.passes, "value": self.value, "threshold": self.threshold, "detail": self.detail}


def project_transcripts(roots: list[Path], project_root: Path | None) -> list[Path]:
    """Main-session transcripts of a project: `<root>/<sanitized root>[-…]/*.jsonl` (launches in
    subdirectories included; subagent files excluded). Without a known root: none."""
    if project_root is None:
        return []
    return [p for folder in project_folders(roots, project_root) for p in folder.glob("*.jsonl") if not is_sidechain_path(p)]


def sessions_touched_since(roots: list[Path], project_root: Path | None, since: float) -> list[str]:
    """Session ids touched after `since`, newest first, with the newest (the current one) removed."""
    touched = []
    for path in project_transcripts(roots, project_root):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime > since:
            touched.append((mtime, path.stem))
    touched.sort(reverse=True)
    return [sid for _, sid in touched[1:]]
