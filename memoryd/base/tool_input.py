"""A PreToolUse payload read once, the same way for recall at tool time and for the guard."""

from __future__ import annotations

from typing import Any


def tool_target(payload: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """The tool's name, its input ({} when malformed) and the file it names, as given (Edit's `file_path`,
    NotebookEdit's `notebook_path`, or a `path`)."""
    tool = str(payload.get("tool_name") or "")
    data = payload.get("tool_input")
    data = data if isinstance(data, dict) else {}
    raw = str(data.get("file_path") or data.get("notebook_path") or data.get("path") or "")
    return tool, data, raw
