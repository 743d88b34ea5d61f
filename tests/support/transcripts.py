"""Build Claude-Code-shaped transcript lines (the shapes of the real fixtures) for tests."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class TranscriptWriter:
    """Appends entries to `<root>/<sanitized cwd>/<session>.jsonl` the way CC does."""

    path: Path
    session_id: str
    cwd: str
    day: str = "2026-03-04"
    _n: int = field(default=0)
    _parent: str | None = None

    def _envelope(self, type_: str) -> dict[str, Any]:
        self._n += 1
        uid = str(uuid.uuid4())
        env = {
            "parentUuid": self._parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.38",
            "gitBranch": "main",
            "type": type_,
            "uuid": uid,
            "timestamp": f"{self.day}T10:{self._n // 60:02d}:{self._n % 60:02d}.000Z",
        }
        self._parent = uid
        return env

    def append(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, separators=(",", ":")) + "\n")
        return obj

    def user(self, text: str, **extra: Any) -> dict[str, Any]:
        return self.append(
            {
                **self._envelope("user"),
                "message": {"role": "user", "content": text},
                "permissionMode": "default",
                **extra,
            }
        )

    def assistant(self, text: str = "", tools: list[tuple[str, dict[str, Any]]] | None = None) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": text})
        for name, inp in tools or []:
            content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": inp})
        msg = {
            "model": "claude-opus-4-6",
            "id": f"msg_{uuid.uuid4().hex[:20]}",
            "type": "message",
            "role": "assistant",
            "content": content,
            "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 10},
        }
        return self.append({**self._envelope("assistant"), "message": msg})

    def tool_result(self, text: str, *, is_error: bool = False) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": "toolu_x", "content": text, "is_error": is_error}
        return self.append(
            {
                **self._envelope("user"),
                "message": {"role": "user", "content": [block]},
                "toolUseResult": {"stdout": text},
            }
        )

    def attachment(self, content: str) -> dict[str, Any]:
        return self.append(
            {**self._envelope("attachment"), "attachment": {"type": "hook_additional_context", "content": [content]}}
        )

    def queued_prompt(self, prompt: str) -> dict[str, Any]:
        """A prompt typed while the agent was busy (CC 2.1.1xx+ records it as an attachment)."""
        return self.append({**self._envelope("attachment"), "attachment": {"type": "queued_command", "prompt": prompt}})

    def raw(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(text)


def new_session(root: Path, cwd: str, session_id: str | None = None) -> TranscriptWriter:
    from memoryd.store.paths import sanitize_path

    sid = session_id or str(uuid.uuid4())
    return TranscriptWriter(root / sanitize_path(cwd) / f"{sid}.jsonl", sid, cwd)
