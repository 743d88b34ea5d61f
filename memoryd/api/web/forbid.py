"""The memory page's rule form (issue 50): what the memory forbids, edited or removed by a person through the one
write path, over the version the page showed (a newer save is never overwritten)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from memoryd.api.deps import WebViewDep
from memoryd.api.web.auth import UI_PREFIX
from memoryd.api.web.pages import back, check_form, message_page, shows_errors
from memoryd.base.errors import Conflict, InvalidRequest, ReadOnly
from memoryd.guard.rules import FIELDS, parse_forbid
from memoryd.store.model import draft_fields

router = APIRouter(include_in_schema=False)


def forbid_of_form(lists: dict[str, str], instead: str, enforce: str) -> dict[str, Any]:
    """The `forbid:` value a form says: one item a line per list (blank lines dropped)."""
    value: dict[str, Any] = {}
    for key, text in lists.items():
        items = [line.strip() for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
        if items:
            value[key] = items
    if value and instead.strip():
        value["instead"] = instead.strip()
    if value and enforce:
        value["enforce"] = enforce
    return parse_forbid(value).to_meta()


@router.post(f"{UI_PREFIX}/p/{{pid}}/m/{{filename}}/forbid")
@shows_errors
def edit_forbid(
    request: Request,
    web: WebViewDep,
    pid: str,
    filename: str,
    version: str = Form(...),
    commands: str = Form(""),
    writes: str = Form(""),
    reads: str = Form(""),
    imports: str = Form(""),
    creates: str = Form(""),
    instead: str = Form(""),
    enforce: str = Form(""),
    remove: str = Form(""),
    csrf: str = Form(""),
) -> Response:
    """Save the rule (or remove it: `forbid: {}` stays, so no proposal brings it back) over the shown version."""
    check_form(request, csrf)
    p = web.project(pid)
    lists = dict(zip(FIELDS, (commands, writes, reads, imports, creates), strict=True))
    try:
        value = {} if remove else forbid_of_form(lists, instead, enforce)
        current = p.store.get(filename)
        p.store.save(**draft_fields(current), filename=filename, source="ui", expected=version, forbid=value)
    except ReadOnly:
        raise
    except Conflict:
        return message_page(
            request,
            "The memory changed since you opened it",
            "It was saved by someone else after you opened it; nothing was written. Open it again to see it.",
            status=409,
        )
    except InvalidRequest as exc:
        return message_page(request, "That rule does not parse", exc.message, status=400)
    return back(f"{UI_PREFIX}/p/{pid}/m/{filename}?done={'rule-removed' if remove else 'rule-saved'}")
