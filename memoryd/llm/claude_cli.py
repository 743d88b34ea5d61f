"""`claude-cli`: the user's own `claude` (Claude Code) in headless print mode, so a
subscription login reaches the model without an API key.

Every call is sealed off from the user's Claude Code (checked against the real CLI 2.1.330):
no tools (`--tools ""`), memoryd's system prompt (`--system-prompt`), no hooks at all
(`disableAllHooks` through `--settings`, so neither memoryd's hooks nor the user's fire), no
transcript under ~/.claude/projects (`--no-session-persistence`, so nothing is ingested or
counted as a session), no CLAUDE.md and no auto memory (CLAUDE_CODE_DISABLE_CLAUDE_MDS,
CLAUDE_CODE_DISABLE_AUTO_MEMORY), no MCP servers (`--strict-mcp-config`), run from an empty
folder under $MEMORYD_HOME. `--bare` is not used: it ignores the OAuth login this backend is for.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from memoryd.llm.backend import Answer, BackendError, Call, is_transient_status, prompt_text

SEALED_SETTINGS = json.dumps({"disableAllHooks": True, "autoMemoryEnabled": False})
SEALED_ENV = {
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",  # memoryd's one retry policy decides; recall must never wait on the CLI's
    "DISABLE_TELEMETRY": "1",
}
AUTH_PROBE_TIMEOUT_SECONDS = 20.0
CLI_MAX_TURNS = 4  # an answer takes 1-2 turns; a model that keeps missing the schema must not loop on the user's plan


def find_claude(setting: str) -> str | None:
    """The `claude` executable: a path from [llm] claude_path, or the name looked up on PATH."""
    if os.sep in setting:
        path = Path(setting).expanduser()
        return str(path) if path.is_file() and os.access(path, os.X_OK) else None
    return shutil.which(setting)


class ClaudeCLIBackend:
    """One `claude -p` per call, one at a time; at most `max_queue` calls wait for their turn."""

    name = "claude-cli"

    def __init__(
        self, *, binary: str, model: str, workdir: Path, max_queue: int, env: dict[str, str] | None = None
    ) -> None:
        self.binary = binary
        self.model = model
        self.workdir = workdir
        self.max_queue = max_queue
        self._base_env = dict(os.environ if env is None else env)
        self._turn = threading.Lock()
        self._waiting = 0
        self._count_lock = threading.Lock()
        self._signed_in: bool | None = None
        self._auth_method = ""

    def env(self) -> dict[str, str]:
        return {**self._base_env, **SEALED_ENV}

    def command(self, call: Call) -> list[str]:
        args = [
            self.binary,
            "-p",
            "--output-format",
            "json",
            "--model",
            self.model,
            "--system-prompt",
            call.system,
            "--tools",
            "",
            "--max-turns",
            str(CLI_MAX_TURNS),
            "--no-session-persistence",
            "--strict-mcp-config",
            "--disable-slash-commands",
            "--settings",
            SEALED_SETTINGS,
        ]
        if call.tool is not None:
            args += ["--json-schema", json.dumps(call.tool["input_schema"])]
        return args

    def signed_in(self, *, refresh: bool = False) -> bool:
        """`claude auth status` says loggedIn (OAuth, API key or apiKeyHelper)."""
        if self._signed_in is None or refresh:
            self.workdir.mkdir(parents=True, exist_ok=True)
            try:
                done = subprocess.run(
                    [self.binary, "auth", "status"],
                    cwd=self.workdir,
                    env=self.env(),
                    capture_output=True,
                    text=True,
                    timeout=AUTH_PROBE_TIMEOUT_SECONDS,
                    stdin=subprocess.DEVNULL,
                )
                status = json.loads(done.stdout or "{}")
            except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
                status = {}
            self._signed_in = bool(status.get("loggedIn"))
            self._auth_method = str(status.get("authMethod") or "")
        return self._signed_in

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "binary": self.binary,
            "signed_in": self._signed_in,
            "auth_method": self._auth_method or None,
            "queued": self._waiting,
        }

    def call(self, call: Call) -> Answer:
        with self._count_lock:
            if self._waiting >= self.max_queue:
                raise BackendError(
                    f"{self._waiting} claude-cli calls already wait; {call.purpose} was not queued", transient=True
                )
            self._waiting += 1
        try:
            if not self._turn.acquire(timeout=call.timeout):
                raise BackendError(f"claude-cli was busy for {call.timeout:g} s; {call.purpose} did not get its turn")
        finally:
            with self._count_lock:
                self._waiting -= 1
        try:
            return self._run(call)
        finally:
            self._turn.release()

    def _run(self, call: Call) -> Answer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = {**self.env(), "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(call.max_tokens)}
        try:
            proc = subprocess.Popen(
                self.command(call),
                cwd=self.workdir,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
        except OSError as exc:
            raise BackendError(
                f'could not start {self.binary} ({exc.strerror}): set [llm] claude_path, or [llm] backend = "off"'
            ) from exc
        try:
            out, err = proc.communicate(prompt_text(call.messages), timeout=call.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise BackendError(f"claude-cli did not answer {call.purpose} within {call.timeout:g} s") from None
        try:
            result = json.loads(out)
        except json.JSONDecodeError:
            first = (err or out).strip().splitlines()[:1]
            raise BackendError(
                f"claude-cli exited {proc.returncode} without a JSON result "
                f"({first[0][:200] if first else 'no output'})"
            ) from None
        usage = result.get("usage") or {}
        tokens_in = sum(
            int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        tokens_out = int(usage.get("output_tokens") or 0)
        if result.get("is_error") or proc.returncode != 0:
            status = result.get("api_error_status")
            detail = str(result.get("result") or result.get("subtype") or "")[:200]
            if isinstance(status, int):
                raise BackendError(
                    f"claude-cli's model call answered HTTP {status} for {call.purpose}",
                    transient=is_transient_status(status),
                    input_tokens=tokens_in,
                    output_tokens=tokens_out,
                )
            if "login" in detail.lower() or "api key" in detail.lower():
                raise BackendError(
                    f'claude-cli is not signed in ({detail}): run `claude` once and /login, or [llm] backend = "off"'
                )
            raise BackendError(
                f"claude-cli failed {call.purpose}: {detail or 'exit ' + str(proc.returncode)}",
                input_tokens=tokens_in,
                output_tokens=tokens_out,
            )
        data = result.get("structured_output")
        return Answer(
            text=str(result.get("result") or ""),
            data=data if isinstance(data, dict) else None,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            model=next(iter(result.get("modelUsage") or {}), self.model),
        )
