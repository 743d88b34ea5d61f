"""One place that turns errors into `{"error": {"code", "message"}}` with a fitting status."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memoryd.errors import MemorydError, field_problems

log = logging.getLogger(__name__)


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _describe_validation(exc: RequestValidationError) -> tuple[int, str, str]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return 400, "invalid_json", "the request body is not valid JSON; send a JSON object with Content-Type: application/json."
    where = "query string" if any(e.get("loc", ("",))[0] == "query" for e in errors) else "body"
    return 422, "invalid_request", f"invalid {where}: {field_problems(errors)}. See /docs for the expected fields."


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(MemorydError)
    async def _memoryd_error(request: Request, exc: MemorydError) -> JSONResponse:
        if exc.status >= 500:
            log.warning("%s %s failed: %s", request.method, request.url.path, exc.code)
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, code, message = _describe_validation(exc)
        return error_response(status, code, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404 and request.url.path.startswith("/v1/memories/"):
            return error_response(404, "invalid_filename", "no such memory: a memory filename is a bare <type>_<slug>.md (no '/', no '..'); list them with GET /v1/memories.")
        if exc.status_code == 404:
            return error_response(404, "not_found", f"no endpoint {request.method} {request.url.path}; see /docs for the API.")
        if exc.status_code == 405:
            return error_response(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}; see /docs.")
        if exc.status_code == 400:
            return error_response(400, "invalid_body", f"could not read the request body ({exc.detail}); send a JSON object with Content-Type: application/json.")
        return error_response(exc.status_code, "http_error", str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal_error", "memoryd hit an unexpected error; see its log (memoryd status shows where) and report it.")
