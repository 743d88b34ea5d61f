"""Agent transcripts: parse Claude Code JSONL, read it incrementally, watch its folders."""

from memoryd.transcripts.parser import (
    Entry,
    MalformedLine,
    ToolResult,
    ToolUse,
    estimate_tokens,
    parse_line,
    parse_lines,
)
from memoryd.transcripts.reader import ReadResult, read_new_lines
from memoryd.transcripts.service import TranscriptService

__all__ = [
    "Entry",
    "MalformedLine",
    "ReadResult",
    "ToolResult",
    "ToolUse",
    "TranscriptService",
    "estimate_tokens",
    "parse_line",
    "parse_lines",
    "read_new_lines",
]
