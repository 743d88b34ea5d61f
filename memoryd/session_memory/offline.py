"""Deterministic session notes without an LLM: what can be read straight off the transcript.

`OfflineNotes` takes entries one at a time, so a long transcript is streamed through it in
batches and never held whole."""

from __future__ import annotations

import functools
from typing import Any

from memoryd.base.secrets import redact_secrets
from memoryd.transcripts.parser import Entry

_PATH_KEYS = ("file_path", "notebook_path", "path")
_LINE_CHARS = 200
_KEPT = 500  # list items kept per kind in a saved read; the notes' budgets keep far fewer


@functools.lru_cache(maxsize=4096)
def _redacted(text: str) -> str:
    """`redact_secrets`, remembered: the same kept lines are saved after every batch."""
    return redact_secrets(text)


def _one_line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " ".join(text[: limit * 4].split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class OfflineNotes:
    """Title and task from the prompts, files from tool calls, errors from failed tool results, worklog from turns."""

    def __init__(self) -> None:
        self.first_prompt = ""
        self.later_prompts: list[str] = []
        self.tool_names: dict[str, str] = {}
        self.files: dict[str, list[str]] = {}
        self.commands: dict[str, None] = {}
        self.errors: list[str] = []
        self.worklog: list[str] = []
        self.last_prose = ""
        self.turn_tools = 0

    def add(self, e: Entry, *, passing: bool = False) -> None:
        """Fold one entry. `passing`: a newer part of this read follows, so the newest-first lists
        (later prompts, errors, worklog, last prose) skip it; the first prompt, files and commands do not."""
        if passing and not e.tool_uses:  # the fast way through what a passed-over entry adds
            if e.is_prompt and not e.is_sidechain:
                self.first_prompt = self.first_prompt or e.text
                self.turn_tools = 0
            return
        if e.is_prompt and not e.is_sidechain:
            if not self.first_prompt:
                self.first_prompt = e.text
            elif not passing:
                self.later_prompts.append(f"- {_one_line(e.text)}")
            if not passing:
                self.worklog.append(f"- {e.timestamp[:16].replace('T', ' ')} user: {_one_line(e.text, 120)}")
            self.turn_tools = 0
        for use in e.tool_uses:
            self.tool_names[use.id] = use.name
            self.turn_tools += 1
            for key in _PATH_KEYS:
                value = use.input.get(key)
                if (
                    isinstance(value, str) and value and (value in self.files or len(self.files) < _KEPT)
                ):  # the first _KEPT are kept
                    names = self.files.setdefault(value, [])
                    if use.name not in names:
                        names.append(use.name)
            command = use.input.get("command")
            if use.name == "Bash" and len(self.commands) < _KEPT and isinstance(command, str) and command.strip():
                self.commands[f"- `{_one_line(command, 160)}`"] = None
        if passing:
            return
        for result in e.tool_results:
            if result.is_error:
                tool = self.tool_names.get(result.tool_use_id, "tool")
                self.errors.append(f"- {tool}: {_one_line(result.text or 'failed', 200)}")
        if e.kind == "assistant" and e.text.strip():
            self.last_prose = e.text.strip()[-4 * _LINE_CHARS :]
            self.worklog.append(
                f"- assistant: {_one_line(e.text, 120)}"
                + (f" ({self.turn_tools} tool calls)" if self.turn_tools else "")
            )

    def to_dict(self) -> dict[str, Any]:
        """What was gathered, bounded (the oldest list items go first) and redacted, for `session_reads`.
        Redacting here, not per entry, costs a pass over what is kept, not over the whole transcript."""
        self.later_prompts = self.later_prompts[-_KEPT:]
        self.errors = self.errors[-_KEPT:]
        self.worklog = self.worklog[-_KEPT:]
        self.tool_names = dict(list(self.tool_names.items())[-_KEPT:])
        self.files = dict(list(self.files.items())[:_KEPT])
        self.commands = dict(list(self.commands.items())[:_KEPT])
        return {
            **self.__dict__,
            "first_prompt": _redacted(self.first_prompt),
            "last_prose": _redacted(self.last_prose),
            "later_prompts": [_redacted(t) for t in self.later_prompts],
            "errors": [_redacted(t) for t in self.errors],
            "worklog": [_redacted(t) for t in self.worklog],
            "files": {_redacted(k): v for k, v in self.files.items()},
            "commands": {_redacted(k): v for k, v in self.commands.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OfflineNotes:
        notes = cls()
        notes.__dict__.update(data)
        return notes

    def sections(self) -> dict[str, str]:
        sections: dict[str, str] = {}
        if self.first_prompt:
            sections["Session Title"] = _one_line(self.first_prompt.splitlines()[0], 80)
            task = self.first_prompt.strip()
            sections["Task specification"] = task + (
                "\n\nLater requests:\n" + "\n".join(self.later_prompts) if self.later_prompts else ""
            )
        if self.last_prose:
            sections["Current State"] = "Last assistant message: " + _one_line(self.last_prose, 600)
        if self.files:
            sections["Files and Functions"] = "\n".join(
                f"- {path} ({', '.join(names)})" for path, names in self.files.items()
            )
        if self.commands:
            sections["Workflow"] = "\n".join(self.commands)
        if self.errors:
            sections["Errors & Corrections"] = "\n".join(self.errors)
        if self.worklog:
            sections["Worklog"] = "\n".join(self.worklog)
        return sections
