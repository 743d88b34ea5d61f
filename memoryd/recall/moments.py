"""Tool-time recall (issue 38): when the agent is about to run a command or edit a file, the memory
whose rule applies to that act arrives with it — at most two per tool call, each once per session,
except that a memory whose rule the command contradicts (`npm` against "never npm") may come back
once at that moment. No model and no embedding here: it runs on every tool call and costs a few ms.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from memoryd.base import limits
from memoryd.base.tool_input import tool_target
from memoryd.base.validation import check_session_id
from memoryd.recall.explain import Why
from memoryd.recall.recalled import RecallResult
from memoryd.recall.service import RecallService
from memoryd.relevance.applies import EDIT_TOOLS, AppliesTo
from memoryd.relevance.applies_match import contradicts, meeting
from memoryd.relevance.applies_reason import Reason, Via
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
        tool, data, raw = tool_target(payload)
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

    def phrase(self) -> str:
        """The act as the agent's user would say it (issue 51): "this edit of a/b.ts", "this command"."""
        if self.command:
            return "this command"
        return f"this edit of {self.path}" if self.path else "this edit"

    def query(self, prompt: str) -> str:
        """The lexical query that orders candidates: the act (path parts, file kind, command, what
        it writes) and the turn's prompt."""
        path = self.path.replace("/", " ").replace(".", " ").replace("_", " ").replace("-", " ")
        return "\n".join(p for p in (self.command, path, self.writes[:500], prompt) if p)


class ToolRecall:
    """Answers PreToolUse from the memories whose `applies_to` the act meets."""

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
        could = {fn: view.applies[fn] for fn in sorted(view.triggers.for_tool(call.path, call.command, call.writes))}
        surfaced = self.recall.ledger.surfaced(session_id, str(store.path))
        picked, whys = self._choose(store, session_id, call, could, surfaced, item, prompt)
        result = self.recall.surface_picked(store, session_id, picked, whys, note=f"applies to {call.phrase()}")
        result.took_ms = round((time.perf_counter() - started) * 1000, 2)
        result.method = "local"
        if self.recall.recall_log is not None and result.memories:  # a silent tool call is not worth a log line
            self.recall.record(store, call.describe(), session_id, f"hook:PreToolUse:{call.tool}", result)
        return result

    def _choose(
        self,
        store: MemoryDir,
        session_id: str,
        call: ToolCall,
        applies: dict[str, AppliesTo],
        surfaced: set[str],
        item: Any,
        prompt: str,
    ) -> tuple[list[str], dict[str, Why]]:
        """The memories the act meets (of those it could: `applies`), contradicted rules first, then those met at
        their place or by their code before those met only by the file's language, then by the lexical score of the
        act and prompt."""
        met: dict[str, Reason] = {}
        for fn, a in applies.items():
            against = contradicts(a, call.command) if call.command else ""
            why = (
                Reason(Via.FORBIDDEN, against)
                if against
                else meeting(a, call.tool, call.path, call.command, call.writes)
            )
            if why:
                met[fn] = why
        broken = {fn for fn, why in met.items() if why.via is Via.FORBIDDEN}
        open_ = [fn for fn in met if fn not in surfaced or (fn in broken and self._may_repeat(session_id, store, fn))]
        if not open_:
            return [], {}
        scores = dict(item.index.rank(call.query(prompt), k=max(10, len(open_)), gate=False)) if len(open_) > 1 else {}
        open_.sort(key=lambda fn: (fn not in broken, met[fn].language_only, -scores.get(fn, 0.0), fn))
        picked = open_[: limits.TOOL_RECALL_MAX_MEMORIES]
        with self._lock:
            for fn in picked:
                if fn in broken and fn in surfaced:
                    self._repeated[(session_id, str(store.path), fn)] = None
            while len(self._repeated) > limits.TOOL_RECALL_REPEATS_KEPT:
                self._repeated.pop(next(iter(self._repeated)))
        whys = {
            fn: Why(
                filename=fn,
                name="",
                score=scores.get(fn, 0.0),
                injected=True,
                rule=met[fn].text(),
                context=(call.describe(),),
            )
            for fn in picked
        }
        return picked, whys

    def _may_repeat(self, session_id: str, store: MemoryDir, filename: str) -> bool:
        with self._lock:
            return (session_id, str(store.path), filename) not in self._repeated
