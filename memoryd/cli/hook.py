"""`memoryd hook claude-code`: the one portable command the Claude Code plugin's hooks run.

Reads the hook event on stdin, finds the daemon from `$MEMORYD_HOME` at run time, forwards the
event to its hook endpoint and prints the answer. It always exits 0 and gives up within the
event's budget, so the agent is never blocked; the token is read from the home, never printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Mapping

from memoryd.cli.output import EXIT_OK

# A hook event is a few KB (the prompt, paths); anything far larger is not one.
MAX_EVENT_BYTES = 4 * 1024 * 1024
DOWN_NOTE = (
    "memoryd is not running, so this session gets no memories from it. Start it with "
    "`memoryd serve` in a terminal, or run it as a user service with `memoryd setup`; "
    "`memoryd doctor` checks the install."
)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "hook",
        help="forward one agent hook event (stdin) to the daemon and print its answer",
        description="Forward one hook event, read on stdin, to the running daemon and print its answer. "
        "The Claude Code plugin's hooks run this; it always exits 0 and never blocks the agent.",
        epilog='the event is Claude Code\'s hook JSON, e.g. {"hook_event_name": "SessionStart", "cwd": "/home/me/shop", "session_id": "s1"}',
    )
    p.add_argument("agent", choices=["claude-code"], help="the agent that sent the event")
    p.set_defaults(func=cmd_hook)


def _context(event: str, text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def answer_hook(body: bytes, env: Mapping[str, str]) -> str | None:
    """What to print for one event: the daemon's answer, the not-running note at SessionStart, or nothing.

    When memoryd's settings-file hooks (`memoryd hooks --install`) for this project reach the running
    daemon they answer every event themselves, so this command stands aside: one event, one answer."""
    from memoryd.base.errors import DaemonNotRunning
    from memoryd.client import MemorydClient, home_from_env
    from memoryd.integrations.claude_code import HOOK_EVENTS, HOOK_PATH, SESSION_ENV_HEADER, SESSION_ENV_VARS
    from memoryd.integrations.claude_plugin import settings_hook_urls
    from memoryd.service.auth import read_token
    from memoryd.service.runtime_file import read_runtime_file

    try:
        payload: Any = json.loads(body)
    except ValueError:
        return None
    event = str(payload.get("hook_event_name", "")) if isinstance(payload, dict) else ""
    if event not in HOOK_EVENTS:
        return None
    max_time, _, answer_read = HOOK_EVENTS[event]
    home = home_from_env(env)
    runtime = read_runtime_file(home)
    down = _context(event, DOWN_NOTE) if event == "SessionStart" else None
    if runtime is None:
        return down
    url = f"http://{runtime['host']}:{runtime['port']}"
    if url in settings_hook_urls(Path(str(payload.get("cwd") or os.getcwd())), env):
        return None
    session_env = ";".join(f"{name}={env.get(name, '')}" for name in SESSION_ENV_VARS)
    client = MemorydClient(url, read_token(home, env.get("MEMORYD_TOKEN", "")), timeout=max_time)
    try:
        with client:
            answer = client.request("POST", HOOK_PATH, json=payload, headers={SESSION_ENV_HEADER: session_env})
    except DaemonNotRunning:
        return down
    if not answer_read or not answer:
        return None
    return json.dumps(answer) if isinstance(answer, dict) else str(answer)


def cmd_hook(args: argparse.Namespace) -> int:
    try:
        answer = answer_hook(sys.stdin.buffer.read(MAX_EVENT_BYTES), os.environ)
    except Exception as exc:  # fail open: a hook must never stall or fail the agent's turn
        print(f"memoryd hook: {exc.__class__.__name__}: {exc}", file=sys.stderr)
        return EXIT_OK
    if answer:
        print(answer)
    return EXIT_OK
