"""`memoryd review list|approve|reject|edit`: decide on memories extraction queued for review."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.cli.output import EXIT_OK, EXIT_USAGE, client_of, common, cwd_of, emit, fail


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("review", help="memories waiting for review: list, approve, reject, edit")
    rsub = p.add_subparsers(dest="review_command", metavar="ACTION", required=True)
    common(rsub.add_parser("list", help="pending memories of this project")).set_defaults(func=cmd_list)
    for action, text in (
        ("approve", "write it (it joins MEMORY.md and recall)"),
        ("reject", "drop it; it is not proposed again"),
    ):
        a = common(rsub.add_parser(action, help=text), cwd=False)
        a.add_argument("item_id", nargs="+")
        a.set_defaults(func=cmd_decide, action=action)
    e = common(rsub.add_parser("edit", help="change a pending memory before approving it"), cwd=False)
    e.add_argument("item_id")
    e.add_argument("--name", "-n", default=None)
    e.add_argument("--description", "-d", default=None)
    e.add_argument("--body", "-b", default=None)
    e.set_defaults(func=cmd_edit)


def _human_item(i: dict[str, Any]) -> str:
    update = f" (updates {i['target']})" if i.get("target") else ""
    body = "\n".join("      " + line for line in i["body"].splitlines()[:6])
    return f"{i['item_id']}  [{i['type']}] {i['name']}{update}\n    {i['description']}\n{body}"


def cmd_list(args: argparse.Namespace) -> int:
    with client_of(args) as c:
        data = c.request("GET", "/v1/review", params={"cwd": cwd_of(args)})

    def human(d: dict[str, Any]) -> str:
        if not d["items"]:
            return "Nothing waiting for review." + (
                "" if d["review"] else " (Review is off for this project: [extract] review = false.)"
            )
        return f"{len(d['items'])} memor{'y' if len(d['items']) == 1 else 'ies'} waiting for review:\n" + "\n".join(
            _human_item(i) for i in d["items"]
        )

    emit(args, data, human)
    return EXIT_OK


def cmd_decide(args: argparse.Namespace) -> int:
    done = []
    with client_of(args) as c:
        for item_id in args.item_id:
            done.append(c.request("POST", f"/v1/review/{item_id}/{args.action}"))
    emit(
        args,
        {"items": done},
        lambda d: "\n".join(
            f"approved {i['item_id']} → {i['filename']}"
            if i["status"] == "approved"
            else f"rejected {i['item_id']}: it will not be proposed again"
            for i in d["items"]
        ),
    )
    return EXIT_OK


def cmd_edit(args: argparse.Namespace) -> int:
    changes = {k: getattr(args, k) for k in ("name", "description", "body") if getattr(args, k) is not None}
    if not changes:
        return fail(args, "nothing to change: pass --name, --description and/or --body.", EXIT_USAGE, "usage")
    with client_of(args) as c:
        item = c.request("PATCH", f"/v1/review/{args.item_id}", json=changes)
    emit(args, item, lambda i: "edited:\n" + _human_item(i))
    return EXIT_OK
