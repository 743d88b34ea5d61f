"""Tool-time recall (issue 38): when the agent is about to run a command or edit a file, the memory
the relevance matcher says the act falls under arrives with it — at most two per tool call, each once per
session, except that a memory naming the program a command runs (`npm` against "never npm") may come back
once at that moment. No model and no embedding here: it runs on every tool call and costs a few ms.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from memoryd.base import limits
from memoryd.base.validation import check_session_id
from memoryd.recall.applies import EDIT_TOOLS
from memoryd.recall.explain import Why
from memoryd.recall.recalled import RecallResult
from memoryd.recall.service import RecallService
from memoryd.relevance.judge import judge
from memoryd.relevance.match import Match, said, weights
from memoryd.relevance.memory import command_act, edit_act
from memoryd.store import MemoryDir

TOOLS_ANSWERED = frozenset({"Bash", *EDIT_TOOLS})


@dataclass(frozen=True)
class ToolCall:
    """What a tool is about to do, from a PreToolUse payload."""

    tool: str
    path: str = ""  # relative to the project when inside it
    command: str = ""
    writes: str = ""  # a bounded part of what an edit writes

    @classmethod
    def from_payload(cls, payload: dict[str, Any], cwd: str) -> ToolCall:
        tool = str(payload.get("tool_name") or "")
        data = payload.get("tool_input") if isinstance(payload.get("tool_input"), dict) else {}
        assert isinstance(data, dict)
        raw = str(data.get("file_path") or data.get("notebook_path") or data.get("path") or "")
        root = cwd.rstrip("/") + "/"
        path = raw[len(root) :] if cwd and raw.startswith(root) else raw
        parts = [data.get("new_string"), data.get("content"), data.get("new_source")]
        parts += [e.get("new_string") for e in data.get("edits") or [] if isinstance(e, dict)]
        writes = "\n".join(str(p) for p in parts if p)[: limits.TOOL_RECALL_EDIT_CHARS]
        return cls(tool=tool, path=path, command=str(data.get("command") or ""), writes=writes)

    def describe(self) -> str:
        """The act in a line, for the recall log and the block's header."""
        if self.command:
            return f"{self.tool}: {self.command[:200]}"
        return f"{self.tool} {self.path}" if self.path else self.tool


class ToolRecall:
    """Answers PreToolUse from the memories the relevance matcher says the act falls under."""

    def __init__(self, recall: RecallService) -> None:
        self.recall = recall
        self._repeated: dict[tuple[str, str, str], None] = {}  # (session, dir, file) brought back once
        self._lock = threading.Lock()

    def tool_call(self, store: MemoryDir, session_id: str, call: ToolCall, prompt: str = "") -> RecallResult:
        started = time.perf_counter()
        check_session_id(session_id)
        if call.tool not in TOOLS_ANSWERED or not (call.path or call.command):
            return RecallResult(reason=f"{call.tool or 'this tool'} is not answered at tool time")
        if not store.has_memories():
            return RecallResult(reason="no memory files")
        if self.recall.ledger.bytes_used(session_id) >= self.recall.settings.session_budget_bytes:
            return RecallResult(reason="session budget spent")
        item = self.recall.indexes.refresh(store)
        view = self.recall.applies.view(store, item)
        act = command_act(call.command) if call.command else edit_act(call.path, call.writes)
        limited = {fn for fn, tools in view.tools.items() if call.tool not in tools}
        found = judge(act, view.memories, view.triggers, item.index, exclude=limited)
        surfaced = self.recall.ledger.surfaced(session_id, str(store.path))
        picked, whys = self._choose(store, session_id, call, found, surfaced)
        result = self.recall.surface_picked(store, session_id, picked, whys, note=f"applies to this {call.describe()}")
        result.took_ms = round((time.perf_counter() - started) * 1000, 2)
        result.method = "local"
        if self.recall.recall_log is not None and result.memories:  # a silent tool call is not worth a log line
            self.recall.record(store, call.describe(), session_id, f"hook:PreToolUse:{call.tool}", result)
        return result

    def _choose(
        self, store: MemoryDir, session_id: str, call: ToolCall, found: list[Match], surfaced: set[str]
    ) -> tuple[list[str], dict[str, Why]]:
        """The most probable matches at the threshold, not yet in the session; a memory naming the program a
        command runs may come back once at that moment (the rule is about to be kept or broken)."""
        threshold = weights().threshold
        met = [m for m in found if m.probability >= threshold]
        again = {m.memory for m in met if call.command and any(k in RUNS for k, _ in m.shared)}
        open_ = [
            m
            for m in met
            if m.memory not in surfaced or (m.memory in again and self._may_repeat(session_id, store, m.memory))
        ]
        picked = open_[: limits.TOOL_RECALL_MAX_MEMORIES]
        with self._lock:
            for m in picked:
                if m.memory in surfaced:
                    self._repeated[(session_id, str(store.path), m.memory)] = None
            while len(self._repeated) > limits.TOOL_RECALL_REPEATS_KEPT:
                self._repeated.pop(next(iter(self._repeated)))
        whys = {
            m.memory: Why(
                filename=m.memory,
                name="",
                score=round(m.probability, 4),
                injected=True,
                rule=said(m),
                context=(call.describe(),),
                confidence=round(m.probability, 3),
            )
            for m in picked
        }
        return [m.memory for m in picked], whys

    def _may_repeat(self, session_id: str, store: MemoryDir, filename: str) -> bool:
        with self._lock:
            return (session_id, str(store.path), filename) not in self._repeated


RUNS = ("program", "mention", "subcommand")  # shared kinds by which a memory names what a command runs
