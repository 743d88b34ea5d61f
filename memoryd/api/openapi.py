"""/openapi.json: every route's errors documented with the real error body, and the bearer scheme.

Routes declare their own domain errors with `errors(404, 409)`; what every route shares (401 and
403 from the guard middleware, 413 for bodies, 400/422 for bad input) is added here, so a router
another part adds is documented the same way without extra work.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from memoryd.api.middleware import PUBLIC_PATHS
from memoryd.api.models import ErrorBody
from memoryd.base.errors import MemorydError

BEARER = "bearer"
_ERROR_REF = {"$ref": "#/components/schemas/ErrorBody"}
_TITLES = {
    400: "Bad input; the message names the field and the fix",
    401: "Missing or wrong bearer token",
    403: "Refused: a foreign Host or Origin, or a path memoryd may not read",
    404: "Not found",
    409: "Conflicts with a run in progress",
    413: "Request body over the limit",
    422: "Missing, unknown or mistyped field, or refused content; the message names the field and the fix",
    503: "A dependency is down or a queue is full; retry later",
}


def _codes_by_status() -> dict[int, list[str]]:
    """Each status's error codes, read from the error tree so the docs never drift from it."""
    out: dict[int, set[str]] = {}
    stack: list[type[MemorydError]] = [MemorydError]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if not cls.client_side and (cls.status < 500 or cls.status == 503):
            out.setdefault(cls.status, set()).add(cls.code)
    out.setdefault(422, set()).add("invalid_request")
    out.setdefault(400, set()).add("invalid_json")
    return {status: sorted(codes) for status, codes in out.items()}


def _response(status: int) -> dict[str, Any]:
    codes = _codes_by_status().get(status, [])
    return {
        "description": f"{_TITLES.get(status, 'Error')} (error.code: {', '.join(codes)})",
        "content": {"application/json": {"schema": _ERROR_REF}},
    }


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """A route's own error answers for its decorator: `@router.get(..., responses=errors(404))`."""
    return {status: {"model": ErrorBody, "description": _response(status)["description"]} for status in statuses}


def _finish(schema: dict[str, Any]) -> dict[str, Any]:
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    _, defs = models_json_schema([(ErrorBody, "serialization")], ref_template="#/components/schemas/{model}")
    schemas.update(defs.get("$defs", {}))
    components.setdefault("securitySchemes", {})[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The token in $MEMORYD_HOME/token (default ~/.memoryd/token); every endpoint but /v1/health "
        "needs it.",
    }
    for path, item in schema.get("paths", {}).items():
        for op in item.values():
            responses = op.setdefault("responses", {})
            shared = [403]
            if path not in PUBLIC_PATHS:
                op["security"] = [{BEARER: []}]
                shared.append(401)
            if op.get("requestBody"):
                shared.append(413)
            if op.get("requestBody") or op.get("parameters"):
                shared += [400, 422]
            for status in shared:
                responses[str(status)] = _response(status)
            for status, response in responses.items():  # route-declared errors get the full code list too
                if status[0] in "45" and "application/json" in response.get("content", {}):
                    response.update(_response(int(status)))
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return schema


def install_openapi(app: FastAPI) -> None:
    """Replace the app's schema builder with one that adds the shared errors and the bearer scheme."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _finish(
                get_openapi(
                    title=app.title,
                    version=app.version,
                    description=app.description,
                    routes=app.routes,
                    tags=app.openapi_tags,
                )
            )
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
