"""An install's life (issue 51): the version it reports everywhere, `memoryd setup` again after an upgrade,
`memoryd uninstall` leaving nothing but the memories, doctor on hooks whose program is gone, and the plain words
of the commands around them. Real subprocesses in a fresh HOME; no user service manager is ever touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from memoryd.cli.output import EXIT_CODES
from memoryd.cli.schemas import schema_for
from memoryd.integrations.claude_code import hook_command, hooks_block
from memoryd.recall.dense import VECTORS_FILENAME
from memoryd.recall.derived_cache import DERIVED_FILENAME
from tests.support.servers import DaemonProcess, free_socket, loopback_request

# Setup, upgrade and uninstall as a user runs them (the real CLI, a background daemon, git clones):
# end-to-end, so CI runs them after the fast suite.
pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
VERSION = re.compile(r"^\d+\.\d+\.\d+(\+g[0-9a-f]{7,})?$")
FAILING_SYSTEMCTL = "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n"


def free_port() -> int:
    with free_socket() as sock:
        return int(sock.getsockname()[1])


def machine(tmp_path: Path, *, systemctl: str = FAILING_SYSTEMCTL) -> dict[str, str]:
    """A fresh HOME and MEMORYD_HOME, no `claude` on PATH, and a `systemctl` that answers as a container's does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "systemctl").write_text(systemctl, encoding="utf-8")
    (bin_dir / "systemctl").chmod(0o755)
    (tmp_path / "user").mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORYD_", "CLAUDE", "XDG_RUNTIME_DIR", "DBUS_SESSION"))
    }
    return env | {
        "HOME": str(tmp_path / "user"),
        "MEMORYD_HOME": str(tmp_path / "memoryd-home"),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "MEMORYD_PORT": str(free_port()),
        "MEMORYD_RECALL_DENSE": "off",
    }


def memoryd(env: dict[str, str], cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def json_of(run: subprocess.CompletedProcess[str], command: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.stdout)
    jsonschema.validate(data, schema_for(command, EXIT_CODES))
    return data


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under `roots` with its bytes, aside from what a running daemon writes on its own: its logs,
    its state database and its derived-recall and vector caches (filled in the background after a save)."""
    daemon_writes = ("state.db", DERIVED_FILENAME, VECTORS_FILENAME)
    return {
        str(p): p.read_bytes()
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and "logs" not in p.parts and not p.name.startswith(daemon_writes)
    }


# ------------------------------------------------------------------ version
def test_the_version_is_the_release_and_the_commit_everywhere(daemon_process: DaemonProcess) -> None:
    """#51: every install said 0.1.0. Now --version, status, /v1/health and the web view say one version: the
    package's release and, from a clone, the commit (0.5.0+g<sha>)."""
    daemon_process.start()
    cli = memoryd(daemon_process.env, ROOT, "--version")
    version = cli.stdout.strip().removeprefix("memoryd ")
    assert cli.returncode == 0 and VERSION.match(version), cli.stdout
    assert not version.startswith("0.1.0")
    if (ROOT / ".git").exists():
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=9", "HEAD"], capture_output=True, text=True)
        assert f"+g{sha.stdout.strip()}" in version
    status = json_of(memoryd(daemon_process.env, ROOT, "status", "--json"), "status")
    health = loopback_request("GET", daemon_process.url + "/v1/health").json()
    assert status["version"] == health["version"] == version
    assert f"memoryd {version}" in memoryd(daemon_process.env, ROOT, "status").stdout
    ui = memoryd(daemon_process.env, ROOT, "ui", "--print-url")
    url = ui.stdout.strip()
    assert url.startswith("http"), ui.stderr
    with httpx.Client(follow_redirects=True, timeout=10) as browser:
        assert f"memoryd {version}" in browser.get(url).text  # the web view's footer
    log = (daemon_process.home / "logs" / "memoryd.log").read_text(encoding="utf-8")
    assert "memoryd.server: Started server process" in log and "uvicorn.error" not in log  # #51 item 7


# ------------------------------------------------------------------ upgrade
def test_setup_restarts_a_daemon_of_another_version(tmp_path: Path, project: Path) -> None:
    """#51: `uv tool install --force .` replaced the files under a running daemon, and nothing said so. A daemon
    from another build (a clone one commit apart, a real second install) is flagged by doctor and restarted by
    setup."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a clone of memoryd")
    clone = tmp_path / "other-build"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True, timeout=120)
    ident = ["-c", "user.name=memoryd tests", "-c", "user.email=tests@memoryd.invalid"]
    subprocess.run(
        ["git", "-C", str(clone), *ident, "commit", "-q", "--allow-empty", "-m", "another build"], check=True
    )
    env = machine(tmp_path)
    home = Path(env["MEMORYD_HOME"])
    older = subprocess.Popen(  # the other build's code first on the path: what a daemon started before an upgrade runs
        [sys.executable, "-m", "memoryd", "serve"],
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(clone)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (home / "daemon.json").exists() or json.loads((home / "daemon.json").read_text())["pid"] != older.pid:
            assert older.poll() is None and time.monotonic() < deadline, "the other build's daemon did not start"
            time.sleep(0.1)
        theirs = json.loads((home / "daemon.json").read_text())["version"]
        ours = memoryd(env, project, "--version").stdout.strip().removeprefix("memoryd ")
        assert theirs != ours and VERSION.match(theirs), (theirs, ours)

        doctor = json_of(memoryd(env, project, "doctor", "--json"), "doctor")
        [version] = [c for c in doctor["checks"] if c["name"] == "version"]
        assert not version["ok"] and theirs in version["detail"] and "memoryd setup" in version["fix"], version

        run = memoryd(env, project, "setup", "--no-claude-code", "--json")
        steps = {s["step"]: s for s in json_of(run, "setup")["steps"]}
        assert steps["restart"]["action"] == "done" and theirs in steps["restart"]["detail"], steps
        assert older.wait(timeout=30) is not None
        now = json.loads((home / "daemon.json").read_text())
        assert now["pid"] != older.pid and now["version"] == ours
        again = json_of(memoryd(env, project, "setup", "--no-claude-code", "--dry-run", "--json"), "setup")
        assert "restart" not in {s["step"] for s in again["steps"]}  # the same version: left running
    finally:
        memoryd(env, project, "stop")
        if older.poll() is None:
            older.kill()


# ------------------------------------------------------------------ uninstall
def test_setup_then_uninstall_leaves_only_the_memories(tmp_path: Path, project: Path) -> None:
    """#51: `memoryd uninstall` did not exist, and `uninstall-service` left the daemon setup started running."""
    env = machine(tmp_path)
    home, user = Path(env["MEMORYD_HOME"]), Path(env["HOME"])
    settings = user / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    theirs = {
        "theme": "dark",
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}]},
    }
    settings.write_text(json.dumps(theirs), encoding="utf-8")
    pid = None
    try:
        setup = memoryd(env, project, "setup")
        assert "started the daemon in the background" in setup.stdout and "Failed to connect to bus" not in setup.stdout
        pid = json.loads((home / "daemon.json").read_text())["pid"]
        assert "hook claude-code" in settings.read_text()
        saved = memoryd(env, project, "save", "-t", "feedback", "-n", "Package manager", "-d", "Use pnpm", "--json")
        mine = Path(json.loads(saved.stdout)["path"])
        memoryd(env, project, "save", "--global", "-t", "user", "-n", "Short answers", "-d", "Keep it short")

        before = snapshot(user, home)
        dry = json_of(memoryd(env, project, "uninstall", "--dry-run", "--json"), "uninstall")
        actions = {s["step"]: s["action"] for s in dry["steps"]}
        assert actions == {"claude code": "would", "service": "already", "daemon": "would", "home": "skipped"}, dry
        assert snapshot(user, home) == before and alive(pid)  # a dry run changes nothing

        gone = memoryd(env, project, "uninstall")
        assert gone.returncode == 0, gone.stdout + gone.stderr
        assert not alive(pid) and not (home / "daemon.json").exists()
        left = json.loads(settings.read_text())
        assert left == theirs  # memoryd's hooks gone, the user's own kept
        assert json.loads(settings.with_name("settings.json.memoryd-backup").read_text()) == theirs
        assert mine.is_file() and f"kept     memories: 1 in {mine.parent}" in gone.stdout, gone.stdout
        assert "to remove the memoryd package itself:" in gone.stdout and "uninstall memoryd" in gone.stdout
        assert not (user / ".config").exists()  # no unit was ever written here
        assert "no memoryd plugin, hooks" in memoryd(env, project, "uninstall", "--dry-run").stdout

        purge = json_of(memoryd(env, project, "uninstall", "--purge", "--json"), "uninstall")
        assert not home.exists() and mine.is_file()  # Claude Code's memory dir is the user's, never purged
        assert {p["path"]: p["in_home"] for p in purge["memories"]} == {
            str(mine.parent): False,
            str(home / "global"): True,
        }
    finally:
        if pid is not None and alive(pid):
            os.kill(pid, 9)


def test_uninstall_disables_and_removes_the_service(tmp_path: Path, project: Path) -> None:
    """Where a user service manager answers, setup writes and enables the unit; uninstall disables and removes it."""
    calls = tmp_path / "systemctl-calls"
    env = machine(tmp_path, systemctl=f'#!/bin/sh\necho "$@" >> {calls}\nexit 0\n')
    unit = Path(env["HOME"]) / ".config" / "systemd" / "user" / "memoryd.service"
    memoryd(env, project, "setup", "--no-claude-code")
    assert unit.is_file() and "--user enable --now memoryd.service" in calls.read_text()
    dry = json_of(memoryd(env, project, "uninstall", "--dry-run", "--json"), "uninstall")
    assert {s["step"]: s["action"] for s in dry["steps"]}["service"] == "would" and unit.is_file()
    run = memoryd(env, project, "uninstall")
    assert run.returncode == 0 and not unit.exists(), run.stdout + run.stderr
    assert "--user disable --now memoryd.service" in calls.read_text()


# ------------------------------------------------------------------ doctor
def test_doctor_fails_hooks_whose_program_is_gone(tmp_path: Path, project: Path) -> None:
    """#51 item 4: hooks naming a removed venv's memoryd were "ok" (and listed twice); Claude Code would fail to
    run them at every prompt. Now the check fails once, names the file and the command, and gives the fix."""
    env = machine(tmp_path)
    settings = Path(env["HOME"]) / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    gone = str(tmp_path / "removed-venv" / "bin" / "memoryd")
    settings.write_text(json.dumps(hooks_block(hook_command(Path(env["MEMORYD_HOME"]), gone))), encoding="utf-8")
    report = json_of(memoryd(env, project, "doctor", "--json"), "doctor")
    hooks = [c for c in report["checks"] if c["name"] == "claude-code hooks (user)"]
    assert len(hooks) == 1, hooks
    [check] = hooks
    assert not check["ok"] and str(settings) in check["detail"] and gone in check["detail"], check
    assert "memoryd hooks --install" in check["fix"] and "memoryd uninstall" in check["fix"]

    assert memoryd(env, project, "hooks", "--install").returncode == 0  # the fix it names
    report = json_of(memoryd(env, project, "doctor", "--json"), "doctor")
    [check] = [c for c in report["checks"] if c["name"] == "claude-code hooks (user)"]
    assert check["ok"], check


# ------------------------------------------------------------------ plain words (#51 item 7)
def test_a_mistyped_required_flag_gets_a_did_you_mean(tmp_path: Path, project: Path) -> None:
    run = memoryd(machine(tmp_path), project, "save", "--tpye", "feedback", "-n", "x", "-d", "y")
    assert run.returncode == 2 and "did you mean --type (not --tpye)?" in run.stderr, run.stderr


def test_config_shows_what_memoryd_llm_rules(tmp_path: Path, project: Path) -> None:
    run = memoryd(machine(tmp_path) | {"MEMORYD_LLM": "off"}, project, "config", "--json")
    rows = {r["setting"]: r for r in json_of(run, "config")["settings"]}
    assert rows["llm.enabled"]["value"] is False and rows["llm.enabled"]["source"].startswith("env MEMORYD_LLM=off")
    assert rows["llm.backend"]["value"] == "off"


def test_a_down_daemon_names_a_start_command_that_works_here(tmp_path: Path, project: Path) -> None:
    """Without a user service manager, `install-service` refuses: the way to start it is `memoryd setup`."""
    run = memoryd(machine(tmp_path), project, "status")
    assert run.returncode == 3 and "memoryd setup" in run.stderr and "install-service" not in run.stderr, run.stderr


def test_recall_and_doctor_speak_plainly(daemon_process: DaemonProcess, project: Path) -> None:
    """No "BM25F", no "session budget used: 0 bytes", no "score 0.00" for a memory a rule gave at a tool call."""
    daemon_process.start()
    env = daemon_process.env
    saved = memoryd(
        env, project, "save", "-t", "feedback", "-n", "pnpm", "-d", "installs go through pnpm", "--command", "npm"
    )
    assert saved.returncode == 0, saved.stderr
    recall = memoryd(env, project, "recall", "how do we deploy to staging")
    assert recall.returncode == 0 and "session budget" not in recall.stdout and "0 bytes" not in recall.stdout
    doctor = json_of(memoryd(env, project, "doctor", "--json"), "doctor")
    [ranker] = [c for c in doctor["checks"] if c["name"] == "recall"]
    assert "word match" in ranker["detail"] and "BM25" not in ranker["detail"], ranker
    event = {
        "hook_event_name": "PreToolUse",
        "session_id": "s-tool",
        "cwd": str(project),
        "transcript_path": str(project / "t.jsonl"),
        "tool_name": "Bash",
        "tool_input": {"command": "npm install lodash"},
    }
    hook = subprocess.run(
        [sys.executable, "-m", "memoryd", "hook", "claude-code"],
        input=json.dumps(event),
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "pnpm" in hook.stdout, hook.stdout + hook.stderr
    with daemon_process.client() as c:
        entries = c.get("/v1/recall/log", params={"session_id": "s-tool"}).json()["entries"]
    [given] = entries[0]["injected"]
    assert given["score"] == 0  # given by its rule, never ranked: nothing to show as a score
    url = memoryd(env, project, "ui", "--print-url").stdout.strip()
    with httpx.Client(follow_redirects=True, timeout=10) as browser:
        browser.get(url)
        pages = [browser.get(f"{daemon_process.url}{link}").text for link in _memory_links(browser, daemon_process.url)]
    assert pages and all("score 0.00" not in page for page in pages)


def _memory_links(browser: httpx.Client, base: str) -> list[str]:
    """Each memory page the web view links from its projects' pages."""
    projects = re.findall(r'href="(/ui/p/[^"/]+)"', browser.get(f"{base}/ui/").text)
    return [
        link
        for p in dict.fromkeys(projects)
        for link in re.findall(r'href="(/ui/p/[^"]+/m/[^"]+)"', browser.get(base + p).text)
    ]


# ------------------------------------------------------------------ end to end: Claude Code's CLI, a build


def test_uninstall_takes_the_plugin_marketplace_and_mcp_server_out_of_claude_code(
    tmp_path: Path, project: Path
) -> None:
    """setup installs the plugin with the real `claude` CLI (and the user added the MCP server as print-config says);
    uninstall leaves no trace of memoryd in Claude Code's files and no daemon."""
    from tests.support.claude_cli import claude_binary

    claude = claude_binary()
    env = machine(tmp_path)
    env |= {
        "PATH": f"{claude.parent}:{Path(sys.executable).parent}:{env['PATH']}",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    user, home = Path(env["HOME"]), Path(env["MEMORYD_HOME"])
    pid = None
    try:
        setup = json_of(memoryd(env, project, "setup", "--json", timeout=300), "setup")
        assert {s["step"]: s["action"] for s in setup["steps"]}["claude code"] == "done", setup
        pid = json.loads((home / "daemon.json").read_text())["pid"]
        add = memoryd(env, project, "mcp", "--print-config", "claude-code").stdout.strip()
        assert subprocess.run(add, shell=True, env=env, capture_output=True, timeout=120).returncode == 0
        files = [user / ".claude" / "settings.json", user / ".claude.json"]
        files += [user / ".claude" / "plugins" / name for name in ("installed_plugins.json", "known_marketplaces.json")]
        assert all("memoryd" in f.read_text() for f in files)

        dry = json_of(memoryd(env, project, "uninstall", "--dry-run", "--json"), "uninstall")
        would = [s["detail"] for s in dry["steps"] if s["action"] == "would"]
        assert len(would) == 4 and all("memoryd" in f.read_text() for f in files), would  # plugin, market, mcp, daemon

        run = memoryd(env, project, "uninstall", timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        assert not any("memoryd" in f.read_text() for f in files), [f.read_text() for f in files]
        assert not alive(pid) and home.exists()
    finally:
        if pid is not None and alive(pid):
            os.kill(pid, 9)


def test_a_build_leaves_the_clone_as_it_was(tmp_path: Path) -> None:
    """#51: `uv tool install .` left build/ and memoryd.egg-info/ in the clone. The wheel is built straight from
    the tree, and carries the commit it was built from."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None or shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs uv, git and a clone of memoryd")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True, timeout=120)
    before = sorted(p.name for p in clone.iterdir())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    from tests.support.cache import TEST_CACHE

    env["UV_CACHE_DIR"] = str(TEST_CACHE / "uv")
    built = subprocess.run(
        [uv, "build", "--wheel", "-q", "-o", str(tmp_path / "dist"), str(clone)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    assert sorted(p.name for p in clone.iterdir()) == before  # no build/, no memoryd.egg-info/
    [wheel] = (tmp_path / "dist").glob("memoryd-*.whl")
    import zipfile

    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "--short=9", "HEAD"], capture_output=True, text=True)
    with zipfile.ZipFile(wheel) as z:
        assert z.read("memoryd/_commit.txt").decode().strip() == f"g{head.stdout.strip()}"
        assert "memoryd/claude_code_plugin/.claude-plugin/marketplace.json" in z.namelist()


def test_uninstall_names_the_tool_that_made_the_install(tmp_path: Path) -> None:
    """The last line of uninstall: the package's own removal, by the tool whose environment this is."""
    from memoryd.cli.uninstall import package_command

    (tmp_path / "uv" / "uv-receipt.toml").parent.mkdir()
    (tmp_path / "uv" / "uv-receipt.toml").write_text("[tool]\n", encoding="utf-8")
    (tmp_path / "pipx").mkdir()
    (tmp_path / "pipx" / "pipx_metadata.json").write_text("{}", encoding="utf-8")
    assert package_command(tmp_path / "uv") == "uv tool uninstall memoryd"
    assert package_command(tmp_path / "pipx") == "pipx uninstall memoryd"
    assert "pip uninstall memoryd" in package_command(tmp_path)
