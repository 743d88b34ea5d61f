"""One error tree, rendered the same by routes and middleware; every validation 4xx names the field
and the fix, for every route: a missing field, a wrong type, an extra field."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

import memoryd.base.errors as errors_module
from memoryd.base.errors import ConfigError, MemorydError, RequestTooLarge, Unauthorized
from memoryd.config_sources import load_settings
from tests.conftest import LiveDaemon
from tests.support.servers import loopback_client


@pytest.fixture
def live(module_live: LiveDaemon) -> LiveDaemon:
    """Each test keeps to its own project (requests refused before they change anything): one daemon for the module."""
    return module_live


# Every route with a JSON body: a good body, the fields it requires, and whether extra keys are
# refused (ours) or ignored (turn-end and the hook take Claude Code's hook JSON as it is).
def _bodies(project: Path, transcript: Path) -> dict[str, tuple[dict[str, Any], list[str], bool]]:
    cwd = str(project)
    return {
        "/v1/memories": (
            {"cwd": cwd, "name": "n", "description": "d", "type": "user", "body": "b"},
            ["cwd", "name", "description", "type"],
            True,
        ),
        "/v1/recall": ({"cwd": cwd, "query": "two words", "session_id": "s1"}, ["cwd", "query", "session_id"], True),
        "/v1/events/turn-end": (
            {"cwd": cwd, "session_id": "s1", "transcript_path": str(transcript)},
            ["cwd", "session_id", "transcript_path"],
            False,
        ),
        "/v1/dream/run": ({"cwd": cwd}, ["cwd"], True),
        "/v1/dream/cancel": ({"cwd": cwd}, ["cwd"], True),
        "/v1/hooks/claude-code": ({"hook_event_name": "Notification"}, [], False),
    }


# Every route with query parameters: good params, the required ones, and one typed parameter.
def _queries(project: Path) -> dict[str, tuple[dict[str, str], list[str], tuple[str, str] | None]]:
    cwd = {"cwd": str(project)}
    return {
        "/v1/index": (cwd, ["cwd"], None),
        "/v1/prompt": (cwd, ["cwd"], None),
        "/v1/memories": (cwd, ["cwd"], None),
        "/v1/dream/status": (cwd, ["cwd"], None),
        "/v1/dream/runs": (cwd, ["cwd"], None),
        "/v1/transcripts/search": ({"q": "deploy"}, [], ("limit", "many")),
    }


def _err(r: httpx.Response, status: int) -> dict[str, str]:
    assert r.status_code == status, r.text
    return r.json()["error"]  # type: ignore[no-any-return]


@pytest.fixture
def transcript(live: LiveDaemon) -> Path:
    path = live.daemon.settings.transcript_roots[0] / "p" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("")
    return path


def test_every_body_route_names_a_missing_a_mistyped_and_an_extra_field(
    live: LiveDaemon, project: Path, transcript: Path
) -> None:
    c = live.client
    for path, (good, required, refuses_extra) in _bodies(project, transcript).items():
        for field in required:
            err = _err(c.post(path, json={k: v for k, v in good.items() if k != field}), 422)
            assert f"'{field}' is required" in err["message"] and "add it to the body" in err["message"], (path, err)
        for field in required or ["hook_event_name"]:
            err = _err(c.post(path, json=good | {field: 12345}), 422)
            assert (
                f"'{field}'" in err["message"]
                and "fix its value" in err["message"]
                and "valid string" in err["message"]
            ), (path, err)
            assert "12345" not in err["message"], (path, err)  # the input is never echoed
        extra = c.post(path, json=good | {"nmae": "typo"})
        if refuses_extra:
            err = _err(extra, 422)
            assert "'nmae' is not a field of this request: remove it" in err["message"], (path, err)
            assert all(f in err["message"] for f in required), (path, err)  # lists the real fields
        else:
            assert extra.status_code < 400, (path, extra.text)
        err = _err(c.post(path), 422)  # no body at all: today's "'' is required"
        assert "'' " not in err["message"] and "the JSON body is missing" in err["message"], (path, err)
        assert all(repr(f) in err["message"] for f in required), (path, err)
        err = _err(c.post(path, content=b"[1, 2]", headers={"content-type": "application/json"}), 422)
        assert "must be a JSON object" in err["message"], (path, err)
        err = _err(c.post(path, content=b'{"cwd": ', headers={"content-type": "application/json"}), 400)
        assert "not valid JSON" in err["message"] and err["code"] == "invalid_json"


def test_every_query_route_names_a_missing_and_a_mistyped_parameter(live: LiveDaemon, project: Path) -> None:
    c = live.client
    for path, (good, required, typed) in _queries(project).items():
        assert c.get(path, params=good).status_code == 200, path
        for name in required:
            err = _err(c.get(path, params={k: v for k, v in good.items() if k != name}), 422)
            assert f"'{name}' is required" in err["message"] and "query string" in err["message"], (path, err)
        if typed:
            err = _err(c.get(path, params=good | {typed[0]: typed[1]}), 422)
            assert (
                f"'{typed[0]}'" in err["message"]
                and "valid integer" in err["message"]
                and typed[1] not in err["message"]
            ), (path, err)
        # Unknown query parameters are ignored, as HTTP clients expect (a cache-buster must not fail).
        assert c.get(path, params=good | {"extra": "1"}).status_code == 200, path


def test_middleware_errors_are_the_trees_own(live: LiveDaemon) -> None:
    with loopback_client(live.url, timeout=10) as anonymous:
        r = anonymous.get("/v1/status")
        assert r.status_code == Unauthorized.status and r.json()["error"]["code"] == Unauthorized.code
        assert r.headers["www-authenticate"] == "Bearer"
    r = live.client.post(
        "/v1/recall", content=b"{" + b" " * (300 * 1024) + b"}", headers={"content-type": "application/json"}
    )
    assert r.status_code == RequestTooLarge.status and r.json()["error"]["code"] == RequestTooLarge.code


def test_every_error_class_lives_in_the_tree() -> None:
    """Nothing outside memoryd/base/errors.py defines a MemorydError, and each one says when it is raised."""
    stack, seen = [MemorydError], []
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        seen.append(cls)
    assert all(cls.__module__ == "memoryd.base.errors" for cls in seen), [
        c for c in seen if c.__module__ != "memoryd.base.errors"
    ]
    assert all(cls.__doc__ and cls.code and cls.status for cls in seen)
    assert all(
        cls.__name__ in (errors_module.__doc__ or "") or cls is MemorydError for cls in seen if inspect.isclass(cls)
    )


def test_a_bad_config_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[server\nport = ")
    with pytest.raises(ConfigError) as raised:
        load_settings({"MEMORYD_HOME": str(tmp_path)}, home=tmp_path)
    assert "config.toml" in raised.value.message and "fix it" in raised.value.message
    (tmp_path / "config.toml").write_text("[server]\nport = 'many'\n")
    with pytest.raises(ConfigError):
        load_settings({"MEMORYD_HOME": str(tmp_path)}, home=tmp_path)
    with pytest.raises(ConfigError):
        load_settings({"MEMORYD_HOME": str(tmp_path), "MEMORYD_PORT": "x"}, home=tmp_path / "none")


def test_route_validation_keeps_the_core_status(live: LiveDaemon, project: Path) -> None:
    """A core check run by the model keeps its code and status (400), like the same check in the core."""
    err = _err(live.client.get("/v1/memories", params={"cwd": "relative/path"}), 400)
    assert err["code"] == "invalid_cwd" and "absolute" in err["message"]
    body = json.dumps({"cwd": str(project), "query": "two words", "session_id": "my session"})
    err = _err(live.client.post("/v1/recall", content=body, headers={"content-type": "application/json"}), 400)
    assert err["code"] == "invalid_session_id"
