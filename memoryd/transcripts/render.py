"""The one renderer of transcript entries to model text, used by extraction and session notes."""

from __future__ import annotations

import json
from typing import Any

from memoryd.transcripts.parser import Entry

TOOL_PAYLOAD_MAX_CHARS = 2_000  # a tool call's input or a tool result, as the model sees it
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)  # parsed JSON holds no cycles
# The C encoder `json.dumps(..., ensure_ascii=False)` builds on every call, built once (the pipeline encodes every tool
# call).
_MAKE = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = _MAKE and _MAKE(
    None, _ENCODER.default, json.encoder.encode_basestring, None, ": ", ", ", False, False, True
)


def tool_input_json(value: dict[str, Any]) -> str:
    """`json.dumps(value, ensure_ascii=False)`, the same text, ~4x faster."""
    return "".join(_C_ENCODE(value, 0)) if _C_ENCODE else _ENCODER.encode(value)


def render_entry(
    e: Entry, *, timestamps: bool = False, tool_chars: int = TOOL_PAYLOAD_MAX_CHARS, results: bool = True
) -> str:
    """One entry as lines of `USER:` / `ASSISTANT:` / `TOOL CALL` / `TOOL RESULT`; '' when it has none.
    Extraction asks for short tool calls and no results (facts come from what was said)."""
    stamp = f"[{e.timestamp}] " if timestamps and e.timestamp else ""
    lines: list[str] = []
    if e.is_prompt:
        lines.append(f"{stamp}USER: {e.text}")
    elif e.kind == "assistant":
        if e.text.strip():
            lines.append(f"{stamp}ASSISTANT: {e.text}")
        lines += [f"{stamp}TOOL CALL {u.name}: {tool_input_json(u.input)[:tool_chars]}" for u in e.tool_uses]
    for r in e.tool_results if results else ():
        lines.append(f"{stamp}TOOL RESULT{' (error)' if r.is_error else ''}: {r.text[:tool_chars]}")
    return "\n".join(lines)
