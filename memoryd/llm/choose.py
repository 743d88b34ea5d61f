"""Which backend `[llm] backend` (and MEMORYD_LLM) asks for, built; `auto` settles here:
an API key → anthropic, else a signed-in `claude` on PATH → claude-cli, else offline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memoryd.base import limits
from memoryd.llm.backend import Backend
from memoryd.llm.claude_cli import ClaudeCLIBackend, find_claude

if TYPE_CHECKING:
    from memoryd.config import Settings

LLM_WORKDIR = "llm-cwd"  # empty folder under $MEMORYD_HOME the CLI runs in: no project settings, no CLAUDE.md


def _sdk(settings: Settings, name: str, api_key: str) -> Backend:
    from memoryd.llm.sdk import MessagesBackend

    return MessagesBackend(
        name=name,
        model=settings.llm.model,
        api_key=api_key,
        base_url=settings.llm_base_url,
        timeout=settings.llm.timeout_seconds,
    )


def _cli(settings: Settings, binary: str) -> ClaudeCLIBackend:
    return ClaudeCLIBackend(
        binary=binary,
        model=settings.llm.claude_model,
        workdir=settings.home / LLM_WORKDIR,
        max_queue=limits.LLM_CLI_MAX_QUEUE,
    )


def choose_backend(settings: Settings) -> tuple[Backend | None, str]:
    """(backend, "") or (None, why memoryd runs offline and how to change that)."""
    wanted = settings.llm_backend
    key = settings.anthropic_api_key
    if wanted == "off":
        return None, 'the LLM is off ([llm] backend = "off", enabled = false or MEMORYD_LLM=off)'
    if wanted == "anthropic":
        return (
            (_sdk(settings, "anthropic", key), "")
            if key
            else (None, '[llm] backend = "anthropic" needs ANTHROPIC_API_KEY')
        )
    if wanted == "messages-api":
        if not settings.llm_base_url:
            return None, '[llm] backend = "messages-api" needs [llm] base_url (e.g. http://127.0.0.1:11434 for Ollama)'
        return _sdk(settings, "messages-api", settings.llm.api_key or key), ""
    binary = find_claude(settings.llm.claude_path)
    if wanted == "claude-cli":
        if binary is None:
            return (
                None,
                f'[llm] backend = "claude-cli" but {settings.llm.claude_path!r} is not an executable on PATH: install '
                "Claude Code or set [llm] claude_path",
            )
        cli = _cli(settings, binary)
        cli.signed_in()  # for status and doctor; the calls themselves say when the login is missing
        return cli, ""
    if key:
        return _sdk(settings, "anthropic", key), ""
    if binary is not None:
        cli = _cli(settings, binary)
        if cli.signed_in():
            return cli, ""
        return None, f"offline: no ANTHROPIC_API_KEY, and {binary} is not signed in (run `claude` and /login)"
    return (
        None,
        "offline: no ANTHROPIC_API_KEY and no `claude` on PATH (docs/configuration.md: Use your Claude Code login)",
    )
