"""Claude Code hooks: any hook JSON in, Claude Code's hook output out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body

from memoryd.api.deps import DaemonDep
from memoryd.integrations.claude_code import handle_hook

router = APIRouter(tags=["integrations"])


@router.post("/v1/hooks/claude-code")
def claude_code_hook(daemon: DaemonDep, payload: dict[str, Any] = Body(..., description="Any Claude Code hook input JSON.")) -> dict[str, Any]:
    """SessionStart → memory prompt + index (led by the session notes after a compaction);
    UserPromptSubmit → recalled memories; Stop/SubagentStop → extraction queued; PreCompact →
    session notes; anything else → {}."""
    return handle_hook(daemon, payload)
