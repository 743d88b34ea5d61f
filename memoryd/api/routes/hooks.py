"""Claude Code hooks: any hook JSON in, Claude Code's hook output out."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query

from memoryd.api.deps import HooksDep
from memoryd.api.models import ClaudeCodeHookInput, HookOut
from memoryd.base.errors import InvalidRequest
from memoryd.base.validation import check_text
from memoryd.integrations.claude_code import parse_session_env

router = APIRouter(tags=["integrations"])
log = logging.getLogger(__name__)


@router.post("/v1/hooks/claude-code", response_model_exclude_none=True)
def claude_code_hook(
    payload: ClaudeCodeHookInput,
    hooks: HooksDep,
    x_claude_code_env: Annotated[
        str | None,
        Header(
            description="The session's native-memory switches: CLAUDE_CODE_DISABLE_AUTO_MEMORY=…;CLAUDE_CODE_SIMPLE=…"
        ),
    ] = None,
    await_: Annotated[
        str | None,
        Query(
            alias="await",
            description="`model`: the async hook of a prompt — answer with the model's pick once it has answered",
        ),
    ] = None,
) -> HookOut:
    """SessionStart → memory prompt + index (led by the session notes after a compaction);
    UserPromptSubmit → recalled memories; Stop/SubagentStop → extraction queued; PreCompact →
    session notes; anything else → {}."""
    session_env = parse_session_env(x_claude_code_env)
    given = payload.model_dump(exclude_none=True)
    try:
        _check_strings(given, "")
    except InvalidRequest as exc:  # a hook fails open: the session goes on, nothing is done or stored
        log.warning("%s hook ignored: %s", given.get("hook_event_name", "a"), exc.message)
        return HookOut()
    answer = hooks.handle(given, session_env, await_model=await_ == "model")
    return HookOut.model_validate(answer)


def _check_strings(value: Any, field: str) -> None:
    """Every string of the hook JSON storable as UTF-8 (issue 52: a lone "\\ud800" reached the state DB and the
    recall log's writer): InvalidText naming the field (`tool_input.command`), before anything is done with it."""
    if isinstance(value, str):
        check_text(value, field=field or "body")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(str(key), field=f"{field}.(a key)" if field else "(a key)")
            _check_strings(item, f"{field}.{key}" if field else str(key))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            _check_strings(item, f"{field}[{n}]")
