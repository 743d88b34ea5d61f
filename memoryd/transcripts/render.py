"""The one renderer of transcript entries to model text, used by extraction and session notes."""

from __future__ import annotations

import json

from memoryd.transcripts.parser import Entry

TOOL_PAYLOAD_MAX_CHARS = 2_000  # a tool call's input or a tool result, as the model sees it
# `json.dumps(value, ensure_ascii=False)` without building an encoder per call (the pipeline calls it per tool call).
tool_input_json = json.JSONEncoder(ensure_ascii=False).encode


def render_entry(e: Entry, *, timestamps: bool = False, tool_chars: int = TOOL_PAYLOAD_MAX_CHARS, results: bool = True) -> str:
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
