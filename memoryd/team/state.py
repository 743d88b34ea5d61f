"""What memoryd remembers about one team folder between syncs: `<home>/team/<key>/state.json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from memoryd.base.files import atomic_write

STATE_FILENAME = "state.json"
GIT_DIRNAME = "git"


class TeamState(BaseModel):
    memory_dir: str  # the personal memory dir; the team folder is its `team/`
    remote: str
    branch: str
    last_remote: str | None = None  # the remote tip last merged into the team folder (the next merge base)
    pinned: dict[str, str] = Field(default_factory=dict)  # file → blob id ("" absent) the next merge uses as its base
    pushes: list[float] = Field(default_factory=list)  # push times within the last hour (rate limit)
    authors: dict[str, str] = Field(default_factory=dict)  # file → who changed it last, from git history
    last_sync: float | None = None
    last_attempt: float | None = None
    last_error: str = ""
    failures: int = 0  # consecutive failed syncs (backoff)
    next_retry: float | None = None
    remote_rewritten: bool = False
    last_report: dict[str, Any] = Field(default_factory=dict)

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(self.model_dump(mode="json"), indent=1), mode=0o600)

    @classmethod
    def load(cls, path: Path) -> TeamState:
        return cls.model_validate_json(path.read_text(encoding="utf-8"))
