"""Claude Code's own memory dir: where `memory_base = "auto"` puts a project's memories, which
settings may move it, and whether native memory is on. Real files and real git worktrees."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memoryd.base.errors import Forbidden
from memoryd.config_sources import load_settings  # noqa: E402
from memoryd.integrations.claude_memory import (
    auto_resolver,
    claude_memory_dir,
    native_memory,
    project_folder,
    resolve_for,
)
from memoryd.store.paths import sanitize_path
from tests.support.clock import POLL_SECONDS


@pytest.fixture
def user(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    return {"HOME": str(home)}


def _write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_folder_names_match_the_cli_for_dots_spaces_underscores_and_non_ascii() -> None:
    assert sanitize_path("/tmp/my proj.v2/a_b.c d") == "-tmp-my-proj-v2-a-b-c-d"
    assert sanitize_path("/home/me/café") == "-home-me-caf-"
    assert sanitize_path("/home/me/x🙂") == "-home-me-x--"  # an astral char is two UTF-16 code units


def test_a_long_path_gets_the_npm_builds_djb2_suffix() -> None:
    # Seen from the real CLI 2.1.330: this path's folder ends in "-gxnjgj".
    path = "/tmp/ccprobe/w/" + "x" * 120 + "/long dir é" + "y" * 100
    name = sanitize_path(path)
    assert name.endswith("-gxnjgj") and len(name) == 200 + 1 + len("gxnjgj")


def test_a_long_path_reuses_an_existing_folder_with_the_same_prefix(tmp_path: Path) -> None:
    path = "/srv" + "/deep" * 60
    projects = tmp_path / "projects"
    other_build = projects / (sanitize_path(path)[:200] + "-bunhash123")
    other_build.mkdir(parents=True)
    assert project_folder(projects, Path(path)) == other_build.name
    (tmp_path / "empty").mkdir()
    assert project_folder(tmp_path / "empty", Path(path)) == sanitize_path(path)


def test_auto_uses_claude_codes_dir_when_it_is_set_up_else_memoryd_home(tmp_path: Path, user: dict[str, str]) -> None:
    project = tmp_path / "work" / "my app.v2"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "memoryd"
    expected = Path(user["HOME"]) / ".claude" / "projects" / sanitize_path(str(project)) / "memory"
    assert auto_resolver(home, user)(str(project / "src")) == expected
    no_claude = {"HOME": str(tmp_path / "nobody")}
    assert auto_resolver(home, no_claude)(str(project)) == home / "projects" / sanitize_path(str(project)) / "memory"
    settings = load_settings({"MEMORYD_HOME": str(home)}, home=home)
    assert settings.memory.memory_base == "auto"
    assert resolve_for(settings, str(project), user) == expected


def test_worktrees_share_the_canonical_git_roots_memory(tmp_path: Path, user: dict[str, str]) -> None:
    repo = tmp_path / "repo"
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    subprocess.run([*git, "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt"], check=True)
    assert claude_memory_dir(str(tmp_path / "wt"), user) == claude_memory_dir(str(repo), user)
    assert claude_memory_dir(str(repo), user).parent.name == sanitize_path(str(repo))


def test_auto_memory_directory_only_from_trusted_settings(tmp_path: Path, user: dict[str, str]) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    default = claude_memory_dir(str(project), user)
    # A cloned repo's shared settings cannot move the memory dir.
    _write(project / ".claude" / "settings.json", {"autoMemoryDirectory": str(tmp_path / "attacker")})
    assert claude_memory_dir(str(project), user) == default
    # The user's settings can (~/ expands to the user's home) ...
    _write(Path(user["HOME"]) / ".claude" / "settings.json", {"autoMemoryDirectory": "~/notes/mem"})
    assert claude_memory_dir(str(project), user) == Path(user["HOME"]) / "notes" / "mem"
    # ... the local (git-ignored) settings win over the user's, and managed settings over both.
    _write(project / ".claude" / "settings.local.json", {"autoMemoryDirectory": str(tmp_path / "local-mem")})
    assert claude_memory_dir(str(project), user) == tmp_path / "local-mem"
    managed = tmp_path / "managed-settings.json"
    _write(managed, {"autoMemoryDirectory": str(tmp_path / "policy-mem")})
    assert claude_memory_dir(str(project), user, managed) == tmp_path / "policy-mem"
    # A relative value is not a place: ignored, as Claude Code does.
    _write(managed, {"autoMemoryDirectory": "relative/mem"})
    assert claude_memory_dir(str(project), user, managed) == tmp_path / "local-mem"


def test_a_symlinked_project_folder_is_refused(tmp_path: Path, user: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    projects = Path(user["HOME"]) / ".claude" / "projects"
    projects.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (projects / sanitize_path(str(project))).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Forbidden):
        claude_memory_dir(str(project), user)


def test_native_memory_switches_in_claude_codes_precedence(tmp_path: Path, user: dict[str, str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    none = tmp_path / "no-managed.json"
    assert native_memory(project, user, {}, none).enabled
    _write(Path(user["HOME"]) / ".claude" / "settings.json", {"autoMemoryEnabled": False})
    state = native_memory(project, user, {}, none)
    assert not state.enabled and "user settings" in state.reason
    _write(project / ".claude" / "settings.json", {"autoMemoryEnabled": True})  # project beats user
    assert native_memory(project, user, {}, none).enabled
    assert not native_memory(project, user, {"CLAUDE_CODE_SIMPLE": "1"}, none).enabled  # --bare
    assert not native_memory(project, user, {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, none).enabled
    forced = native_memory(project, user, {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0", "CLAUDE_CODE_SIMPLE": "1"}, none)
    assert forced.enabled and "=0" in forced.reason


# ---------------------------------------------------------------------- mutual exclusion
from tests.conftest import make_settings, serve  # noqa: E402
from tests.support.clock import SteppingClock, step_over_settle  # noqa: E402
from tests.support.transcripts import new_session  # noqa: E402


@pytest.mark.parametrize(
    "tool, spell",
    [
        ("Write", "path"),
        ("Edit", "path"),
        ("MultiEdit", "path"),
        ("NotebookEdit", "path"),
        ("Bash", "path"),
        ("Bash", "~"),
        ("Bash", "$HOME"),
        ("Bash", "${HOME}"),
    ],
)
def test_a_turn_in_which_the_agent_wrote_claude_codes_memory_is_not_extracted(
    tmp_path: Path, tool: str, spell: str
) -> None:
    import time

    from memoryd.service.daemon import Daemon

    (Path.home() / ".claude").mkdir()
    project = tmp_path / "my app.v2"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "memoryd"
    home.mkdir()
    with serve(Daemon(make_settings(home), clock=SteppingClock())) as live:
        memdir = Path(live.client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        assert memdir == claude_memory_dir(str(project), {"HOME": str(Path.home())})  # "auto" picked Claude Code's dir
        target = str(memdir / "pnpm-only.md")
        spelled = target if spell == "path" else spell + target[len(str(Path.home())) :]
        inputs = {
            "Write": {"file_path": target, "content": "x"},
            "Edit": {"file_path": target, "old_string": "a", "new_string": "b"},
            "MultiEdit": {"file_path": target, "edits": []},
            "NotebookEdit": {"notebook_path": target, "new_source": "x"},
            "Bash": {"command": f"cat > '{spelled}' <<'EOF'\n---\nname: pnpm-only\n---\nEOF"},
        }
        session = new_session(live.daemon.settings.transcript_roots[0], str(project))
        session.user("Remember: always use pnpm, never npm, because the lockfile is pnpm's.")
        session.assistant("Saving it to memory.", tools=[(tool, inputs[tool])])
        r = live.client.post(
            "/v1/events/turn-end",
            json={
                "session_id": session.session_id,
                "transcript_path": str(session.path),
                "cwd": str(project),
                "hook_event_name": "Stop",
                "stop_hook_active": False,
            },
        )
        assert r.status_code == 202, r.text
        step_over_settle(live.daemon)
        deadline = time.monotonic() + 15
        while (job := live.client.get(f"/v1/jobs/{r.json()['job_id']}").json())["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(POLL_SECONDS)
        assert job["status"] == "skipped" and "wrote to the memory dir" in job["reason"], job
        assert live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] == []


# ---------------------------------------------------------------------- doctor and status
def _doctor(home: Path, user_home: Path, project: Path) -> dict[str, dict[str, object]]:
    import sys

    from tests.support.servers import daemon_env

    env = daemon_env(home, HOME=str(user_home), MEMORYD_PORT="1")  # no daemon: these checks are local
    run = subprocess.run(
        [sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {c["name"]: c for c in json.loads(run.stdout)["checks"]}


def test_doctor_says_where_memory_lives_and_offers_the_old_store(tmp_path: Path, user: dict[str, str]) -> None:
    import sys

    from tests.support.servers import daemon_env

    user_home = Path(user["HOME"])
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "memoryd"
    home.mkdir()
    cc_dir = claude_memory_dir(str(project), user)
    env = daemon_env(home, HOME=str(user_home))
    subprocess.run([sys.executable, "-m", "memoryd", "hooks", "--install"], env=env, check=True, capture_output=True)

    checks = _doctor(home, user_home, project)
    assert str(cc_dir) in str(checks["memory dir"]["detail"]) and "dialect claude-code" in str(
        checks["memory dir"]["detail"]
    )
    assert "is on (on by default)" in str(checks["native memory"]["detail"])
    assert checks["context"]["ok"] and "once (Claude Code loads MEMORY.md" in str(checks["context"]["detail"])
    assert "import" not in checks

    old = home / "projects" / sanitize_path(str(project)) / "memory"
    old.mkdir(parents=True)
    (old / "feedback_pnpm.md").write_text("---\nname: pnpm\ndescription: use pnpm\ntype: feedback\n---\nUse pnpm.\n")
    checks = _doctor(home, user_home, project)
    offer = checks["import"]  # served from memoryd's own store until imported: a note with the command, not a failure
    assert (
        offer["ok"]
        and f"memoryd import --from '{old}'" in str(offer["fix"])
        and str(old) in str(checks["memory dir"]["detail"])
    )
    assert checks["context"]["ok"] and "memoryd injects its own store's MEMORY.md" in str(checks["context"]["detail"])
    assert (old / "feedback_pnpm.md").exists() and not cc_dir.exists()  # offered, never performed
    (old / "feedback_pnpm.md").unlink()

    _write(
        user_home / ".claude" / "settings.json",
        {**json.loads((user_home / ".claude" / "settings.json").read_text()), "autoMemoryEnabled": False},
    )
    checks = _doctor(home, user_home, project)
    assert "is off (autoMemoryEnabled: false in user settings)" in str(checks["native memory"]["detail"])
    assert checks["context"]["ok"] and "once (memoryd injects MEMORY.md)" in str(checks["context"]["detail"])

    _write(
        user_home / ".claude" / "settings.json",
        {**json.loads((user_home / ".claude" / "settings.json").read_text()), "autoMemoryEnabled": True},
    )
    (home / "config.toml").write_text('[memory]\nmemory_base = ""\n')  # memoryd's own store beside Claude Code's
    checks = _doctor(home, user_home, project)
    assert "memoryd's own dir" in str(checks["memory dir"]["detail"])
    assert (
        not checks["context"]["ok"]
        and "two indexes" in str(checks["context"]["detail"])
        and 'memory_base = "auto"' in str(checks["context"]["fix"])
    )


def test_status_shows_the_memory_location(
    tmp_path: Path, user: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from tests.conftest import serve_env
    from tests.support.servers import daemon_env

    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    home = tmp_path / "memoryd"
    home.mkdir()
    monkeypatch.setenv("HOME", user["HOME"])  # the daemon, served in this process, sees the HOME the CLI run gets
    with serve_env(daemon_env(home, HOME=user["HOME"])) as (_, env):
        run = subprocess.run(
            [sys.executable, "-m", "memoryd", "status", "--cwd", str(project)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert f"memory:  {claude_memory_dir(str(project), user)} (Claude Code dir, dialect claude-code)" in run.stdout
        assert (
            "native:  Claude Code's auto memory on" in run.stdout
            and "fix:     memoryd setup, or memoryd hooks --install" in run.stdout
        )
