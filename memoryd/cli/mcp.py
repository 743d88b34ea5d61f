"""`memoryd mcp`: memoryd as an MCP server on stdio, a thin client of the running daemon."""

from __future__ import annotations

import argparse
import os
import sys

from memoryd.cli.output import EXIT_OK, settings_of
from memoryd.mcp.configs import CLIENTS, print_config


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("mcp", help="serve memory to any MCP agent over stdio (Cursor, Codex, Gemini CLI, Claude)")
    p.add_argument(
        "--print-config",
        metavar="CLIENT",
        choices=sorted(CLIENTS),
        help=f"print the config that starts this server in CLIENT ({', '.join(sorted(CLIENTS))}) and exit",
    )
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.print_config:
        where, block = print_config(args.print_config)
        print(f"# {args.print_config}: {where}", file=sys.stderr)
        print(block)
        return EXIT_OK
    # Imported here: the SDK is for this command only, not every CLI start (hooks run per prompt).
    from memoryd.client import MemorydClient
    from memoryd.mcp.server import build_server

    settings = settings_of(args)
    from memoryd.integrations.hook_protocol import RECALL_SWITCH, recall_off

    off = recall_off(os.environ.get(RECALL_SWITCH))  # the agent's own switch (issue 52): no memory served over MCP
    build_server(lambda: MemorydClient.from_settings(settings), default_cwd=os.getcwd, recall_off=off).run("stdio")
    return EXIT_OK
