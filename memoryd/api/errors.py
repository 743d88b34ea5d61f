"""One place that turns errors into `{"error": {"code", "message"}}` with a fitting status: the
route handlers here and the guard middleware both render through `error_body`."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from memoryd.base.errors import InvalidRequest, MemorydError, MemoryNotFound, NotFound, Unprocessable

log = logging.getLogger(__name__)

_WHERE = {"body": "body", "query": "query string", "path": "URL path", "header": "headers"}


def error_body(exc: MemorydError) -> bytes:
    """The JSON bytes of an error answer."""
    return json.dumps({"error": {"code": exc.code, "message": exc.message}}).encode()


def error_response(exc: MemorydError) -> JSONResponse:
    return JSONResponse({"error": {"code": exc.code, "message": exc.message}}, status_code=exc.status)


def _field_info(route: Any, loc: Sequence[Any]) -> tuple[str | None, list[str]]:
    """The description of the field at `loc` and the names of its siblings, from the route's models."""
    if not isinstance(route, APIRoute) or not loc:
        return None, []
    params = {
        "body": route.dependant.body_params,
        "query": route.dependant.query_params,
        "path": route.dependant.path_params,
    }.get(str(loc[0]), [])
    if (
        loc[0] == "body"
        and len(params) == 1
        and isinstance(params[0].field_info.annotation, type)
        and issubclass(params[0].field_info.annotation, BaseModel)
    ):
        model: type[BaseModel] = params[0].field_info.annotation
        names = list(model.model_fields)
        field = model.model_fields.get(str(loc[1])) if len(loc) > 1 else None
        return (field.description if field else None), names
    names = [p.alias for p in params]
    match = next((p for p in params if len(loc) > 1 and p.alias == loc[1]), None)
    return (match.field_info.description if match else None), names


def _describe_one(e: dict[str, Any], route: Any) -> str:
    loc = tuple(e.get("loc", ()))
    name = ".".join(str(p) for p in loc[1:]) or "(the whole body)"
    description, siblings = _field_info(route, loc)
    hint = f" ({description.rstrip('.')})" if description else ""
    fields = ", ".join(repr(s) for s in siblings) or "the documented fields"
    kind = e.get("type", "")
    ctx = e.get("ctx") or {}
    if "status" in ctx:  # a core check (memoryd/base/validation.py): its message names the field and the fix
        return str(ctx["message"])
    if kind == "missing" and len(loc) <= 1:
        return f"the JSON body is missing: send an object with {fields}"
    if kind == "missing":
        return f"{name!r} is required{hint}: add it to the {_WHERE.get(str(loc[0]), 'request')}"
    if kind == "extra_forbidden":
        return f"{name!r} is not a field of this request: remove it (the fields are {', '.join(siblings)})"
    if kind in ("model_attributes_type", "dict_type") and len(loc) <= 1:
        return f"the body must be a JSON object with {fields}, not {type(e.get('input')).__name__}"
    # The input is never echoed: it may hold a secret, and the caller has it anyway.
    return f"{name!r}: {e.get('msg', 'invalid')}; fix its value{hint}"


def describe_validation(exc: RequestValidationError, route: Any = None) -> MemorydError:
    """A validation failure as one error of the tree: core checks keep their code and status (400);
    missing, extra or mistyped fields answer 422 invalid_request naming each field and its fix."""
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        return InvalidRequest(
            "the request body is not valid JSON; send a JSON object with Content-Type: application/json.",
            code="invalid_json",
        )
    where = _WHERE.get(str(errors[0].get("loc", ("body",))[0]), "request") if errors else "request"
    message = (
        f"invalid {where}: {'; '.join(_describe_one(e, route).rstrip('.') for e in errors[:5])}. See /docs for "
        "the schema."
    )
    core = [e for e in errors if "status" in (e.get("ctx") or {})]
    if core and len(core) == len(errors):
        return InvalidRequest(message, code=str(core[0]["type"]), status=int(core[0]["ctx"]["status"]))
    return Unprocessable(message, code="invalid_request")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemorydError)
    async def _memoryd_error(request: Request, exc: MemorydError) -> JSONResponse:
        if exc.status >= 500:
            log.warning("%s %s failed: %s", request.method, request.url.path, exc.code)
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(describe_validation(exc, request.scope.get("route")))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404 and request.url.path.startswith("/v1/memories/"):
            return error_response(
                MemoryNotFound(
                    "no such memory: a memory filename is a bare <type>_<slug>.md (no '/', no '..'); list them with "
                    "GET /v1/memories.",
                    code="invalid_filename",
                )
            )
        if exc.status_code == 404:
            return error_response(NotFound(f"no endpoint {request.method} {request.url.path}; see /docs for the API."))
        if exc.status_code == 405:
            return error_response(
                InvalidRequest(
                    f"{request.method} is not allowed on {request.url.path}; see /docs.",
                    code="method_not_allowed",
                    status=405,
                )
            )
        if exc.status_code == 400:
            return error_response(
                InvalidRequest(
                    f"could not read the request body ({exc.detail}); send a JSON object with Content-Type: "
                    "application/json.",
                    code="invalid_body",
                )
            )
        return error_response(MemorydError(str(exc.detail), code="http_error", status=exc.status_code))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(
            MemorydError("memoryd hit an unexpected error; see its log (memoryd status shows where) and report it.")
        )
