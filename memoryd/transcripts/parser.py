"""Claude Code transcript lines → typed `Entry` values (see the integration doc §2–§4).

It keeps what memory needs: the human's prompts, the assistant's prose, tool calls and
results, compaction boundaries. Harness and hook text (including memoryd's own injected
context) is recognised and kept apart from the user's words. Unknown entry types are
returned as `kind="other"` and ignored by callers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from memoryd.base import limits

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


@dataclass(frozen=True, slots=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    tool_use_id: str
    is_error: bool
    text: str


@dataclass(slots=True)
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
    if limits.INJECTED_MARKER in text:
        return True
    first = text[:1]  # the harness pattern starts with a tag or "[" after blanks: most texts skip the regex
    return bool(first) and (first in "<[" or first.isspace()) and bool(_HARNESS_TEXT.match(text))


def strip_injected(text: str) -> str:
    """Drop `<system-reminder>` blocks (recalls, hook context) from a prompt."""
    return (_REMINDER_BLOCK.sub("", text) if "<system-reminder>" in text else text).strip()


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _content(
    content: Any, tool_uses: list[ToolUse] | None = None, tool_results: list[ToolResult] | None = None
) -> list[str]:
    """A message's content in one walk: its texts (a plain string is one), and its tool calls and tool results
    added to the lists given for them (a user message keeps its results, an assistant's its calls)."""
    texts: list[str] = []
    if content.__class__ is str:
        texts.append(content)
    elif content.__class__ is list:
        for block in content:
            if block.__class__ is not dict:
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_use" and tool_uses is not None:
                raw_input = block.get("input")
                tool_uses.append(
                    ToolUse(
                        str(block.get("id", "")),
                        str(block.get("name", "")),
                        raw_input if raw_input.__class__ is dict else {},
                    )
                )
            elif kind == "tool_result" and tool_results is not None:
                tool_results.append(
                    ToolResult(
                        str(block.get("tool_use_id", "")),
                        bool(block.get("is_error")),
                        _block_text(block.get("content")),
                    )
                )
    return texts


def _user_entry(entry: Entry, obj: dict[str, Any]) -> None:
    message = obj.get("message")
    texts = _content(message.get("content") if message.__class__ is dict else None, tool_results=entry.tool_results)
    if not texts:
        return
    if obj.get("isMeta") or obj.get("isCompactSummary") or obj.get("isVisibleInTranscriptOnly"):
        entry.injected = "\n".join(texts)
        return
    prose: list[str] = []
    injected: list[str] = []
    for text in texts:
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
    message = obj.get("message")
    if message.__class__ is not dict:
        message = {}
    entry.message_id = str(message.get("id", ""))
    stop_reason = message.get("stop_reason")
    entry.stop_reason = stop_reason if stop_reason.__class__ is str else None
    prose = _content(message.get("content"), tool_uses=entry.tool_uses)
    if message.get("model") == "<synthetic>" or obj.get("isApiErrorMessage"):
        entry.injected = "\n".join(prose)
        return
    entry.text = prose[0] if len(prose) == 1 and prose[0].strip() else "\n".join(p for p in prose if p.strip())


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
    get = obj.get
    raw_type = str(get("type", ""))
    entry = Entry(
        "other",
        raw_type,
        str(get("uuid", "")),
        str(get("sessionId", "")),
        str(get("timestamp", "")),
        str(get("cwd", "")),
    )
    entry.is_sidechain = bool(get("isSidechain"))
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
        memories = attachment.get("memories")
        if attachment.get("type") == "relevant_memories" and isinstance(memories, list):
            # Claude Code's own recall: the files it put in context, by path (their text is its own)
            entry.injected = "\n".join(
                f"Memory: {m['path']}:" for m in memories if isinstance(m, dict) and isinstance(m.get("path"), str)
            )
            return entry
        for key in ("content", "stdout"):
            value = attachment.get(key)
            if isinstance(value, str):
                entry.injected += value
            elif isinstance(value, list):
                entry.injected += "\n".join(str(v) for v in value)
    return entry


def parse_lines(
    lines: Iterable[bytes | str], seen: set[str] | None = None, older: Collection[str] = ()
) -> tuple[list[Entry], int]:
    """Parse many lines; returns (entries, malformed count). Duplicate uuids are kept once
    (pass one `seen` set to every batch of a file to dedupe across batches; ids in `older` count as seen too)."""
    entries: list[Entry] = []
    malformed = 0
    seen = set() if seen is None else seen
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for line in lines:
        try:
            # `parse_line` inlined for the common line (bytes orjson takes as they are); any other goes through it.
            obj = loads(line) if line.__class__ is bytes else None
            if obj.__class__ is dict:
                try:
                    entry: Entry | None = _entry(obj)
                except (TypeError, AttributeError, ValueError, RecursionError):
                    raise MalformedLine("unexpected shape") from None
            else:
                entry = parse_line(line)
        except decode_error:
            try:
                entry = parse_line(line)
            except MalformedLine:
                malformed += 1
                continue
        except MalformedLine:
            malformed += 1
            continue
        if entry is None:
            continue
        if entry.uuid:
            if entry.uuid in seen or entry.uuid in older:
                continue
            seen.add(entry.uuid)
        entries.append(entry)
    return entries, malformed


def estimate_tokens(text: str) -> int:
    """The one token estimate used everywhere: UTF-8 bytes / CHARS_PER_TOKEN."""
    return (len(text.encode("utf-8")) + limits.CHARS_PER_TOKEN - 1) // limits.CHARS_PER_TOKEN
