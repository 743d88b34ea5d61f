"""Settings: embedded defaults → `$MEMORYD_HOME/config.toml` → environment variables.

Only the composition root (`memoryd.daemon`, the CLI) calls `load_settings`; every other
module receives the values it needs as arguments. `config.example.toml` documents every
key with its default, and a test keeps the two in step.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memoryd import limits
from memoryd.errors import ConfigError

CONFIG_FILENAME = "config.toml"
DEFAULT_HOME = "~/.memoryd"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerSettings(_Section):
    host: str = Field(limits.DEFAULT_HOST, description="Address to bind; keep 127.0.0.1 unless you know why.")
    port: int = Field(limits.DEFAULT_PORT, ge=0, le=65535, description="TCP port (0 picks a free one).")
    log_level: str = Field("info", description="debug, info, warning or error.")


class MemorySettings(_Section):
    memory_dir: str = Field("", description="Fixed memory dir for every project (trusted config only). Empty: per-project default.")
    memory_base: str = Field("auto", description="Base of the layout <base>/projects/<project>/memory. 'auto': Claude Code's own memory dir when ~/.claude exists (its trusted autoMemoryDirectory honoured), else $MEMORYD_HOME. Empty: $MEMORYD_HOME.")
    mode: Literal["topics", "daily-log"] = Field("topics", description="'topics' writes topic files; 'daily-log' appends to logs/YYYY/MM/YYYY-MM-DD.md.")
    watch: bool = Field(True, description="Watch memory dirs for hand edits and re-index.")


class LLMSettings(_Section):
    enabled: bool = Field(True, description="Use the LLM when ANTHROPIC_API_KEY is set (MEMORYD_LLM=off forces offline).")
    model: str = Field("claude-sonnet-4-5", description="Model for side-queries, extraction and consolidation.")
    base_url: str = Field("", description="Messages API base URL. Empty: the SDK default or ANTHROPIC_BASE_URL.")
    timeout_seconds: float = Field(60.0, gt=0, description="Timeout of background LLM calls (extraction, dream).")
    daily_token_cap: int = Field(2_000_000, ge=0, description="Input+output tokens per day; background work stops at the cap. 0: no cap.")


class RecallSettings(_Section):
    deadline_seconds: float = Field(limits.RECALL_DEADLINE_SECONDS, gt=0, description="After this, the local ranking is served instead of the LLM's.")
    max_memories: int = Field(limits.RECALL_MAX_MEMORIES, ge=1, le=limits.RECALL_MAX_MEMORIES, description="Memories returned per recall.")
    session_budget_bytes: int = Field(limits.RECALL_SESSION_BUDGET_BYTES, ge=0, description="Bytes of memories surfaced per session before recall stops.")
    side_query_candidates: int = Field(limits.RECALL_SIDE_QUERY_CANDIDATES, ge=1, description="Above this many memories, the local ranker pre-selects this many for the LLM.")


class TranscriptSettings(_Section):
    roots: list[str] = Field(default_factory=lambda: ["~/.claude/projects"], description="Folders of agent transcripts to watch (recursively).")
    watch: bool = Field(True, description="Watch transcript roots with watchdog and catch up on start.")
    ripgrep: str = Field("auto", description="rg binary for transcript searches: 'auto' (the one installed with memoryd, else rg on PATH), 'off' (built-in scanner), or a path.")


class ExtractSettings(_Section):
    enabled: bool = Field(True, description="Extract memories at turn end.")
    every_n_turns: int = Field(limits.EXTRACT_EVERY_N_TURNS, ge=1, description="Run extraction every N turns of a session.")


class SessionMemorySettings(_Section):
    enabled: bool = Field(True, description="Keep rolling per-session notes.")
    init_tokens: int = Field(limits.SESSION_MEMORY_INIT_TOKENS, ge=0, description="First notes once the session passes this many tokens.")
    update_tokens: int = Field(limits.SESSION_MEMORY_UPDATE_TOKENS, ge=0, description="Update after this many new tokens (and 3 tool calls or a natural break).")
    tool_calls: int = Field(limits.SESSION_MEMORY_TOOL_CALLS, ge=0, description="Tool calls since the last update that allow an update.")


class DreamSettings(_Section):
    enabled: bool = Field(True, description="Run Auto-Dream consolidation on a schedule.")
    min_hours: float = Field(limits.DREAM_MIN_HOURS, ge=0, description="Gate 1: hours since the last consolidation.")
    scan_interval_seconds: float = Field(limits.DREAM_SCAN_INTERVAL_SECONDS, ge=0, description="Gate 2: seconds between session scans.")
    min_sessions: int = Field(limits.DREAM_MIN_SESSIONS, ge=0, description="Gate 3: sessions touched since the last consolidation.")
    lock_stale_seconds: float = Field(limits.DREAM_LOCK_STALE_SECONDS, gt=0, description="Gate 4: a lock older than this is stale.")
    check_interval_seconds: float = Field(limits.DREAM_CHECK_INTERVAL_SECONDS, gt=0, description="How often the scheduler checks the gates.")


class Settings(_Section):
    """Everything memoryd reads from its config; `home` and secrets come from the environment."""

    server: ServerSettings = Field(default_factory=ServerSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    transcripts: TranscriptSettings = Field(default_factory=TranscriptSettings)
    extract: ExtractSettings = Field(default_factory=ExtractSettings)
    session_memory: SessionMemorySettings = Field(default_factory=SessionMemorySettings)
    dream: DreamSettings = Field(default_factory=DreamSettings)
    # Per-project overrides, keyed by the project root path: {"/home/me/app": {"mode": "daily-log"}}.
    projects: dict[str, dict[str, str]] = Field(default_factory=dict)

    # Not read from the file: filled from the environment by `load_settings`.
    home: Path = Field(default_factory=lambda: Path(DEFAULT_HOME).expanduser(), exclude=True)
    token_override: str = Field("", exclude=True, repr=False)
    memory_dir_override: str = Field("", exclude=True)
    anthropic_api_key: str = Field("", exclude=True, repr=False)
    anthropic_base_url: str = Field("", exclude=True)
    llm_forced_off: bool = Field(False, exclude=True)

    @property
    def llm_mode(self) -> Literal["llm", "offline"]:
        """`llm` when a key is set and nothing turns the LLM off."""
        if self.anthropic_api_key and self.llm.enabled and not self.llm_forced_off:
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


def _set(data: dict[str, Any], section: str, key: str, value: Any) -> None:
    data.setdefault(section, {})[key] = value


def load_settings(env: Mapping[str, str] | None = None, *, home: Path | None = None) -> Settings:
    """Build Settings from the defaults, the user's config file, then the environment."""
    env = os.environ if env is None else env
    home = home or Path(env.get("MEMORYD_HOME") or DEFAULT_HOME).expanduser()
    path = home / CONFIG_FILENAME
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or move it aside to use the defaults.") from exc
    if env.get("MEMORYD_HOST"):
        _set(data, "server", "host", env["MEMORYD_HOST"])
    if env.get("MEMORYD_PORT"):
        try:
            _set(data, "server", "port", int(env["MEMORYD_PORT"]))
        except ValueError as exc:
            raise ConfigError(f"MEMORYD_PORT={env['MEMORYD_PORT']!r} is not a port number; set it to e.g. 7377.") from exc
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid setting in {path} or the environment ({problems}); see config.example.toml.") from exc
    settings.home = home
    settings.token_override = env.get("MEMORYD_TOKEN", "")
    settings.memory_dir_override = env.get("MEMORYD_MEMORY_DIR", "")
    settings.anthropic_api_key = env.get("ANTHROPIC_API_KEY", "")
    settings.anthropic_base_url = env.get("ANTHROPIC_BASE_URL", "")
    settings.llm_forced_off = env.get("MEMORYD_LLM", "").strip().lower() in {"off", "0", "false", "no"}
    return settings
