"""`memoryd guard` (issue 50): the rules that hold acts in a project, human and `--json` (checked against its
schema), through a real daemon subprocess; `memoryd save` says what a proposed rule will stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.servers import DaemonProcess, daemon_env
from tests.test_cli_contract import check, run

# Drives the daemon and the CLI as subprocesses: the end-to-end suite (docs/development.md).
pytestmark = pytest.mark.e2e


def test_guard_lists_what_each_memory_holds_and_what_does_not_parse(home: Path, project: Path, tmp_path: Path) -> None:
    env = daemon_env(home, HOME=str(tmp_path / "user"))
    daemon = DaemonProcess(home=home, env=env).start()
    cwd = ("--cwd", str(project))
    try:
        assert check(env, ("guard",), *cwd, code=0)["rules"] == []
        saved = run(
            env, "save", *cwd, "-t", "feedback", "-n", "Package manager", "-d", "Use pnpm, never npm", "-b", "x"
        )
        assert saved.returncode == 0 and "will stop: npm, npx — use pnpm" in saved.stdout, saved.stdout
        listed = check(env, ("guard",), *cwd, code=0)
        [rule] = listed["rules"]
        assert rule["will_stop"] == "will stop: npm, npx — use pnpm" and listed["mode"] == "deny"
        broken = Path(rule["path"]).with_name("feedback_broken.md")
        broken.write_text("---\nname: Broken\ndescription: d\ntype: feedback\nforbid:\n  command: [npm]\n---\nb\n")
        listed = check(env, ("guard",), *cwd, code=0)
        assert [b["filename"] for b in listed["broken"]] == ["feedback_broken.md"]
        assert "forbid.command is not a field" in listed["broken"][0]["error"]
        human = run(env, "guard", *cwd)
        assert "1 memory holds acts" in human.stdout and "holds nothing: forbid.command" in human.stdout
        # a rule recall brings to no act, that the guard holds: the save does not also say "no act: add --path"
        held = run(env, "save", *cwd, "-t", "feedback", "-n", "Postgres", "-d", "Use docker compose, not brew services")
        assert "will stop: brew services" in held.stdout and "reaches: no act" not in held.stdout, held.stdout
        legacy = run(env, "save", *cwd, "-t", "feedback", "-n", "Legacy", "-d", "Never create files under `legacy/`")
        assert "will stop: creates legacy/**" in legacy.stdout, legacy.stdout
        assert "creates legacy/**" in run(env, "guard", *cwd).stdout
        kind = run(env, "save", *cwd, "-t", "feedback", "-n", "Be kind", "-d", "Answer briefly")
        assert "reaches: no act: add --path or --command" in kind.stdout, kind.stdout
    finally:
        daemon.kill()
