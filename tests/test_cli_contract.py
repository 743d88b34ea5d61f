"""The --json contract: every command, in success and in failure, prints one JSON document on
stdout that its own `--json-schema` accepts, errors as {"error": {"code", "message"}}, times as
ISO-8601, with the documented exit code. Against a real daemon subprocess and with it down."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from memoryd.store.paths import project_root
from tests.support.servers import DaemonProcess, daemon_env
from tests.support.transcripts import new_session

SCHEMA_CACHE: dict[tuple[str, ...], Any] = {}


def run(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], env=env, cwd=cwd, input="", capture_output=True, text=True, timeout=60
    )


def schema(env: dict[str, str], command: tuple[str, ...]) -> Any:
    if command not in SCHEMA_CACHE:
        r = run(env, *command, "--json-schema")
        assert r.returncode == 0, r.stderr
        SCHEMA_CACHE[command] = json.loads(r.stdout)
    return SCHEMA_CACHE[command]


def times_are_iso(value: Any, key: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            times_are_iso(v, k)
    elif isinstance(value, list):
        for v in value:
            times_are_iso(v, key)
    elif key == "mtime" or key.endswith("_at") or key == "next_check":
        assert value is None or isinstance(value, str) and datetime.fromisoformat(value.replace("Z", "+00:00")), (
            key,
            value,
        )


def check(
    env: dict[str, str],
    command: tuple[str, ...],
    *args: str,
    code: int,
    error: str | None = None,
    cwd: Path | None = None,
) -> Any:
    """Run `memoryd COMMAND ARGS --json`; assert the exit code, the schema and the error code."""
    r = run(env, *command, *args, "--json", cwd=cwd)
    assert r.returncode == code, (command, args, r.returncode, r.stdout, r.stderr)
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema(env, command))
    times_are_iso(data)
    if error is None:
        assert set(data) != {"error"}, data
    else:
        assert data["error"]["code"] == error and data["error"]["message"], data
    return data


@pytest.mark.e2e
def test_every_command_keeps_the_json_contract(home: Path, project: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    roots = user / ".claude" / "projects"
    roots.mkdir(parents=True)
    (home / "config.toml").write_text(f'[transcripts]\nroots = ["{roots}"]\n')
    session = new_session(roots, str(project_root(str(project))), "sess-1")
    session.user("the deploy failed with ETIMEDOUT on staging")
    env = daemon_env(home, HOME=str(user))
    daemon = DaemonProcess(home=home, env=env).start()
    cwd = ("--cwd", str(project))
    try:
        check(env, ("status",), code=0)
        saved = check(
            env,
            ("save",),
            *cwd,
            "-t",
            "project",
            "-n",
            "Staging deploys",
            "-d",
            "staging deploys need the VPN",
            "-b",
            "Connect the VPN.",
            code=0,
        )
        assert (
            saved["new"] is True and "created" in saved and saved["mtime"]
        )  # Claude Code's dialect (a fresh folder of its tree) has no created stamp
        assert (
            check(
                env,
                ("save",),
                *cwd,
                "-t",
                "project",
                "-n",
                "Staging deploys",
                "-d",
                "staging deploys need the VPN",
                "-b",
                "v2",
                code=0,
            )["new"]
            is False
        )
        check(
            env,
            ("save",),
            *cwd,
            "-t",
            "user",
            "-n",
            "k",
            "-d",
            "d",
            "-b",
            "key ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
            code=1,
            error="secret_detected",
        )
        check(env, ("save",), *cwd, "-t", "user", "-n", "k", "-d", "d", "-b", code=2, error="usage")
        check(env, ("save",), *cwd, "-t", "nope", "-n", "k", "-d", "d", code=2, error="usage")
        listed = check(env, ("list",), *cwd, code=0)
        assert [m["filename"] for m in listed["memories"]] == [saved["filename"]]
        check(env, ("show",), *cwd, saved["filename"], code=0)
        check(env, ("show",), *cwd, "../etc.md", code=1, error="invalid_filename")
        check(env, ("show",), *cwd, "user_missing.md", code=1, error="memory_not_found")
        check(env, ("index",), *cwd, code=0)
        check(env, ("prompt",), *cwd, code=0)
        check(env, ("recall",), *cwd, "how do staging deploys work", code=0)
        check(env, ("recall",), *cwd, "staging deploys", "--session", "bad id!", code=1, error="invalid_session_id")
        status = check(env, ("dream", "status"), *cwd, code=0)
        assert {g["unit"] for g in status["gates"]} == {"hours", "seconds", "sessions", "pid"}
        run_done = check(env, ("dream", "run"), *cwd, "--wait", code=0)
        check(env, ("dream", "runs"), *cwd, code=0)
        check(env, ("dream", "cancel"), *cwd, code=0)
        check(env, ("dream", "undo"), run_done["run_id"], code=0)
        check(env, ("dream", "undo"), "dream_000000000000", code=1, error="run_not_found")
        check(env, ("hooks",), *cwd, code=0)
        check(env, ("hooks",), *cwd, "--install", code=0)
        check(env, ("hooks",), *cwd, "--scope", "elsewhere", code=2, error="usage")
        hit = check(env, ("grep",), "ETIMEDOUT", *cwd, code=0)
        assert hit["count"] == 1
        assert check(env, ("grep",), "nothing-like-this", *cwd, code=1)["results"] == []  # no match: exit 1, like grep
        check(env, ("grep",), ".*", "-E", *cwd, code=1, error="invalid_pattern")
        check(env, ("backfill",), "--no-wait", code=0)
        check(env, ("backfill",), "--since", "soon", code=2, error="usage")
        doctor = check(env, ("doctor",), *cwd, code=0)
        assert doctor["ok"], [c for c in doctor["checks"] if not c["ok"]]
        check(env, ("install-service",), "--dry-run", code=0)
        check(env, ("uninstall-service",), "--dry-run", code=0)
        check(env, ("forget",), *cwd, saved["filename"], code=0)
        check(env, ("forget",), *cwd, saved["filename"], code=1, error="memory_not_found")
        check(env, ("list",), *cwd, "--bogus", code=2, error="usage")
        check(env, ("stop",), code=0)
        assert daemon.proc is not None and daemon.proc.wait(timeout=15) == 0
    finally:
        daemon.kill()
    # The daemon is down: every command that needs it says so the same way, exit 3.
    down = daemon_env(home, HOME=str(user), MEMORYD_PORT="1")
    for command, args in [
        (("status",), ()),
        (("list",), cwd),
        (("show",), (*cwd, "user_x.md")),
        (("index",), cwd),
        (("prompt",), cwd),
        (("save",), (*cwd, "-t", "user", "-n", "n", "-d", "d", "-b", "b")),
        (("forget",), (*cwd, "user_x.md")),
        (("recall",), (*cwd, "some query here")),
        (("dream", "status"), cwd),
        (("dream", "runs"), cwd),
        (("grep",), ("ETIMEDOUT", *cwd)),
        (("backfill",), ()),
        (("stop",), ()),
    ]:
        check(down, command, *args, code=3, error="daemon_not_running")
    doctor = check(down, ("doctor",), *cwd, code=1)
    assert not doctor["ok"]


def test_human_errors_stay_one_line_on_stderr(home: Path, project: Path) -> None:
    r = run(daemon_env(home, MEMORYD_PORT="1"), "list", "--cwd", str(project))
    assert (
        r.returncode == 3 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1 and "memoryd serve" in r.stderr
    )


def test_every_command_documents_its_schema(home: Path) -> None:
    env = daemon_env(home)
    for command in [
        "status",
        "stop",
        "install-service",
        "uninstall-service",
        "save",
        "list",
        "show",
        "forget",
        "index",
        "prompt",
        "recall",
        "dream status",
        "dream run",
        "dream cancel",
        "dream runs",
        "dream undo",
        "hooks",
        "doctor",
        "grep",
        "backfill",
    ]:
        doc = schema(env, tuple(command.split()))
        assert doc["title"] == f"memoryd {command} --json" and doc["exit_codes"]["3"] == "the daemon is not running"
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["anyOf"][0].get("type") == "object" or "anyOf" in doc["anyOf"][0], command
