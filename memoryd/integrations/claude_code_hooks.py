"""`HookService`: Claude Code's hook JSON in, the hook's answer out.

Decisions stay in the core (recall, extraction, session memory); this only adapts formats, fits
text into Claude Code's 10,000-char context cap, and fails open: any error answers `{}` so the
agent is never stalled or blocked (never `decision: block`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import MemorydError
from memoryd.extract.turns import TurnEnds
from memoryd.guard.acts import Act
from memoryd.guard.mode import ASK, DENY
from memoryd.guard.service import Guard, Verdict
from memoryd.integrations.claude_memory import NativeMemory, is_claude_memory_dir, native_memory
from memoryd.integrations.hook_protocol import GUARD_SWITCH, RECALL_SWITCH
from memoryd.integrations.hook_protocol import recall_off as switched_off
from memoryd.integrations.hook_repeats import RepeatedEvents
from memoryd.integrations.user_context import user_context
from memoryd.recall import RecallService
from memoryd.recall.moments import ToolCall, ToolRecall
from memoryd.session_memory import SessionMemory
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.prompt import build_memory_prompt
from memoryd.transcripts import TranscriptService
from memoryd.transcripts.context import SessionContext

log = logging.getLogger(__name__)


def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def fit_session_context(prompt: str, cap: int = limits.CLAUDE_CODE_CONTEXT_MAX_CHARS) -> str:
    """Fit the memory section into the cap: whole index lines, most useful first (the index is
    already ordered so), then a pointer to `memoryd index` for the rest."""
    text = f"{limits.INJECTED_MARKER}\n{prompt.strip()}\n"
    if len(text) <= cap:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    size = 0
    dropped = 0
    reserve = 120
    for line in lines:
        if size + len(line) + 1 > cap - reserve:
            dropped += 1
            continue
        kept.append(line)
        size += len(line) + 1
    kept.append(
        f"[{dropped} more index lines not shown: run `memoryd index` (or GET /v1/index) to see the whole index.]"
    )
    return "\n".join(kept)[:cap]


def session_notes_context(notes: str, cap: int = limits.SESSION_NOTES_CONTEXT_MAX_CHARS) -> str:
    """The session's notes as the head of the post-compaction context, cut to `cap` on a line."""
    head = f"{limits.INJECTED_MARKER}\nSession notes kept by memoryd before this compaction:\n\n"
    body = notes.strip()
    if len(head) + len(body) + 1 > cap:
        body = body[: max(0, cap - len(head) - 40)].rsplit("\n", 1)[0] + "\n[… notes cut: GET /v1/sessions/{id}/memory]"
    return f"{head}{body}\n"


def guard_line(count: int) -> str:
    """The one line SessionStart adds when memories hold acts here."""
    rules = "1 memory holds" if count == 1 else f"{count} memories hold"
    return (
        f"memoryd guard: {rules} acts in this project (commands, files, imports they forbid); a held tool call "
        "says why and what to do instead. `memoryd guard` lists them."
    )


PROMPTS_KEPT = 2_048  # sessions whose last prompt weighs in at tool time


def recall_off(session_env: Mapping[str, str] | None) -> bool:
    """The session asked for no recalled memories (issue 39, 10): index, prompt and tool time stay quiet."""
    return switched_off((session_env or {}).get(RECALL_SWITCH))


def native_for_session(
    cwd: str, session_env: Mapping[str, str] | None, env: Mapping[str, str] | None = None
) -> NativeMemory:
    """Claude Code's own auto memory for the session that sent a hook (its cwd, its switches)."""
    env = dict(os.environ) if env is None else env
    return native_memory(Path(cwd), env, session_env)


def native_loads_index(store_path: Path, cwd: str, session_env: Mapping[str, str] | None) -> bool:
    """Does Claude Code itself load this MEMORY.md into the session (native memory on, same dir)?"""
    env = dict(os.environ)
    return native_for_session(cwd, session_env, env).enabled and is_claude_memory_dir(store_path, cwd, env)


@dataclass(kw_only=True, eq=False)
class HookService:
    """Answers each Claude Code hook event from the parts it names, never from the whole daemon."""

    recall: RecallService
    transcripts: TranscriptService
    turns: TurnEnds
    session_memory: SessionMemory
    stores: StoreRegistry
    guard: Guard

    def __post_init__(self) -> None:
        self.repeats = RepeatedEvents()  # the plugin's and a settings file's hooks forward the same event: one answer
        self.tool_recall = ToolRecall(self.recall)
        self._prompts: dict[str, str] = {}  # session -> its last prompt (bounded), for tool time

    def handle(
        self, payload: dict[str, Any], session_env: Mapping[str, str] | None = None, *, await_model: bool = False
    ) -> dict[str, Any]:
        """Answer one Claude Code hook; SessionStart's answer ends with how many rules hold acts here (issue 50).
        A repeat of an event another door already forwarded gets `{}`, guard line included (it would arrive twice)."""
        if not self.repeats.first_time({**payload, "await_model": True} if await_model else payload):
            return {}
        answer = self._handle(payload, session_env, await_model=await_model)
        if payload.get("hook_event_name") == "SessionStart" and payload.get("cwd") and not recall_off(session_env):
            answer = self._with_guard_line(str(payload["cwd"]), answer)
        return answer

    def _handle(
        self, payload: dict[str, Any], session_env: Mapping[str, str] | None = None, *, await_model: bool = False
    ) -> dict[str, Any]:
        """Answer one Claude Code hook; `{}` when there is nothing to add or anything fails.

        When Claude Code's native memory is on and reads the same dir, it already loads MEMORY.md:
        SessionStart then adds nothing, so the index reaches the model once."""
        event = str(payload.get("hook_event_name", ""))
        cwd = str(payload.get("cwd") or "")
        session_id = str(payload.get("session_id") or "")
        try:
            if event == "PreToolUse" and cwd and session_id and not await_model:  # the guard holds even without recall
                return self._pre_tool_use(payload, cwd, session_id, session_env)
            if event in ("SessionStart", "UserPromptSubmit", "PreToolUse") and recall_off(session_env):
                return {}  # the session switched recall off; extraction (Stop) goes on
            if await_model:  # the async hook of a prompt: the model's pick, once it answered
                return self._model_followup(event, cwd, session_id, str(payload.get("prompt") or ""))
            if event == "SessionStart" and cwd:
                return self._session_start(payload, cwd, session_id, session_env)
            if event == "UserPromptSubmit" and cwd and session_id:
                store = self.stores.for_cwd(cwd)
                context = self._session_context(store, payload, session_id)
                self._remember_prompt(session_id, str(payload.get("prompt") or ""))
                # max_chars: memories that would overflow Claude Code's cap are left for a later prompt,
                # not marked surfaced.
                result = self.recall.recall(
                    cwd,
                    str(payload.get("prompt") or ""),
                    session_id,
                    store=store,
                    max_chars=limits.CLAUDE_CODE_CONTEXT_MAX_CHARS,
                    source="hook",
                    context=context,
                    defer_model=True,
                )
                return _context(event, result.injection) if result.injection else {}
            if event in ("Stop", "SubagentStop") and cwd and session_id and payload.get("transcript_path"):
                self.turns.turn_end(
                    session_id, str(payload["transcript_path"]), cwd, payload.get("last_assistant_message")
                )
                return {}
            if event == "PreCompact" and session_id:
                # The installed hook discards this answer (Claude Code takes no context from PreCompact);
                # other clients may read it. Claude Code gets the notes at SessionStart(source=compact).
                notes = self._session_notes(session_id)
                return (
                    _context(event, f"{limits.INJECTED_MARKER}\n{notes}"[: limits.CLAUDE_CODE_CONTEXT_MAX_CHARS])
                    if notes
                    else {}
                )
        except MemorydError as exc:
            log.warning("%s hook: %s (%s)", event or "unknown", exc.code, exc.message)
        except Exception:
            log.exception("%s hook failed; answered {} so the agent goes on", event or "unknown")
        return {}

    def _session_start(
        self, payload: dict[str, Any], cwd: str, session_id: str, session_env: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """The session's notes after a compaction, the user's global `user` memories, then (unless Claude Code
        loads it itself) the memory section and index, its file naming the folder's own (#51)."""
        store = self.stores.for_cwd(cwd)
        notes = self._session_notes(session_id) if payload.get("source") == "compact" else None
        head = session_notes_context(notes) if notes else ""  # after a compaction the session's notes lead
        head += self._user_memories(session_id)
        if native_loads_index(store.path, cwd, session_env):
            return _context("SessionStart", head) if head else {}
        prompt = build_memory_prompt(store.path, store.served_index(), store.dialect())
        return _context(
            "SessionStart", head + fit_session_context(prompt, limits.CLAUDE_CODE_CONTEXT_MAX_CHARS - len(head))
        )

    def _user_memories(self, session_id: str) -> str:
        """The global `user` memories as context, marked held by the session so a prompt never repeats them."""
        if self.stores.global_dir is None:
            return ""
        store = self.stores.global_store()
        found = user_context(store)
        if found.filenames and session_id:
            self.recall.mark_seen(session_id, str(store.path), list(found.filenames))
        return found.text

    def _model_followup(self, event: str, cwd: str, session_id: str, prompt: str) -> dict[str, Any]:
        if event != "UserPromptSubmit" or not cwd or not session_id or not self.recall.llm.enabled:
            return {}
        result = self.recall.model_followup(
            cwd,
            session_id,
            prompt=prompt,
            wait=limits.RECALL_MODEL_FOLLOWUP_WAIT_SECONDS,
            max_chars=limits.CLAUDE_CODE_CONTEXT_MAX_CHARS,
        )
        return _context(event, result.injection) if result.injection else {}

    def _ready_model_pick(self, cwd: str, session_id: str) -> str:
        """The model's pick for the turn's prompt if it has answered by this tool call (never waited for): the
        channel that always reaches the turn, beside the prompt's async hook."""
        if not self.recall.llm.enabled:
            return ""
        result = self.recall.model_followup(cwd, session_id, wait=0.0, max_chars=limits.CLAUDE_CODE_CONTEXT_MAX_CHARS)
        return result.injection

    def _pre_tool_use(
        self, payload: dict[str, Any], cwd: str, session_id: str, session_env: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """A forbid trigger the act meets holds it (deny or ask, with the rule and what to do instead); otherwise
        the memories whose rule applies to it arrive as context, as before the guard."""
        store = self.stores.for_cwd(cwd)
        verdict = self._guard_verdict(store, payload, cwd, session_id, session_env)
        if verdict is not None and verdict.decision in (DENY, ASK):
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": verdict.decision,
                    "permissionDecisionReason": verdict.reason,
                }
            }
        held = verdict.reason if verdict is not None else ""  # mode context: the rule arrives, the act runs
        if recall_off(session_env):
            return _context("PreToolUse", held) if held else {}
        call = ToolCall.from_payload(payload, cwd)
        result = self.tool_recall.tool_call(store, session_id, call, self._prompts.get(session_id, ""))
        text = "\n\n".join(filter(None, [held, result.injection, self._ready_model_pick(cwd, session_id)]))
        return _context("PreToolUse", text) if text else {}

    def _guard_verdict(
        self,
        store: MemoryDir,
        payload: dict[str, Any],
        cwd: str,
        session_id: str,
        session_env: Mapping[str, str] | None,
    ) -> Verdict | None:
        """The guard's verdict; None when nothing holds the act or the guard failed (it fails open)."""
        try:
            act = Act.from_payload(payload, cwd)
            return self.guard.check(store, act, session_id, (session_env or {}).get(GUARD_SWITCH))
        except Exception:
            log.exception("the guard failed on a %s call; the act goes on", payload.get("tool_name"))
            return None

    def _with_guard_line(self, cwd: str, answer: dict[str, Any]) -> dict[str, Any]:
        """SessionStart's one line on the rules that hold acts in this project (nothing when none do)."""
        try:
            rules = self.guard.rules(self.stores.for_cwd(cwd)) if self.guard.mode != "off" else []
        except Exception:
            log.exception("could not count the guard's rules at session start")
            return answer
        if not rules:
            return answer
        line = guard_line(len(rules))
        text = str(answer.get("hookSpecificOutput", {}).get("additionalContext") or "")
        return _context("SessionStart", f"{text.rstrip()}\n\n{line}\n" if text else f"{line}\n")

    def _remember_prompt(self, session_id: str, prompt: str) -> None:
        self._prompts.pop(session_id, None)
        self._prompts[session_id] = prompt[: limits.TOOL_RECALL_EDIT_CHARS]
        while len(self._prompts) > PROMPTS_KEPT:
            self._prompts.pop(next(iter(self._prompts)))

    def _session_notes(self, session_id: str) -> str | None:
        """The session's notes; None when there are none or the id is not one memoryd accepts."""
        try:
            return self.session_memory.get(session_id) if session_id else None
        except MemorydError:
            return None

    def _session_context(self, store: MemoryDir, payload: dict[str, Any], session_id: str) -> SessionContext | None:
        """What the transcript pipeline learned of the session (its files, commands, the memory files
        it already holds); the held memories are marked seen, so recall adds only new ones. The
        transcript is never re-read here: the pipeline reads each line once (issue #27)."""
        transcript = payload.get("transcript_path")
        path = None
        if transcript:
            try:
                path = self.transcripts.check_under_root(str(transcript))
            except MemorydError:
                path = None
        context = self.transcripts.session_context(session_id, path)
        held = context.held_in(store.path) if context is not None else set()
        self.recall.mark_seen(session_id, str(store.path), sorted(held))
        return context
