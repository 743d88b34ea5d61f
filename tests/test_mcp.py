"""memoryd's MCP server driven by the SDK's own client over both transports: stdio (`memoryd mcp`
as a real subprocess, a thin client of a real daemon) and streamable HTTP at /mcp on the daemon."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ListRootsResult, Root

from memoryd.base import limits
from tests.conftest import LiveDaemon
from tests.support.servers import daemon_env, free_socket, loopback_request

# End-to-end (the MCP stdio server as a subprocess):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e

TOOLS = {
    "memory_save",
    "memory_recall",
    "memory_search",
    "memory_show",
    "memory_forget",
    "memory_index",
    "dream_status",
}
AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"


def stdio_params(home: Path, project: Path, port: int) -> StdioServerParameters:
    """`memoryd mcp` started the way an agent starts it: in the project dir, MEMORYD_HOME in its env."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memoryd", "mcp"],
        cwd=str(project),
        env=daemon_env(home, MEMORYD_PORT=str(port)),
    )


@asynccontextmanager
async def http_client(url: str, token: str | None, **kwargs: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url + "/mcp", http_client=http), **kwargs) as client,
    ):
        yield client


def roots_of(project: Path) -> Callable[..., Awaitable[ListRootsResult]]:
    async def list_roots(*_: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=project.as_uri(), name=project.name)])

    return list_roots


def text(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def data(result: CallToolResult) -> Any:
    assert not result.is_error, text(result)
    return json.loads(text(result))


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


@pytest.fixture
def memory_dir(live: LiveDaemon, project: Path) -> Path:
    return Path(live.client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])


async def exercise(client: Client, project: Path, memory_dir: Path, cwd: dict[str, str]) -> None:
    """Every tool's happy path and its refusals; `cwd` is {} when the project comes from roots or the server's cwd."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
        assert "roots" not in tool.input_schema["properties"], "the roots resolver leaked into the schema"
    assert tools["memory_save"].input_schema["properties"]["type"]["enum"] == list(limits.MEMORY_TYPES)
    # the CLI's required fields (#51 item 7: `body` was required here, and not there)
    assert set(tools["memory_save"].input_schema["required"]) == {"type", "name", "description"}

    saved = data(
        await client.call_tool(
            "memory_save",
            {
                "type": "feedback",
                "name": "Package manager",
                "description": "Use pnpm, never npm: the lockfile is pnpm-lock.yaml",
                "body": "Always pnpm.\n\n**Why:** the lockfile is pnpm-lock.yaml.\n**How to apply:** run pnpm install.",
                **cwd,
            },
        )
    )
    assert saved["created"] is True
    assert saved["will_stop"] == "will stop: npm, npx — use pnpm"  # what the guard now holds, as the CLI says
    path = memory_dir / saved["filename"]
    bodiless = data(
        await client.call_tool("memory_save", {"type": "user", "name": "Editor", "description": "Helix", **cwd})
    )
    assert "will_stop" not in bodiless  # a memory that forbids nothing says nothing of the guard
    data(await client.call_tool("memory_forget", {"filename": bodiless["filename"], **cwd}))
    assert Path(saved["path"]) == path and "pnpm-lock.yaml" in path.read_text()
    for i, name in enumerate(["Deploy window", "Staging dashboard", "Release owner"]):
        data(
            await client.call_tool(
                "memory_save",
                {
                    "type": "project" if i < 2 else "reference",
                    "name": name,
                    "description": f"{name} for the shop service",
                    "body": f"{name} notes.",
                    **cwd,
                },
            )
        )

    index = data(await client.call_tool("memory_index", cwd))
    assert Path(index["memory_dir"]) == memory_dir and "Package manager" in index["content"]

    shown = data(await client.call_tool("memory_show", {"filename": saved["filename"], **cwd}))
    assert shown["type"] == "feedback" and "run pnpm install" in shown["body"]

    recalled = data(
        await client.call_tool(
            "memory_recall", {"query": "which package manager do we install dependencies with?", **cwd}
        )
    )
    top = recalled["memories"][0]
    assert top["filename"] == saved["filename"] and "pnpm" in top["content"] and top["why"]

    page = data(await client.call_tool("memory_search", {"text": "shop service", "limit": 2, **cwd}))
    assert page["total"] == 3 and len(page["memories"]) == 2 and page["next_offset"] == 2
    rest = data(await client.call_tool("memory_search", {"text": "SHOP SERVICE", "offset": 2, "limit": 2, **cwd}))
    assert len(rest["memories"]) == 1 and rest["next_offset"] is None
    assert {m["filename"] for m in page["memories"] + rest["memories"]} == {p.name for p in memory_dir.glob("*.md")} - {
        saved["filename"],
        "MEMORY.md",
    }
    refs = data(await client.call_tool("memory_search", {"type": "reference", **cwd}))
    assert [m["name"] for m in refs["memories"]] == ["Release owner"]
    # `query` is what agents send: it searches (every word, any order), never lists everything.
    assert "query" in tools["memory_search"].input_schema["properties"]
    found = data(await client.call_tool("memory_search", {"query": "pnpm lockfile", **cwd}))
    assert [m["filename"] for m in found["memories"]] == [saved["filename"]] and found["total"] == 1
    found = data(await client.call_tool("memory_search", {"query": "staging SHOP", **cwd}))
    assert [m["name"] for m in found["memories"]] == ["Staging dashboard"]
    assert data(await client.call_tool("memory_search", {"query": "kubernetes", **cwd}))["total"] == 0

    status = data(await client.call_tool("dream_status", cwd))
    assert Path(status["memory_dir"]) == memory_dir and status["gates"]

    forgot = data(await client.call_tool("memory_forget", {"filename": saved["filename"], **cwd}))
    assert forgot == {"deleted": saved["filename"]} and not path.exists()

    # --- refusals: tool errors with the daemon's message and fix, nothing stored changes ---
    before = sorted(p.name for p in memory_dir.iterdir())
    secret = await client.call_tool(
        "memory_save",
        {"type": "reference", "name": "AWS", "description": "the deploy key", "body": f"key: {AWS_KEY}", **cwd},
    )
    assert secret.is_error and "secret_detected" in text(secret) and AWS_KEY not in text(secret)
    missing = await client.call_tool("memory_show", {"filename": saved["filename"], **cwd})
    assert missing.is_error and "memory_not_found" in text(missing) and "memory_search lists" in text(missing)
    bad_type = await client.call_tool(
        "memory_save", {"type": "secrets", "name": "n", "description": "d", "body": f"b {AWS_KEY}", **cwd}
    )
    assert (
        bad_type.is_error
        and "invalid_arguments" in text(bad_type)
        and "'type': Input should be 'user'" in text(bad_type)
    )
    assert AWS_KEY not in text(bad_type), "a refused argument was echoed back"
    escape = await client.call_tool("memory_forget", {"filename": "../../etc/passwd", **cwd})
    assert escape.is_error and "invalid_filename" in text(escape)
    no_name = await client.call_tool("memory_save", {"type": "user", "description": "d", "body": "b", **cwd})
    assert no_name.is_error and "'name' is required" in text(no_name)
    bad_body = await client.call_tool(
        "memory_save", {"type": "user", "name": "n", "description": "d", "body": 5, **cwd}
    )
    assert bad_body.is_error and "'body': Input should be a valid string" in text(bad_body), text(bad_body)
    for result in (secret, missing, bad_type, escape, no_name, bad_body):
        assert "Traceback" not in text(result)
    assert sorted(p.name for p in memory_dir.iterdir()) == before


def test_stdio_tools_resources_and_prompt(live: LiveDaemon, home: Path, project: Path, memory_dir: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_params(home, project, live.server.port)) as client:
            await exercise(client, project, memory_dir, {})
            await resources_and_prompt(client, memory_dir)

    run(scenario)


async def resources_and_prompt(client: Client, memory_dir: Path) -> None:
    """MEMORY.md and each memory file of the server's project as resources; the instructions prompt."""
    files = sorted(p.name for p in memory_dir.glob("*.md") if p.name != "MEMORY.md")
    listed = {str(r.uri): r for r in (await client.list_resources()).resources}
    assert set(listed) == {"memory://MEMORY.md"} | {f"memory://{f}" for f in files} and len(files) == 3
    staging = next(f for f in files if "staging" in f)
    assert listed[f"memory://{staging}"].description == "Staging dashboard for the shop service"
    index = (await client.read_resource("memory://MEMORY.md")).contents[0].text  # type: ignore[union-attr]
    assert index == (memory_dir / "MEMORY.md").read_text()
    doc = (await client.read_resource(f"memory://{staging}")).contents[0].text  # type: ignore[union-attr]
    assert doc.startswith("---\nname: Staging dashboard\n") and "Staging dashboard notes." in doc
    with pytest.raises(Exception, match="memory_not_found"):
        await client.read_resource("memory://user_nobody.md")

    assert [p.name for p in (await client.list_prompts()).prompts] == ["memory_instructions"]
    prompt = await client.get_prompt("memory_instructions")
    body = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "memory_save" in body and "## What NOT to save" in body and "Staging dashboard" in body


def test_http_tools_with_roots(live: LiveDaemon, project: Path, memory_dir: Path) -> None:
    async def scenario() -> None:
        async with http_client(live.url, live.daemon.token, list_roots_callback=roots_of(project)) as client:
            await exercise(client, project, memory_dir, {})

    run(scenario)


def test_stdio_daemon_down_names_the_start_command(home: Path, project: Path) -> None:
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now

    async def scenario() -> None:
        async with Client(stdio_params(home, project, port)) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            for name, args in [
                ("memory_save", {"type": "user", "name": "n", "description": "d", "body": "b"}),
                ("memory_recall", {"query": "q"}),
            ]:
                result = await client.call_tool(name, args)
                assert (
                    result.is_error and "memoryd is not running" in text(result) and "memoryd serve" in text(result)
                ), text(result)
                assert "Traceback" not in text(result)
            listed = await client.list_resources()
            assert [r.uri for r in listed.resources] == []  # listing stays quiet; reading says why
            with pytest.raises(Exception, match="memoryd serve"):
                await client.read_resource("memory://MEMORY.md")

    run(scenario)
    assert not (home / "projects").exists()


def test_stdio_with_another_home_names_the_token_fix(live: LiveDaemon, tmp_path: Path, project: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_params(tmp_path / "elsewhere", project, live.server.port)) as client:
            result = await client.call_tool("memory_index", {})
            assert (
                result.is_error
                and "[unauthorized]" in text(result)
                and "MEMORYD_HOME" in text(result)
                and "--print-config" in text(result)
            )
            assert live.daemon.token not in text(result)

    run(scenario)


def test_http_needs_the_bearer_token(live: LiveDaemon) -> None:
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        r = loopback_request("POST", live.url + "/mcp", json=hello, headers=accept | headers)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"
    ok = loopback_request(
        "POST", live.url + "/mcp", json=hello, headers=accept | {"Authorization": f"Bearer {live.daemon.token}"}
    )
    assert ok.status_code == 200, ok.text

    async def scenario() -> None:
        # the SDK surfaces the 401 as whatever its transport raises (an exception group today)
        with pytest.raises(Exception):  # noqa: B017
            async with http_client(live.url, None) as client:
                await client.list_tools()

    run(scenario)


def test_http_refuses_foreign_host_and_origin(live: LiveDaemon) -> None:
    """DNS rebinding: a page elsewhere must not drive /mcp even through a loopback socket."""
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {live.daemon.token}"}
    for foreign in (
        {"Host": "evil.example"},
        {"Host": f"evil.example:{live.server.port}"},
        {"Origin": "http://evil.example"},
    ):
        r = loopback_request("POST", live.url + "/mcp", json=hello, headers=headers | foreign)
        assert 400 <= r.status_code < 500 and r.status_code != 404, (foreign, r.status_code, r.text)
    for loopback in ({"Host": f"localhost:{live.server.port}"}, {"Origin": f"http://localhost:{live.server.port}"}):
        assert loopback_request("POST", live.url + "/mcp", json=hello, headers=headers | loopback).status_code == 200, (
            loopback
        )


def test_http_project_from_cwd_argument_else_refused(
    live: LiveDaemon, project: Path, memory_dir: Path, tmp_path: Path
) -> None:
    other = tmp_path / "work" / "other"
    (other / ".git").mkdir(parents=True)

    async def scenario() -> None:
        async with http_client(live.url, live.daemon.token) as client:  # no roots, and a daemon has no useful cwd
            nowhere = await client.call_tool("memory_index", {})
            assert nowhere.is_error and "pass `cwd`" in text(nowhere)
            saved = data(
                await client.call_tool(
                    "memory_save",
                    {
                        "type": "user",
                        "name": "Role",
                        "description": "Backend engineer on the shop",
                        "body": "Go and Postgres.",
                        "cwd": str(project),
                    },
                )
            )
            assert (memory_dir / saved["filename"]).exists()
        async with http_client(live.url, live.daemon.token, list_roots_callback=roots_of(project)) as client:
            # The client's roots name the project first; an explicit cwd comes second.
            index = data(await client.call_tool("memory_index", {"cwd": str(other)}))
            assert Path(index["memory_dir"]) == memory_dir
            doc = await client.read_resource(f"memory://{saved['filename']}?cwd={quote(str(project), safe='')}")
            assert "name: Role" in doc.contents[0].text and "Go and Postgres." in doc.contents[0].text

    run(scenario)


def test_rest_search_pages_and_names_bad_paging(live: LiveDaemon, project: Path) -> None:
    """GET /v1/memories' q/offset/limit, which memory_search pages through."""
    for i in range(3):
        live.client.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "type": "project",
                "name": f"Deploy step {i}",
                "description": f"deploy step {i}",
                "body": "b",
            },
        )
    live.client.post(
        "/v1/memories",
        json={"cwd": str(project), "type": "user", "name": "Role", "description": "backend engineer", "body": "b"},
    )
    everything = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    assert everything["total"] == 4 and len(everything["memories"]) == 4
    page = live.client.get("/v1/memories", params={"cwd": str(project), "q": "DEPLOY", "offset": 1, "limit": 1}).json()
    assert page["total"] == 3 and page["offset"] == 1 and len(page["memories"]) == 1
    for bad, field in [
        ({"limit": 0}, "limit"),
        ({"limit": limits.LIST_PAGE_MAX + 1}, "limit"),
        ({"offset": -1}, "offset"),
    ]:
        r = live.client.get("/v1/memories", params={"cwd": str(project), **bad})
        assert r.status_code == 422 and f"'{field}'" in r.json()["error"]["message"], r.text
