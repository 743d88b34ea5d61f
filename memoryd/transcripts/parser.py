"""Claude Code transcript lines → typed `Entry` values (see the integration doc §2–§4).

It keeps what memory needs: the human's prompts, the assistant's prose, tool calls and
results, compaction boundaries. Harness and hook text (including memoryd's own injected
context) is recognised and kept apart from the user's words. Unknown entry types are
returned as `kind="other"` and ignored by callers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from memoryd import limits

# CC's own test for a non-prompt user text: a leading lowercase XML-like tag or an interruption notice.
_HARNESS_TEXT = re.compile(r"^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])")
_REMINDER_BLOCK = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


class MalformedLine(ValueError):
    """A transcript line that is not a JSON object of the shapes Claude Code writes."""


def _dict(value: Any) -> dict[str, Any]:
    """`value` when it is an object, else {}: a line may put a string or list anywhere."""
    return value if isinstance(value, dict) else {}


def _load(raw: bytes) -> Any:
    """orjson (fast; refuses deep nesting, huge numbers and invalid UTF-8), else the stdlib for
    what only it accepts (a lone surrogate escape, which becomes '?'), else MalformedLine."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        obj = json.loads(raw.decode("utf-8"))
        return json.loads(json.dumps(obj, ensure_ascii=False).encode("utf-8", "replace"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, int digit limits
        raise MalformedLine(str(exc)[:200]) from None


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    is_error: bool
    text: str


@dataclass
class Entry:
    """One transcript line, reduced to what memory needs."""

    kind: str  # "user", "assistant", "compact_boundary", "other"
    raw_type: str
    uuid: str = ""
    session_id: str = ""
    timestamp: str = ""
    cwd: str = ""
    text: str = ""  # the human's prompt (user) or the assistant's prose; never injected text
    injected: str = ""  # harness/hook/recall text seen on this entry (never the user's words)
    tool_uses: list[ToolUse] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    is_sidechain: bool = False
    replayed: bool = False  # read again after the file was rewritten: consumers saw it before
    message_id: str = ""
    stop_reason: str | None = None

    @property
    def is_prompt(self) -> bool:
        return self.kind == "user" and bool(self.text)

    @property
    def has_prose(self) -> bool:
        return self.kind in ("user", "assistant") and bool(self.text.strip())


def is_injected_text(text: str) -> bool:
    """Text a harness or hook put in the conversation, memoryd's own recalls included."""
    return limits.INJECTED_MARKER in text or bool(_HARNESS_TEXT.match(text))


def strip_injected(text: str) -> str:
    """Drop `<system-reminder>` blocks (recalls, hook context) from a prompt."""
    return _REMINDER_BLOCK.sub("", text).strip()


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _user_entry(entry: Entry, obj: dict[str, Any]) -> None:
    message = _dict(obj.get("message"))
    content = message.get("content")
    meta = bool(obj.get("isMeta")) or bool(obj.get("isCompactSummary")) or bool(obj.get("isVisibleInTranscriptOnly"))
    texts: list[str] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif block.get("type") == "tool_result":
                entry.tool_results.append(
                    ToolResult(str(block.get("tool_use_id", "")), bool(block.get("is_error")), _block_text(block.get("content")))
                )
    prose: list[str] = []
    injected: list[str] = []
    for text in texts:
        if meta:
            injected.append(text)
            continue
        cleaned = strip_injected(text)  # a prompt may carry reminder blocks around the user's words
        if cleaned != text.strip():
            injected.append(text)
        if cleaned and not is_injected_text(cleaned):
            prose.append(cleaned)
        elif cleaned:
            injected.append(cleaned)
    entry.text = "\n".join(prose) if not entry.tool_results else ""
    entry.injected = "\n".join(injected)


def _assistant_entry(entry: Entry, obj: dict[str, Any]) -> None:
    message = _dict(obj.get("message"))
    entry.message_id = str(message.get("id", ""))
    stop_reason = message.get("stop_reason")
    entry.stop_reason = stop_reason if isinstance(stop_reason, str) else None
    content = message.get("content")
    prose: list[str] = []
    if isinstance(content, str):
        prose.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                prose.append(str(block.get("text", "")))
            elif block.get("type") == "tool_use":
                raw_input = block.get("input")
                entry.tool_uses.append(ToolUse(str(block.get("id", "")), str(block.get("name", "")), raw_input if isinstance(raw_input, dict) else {}))
    if message.get("model") == "<synthetic>" or obj.get("isApiErrorMessage"):
        entry.injected = "\n".join(prose)
        return
    entry.text = "\n".join(p for p in prose if p.strip())


def parse_line(raw: bytes | str) -> Entry | None:
    """One JSONL line → Entry; None for a blank line; MalformedLine for anything else that is
    not a transcript entry. Never raises another exception, whatever the line holds."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="replace")
    raw = raw.strip()
    if not raw:
        return None
    obj = _load(raw)
    if not isinstance(obj, dict):
        raise MalformedLine("not a JSON object")
    try:
        return _entry(obj)
    except (TypeError, AttributeError, ValueError, RecursionError) as exc:  # a shape no Claude Code version writes
        raise MalformedLine(f"unexpected shape ({exc.__class__.__name__})") from None


def _entry(obj: dict[str, Any]) -> Entry:
    raw_type = str(obj.get("type", ""))
    entry = Entry(
        kind="other",
        raw_type=raw_type,
        uuid=str(obj.get("uuid", "")),
        session_id=str(obj.get("sessionId", "")),
        timestamp=str(obj.get("timestamp", "")),
        cwd=str(obj.get("cwd", "")),
        is_sidechain=bool(obj.get("isSidechain")),
    )
    if raw_type == "user":
        entry.kind = "user"
        _user_entry(entry, obj)
    elif raw_type == "assistant":
        entry.kind = "assistant"
        _assistant_entry(entry, obj)
    elif raw_type == "system" and obj.get("subtype") == "compact_boundary":
        entry.kind = "compact_boundary"
    elif raw_type == "attachment":
        attachment = _dict(obj.get("attachment"))
        if attachment.get("type") == "queued_command" and isinstance(attachment.get("prompt"), str):
            # A prompt typed while the agent was busy: the user's own words, like a user entry.
            prompt = strip_injected(attachment["prompt"])
            if prompt and not is_injected_text(prompt):
                entry.kind, entry.text = "user", prompt
            return entry
        for key in ("content", "stdout"):
            value = attachment.get(key)
            if isinstance(value, str):
                entry.injected += value
            elif isinstance(value, list):
                entry.injected += "\n".join(str(v) for v in value)
    return entry


def parse_lines(lines: Iterable[bytes | str], seen: set[str] | None = None) -> tuple[list[Entry], int]:
    """Parse many lines; returns (entries, malformed count). Duplicate uuids are kept once
    (pass one `seen` set to every batch of a file to dedupe across batches)."""
    entries: list[Entry] = []
    malformed = 0
    seen = set() if seen is None else seen
    for line in lines:
        try:
            entry = parse_line(line)
        except MalformedLine:
            malformed += 1
            continue
        if entry is None:
            continue
        if entry.uuid:
            if entry.uuid in seen:
                continue
            seen.add(entry.uuid)
        entries.append(entry)
    return entries, malformed


def estimate_tokens(text: str) -> int:
    """The one token estimate used everywhere: UTF-8 bytes / CHARS_PER_TOKEN."""
    return (len(text.encode("utf-8")) + limits.CHARS_PER_TOKEN - 1) // limits.CHARS_PER_TOKEN
