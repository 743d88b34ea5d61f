"""`memoryd ui`: open the web view with a one-time login link (the token never enters the browser)."""

from __future__ import annotations

import argparse
import webbrowser

from memoryd.cli.output import EXIT_OK, client_of, common, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = common(sub.add_parser("ui", help="open the web view in a browser (one-time login link)"), cwd=False)
    p.add_argument(
        "--no-browser", action="store_true", help="only print the link (open it yourself within two minutes)"
    )
    p.add_argument(
        "--print-url",
        action="store_true",
        help="print only the one-time login link (for a browser on another display, or a script)",
    )
    p.set_defaults(func=cmd_ui)


def cmd_ui(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        link = c.request("POST", "/v1/ui/login-link")
    if args.print_url and not args.json:
        print(link["url"])
        return EXIT_OK
    opened = False if args.no_browser or args.print_url or args.json else webbrowser.open(link["url"])
    emit(
        args,
        {**link, "opened": opened},
        f"{'opened' if opened else 'open this link'} (works once, for {int(link['expires_in_seconds'])} s): "
        f"{link['url']}",
    )
    return EXIT_OK
