"""The real Claude Code CLI for end-to-end tests: installed once from npm into the test cache, and
run headless against a scripted Messages API (tests/support/messages_api.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

from tests.support.cache import TEST_CACHE

CLAUDE_CODE_VERSION = "2.1.330"  # the version the integration doc verified
CACHE = TEST_CACHE / f"claude-code-{CLAUDE_CODE_VERSION}"


def claude_binary() -> Path:
    """The CLI's path, installing it on first use; skips the test when node or npm is missing."""
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to install the Claude Code CLI (apt-get install nodejs npm)")
    binary = CACHE / "node_modules" / ".bin" / "claude"
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE) + ".lock"):  # pytest-xdist workers: one installs, the others wait for it
        if not binary.exists():
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(CACHE),
                    "--no-audit",
                    "--no-fund",
                    f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}",
                ],
                check=True,
                capture_output=True,
                timeout=600,
            )
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert CLAUDE_CODE_VERSION in version.stdout, version.stdout + version.stderr
    return binary


def headless_env(user_home: Path, memoryd_home: Path, api_url: str, path_first: Path | None = None) -> dict[str, str]:
    """The environment of a headless `claude -p` in a fresh HOME, talking to the scripted API only."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
    if path_first is not None:
        base["PATH"] = f"{path_first}{os.pathsep}{base.get('PATH', '')}"
    return {
        **base,
        "HOME": str(user_home),
        "MEMORYD_HOME": str(memoryd_home),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def run_headless(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`claude <args>` headless in `cwd`: no stdin, output captured, at most three minutes."""
    return subprocess.run(
        [str(claude_binary()), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
