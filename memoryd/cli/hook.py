"""`memoryd hook claude-code`: the one portable command the Claude Code plugin's hooks (and `memoryd hooks
--install`'s) run. This module only describes it for `--help`; the work is `cli/hook_forward.py`, which
`memoryd.cli.main` runs directly so a tool call pays for no parser."""

from __future__ import annotations

import argparse

from memoryd.integrations.hook_protocol import DOWN_NOTE  # noqa: F401  (the note a session gets when memoryd is down)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "hook",
        help="forward one agent hook event (stdin) to the daemon and print its answer",
        description="Forward one hook event, read on stdin, to the running daemon and print its answer. "
        "The Claude Code plugin's hooks run this; it always exits 0 and never blocks the agent. The token is "
        "sent only after the program on memoryd's port proves it holds this home's token.",
        epilog='the event is Claude Code\'s hook JSON, e.g. {"hook_event_name": "SessionStart", "cwd": '
        '"/home/me/shop", "session_id": "s1"}',
    )
    p.add_argument("agent", choices=["claude-code"], help="the agent that sent the event")
    p.add_argument(
        "--await-model",
        action="store_true",
        help="the prompt's async hook: wait for the model's pick and print it (delivered at the next tool batch)",
    )
    p.set_defaults(func=cmd_hook)


def cmd_hook(args: argparse.Namespace) -> int:
    from memoryd.cli.hook_forward import main

    return main(await_model=args.await_model)
