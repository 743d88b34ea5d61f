"""Issue #41's identity probes: the token goes only to this user's memoryd (a stranger on its port, a
`daemon.json` naming a live pid that is not memoryd, a relay to the real daemon from another port)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from reliability_harness import Harness, Item

from tests.support.strangers import INJECTION, Relay, StrangerServer

HOOK_EVENTS = [
    {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm install lodash"}},
    {"hook_event_name": "UserPromptSubmit", "prompt": "which package manager should I use?"},
    {"hook_event_name": "SessionStart", "source": "startup"},
]


def _home(h: Harness, name: str, port: int, token: str, pid: int) -> Path:
    home = h.base / name
    home.mkdir()
    (home / "token").write_text(token + "\n")
    os.chmod(home / "token", 0o600)
    (home / "daemon.json").write_text(json.dumps({"pid": pid, "host": "127.0.0.1", "port": port}))
    return home


def _run(home: Path, h: Harness, args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**h.env, "MEMORYD_HOME": str(home)}
    env.pop("MEMORYD_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], input=stdin, env=env, capture_output=True, text=True, timeout=60
    )


def probe_identity(h: Harness) -> Item:
    item = Item("the token goes only to this user's memoryd")
    token = h.proc.token
    for pid, label in ((os.getpid(), "a live pid"), (1, "pid 1")):
        with StrangerServer() as stranger:
            home = _home(h, f"stranger-{pid}", stranger.port, token, pid)
            for event in HOOK_EVENTS:
                payload = {**event, "session_id": f"probe-{pid}", "cwd": str(h.project)}
                r = _run(home, h, ["hook", "claude-code"], json.dumps(payload))
                item.check(
                    r.returncode == 0 and INJECTION not in r.stdout,
                    f"hook {event['hook_event_name']} ({label}): passed the stranger's answer on",
                )
            for args in (["status"], ["list"], ["recall", "which package manager should I use?"]):
                r = _run(home, h, [*args, "--cwd", str(h.project)])
                item.check(
                    r.returncode == 3 and "something other than memoryd" in r.stderr, f"{args[0]}: {r.stderr[:80]}"
                )
            item.check(not stranger.tokens_seen(), f"the stranger got the token ({label})")
    with Relay(int(h.proc.url.rsplit(":", 1)[1])) as relay:
        home = _home(h, "relay", relay.port, token, os.getpid())
        payload = {**HOOK_EVENTS[2], "session_id": "probe-relay", "cwd": str(h.project)}
        r = _run(home, h, ["hook", "claude-code"], json.dumps(payload))
        item.check("did not prove" in r.stdout, "the relay borrowed the daemon's proof")
        item.check(all(token.encode() not in chunk for chunk in relay.sent), "the token went through the relay")
    return item
