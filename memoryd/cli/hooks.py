"""`memoryd hooks`: print, install or uninstall the Claude Code hooks block."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memoryd.cli.output import EXIT_OK, EXIT_USAGE, common, cwd_of, emit, fail, settings_of


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(
        sub.add_parser(
            "hooks",
            help="print (or --install) the Claude Code settings-file hooks that connect it to memoryd",
            description="Print, install or remove memoryd's hooks in a Claude Code settings file: the way in for "
            "people who "
            "do not use Claude Code plugins (with the plugin, these are not needed and are refused).",
            epilog="example:\n  memoryd hooks --install            # ~/.claude/settings.json, with a backup of the "
            "old file",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    action = p.add_mutually_exclusive_group()
    action.add_argument("--install", action="store_true", help="merge the hooks into the Claude Code settings file")
    action.add_argument("--uninstall", action="store_true", help="remove memoryd's hooks (and only those)")
    p.add_argument(
        "--scope",
        choices=["user", "project", "local"],
        default="user",
        help="user: ~/.claude/settings.json (default); project/local: <cwd>/.claude/",
    )
    p.add_argument(
        "--type",
        dest="hook_type",
        choices=["command", "http"],
        default="command",
        help="command (the default and the only kind installed: `memoryd hook claude-code`, which proves the daemon "
        "before it sends the token); http is refused, it would send the token to whatever listens on the port",
    )
    p.set_defaults(func=cmd_hooks)


def cmd_hooks(args: argparse.Namespace) -> int:
    from memoryd.integrations.claude_code import (
        AUTH_HEADER_FILENAME,
        hook_command,
        hooks_block,
        install_hooks,
        settings_path,
        uninstall_hooks,
    )
    from memoryd.integrations.claude_plugin import PLUGIN_ID, plugin_enabled
    from memoryd.service.auth import load_or_create_token

    settings = settings_of(args)
    path = settings_path(args.scope, Path(cwd_of(args)))
    if args.uninstall:
        result = uninstall_hooks(path)
        emit(args, result, f"{'removed memoryd hooks from' if result['changed'] else 'no memoryd hooks in'} {path}")
        return EXIT_OK
    enabled = plugin_enabled(Path(cwd_of(args))) if args.install else []
    if enabled:  # both would answer every event: the plugin's hooks already connect Claude Code
        return fail(
            args,
            f"the memoryd plugin is enabled in {enabled[-1]}, and its hooks already connect Claude Code; installing "
            "these too "
            "would answer every event twice. Keep the plugin (nothing to do), or remove it first: claude plugin "
            f"uninstall {PLUGIN_ID}",
            EXIT_USAGE,
            "plugin_installed",
        )
    if args.hook_type == "http":
        return fail(
            args,
            "http hooks are not installed: Claude Code would send the token to whatever program listens on memoryd's "
            "port, unproved. Use the default command hooks (drop --type http).",
            EXIT_USAGE,
            "http_hooks_refused",
        )
    load_or_create_token(settings.home, settings.token_override)
    block = hooks_block(hook_command(settings.home))
    if not args.install:
        emit(args, block, json.dumps(block, indent=2))
        return EXIT_OK
    result = install_hooks(path, block)
    (settings.home / AUTH_HEADER_FILENAME).unlink(missing_ok=True)  # older installs' curl hooks read the token there
    note = ""
    emit(
        args,
        result,
        f"{'installed' if result['changed'] else 'already installed:'} memoryd hooks in {path} for "
        f"{', '.join(result['events'])}{note}"
        + (f"\nthe file as memoryd first found it: {result['backup']}" if result["backup"] else ""),
    )
    return EXIT_OK
