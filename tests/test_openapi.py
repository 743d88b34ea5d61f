"""/openapi.json documents every answer (2xx schema and the real error body) and the bearer scheme;
/docs and /redoc load every asset from the daemon itself (no CDN), with the token."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.routing import APIRoute

from memoryd.api.app import ROUTERS
from memoryd.api.middleware import PUBLIC_PATHS
from tests.conftest import LiveDaemon
from tests.support.servers import loopback_client

ERROR_REF = "#/components/schemas/ErrorBody"


@pytest.fixture
def live(module_live: LiveDaemon) -> LiveDaemon:
    """These tests only read the daemon's documents: one daemon for the module."""
    return module_live


def _resolve(schema: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_route_documents_its_answer_and_its_errors(live: LiveDaemon) -> None:
    doc = live.client.get("/openapi.json").json()
    assert doc["components"]["securitySchemes"]["bearer"] == {
        **doc["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }
    error = doc["components"]["schemas"]["ErrorBody"]
    assert error["required"] == ["error"] and set(_resolve(error["properties"]["error"], doc)["properties"]) == {
        "code",
        "message",
    }
    assert "HTTPValidationError" not in doc["components"]["schemas"]  # FastAPI's default 422 body is not what we send

    app_routes = {
        (m, r.path)
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and r.include_in_schema
        for m in r.methods
    }
    documented = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    assert app_routes == documented and len(documented) >= 20

    for path, item in doc["paths"].items():
        for method, op in item.items():
            where = f"{method.upper()} {path}"
            responses = op["responses"]
            ok = [s for s in responses if s.startswith("2")]
            assert ok, where
            for status in ok:
                if status == "204":
                    assert "content" not in responses[status], where  # no body by definition
                    continue
                content = responses[status]["content"]
                schema = next(iter(content.values()))["schema"]
                resolved = _resolve(schema, doc)
                assert resolved.get("properties") or resolved.get("type") == "string", (where, schema)
            errors = {s: r for s, r in responses.items() if s[0] in "45"}
            assert "403" in errors, where
            assert ("401" in errors) == (path not in PUBLIC_PATHS), where
            assert (op.get("security") == [{"bearer": []}]) == (path not in PUBLIC_PATHS), where
            if op.get("parameters") or op.get("requestBody"):
                assert {"400", "422"} <= set(errors), where
            if op.get("requestBody"):
                assert "413" in errors, where
            for status, response in errors.items():
                assert response["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}, (where, status)
                assert "error.code:" in response["description"], (where, status)


def test_route_specific_errors_are_documented(live: LiveDaemon) -> None:
    paths = live.client.get("/openapi.json").json()["paths"]
    assert "404" in paths["/v1/memories/{filename}"]["get"]["responses"]
    assert "memory_not_found" in paths["/v1/memories/{filename}"]["get"]["responses"]["404"]["description"]
    assert "409" in paths["/v1/dream/run"]["post"]["responses"]
    assert {"404", "409"} <= set(paths["/v1/dream/runs/{run_id}/undo"]["post"]["responses"])
    assert "503" in paths["/v1/events/turn-end"]["post"]["responses"]
    assert "queue_full" in paths["/v1/events/turn-end"]["post"]["responses"]["503"]["description"]
    assert "404" in paths["/v1/sessions/{session_id}/memory"]["get"]["responses"]
    assert {"200", "201"} <= set(paths["/v1/memories"]["post"]["responses"])


def test_docs_pages_load_every_asset_from_the_daemon(live: LiveDaemon) -> None:
    for page in ("/docs", "/redoc"):
        r = live.client.get(page)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), page
        html = r.text
        urls = set(re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)) | set(
            re.findall(r"""url:\s*['"]([^'"]+)['"]""", html)
        )
        urls |= set(re.findall(r"""spec-url\s*=\s*["']([^"']+)["']""", html))
        assert len(urls) >= 2, (page, urls)
        assert not re.search(r"https?://", html.replace("http://127.0.0.1", "")), f"{page} references another host"
        for url in urls:
            asset = live.client.get(url)
            assert asset.status_code == 200 and len(asset.content) > 100, (page, url, asset.status_code)


def test_docs_and_assets_need_the_token(live: LiveDaemon) -> None:
    with loopback_client(live.url, timeout=10) as anonymous:
        for path in ("/docs", "/redoc", "/openapi.json", "/docs/assets/swagger-ui-bundle.js"):
            r = anonymous.get(path)
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", path
        assert anonymous.get("/v1/health").status_code == 200
