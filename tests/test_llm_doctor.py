"""doctor and /v1/status tell the truth about the LLM: backend, model, last call's outcome,
spend today, and no "ok" beside a contradiction (the daemon `memoryd serve` builds from the same
environment, served in a thread; the real `memoryd doctor`; a scripted model)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import serve_env
from tests.support.clock import POLL_SECONDS, step_over_settle
from tests.support.messages_api import Reply, ScriptedMessagesAPI
from tests.support.servers import daemon_env
from tests.support.transcripts import new_session


def doctor(env: dict[str, str], cwd: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    run = subprocess.run(
        [sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(cwd)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return {c["name"]: c for c in json.loads(run.stdout)["checks"]}


def test_a_hung_local_model_is_named_as_such_not_as_an_api_key_problem(
    home: Path, project: Path, messages_api: ScriptedMessagesAPI
) -> None:
    roots = home / "transcripts"
    (home / "config.toml").write_text(
        f'[transcripts]\nroots = ["{roots}"]\n[llm]\nbackend = "messages-api"\nbase_url = "{messages_api.url}"\n'
        'model = "qwen3:8b"\ntimeout_seconds = 1\nretries = 0\n'
    )
    with serve_env(daemon_env(home, ANTHROPIC_API_KEY="sk-ant-unused-here")) as (daemon, env):
        checks = doctor(env, project)
        assert (
            checks["llm"]["ok"]
            and checks["llm"]["detail"].startswith("messages-api, model qwen3:8b, 0 tokens today")
            and "no call yet" in checks["llm"]["detail"]
        )
        assert "api key" not in checks  # the key is not what this backend uses
        messages_api.push(Reply(text='{"memories": []}', delay=3))
        writer = new_session(roots, str(project))
        writer.user("we moved to pnpm last week")
        c = daemon.client
        job_id = c.post(
            "/v1/events/turn-end",
            json={"session_id": writer.session_id, "transcript_path": str(writer.path), "cwd": str(project)},
        ).json()["job_id"]
        step_over_settle(daemon.daemon)
        deadline = time.monotonic() + 30
        while c.get(f"/v1/jobs/{job_id}").json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            time.sleep(POLL_SECONDS)
        llm = c.get("/v1/status").json()["llm"]
        assert llm["last_call"]["outcome"] == "error" and llm["backend"] == "messages-api"
        checks = doctor(env, project)
        assert not checks["llm"]["ok"]
        assert (
            "did not answer extract within 1 s" in checks["llm"]["detail"]
            and "ANTHROPIC_API_KEY" not in checks["llm"]["detail"] + checks["llm"]["fix"]
        )


def test_off_with_a_key_set_says_offline_and_shows_no_key_check(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[llm]\nbackend = "off"\n')
    with serve_env(daemon_env(home, ANTHROPIC_API_KEY="sk-ant-set-but-off")) as (daemon, env):
        checks = doctor(env, project)
        assert (
            checks["llm"]["ok"]
            and checks["llm"]["detail"].startswith("offline: the LLM is off")
            and "api key" not in checks
        )
        status = daemon.client.get("/v1/status").json()
        assert status["mode"] == "offline" and status["model"] is None and status["llm"]["backend"] == "off"


def test_a_configured_backend_that_cannot_run_fails_with_the_fix(home: Path, project: Path) -> None:
    (home / "config.toml").write_text('[llm]\nbackend = "messages-api"\n')
    with serve_env(daemon_env(home)) as (_, env):
        checks = doctor(env, project)
        assert not checks["llm"]["ok"] and "needs [llm] base_url" in checks["llm"]["detail"]
