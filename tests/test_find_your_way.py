"""Finding your way around an install: `--help` with a description and an example everywhere,
"did you mean", `memoryd config` (with where each setting came from), `config init`, `logs`,
shell completion, and a `--version` that starts fast. Real subprocesses in a fresh HOME."""

from __future__ import annotations

import json
import os
import resource
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from memoryd.cli.app import build_parser
from memoryd.cli.help import subcommands
from memoryd.cli.output import EXIT_CODES
from memoryd.cli.schemas import schema_for
from memoryd.config_sources import example_config
from tests.support.clock import POLL_SECONDS

# Drives the daemon and the CLI as subprocesses: the end-to-end suite (docs/development.md).
pytestmark = pytest.mark.e2e

VERSION_CPU_BUDGET_MS = (
    150.0  # bench/startup_bench.py's target, in CPU time (steadier than wall time on a busy machine)
)


def memoryd(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")} | {"MEMORYD_HOME": str(home)} | env
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], env=full, capture_output=True, text=True, timeout=60
    )


def test_every_subcommand_has_a_description_and_an_example() -> None:
    missing = [
        path
        for path, sub, _ in subcommands(build_parser())
        if not sub.description or "example:\n  memoryd " not in sub.format_help()
    ]
    assert not missing, f"--help without a description or an example: {missing}"


def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path) -> None:
    r = memoryd(tmp_path, "lsit")
    assert r.returncode == 2 and "did you mean 'list'?" in r.stderr
    r = memoryd(tmp_path, "dream", "stauts", "--json")
    assert r.returncode == 2 and "did you mean 'status'?" in json.loads(r.stdout)["error"]["message"]
    assert "did you mean" not in memoryd(tmp_path, "zzzzzz").stderr  # nothing close: no guess


def test_a_mistyped_flag_gets_did_you_mean_from_its_own_command(tmp_path: Path) -> None:
    r = memoryd(tmp_path, "list", "--tpye", "feedback")
    assert r.returncode == 2 and "did you mean --type?" in r.stderr
    assert r.stderr.startswith("usage: memoryd list ")  # the command's usage, not the top-level one
    r = memoryd(tmp_path, "team", "sync", "--jsn", "--json")
    assert r.returncode == 2 and "did you mean --json?" in json.loads(r.stdout)["error"]["message"]
    assert "did you mean" not in memoryd(tmp_path, "list", "--zzzzzz").stderr  # nothing close: no guess


def test_config_shows_each_setting_and_where_it_came_from(tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = memoryd(home, "config", "--json")
    data = json.loads(r.stdout)
    jsonschema.validate(data, schema_for("config", EXIT_CODES))
    assert r.returncode == 0 and data["path"] == str(home / "config.toml") and not data["exists"]
    assert all(row["source"] == "default" for row in data["settings"] if row["setting"] != "MEMORYD_HOME")
    home.mkdir()
    (home / "config.toml").write_text("[recall]\nmax_memories = 3\n")
    rows = {
        row["setting"]: row
        for row in json.loads(memoryd(home, "config", "--json", MEMORYD_PORT="8123", MEMORYD_TOKEN="t0psecret").stdout)[
            "settings"
        ]
    }
    assert rows["recall.max_memories"] == {
        "setting": "recall.max_memories",
        "value": 3,
        "source": str(home / "config.toml"),
    }
    assert rows["server.port"]["value"] == 8123 and rows["server.port"]["source"] == "env MEMORYD_PORT"
    assert rows["server.host"]["source"] == "default"
    assert rows["MEMORYD_TOKEN"]["value"] == "(set, not shown)"
    assert "t0psecret" not in memoryd(home, "config", MEMORYD_TOKEN="t0psecret").stdout


def test_config_init_writes_the_example_and_a_bad_setting_points_to_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = memoryd(home, "config", "init")
    assert r.returncode == 0 and (home / "config.toml").read_text() == example_config()
    assert memoryd(home, "config", "init").returncode == 2  # never overwrites
    assert (home / "config.toml").read_text() == example_config()
    (home / "config.toml").write_text("[recall]\nmax_memories = -1\n")
    bad = memoryd(home, "list")
    assert bad.returncode == 2 and "`memoryd config init --print`" in bad.stderr
    shown = memoryd(home, "config", "init", "--print")
    assert shown.returncode == 0 and shown.stdout == example_config() and "max_memories" in shown.stdout


def test_logs_prints_the_tail_and_follows(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = memoryd(home, "logs")
    assert missing.returncode == 1 and "no log yet" in missing.stderr and "memoryd serve" in missing.stderr
    log = home / "logs" / "memoryd.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert memoryd(home, "logs", "-n", "3").stdout == "line 97\nline 98\nline 99\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_")} | {"MEMORYD_HOME": str(home)}
    follow = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "logs", "-f", "-n", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )

    def next_line() -> str:
        assert follow.stdout is not None and select.select([follow.stdout], [], [], 20)[0], "logs -f printed nothing"
        return follow.stdout.readline()

    try:
        assert next_line() == "line 99\n"
        with log.open("a") as f:
            f.write("a new line\n")
        assert next_line() == "a new line\n"
    finally:
        follow.kill()
        follow.wait(timeout=10)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_covers_every_command(tmp_path: Path, shell: str) -> None:
    r = memoryd(tmp_path, "completion", shell)
    assert r.returncode == 0
    top = [path for path, _, _ in subcommands(build_parser()) if " " not in path]
    assert all(name in r.stdout for name in top) and "--print-config" in r.stdout
    if shell == "bash":
        script = tmp_path / "memoryd.bash"
        script.write_text(r.stdout)
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_version_starts_fast(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "memoryd"
    cpu = []
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=30)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert run.returncode == 0 and run.stdout.startswith("memoryd ")
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    assert statistics.median(cpu) <= VERSION_CPU_BUDGET_MS, cpu


def test_status_names_the_log_file(shared_daemon: object, tmp_path: Path) -> None:
    home = shared_daemon.home  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while not (home / "logs" / "memoryd.log").exists():
        assert time.monotonic() < deadline
        time.sleep(POLL_SECONDS)
    r = memoryd(home, "status", HOME=str(tmp_path))
    assert r.returncode == 0 and f"log:     {home / 'logs' / 'memoryd.log'} (memoryd logs -f)" in r.stdout
