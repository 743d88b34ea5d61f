"""Claude Code hooks: any hook JSON in, Claude Code's hook output out."""

from __future__ import annotations

from fastapi import APIRouter

from memoryd.api.deps import DaemonDep
from memoryd.api.models import ClaudeCodeHookInput, HookOut
from memoryd.integrations.claude_code import handle_hook

router = APIRouter(tags=["integrations"])


@router.post("/v1/hooks/claude-code", response_model_exclude_none=True)
def claude_code_hook(payload: ClaudeCodeHookInput, daemon: DaemonDep) -> HookOut:
    """SessionStart → memory prompt + index (led by the session notes after a compaction);
    UserPromptSubmit → recalled memories; Stop/SubagentStop → extraction queued; PreCompact →
    session notes; anything else → {}."""
    return HookOut.model_validate(handle_hook(daemon, payload.model_dump(exclude_none=True)))
