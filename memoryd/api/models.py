"""Request and response bodies of the API (pydantic), so /openapi.json documents every answer and
bad input gets a 4xx naming the field and the fix before any route runs.

An answer is built from the core's own objects (dataclasses), read by attribute: the answer's fields are
written here once, never again as a dict in the core.

Input checks are the core's own (memoryd/base/validation.py), wrapped so pydantic reports them with
the field's location; the error handler (api/errors.py) renders them with the core's status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from fastapi import Query
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from memoryd.base import limits
from memoryd.base.errors import InvalidCwd, InvalidRequest, MemorydError
from memoryd.base.validation import check_path, check_session_id, check_text, check_transcript_path
from memoryd.guard.rules import parse_forbid
from memoryd.recall.recalled import RecalledFields
from memoryd.relevance.applies import parse_applies
from memoryd.store.model import MemoryFields

if TYPE_CHECKING:
    from memoryd.recall.recalled import RecalledMemory, RecallResult


def _checked(check: Callable[..., str], **kwargs: Any) -> AfterValidator:
    """Run a core check inside pydantic; its MemorydError keeps its code, status and message."""

    def validate(value: str, info: ValidationInfo) -> str:
        try:
            return check(
                value, **({"field": info.field_name} if info.field_name and "field" not in kwargs else {}), **kwargs
            )
        except MemorydError as exc:
            raise PydanticCustomError(exc.code, "{message}", {"message": exc.message, "status": exc.status}) from None

    return AfterValidator(validate)


SessionId = Annotated[
    str, _checked(check_session_id), Field(description="The agent's session id (letters, digits, '.', '_', '-').")
]
Cwd = Annotated[
    str,
    _checked(check_path, field="cwd", error=InvalidCwd),
    Field(description="The agent's working directory (absolute); names the project."),
]
TranscriptPath = Annotated[
    str,
    _checked(check_transcript_path),
    Field(description="Absolute path of the session's .jsonl transcript, under a configured transcript root."),
]
Text = Annotated[str, _checked(check_text)]
CwdQuery = Annotated[Cwd, Query(description="The agent's working directory (absolute); names the project.")]


class RequestModel(BaseModel):
    """A body memoryd defines: an unknown field is refused, so a typo never passes silently."""

    model_config = ConfigDict(extra="forbid")


class ResponseModel(BaseModel):
    """An answer: every field documented; a field the core adds must be added here too."""

    model_config = ConfigDict(extra="forbid", from_attributes=True)

    @classmethod
    def of(cls, obj: object, **fields: Any) -> Self:
        """This answer from a core object's attributes; `fields` add to them or stand in for them."""
        return cls.model_validate(
            {name: getattr(obj, name) for name in cls.model_fields if hasattr(obj, name)} | fields
        )


# ---------------------------------------------------------------------- errors
class ErrorDetail(BaseModel):
    code: str = Field(description="Stable machine-readable code, e.g. invalid_cwd, memory_not_found.")
    message: str = Field(description="What went wrong and how to fix it.")


class ErrorBody(BaseModel):
    """Every error answer, from a route or from the guard middleware."""

    error: ErrorDetail


# ---------------------------------------------------------------------- service
class HealthOut(ResponseModel):
    status: Literal["ok"]
    version: str


class StatusOut(BaseModel):
    """The daemon's status; parts add their own sections (recall, jobs, dream, ...), so extra keys are allowed."""

    model_config = ConfigDict(extra="allow")

    version: str
    mode: str = Field(description="llm or offline.")
    model: str | None
    uptime_seconds: float
    pid: int
    home: str
    memory_dirs: list[str]
    watched_folders: dict[str, list[str]]
    invalid_files: dict[str, list[InvalidFileOut]]
    llm_usage: dict[str, Any]


# ---------------------------------------------------------------------- memories
Scope = Literal["project", "global"]  # store/registry.py's PROJECT and GLOBAL: this project's store, or the user's own


class AppliesToIn(RequestModel):
    """Where a memory applies (issue 38): recall brings it when a tool call or a prompt meets one of these."""

    paths: list[str] = Field(
        default_factory=list, description="Globs relative to the project: `db/migrations/**`, `**/*.sql`."
    )
    commands: list[str] = Field(
        default_factory=list, description="Programs, or a program and its first word: `npm`, `prisma migrate`."
    )
    tools: list[str] = Field(
        default_factory=list,
        description="Claude Code tools it is limited to: Bash, Edit, Write, MultiEdit, NotebookEdit, Read.",
    )


class SaveMemoryRequest(RequestModel):
    cwd: Cwd
    name: Text = Field(description="Short title; the same type+name updates that memory.")
    description: Text = Field(description="One specific line; recall decides relevance from it.")
    type: str = Field(description=f"One of {', '.join(limits.MEMORY_TYPES)}.")
    body: Text = Field("", description="Markdown body; feedback/project carry **Why:** and **How to apply:** lines.")
    expected_version: str | None = Field(
        None,
        description="The `version` from the GET you edited (an If-Match): 409 when the file changed "
        "since, nothing written.",
    )
    scope: Scope = Field(
        "project",
        description="`project` (default): this project's memories; `global`: the user's own, in every project.",
    )
    only_new: bool = Field(
        False,
        description="Create only: 409 when the name is taken (in Claude Code's dialect, by a memory of any type), "
        "nothing written. `memoryd import` saves this way, so it never overwrites.",
    )
    applies_to: AppliesToIn | None = Field(
        None,
        description="The paths, commands and tools the memory applies to; omitted keeps the file's own, {} clears it.",
    )

    forbid: dict[str, Any] | None = Field(
        None,
        description="What the memory forbids, so the guard holds those acts (docs/guard.md): {commands, writes, "
        "reads, imports, instead, enforce}. Omitted: proposed from the text when it forbids something and the file "
        "has none; {} means none (and no proposal later).",
    )

    @field_validator("forbid")
    @classmethod
    def _forbid(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        try:
            parse_forbid(value)
        except InvalidRequest as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("applies_to")
    @classmethod
    def _applies_to(cls, value: AppliesToIn | None) -> AppliesToIn | None:
        if value is not None:
            try:
                parse_applies(value.model_dump())
            except InvalidRequest as exc:
                raise ValueError(exc.message) from None
        return value


class MemoryHeaderOut(ResponseModel):
    filename: str
    name: str
    description: str
    type: str
    mtime: float


class InvalidFileOut(ResponseModel):
    filename: str
    error: str = Field(description="Why the file could not be read as a memory, and the fix.")


class MemoryListOut(ResponseModel):
    memories: list[MemoryHeaderOut] = Field(description="Newest first (one page when `limit` is given).")
    total: int = Field(description="How many memories match, over all pages.")
    offset: int = Field(description="Where this page starts among the matches.")
    next_offset: int | None = Field(description="The next page's offset; null on the last page.")
    invalid: list[InvalidFileOut] = Field(description="Hand-edited files that do not parse; never overwritten.")


class MemoryOut(ResponseModel, MemoryFields):  # a memory file's fields, declared once in store/model.py
    version: str = Field(
        description="Send it back as `expected_version` to save only if nobody changed the file since."
    )
    applies_to: dict[str, list[str]] = Field(
        default_factory=dict, description="The paths, commands and tools written in the file ({} when none)."
    )
    forbid: dict[str, Any] = Field(
        default_factory=dict, description="What the memory forbids, as written in the file ({} when nothing)."
    )


class SavedMemoryOut(MemoryOut):
    path: str = Field(description="The file written.")
    reaches: str = Field(
        default="",
        description="The acts recall brings it to at tool time, written or derived from its text "
        '("edits under src/payments/, commands npm"), or "no act: add --path or --command".',
    )
    created: bool = Field(description="True for a new file (201), False for an update (200).")  # type: ignore[assignment]
    will_stop: str = Field("", description='What the guard now holds for it: "will stop: npm, npx — use pnpm".')
    forbid_proposed: bool = Field(
        False, description="True when `forbid` was proposed from the text by this save: review it (web view, file)."
    )


class IndexOut(ResponseModel):
    memory_dir: str
    content: str = Field(description="MEMORY.md as served (truncated, with the fix-it warning when over the caps).")
    truncated: bool
    lines: int
    bytes: int


class PromptOut(ResponseModel):
    text: str = Field(description="The memory section for a system prompt.")


# ---------------------------------------------------------------------- recall
class RecallRequest(RequestModel):
    cwd: Cwd
    query: Text = Field(description="The user's prompt.")
    session_id: SessionId
    source: Literal["rest", "mcp", "cli"] = Field(
        "rest",
        description="Which door asked (`mcp`: the MCP server, `cli`: `memoryd recall`); shown in the recall log.",
    )
    context: list[Annotated[str, Field(max_length=limits.RECALL_CONTEXT_ITEM_CHARS)]] = Field(
        default_factory=list,
        max_length=limits.RECALL_CONTEXT_ITEMS,
        description="What the session is working on, most recent last: file paths and shell commands "
        "(the Claude Code hook learns them from the transcript).",
    )


class RecalledMemoryOut(ResponseModel, RecalledFields):  # the fields declared once in recall/recalled.py
    origin: str | None = Field(None, description="`team` for a team memory (absent for the project's own).")
    author: str | None = Field(None, description="A team memory's last author (git history).")

    @classmethod
    def of_recalled(cls, memory: RecalledMemory) -> Self:
        """Spec §9's fields; a team memory adds `origin` and `author` (the project's own carry neither)."""
        team = memory.origin != "personal"
        return cls.of(memory, origin=memory.origin if team else None, author=memory.author if team else None)


class RecallOut(ResponseModel):
    memories: list[RecalledMemoryOut]
    injection: str = Field(description="The text to inject into the agent's context ('' when nothing is recalled).")
    method: str = Field(description="llm, local or skipped.")
    budget_used_bytes: int
    reason: str = Field(description="Why recall was skipped or the LLM not used.")
    scores: dict[str, float]

    @classmethod
    def of_result(cls, result: RecallResult) -> Self:
        """Spec §9's answer, plus `reason` and `scores` for people and the CLI."""
        return cls.of(result, memories=[RecalledMemoryOut.of_recalled(m) for m in result.memories])


class WhyOut(ResponseModel):
    filename: str
    name: str
    score: float
    injected: bool = Field(description="false: left out just under the cut.")
    terms: list[str] = Field(description="Words of the prompt the memory matched.")
    paths: list[str] = Field(description="Paths, identifiers or file kinds matched.")
    dense: float | None = Field(description="Cosine similarity with the prompt, when the embedding model is on.")
    context: list[str] = Field(description="Session-context items (recent files, commands) that contributed.")
    confidence: float | None = Field(
        None, description="The local confidence rule's estimate (0-1), when the embedding model is on."
    )
    rule: str = Field("", description='What injected it: "close match", "confident", "llm", or "" when left out.')
    cover: float | None = Field(
        None, description="The close-match rule: the share (0-1) of the prompt's word weight this memory holds."
    )
    cover_needed: float | None = Field(None, description="The share a close match needs.")
    confidence_min: float | None = Field(None, description="The confidence rule's floor, when it was weighed.")
    held: str = Field(
        "", description="The guard's decision (deny, ask, context) when this memory's forbid held the act."
    )


class RecallLogEntryOut(ResponseModel):
    id: int
    at: float = Field(description="Unix time of the recall.")
    memory_dir: str
    session_id: str
    source: str = Field(description="hook, rest, mcp or cli.")
    prompt: str = Field(description="The prompt, secrets redacted, cut to 300 characters.")
    method: str = Field(description="llm, local or skipped; `guard` for an act a memory's forbid held.")
    reason: str = Field(description="Why recall stayed silent, or why the LLM was not used; the guard's decision.")
    took_ms: float
    held: str = Field("", description="The guard's decision for a held act (deny, ask, context), else empty.")
    injected: list[WhyOut]
    left_out: list[WhyOut] = Field(description="Memories that just missed the cut.")
    lexical_only: bool = Field(
        False, description="Ranked without any vector: at tool time, or with the embedding model off or not loaded."
    )
    vectors_missing: int = Field(
        0, description="Memories found lexically only because their vectors were still owed (a read never waits)."
    )


class RecallLogOut(ResponseModel):
    entries: list[RecallLogEntryOut] = Field(description="Newest first.")


# ---------------------------------------------------------------------- extraction
class TurnEndRequest(BaseModel):
    """Our body, or Claude Code's Stop hook JSON as is (its other keys are ignored, not refused)."""

    model_config = ConfigDict(extra="ignore")

    session_id: SessionId
    transcript_path: TranscriptPath
    cwd: Cwd
    last_assistant_message: Text | None = Field(
        None, description="Claude Code's Stop hook field; may be newer than the transcript."
    )


class JobQueuedOut(ResponseModel):
    job_id: str


class RefusedCandidateOut(ResponseModel):
    name: str
    code: str
    reason: str


class JobOut(ResponseModel):
    job_id: str
    kind: str
    status: str = Field(description="queued, running, done, skipped or failed.")
    reason: str | None
    memories_written: list[str]
    refused: list[RefusedCandidateOut]
    session_id: str
    attempts: int
    created_at: float
    updated_at: float


# ---------------------------------------------------------------------- sessions, transcripts
class SessionMemoryOut(ResponseModel):
    session_id: str
    markdown: str


class GrepHitOut(ResponseModel):
    """One matching transcript line (transcripts/grep/search.py's GrepHit)."""

    session_id: str = Field(description="The Claude Code session (the transcript file's name when the line has none).")
    file: str = Field(description="The transcript file.")
    line: int = Field(description="The line's number in that file, from 1.")
    timestamp: str = Field(description="When the line was written, as the transcript says; empty when it does not.")
    role: str = Field(description="user, assistant, or the line's type when it is not a message.")
    snippet: str = Field(description="The text around the match, secrets redacted.")


class SearchOut(ResponseModel):
    """A transcript search's answer (transcripts/grep/search.py's GrepResult, with its count)."""

    pattern: str = Field(description="What was searched for, as given.")
    regex: bool = Field(description="Whether the pattern was read as a regex.")
    scope: str = Field(description="project or all.")
    results: list[GrepHitOut] = Field(description="The matching lines, newest transcript first.")
    truncated: bool = Field(description="Whether the search stopped before the end (see reason).")
    reason: str = Field(description="Why truncated: limit or deadline.")
    files_scanned: int = Field(description="Transcript files whose lines the results reflect.")
    bytes_scanned: int = Field(description="Their sizes, in bytes.")
    count: int = Field(description="How many results.")


# ---------------------------------------------------------------------- Claude Code hooks
class HookSpecificOutput(ResponseModel):
    hookEventName: str
    additionalContext: str | None = None
    permissionDecision: Literal["deny", "ask"] | None = Field(
        None, description="PreToolUse only: the guard holds the act a memory's `forbid:` names (docs/guard.md)."
    )
    permissionDecisionReason: str | None = Field(
        None, description="The rule, what to do instead, and how to change or drop it (read by the model on deny)."
    )


class HookOut(ResponseModel):
    """Claude Code's hook output: `{}`, context for SessionStart / UserPromptSubmit / PreToolUse / PreCompact, or
    PreToolUse's permission decision when the guard holds an act."""

    hookSpecificOutput: HookSpecificOutput | None = None


class ClaudeCodeHookInput(BaseModel):
    """Claude Code's hook input JSON as it sends it; other keys are kept. Bad values are not refused:
    the hook fails open (answers `{}`) so the agent is never stalled."""

    model_config = ConfigDict(extra="allow")

    hook_event_name: str = Field("", description="SessionStart, UserPromptSubmit, Stop, SubagentStop, PreCompact, ...")
    session_id: str | None = None
    cwd: str | None = None
    transcript_path: str | None = None
    prompt: str | None = Field(None, description="UserPromptSubmit: the user's prompt.")
    source: str | None = Field(None, description="SessionStart: startup, resume, clear or compact.")
    last_assistant_message: str | None = None
