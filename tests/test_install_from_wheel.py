"""The issue's "done when", end to end: from a wheel built from this checkout, in a fresh HOME,
`uv tool install`, a memory saved before ~/.claude exists, `memoryd setup` (the real Claude Code
CLI installs the plugin the wheel carries), a headless session reaches memoryd through the
plugin, the memory is still listed, and doctor exits 0."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cache import TEST_CACHE
from tests.support.claude_cli import claude_binary
from tests.support.messages_api import ScriptedMessagesAPI

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
DAEMON_START_SECONDS = 60


def test_wheel_uv_tool_install_setup_plugin_session_doctor(tmp_path: Path) -> None:
    claude = claude_binary()
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is needed: pip install uv (the [test] extra has it)")
    user_home, project, bin_dir = tmp_path / "user", tmp_path / "work" / "shop", tmp_path / "bin"
    (project / ".git").mkdir(parents=True)
    user_home.mkdir()
    # A fresh HOME, `memoryd` only where `uv tool install` puts it, `claude` on PATH, no user service manager
    # reachable (so setup never touches the machine's real one), the embedding model off (not what is tested here).
    path = os.pathsep.join([str(bin_dir), str(claude.parent), "/usr/local/bin", "/usr/bin", "/bin"])
    drop = (
        "MEMORYD_",
        "ANTHROPIC_",
        "CLAUDE",
        "VIRTUAL_ENV",
        "UV_",
        "XDG_RUNTIME_DIR",
        "DBUS_SESSION_BUS_ADDRESS",
        "PYTHON",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)} | {
        "HOME": str(user_home),
        "PATH": path,
        "MEMORYD_RECALL_DENSE": "off",
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_CACHE_DIR": str(TEST_CACHE / "uv"),
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args), cwd=project, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )

    t = time.monotonic()
    built = run(uv, "build", "--wheel", "-q", "-o", str(tmp_path / "dist"), str(ROOT))
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("memoryd-*.whl")
    installed = run(uv, "tool", "install", "-q", str(wheel), timeout=600)
    assert installed.returncode == 0, installed.stderr
    install_seconds = time.monotonic() - t
    memoryd = str(bin_dir / "memoryd")
    assert run(memoryd, "--version").stdout.startswith("memoryd ")

    # The daemon starts before Claude Code is on PATH (asking `claude` about its login would create ~/.claude).
    no_claude = env | {"PATH": path.replace(str(claude.parent) + os.pathsep, "")}
    daemon = subprocess.Popen(
        [memoryd, "serve", "--port", "0"],
        cwd=project,
        env=no_claude,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        home = user_home / ".memoryd"
        deadline = time.monotonic() + DAEMON_START_SECONDS
        while run(memoryd, "status").returncode != 0:
            assert daemon.poll() is None, daemon.stderr.read() if daemon.stderr else ""
            assert time.monotonic() < deadline, "the installed daemon did not start"
            time.sleep(0.2)
        saved = run(
            memoryd, "save", "-t", "project", "-n", "pnpm", "-d", "use pnpm, never npm: the lockfile is pnpm-lock.yaml"
        )
        assert saved.returncode == 0 and not (user_home / ".claude").exists(), saved.stderr

        setup = run(memoryd, "setup", *(["--no-service"] if platform.system() == "Darwin" else []), "--json")
        assert setup.returncode == 0, setup.stdout + setup.stderr
        steps = {s["step"]: s for s in json.loads(setup.stdout)["steps"]}
        assert steps["claude code"]["action"] == "done" and "memoryd@memoryd" in steps["claude code"]["detail"], steps
        assert (
            steps["import"]["command"].startswith("memoryd import --from ") and str(home) in steps["import"]["command"]
        )
        again = json.loads(run(memoryd, "setup", "--dry-run", "--json").stdout)["steps"]
        assert {s["step"]: s["action"] for s in again}["claude code"] == "already"  # idempotent

        listed = json.loads(run(memoryd, "list", "--json").stdout)["memories"]
        assert [m["name"] for m in listed] == ["pnpm"], listed  # nothing moved when ~/.claude appeared

        with ScriptedMessagesAPI() as api:
            api.default.text = "Understood."
            env |= {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test-dummy-key"}
            session = run(str(claude), "-p", "Which package manager should I use?")
            env = {k: v for k, v in env.items() if not k.startswith("ANTHROPIC_")}
            assert session.returncode == 0, session.stderr
            assert any("pnpm-lock.yaml" in text for text in api.texts_sent()), (
                "memoryd's memory did not reach the model through the plugin"
            )

        doctor = run(memoryd, "doctor", "--json")
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 0 and report["ok"], [c for c in report["checks"] if not c["ok"]]
        names = {c["name"]: c for c in report["checks"]}
        assert "memoryd@memoryd enabled" in names["claude-code plugin"]["detail"] and names["import"]["ok"]
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    print(f"wheel built and installed with uv tool install in {install_seconds:.1f} s")
