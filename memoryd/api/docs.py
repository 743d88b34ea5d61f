"""/docs (Swagger UI) and /redoc served with their assets from the daemon itself, so the API docs
work offline. The assets come from the fastapi-offline wheel (Swagger UI 5, ReDoc 2); like every
path but /v1/health they need the bearer token (the guard middleware checks it)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse

ASSETS_URL = "/docs/assets"
ASSETS_DIR = str(files("fastapi_offline") / "static")


def install_docs(app: FastAPI) -> None:
    """Mount the assets and add the two pages (kept out of the schema)."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    # both pages render the one schema under one title, with one favicon
    page: dict[str, Any] = {"openapi_url": app.openapi_url or "/openapi.json", "title": f"{app.title} API"}
    favicon = f"{ASSETS_URL}/favicon.png"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            **page,
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=favicon,
            swagger_ui_parameters={"persistAuthorization": True, "validatorUrl": None},  # no validator.swagger.io badge
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            **page, redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js", redoc_favicon_url=favicon, with_google_fonts=False
        )
