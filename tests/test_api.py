"""The HTTP contract of spec §9 over real loopback: errors, limits, traversal, secrets, watcher."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from memoryd.base import limits
from tests.conftest import LiveDaemon
from tests.support.clock import POLL_SECONDS
from tests.support.servers import loopback_request

FAKE_SECRETS = {
    "Anthropic API key": "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3,
    "OpenAI API key": "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp",
    "AWS access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
    "GitHub token": "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5",
    "Slack token": "xoxb-" + "123456789012-abcdefABCDEF",
    "Google API key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6q",
    "private key block": "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "JSON web token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "credential assignment": "password=hunter2hunter2",
    "high-entropy token": "Q9x7Lm2Zp4Rt8Vb6Nc1Kd3Hf5Jg0Ws7Ye2Ua9Io",
}


def _save(c: httpx.Client, cwd: Path, **fields: str) -> httpx.Response:
    payload = {"cwd": str(cwd), "name": "n", "description": "d", "type": "user", "body": "b"} | fields
    return c.post("/v1/memories", json=payload)


def _err(r: httpx.Response, status: int) -> dict[str, str]:
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] and err["message"]
    return err


def test_list_by_type_newest_first_and_fields(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project
    c = live.client
    for i, t in enumerate(["user", "feedback", "user"]):
        assert _save(c, project, name=f"m{i}", type=t).status_code == 201
        time.sleep(0.01)  # distinct mtimes for the ordering check (not an assertion)
    rows = c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
    assert [r["name"] for r in rows] == ["m2", "m1", "m0"]
    assert set(rows[0]) >= {"filename", "name", "description", "type", "mtime"}
    users = c.get("/v1/memories", params={"cwd": str(project), "type": "user"}).json()["memories"]
    assert [r["name"] for r in users] == ["m2", "m0"]
    got = c.get(f"/v1/memories/{rows[0]['filename']}", params={"cwd": str(project)}).json()
    assert set(got) >= {"filename", "name", "description", "type", "body", "mtime"}
    saved = _save(c, project, name="m9").json()
    assert set(saved) >= {"filename", "path"} and Path(saved["path"]).parent.name == "memory"
    idx = c.get("/v1/index", params={"cwd": str(project)}).json()
    assert set(idx) == {"memory_dir", "content", "truncated", "lines", "bytes"} and idx["truncated"] is False
    assert idx["lines"] == 4 and idx["bytes"] == len(idx["content"].encode())


def test_bad_input_is_a_specific_4xx(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project
    c = live.client
    assert "use one of" in _err(_save(c, project, type="secretz"), 422)["message"]
    assert _err(_save(c, project, body="x" * (limits.MEMORY_BODY_MAX_BYTES + 1)), 422)["message"]
    assert _save(c, project, body="x" * limits.MEMORY_BODY_MAX_BYTES).status_code == 201
    r = c.post("/v1/memories", content=b'{"cwd": "x", "name": ', headers={"content-type": "application/json"})
    assert "valid JSON" in _err(r, 400)["message"]
    err = _err(c.post("/v1/memories", json={"name": "n", "description": "d", "type": "user", "body": "b"}), 422)
    assert "cwd" in err["message"]
    err = _err(c.get("/v1/memories"), 422)
    assert "cwd" in err["message"]
    _err(c.get("/v1/memories", params={"cwd": "relative/path"}), 400)
    _err(c.get("/v1/memories", params={"cwd": str(project), "type": "nope"}), 422)


def test_body_over_256kb_is_413(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project
    c = live.client
    big = b'{"cwd":"' + b"a" * (limits.REQUEST_MAX_BYTES + 1) + b'"}'
    assert (
        _err(c.post("/v1/memories", content=big, headers={"content-type": "application/json"}), 413)["code"]
        == "request_too_large"
    )

    def chunks():  # no Content-Length: chunked transfer encoding
        for _ in range(5):
            yield b"a" * (64 * 1024 + 1)

    r = c.post("/v1/memories", content=chunks(), headers={"content-type": "application/json"})
    assert "content-length" not in {k.lower() for k in r.request.headers}
    _err(r, 413)
    # At the limit exactly: not refused for size (it fails later on its content).
    exact = b'{"cwd":"' + b"a" * (limits.REQUEST_MAX_BYTES - 10) + b'"}'
    assert len(exact) == limits.REQUEST_MAX_BYTES
    assert c.post("/v1/memories", content=exact, headers={"content-type": "application/json"}).status_code != 413


def _raw_get(url: str, target: str, token: str) -> int:
    """Send a request line byte for byte (no client-side normalisation of `..`)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        request = f"GET {target} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        s.sendall(request.encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


@pytest.mark.parametrize(
    "target",
    [
        "/v1/memories/../x.md",
        "/v1/memories/%2e%2e%2fx.md",
        "/v1/memories/..%2F..%2Fetc%2Fpasswd",
        "/v1/memories/%2Fetc%2Fpasswd",
        "/v1/memories/user_..%2F..%2Fx.md",
        "/v1/memories/user_a%5C..%5Cb.md",
        "/v1/memories/user_a%00.md",
        "/v1/memories/user_x.txt",
    ],
)
def test_traversal_never_leaves_the_memory_dir(
    module_live: LiveDaemon, project: Path, tmp_path: Path, target: str
) -> None:
    live = module_live  # read-only: every target is refused
    outside = tmp_path / "x.md"
    outside.write_text("---\nname: x\ndescription: d\ntype: user\n---\nouter\n")
    q = f"?cwd={project}"
    assert _raw_get(live.url, target + q, live.daemon.token) in {400, 404}
    for method in ("GET", "DELETE"):
        r = live.client.request(method, target, params={"cwd": str(project)})
        assert r.status_code in {400, 404}, r.text
    assert outside.exists()


def test_token_required_everywhere_but_health(live: LiveDaemon, project: Path) -> None:
    paths = [
        ("GET", "/v1/status"),
        ("GET", "/v1/index"),
        ("GET", "/v1/prompt"),
        ("GET", "/v1/memories"),
        ("GET", "/v1/memories/user_a.md"),
        ("POST", "/v1/memories"),
        ("DELETE", "/v1/memories/user_a.md"),
        ("GET", "/metrics"),
        ("GET", "/docs"),
        ("GET", "/openapi.json"),
        ("GET", "/redoc"),
    ]
    for method, path in paths:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": live.daemon.token}):
            r = loopback_request(method, live.url + path, params={"cwd": str(project)}, headers=headers)
            assert _err(r, 401)["code"] == "unauthorized", (method, path)
    assert loopback_request("GET", live.url + "/v1/health").json()["status"] == "ok"
    assert live.client.get("/metrics").status_code == 200
    assert live.client.get("/v1/status").status_code == 200
    assert "/v1/recall" in live.client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize("kind", sorted(FAKE_SECRETS))
def test_secrets_refused_without_echo(module_live: LiveDaemon, project: Path, kind: str) -> None:
    live = module_live  # each case refuses a save into its own project
    value = FAKE_SECRETS[kind]
    err = _err(_save(live.client, project, body=f"context line\nthe value {value} here"), 422)
    assert kind in err["message"] and "body at line 2" in err["message"]
    for piece in (value, value[4:20], "hunter2"):
        assert piece not in err["message"]
    assert not list(live.daemon.stores.for_cwd(str(project)).path.glob("*.md"))  # nothing reached disk


def test_secret_in_description_named(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project
    err = _err(_save(live.client, project, description="key " + FAKE_SECRETS["GitHub token"]), 422)
    assert "GitHub token in description" in err["message"]


@pytest.mark.parametrize(
    "body",
    [
        "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b on main.",
        "Run id 123e4567-e89b-12d3-a456-426614174000 reproduced it.",
        "token_count: 100000",
        "The user wants the password reset flow to email a link, never the password itself.",
        "password = os.environ['DB_PASSWORD']",
    ],
)
def test_no_false_positive(module_live: LiveDaemon, project: Path, body: str) -> None:
    assert _save(module_live.client, project, body=body).status_code == 201, body  # into its own project


def test_broken_yaml_by_hand(live: LiveDaemon, project: Path) -> None:
    c = live.client
    assert _save(c, project, name="good").status_code == 201
    store = live.daemon.stores.for_cwd(str(project))
    broken = store.path / "user_broken.md"
    raw = b"---\nname: broken\ndescription: 'unclosed\ntype: user\n---\nbody\n"
    broken.write_bytes(raw)
    listed = c.get("/v1/memories", params={"cwd": str(project)}).json()
    assert [m["filename"] for m in listed["memories"]] == ["user_good.md"]
    assert [f["filename"] for f in listed["invalid"]] == ["user_broken.md"]
    _err(c.get("/v1/memories/user_broken.md", params={"cwd": str(project)}), 422)
    _err(_save(c, project, name="broken"), 422)
    assert broken.read_bytes() == raw
    assert c.get("/v1/index", params={"cwd": str(project)}).status_code == 200
    assert c.get("/v1/prompt", params={"cwd": str(project)}).status_code == 200
    status = c.get("/v1/status").json()
    assert "user_broken.md" in str(status)
    assert c.delete("/v1/memories/user_broken.md", params={"cwd": str(project)}).status_code == 204


def _wait_for(predicate, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"timed out waiting for {what}")


def test_watcher_notices_hand_edits(live: LiveDaemon, project: Path) -> None:
    c = live.client
    assert _save(c, project, name="first", description="one").status_code == 201
    store = live.daemon.stores.for_cwd(str(project))
    index = store.index_path
    added = store.path / "project_by-hand.md"
    added.write_text("---\nname: By hand\ndescription: typed in an editor\ntype: project\n---\nhello\n")
    _wait_for(lambda: "project_by-hand.md" in index.read_text(), "hand-added file indexed")
    added.write_text("---\nname: By hand\ndescription: edited again\ntype: project\n---\nhello\n")
    _wait_for(lambda: "edited again" in index.read_text(), "hand edit indexed")
    (store.path / "user_first.md").unlink()
    _wait_for(lambda: "user_first.md" not in index.read_text(), "hand delete indexed")
    assert "project_by-hand.md" in index.read_text()


def test_worktrees_share_one_memory_dir_over_http(module_live: LiveDaemon, tmp_path: Path) -> None:
    live = module_live  # its own repository
    from tests.test_store import _git

    repo, wt = tmp_path / "repo", tmp_path / "wt"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f").write_text("x")
    _git("add", "f", cwd=repo)
    _git("commit", "-qm", "init", cwd=repo)
    _git("worktree", "add", "-q", str(wt), cwd=repo)
    (repo / "src").mkdir()
    c = live.client
    saved = _save(c, wt, name="shared across worktrees").json()
    for cwd in (repo, repo / "src", wt):
        listed = c.get("/v1/memories", params={"cwd": str(cwd)}).json()["memories"]
        assert [m["filename"] for m in listed] == [saved["filename"]], cwd
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    assert c.get("/v1/memories", params={"cwd": str(plain)}).json()["memories"] == []
    other = _save(c, plain, name="plain").json()
    assert Path(other["path"]).parent != Path(saved["path"]).parent
    assert "not-a-repo" in Path(other["path"]).parent.parent.name


def test_restore_also_refuses_secrets(tmp_path: Path) -> None:
    from memoryd.base.errors import SecretDetected
    from memoryd.store.memdir import MemoryDir

    store = MemoryDir(tmp_path / "m")
    text = "---\nname: n\ndescription: d\ntype: user\n---\n" + FAKE_SECRETS["AWS access key id"] + "\n"
    with pytest.raises(SecretDetected):
        store.restore("user_n.md", text)
    assert not (tmp_path / "m" / "user_n.md").exists()


def test_every_route_takes_one_service_not_all_of_them() -> None:
    """Routes depend on the narrow service they call (api/deps.py), never on the whole `Services`; the Claude
    Code hook too (`HookService`), and every page of the web view on its one `WebView`."""
    from fastapi.dependencies.models import Dependant
    from fastapi.routing import APIRoute

    from memoryd.api import deps
    from memoryd.api.app import ROUTERS
    from memoryd.api.web import routes as ui_routes

    def calls(dependant: Dependant) -> set[object]:
        return {c for d in dependant.dependencies for c in {d.call, *calls(d)}}

    routes = [r for router in ROUTERS for r in router.routes if isinstance(r, APIRoute) and r.path.startswith("/v1/")]
    assert len(routes) > 30
    assert [r.path for r in routes if deps.services in calls(r.dependant)] == []
    getters = {f for name, f in vars(deps).items() if name.startswith("get_")}
    pages = [r for r in ui_routes.router.routes if isinstance(r, APIRoute) and r.path.startswith("/ui")]
    taken = {(r.path, *sorted(r.methods)): calls(r.dependant) & (getters | {deps.services}) for r in pages}
    assert {path: t for path, t in taken.items() if t and t != {deps.get_web}} == {}
    assert sum(t == {deps.get_web} for t in taken.values()) > 15


def test_only_the_composition_roots_import_the_daemon() -> None:
    """The HTTP layer is handed its services (`Services`, built by server.py); nothing else reaches for `Daemon`."""
    import ast

    import memoryd

    package = Path(memoryd.__file__).parent
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if "memoryd.service.daemon" in names:
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"server.py"}
