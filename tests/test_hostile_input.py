"""Issue 41, hostile input round three (the inputs a person or a cloned repo controls): settings files
that are links to /dev/zero, FIFOs or 150 MB; imports that must never overwrite; secrets in the recall
log; memory files too large to read or to render. Each test drives the real door."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

from memoryd.base import limits
from memoryd.integrations.settings_files import read_settings, refusal

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CEILING = 1024**3  # bytes of address space the child may take: /dev/zero read whole passes it at once


def _hostile_repo(tmp_path: Path) -> Path:
    """A repository whose `.claude/` holds a link to /dev/zero, a FIFO and a 150 MB (sparse) file."""
    repo = tmp_path / "cloned"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").symlink_to("/dev/zero")
    os.mkfifo(repo / ".claude" / "settings.local.json")
    user = tmp_path / "user" / ".claude"
    user.mkdir(parents=True)
    with open(user / "settings.json", "wb") as fh:
        fh.truncate(150 * 1024 * 1024)
    return repo


def _bounded(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A child with at most MEMORY_CEILING of address space and 60 s: an unbounded read fails, never hangs."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))

    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=60, preexec_fn=limit, check=False
    )


def test_settings_a_cloned_repo_controls_are_never_read_unbounded(tmp_path: Path) -> None:
    repo = _hostile_repo(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path / "user"), "PYTHONPATH": str(ROOT)}
    code = textwrap.dedent(
        f"""
        import json, os
        from pathlib import Path
        from memoryd.integrations import claude_code, claude_memory, claude_plugin
        repo, env = Path({str(repo)!r}), dict(os.environ)
        print(json.dumps([
            claude_memory.native_memory(repo, env).reason,
            str(claude_memory.claude_memory_dir(str(repo), env)),
            claude_plugin.plugin_enabled(repo, env),
            sorted(claude_plugin.settings_hook_urls(repo, env)),
            claude_code.installed_scopes(repo, env),
            claude_code.hooks_forward_session_env(repo, env),
        ]))
        """
    )
    done = _bounded([sys.executable, "-c", code], env, repo)
    assert done.returncode == 0 and "MemoryError" not in done.stderr, done.stderr[-500:]
    reason, _, plugin, urls, scopes, forwards = json.loads(done.stdout)
    assert (reason, plugin, urls, scopes, forwards) == ("on by default", [], [], [], True)
    # What was refused says why, for doctor.
    assert "symbolic link out of" in refusal(repo / ".claude" / "settings.json", within=repo)
    assert "not a regular file" in refusal(repo / ".claude" / "settings.local.json", within=repo)
    assert "over the" in refusal(tmp_path / "user" / ".claude" / "settings.json")


def test_doctor_and_the_plugin_hook_live_through_a_hostile_repo(tmp_path: Path, home: Path) -> None:
    repo = _hostile_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "CLAUDE"))}
    env.update(HOME=str(tmp_path / "user"), MEMORYD_HOME=str(home), MEMORYD_PORT="1", PYTHONPATH=str(ROOT))
    doctor = _bounded([sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(repo)], env, repo)
    assert "Traceback" not in doctor.stderr and "MemoryError" not in doctor.stderr, doctor.stderr[-500:]
    assert json.loads(doctor.stdout)["checks"]
    event = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    hook = subprocess.run(
        [sys.executable, "-m", "memoryd", "hook", "claude-code"],
        input=json.dumps(event),
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING)),
        check=False,
    )
    assert hook.returncode == 0 and "MemoryError" not in hook.stdout + hook.stderr, hook.stderr[-500:]


def test_a_settings_file_is_parsed_once_per_change_and_links_stay_inside_the_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / "shared.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    path = repo / ".claude" / "settings.json"
    path.symlink_to(repo / "shared.json")
    first = read_settings(path, within=repo)
    assert first == {"autoMemoryEnabled": False} and read_settings(path, within=repo) is first  # cached by stat
    (repo / "shared.json").write_text(json.dumps({"autoMemoryEnabled": True, "x": 1}))
    assert read_settings(path, within=repo) == {"autoMemoryEnabled": True, "x": 1}  # a change is seen
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"autoMemoryEnabled": False}))
    path.unlink()
    path.symlink_to(outside)
    assert read_settings(path, within=repo) == {} and read_settings(path) == {"autoMemoryEnabled": False}
    path.unlink()
    path.write_bytes(b"{" + b" " * limits.SETTINGS_FILE_MAX_BYTES + b"}")
    assert read_settings(path, within=repo) == {}
