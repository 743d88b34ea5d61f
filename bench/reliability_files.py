#!/usr/bin/env python3
"""Round three's probes of the files memoryd shares with people (issue 41 items 5, 7, 8): one daemon per
MEMORYD_HOME, Claude Code's settings files rewritten through their link with their mode and first backup,
and settings memoryd cannot use refused by name. `bench/reliability.py` runs `FILE_PROBES` with the rest;
alone (prints the same lines, writes its own JSON):

    .venv/bin/python bench/reliability_files.py [--json bench/results/reliability_files.json]
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from reliability_harness import Harness, Item  # noqa: E402

from tests.support.servers import DaemonProcess  # noqa: E402

WAIT_SECONDS = 30  # a command that waits longer than this on a FIFO (or serves on) counts as hung
SETTINGS = {"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}


def run(env: dict[str, str], *args: str, cwd: Path | None = None) -> tuple[int | None, str, float]:
    """(exit code or None when it hung, stderr, seconds) of one `memoryd` command."""
    t = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "memoryd", *args],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=WAIT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - t
    return done.returncode, done.stderr.strip(), time.perf_counter() - t


def one_line(code: int | None, err: str, *words: str) -> bool:
    """Refused: a non-zero exit, one line on stderr with the words, no traceback."""
    return code not in (None, 0) and "\n" not in err and "Traceback" not in err and all(w in err for w in words)


# ---------------------------------------------------------------------- item 5: two daemons on one home
def runtime_of(home: Path) -> dict[str, Any] | None:
    """daemon.json as it is now (None: gone or unreadable)."""
    try:
        return dict(json.loads((home / "daemon.json").read_text()))
    except (OSError, ValueError):
        return None


def probe_one_daemon_per_home(h: Harness) -> Item:
    item = Item("a second daemon on one home refuses, names the first")
    first = runtime_of(h.home) or {}
    address = f"http://{first['host']}:{first['port']}"
    for port in ("0", "0", first["port"]):  # a free port twice, then the first's own
        code, err, secs = run(h.env, "serve", "--port", str(port))
        item.check(one_line(code, err, f"pid {first['pid']}", address), f"serve --port {port}: {code} {err[-160:]!r}")
        item.check(runtime_of(h.home) == first, "daemon.json changed")
        item.check(h.cli("status").returncode == 0, "`memoryd status` no longer finds the first daemon")
    runtime = h.home / "daemon.json"
    foreign = {**first, "pid": 1, "port": 1}
    runtime.write_text(json.dumps(foreign))
    exited = h.proc.terminate()
    item.check(exited == 0 and runtime_of(h.home) == foreign, "an exit took another's daemon.json")
    h.proc = DaemonProcess(home=h.home, env=h.env).start()  # kill -9 lets go of the lock: the next one starts
    h.proc.kill()
    h.proc = DaemonProcess(home=h.home, env=h.env).start()
    item.check(h.cli("status").returncode == 0, "no daemon started after the holder was killed")
    return item


# ---------------------------------------------------------------------- item 7: Claude Code's settings files
def settings_env(h: Harness, name: str) -> tuple[dict[str, str], Path]:
    """An environment whose HOME is a fresh user (never the daemon's: a FIFO there is this probe's only)."""
    user = h.base / name
    (user / ".claude").mkdir(parents=True)
    return {**h.env, "HOME": str(user), "PATH": "/usr/bin:/bin"}, user / ".claude" / "settings.json"


def probe_settings_link(h: Harness) -> Item:
    item = Item("settings.json: link, mode and first backup kept")
    env, link = settings_env(h, "files-user-link")
    target = h.base / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    original = json.dumps(SETTINGS, indent=4) + "\n"
    target.write_text(original)
    target.chmod(0o644)
    link.symlink_to(target)
    for step in ("--install", "--uninstall", "--install"):
        code, err, _ = run(env, "hooks", step, cwd=h.project)
        item.check(code == 0, f"hooks {step}: {code} {err[-160:]!r}")
        item.check(link.is_symlink() and os.readlink(link) == str(target), f"hooks {step}: the link was replaced")
        item.check(stat.S_IMODE(target.stat().st_mode) == 0o644, f"hooks {step}: mode {target.stat().st_mode:o}")
        hooked = "hook claude-code" in target.read_text()  # the forwarder command memoryd installs
        item.check(
            hooked == (step == "--install"), f"hooks {step}: the target {'has' if hooked else 'lacks'} the hooks"
        )
    backup = link.with_name("settings.json.memoryd-backup")
    item.check(backup.is_file() and backup.read_text() == original, "the backup no longer holds the original")
    return item


def probe_settings_not_a_file(h: Harness) -> Item:
    item = Item("settings.json a FIFO or dir: refused in one line")
    for kind in ("fifo", "directory"):
        env, settings = settings_env(h, f"files-user-{kind}")
        os.mkfifo(settings) if kind == "fifo" else settings.mkdir()
        what = "a FIFO (named pipe)" if kind == "fifo" else "a directory"
        for args in (("hooks", "--install"), ("hooks", "--uninstall"), ("setup", "--hooks", "--no-service")):
            code, err, secs = run(env, *args, cwd=h.project)
            item.check(one_line(code, err, what, "move it aside"), f"{kind}: {' '.join(args)}: {code} in {secs:.0f} s")
    return item


def probe_settings_fifo_readers(h: Harness) -> Item:
    item = Item("settings.json a FIFO: doctor, setup --dry-run answer")
    env, settings = settings_env(h, "files-user-readers")
    os.mkfifo(settings)
    env["MEMORYD_PORT"] = h.proc.url.rsplit(":", 1)[1]
    for args in (("doctor",), ("setup", "--dry-run", "--no-service")):
        code, _, secs = run(env, *args, cwd=h.project)
        item.check(code is not None, f"{' '.join(args)}: still waiting after {secs:.0f} s")
    return item


# ---------------------------------------------------------------------- item 8: config
def config_home(h: Harness, name: str, config: str | None) -> tuple[Path, dict[str, str]]:
    home = h.base / name
    home.mkdir()
    if config is not None:
        (home / "config.toml").write_text(config)
    return home, {**h.env, "MEMORYD_HOME": str(home)}


def probe_config(h: Harness) -> Item:
    item = Item("config: bad numbers, FIFO dirs and files refused")
    fifo = h.base / "config-fifo"
    os.mkfifo(fifo)
    cases: list[tuple[str, str | None, dict[str, str], str]] = [
        (f"{key} = {value}", f"[{section}]\n{key} = {value}\n", {}, f"{section}.{key}")
        for section, key in (
            ("dream", "check_interval_seconds"),
            ("team", "debounce_seconds"),
            ("llm", "timeout_seconds"),
        )
        for value in ("inf", "1e308", "nan")
    ]
    cases += [
        ("memory_dir a FIFO", f'[memory]\nmemory_dir = "{fifo}"\n', {}, "memory.memory_dir"),
        ("memory_base a FIFO", f'[memory]\nmemory_base = "{fifo}"\n', {}, "memory.memory_base"),
        ("MEMORYD_MEMORY_DIR a FIFO", None, {"MEMORYD_MEMORY_DIR": str(fifo)}, "MEMORYD_MEMORY_DIR"),
        ("config.toml a FIFO", "fifo", {}, "config.toml is a FIFO"),
        ("config.toml a directory", "directory", {}, "config.toml is a directory"),
    ]
    for n, (what, config, extra, named) in enumerate(cases):
        home, env = config_home(h, f"config-{n}", None if config in ("fifo", "directory") else config)
        if config == "fifo":
            os.mkfifo(home / "config.toml")
        elif config == "directory":
            (home / "config.toml").mkdir()
        env |= extra
        for args in (("config",), ("serve", "--port", "0")):
            code, err, secs = run(env, *args)
            item.check(one_line(code, err, named), f"{what}: {args[0]} -> {code} in {secs:.0f} s {err[-120:]!r}")
    return item


FILE_PROBES: list[Callable[[Harness], Item]] = [
    probe_one_daemon_per_home,
    probe_settings_link,
    probe_settings_not_a_file,
    probe_settings_fifo_readers,
    probe_config,
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", default=str(ROOT / "bench" / "results" / "reliability_files.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        h = Harness(Path(d))
        try:
            items = [probe(h) for probe in FILE_PROBES]
        finally:
            h.proc.kill()
    print("reliability (files): held / tried")
    for it in items:
        failed = "" if it.held == it.tried else "FAILED: " + "; ".join(it.failures[:3])
        print(f"  {it.name:55s} {it.held:3d} / {it.tried:<3d} {failed or 'ok'}")
    held, tried = sum(it.held for it in items), sum(it.tried for it in items)
    print(f"probes: {held} held, {tried - held} failed, of {tried}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps([it.__dict__ for it in items], indent=2))
    print(f"wrote {out}")
    return 0 if held == tried else 1


if __name__ == "__main__":
    raise SystemExit(main())
