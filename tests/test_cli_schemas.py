"""`--json-schema` is derived from each command's output type (memoryd/cli/shapes.py): schemas.json
must equal a fresh derivation, and a derived schema still refuses a wrong output.
tests/test_cli_contract.py validates the real output of every command against it."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from memoryd.cli.output import EXIT_CODES
from memoryd.cli.schemas import SCHEMA_FILE, derive, schema_for

STATUS = {
    "version": "0.1.0",
    "mode": "offline",
    "model": None,
    "uptime_seconds": 1.5,
    "pid": 42,
    "home": "/h",
    "memory_dirs": [],
    "watched_folders": {},
    "invalid_files": {},
    "llm_usage": {},
    "log_file": "/h/logs/memoryd.log",
    "memory_location": {},
    "jobs": {},
}
SETUP = {"dry_run": True, "steps": [{"step": "service", "action": "would", "detail": "write the unit"}], "doctor": None}
HEADER = {
    "filename": "user_a.md",
    "name": "a",
    "description": "d",
    "type": "user",
    "mtime": "2026-03-04T10:00:00.000+00:00",
}
LISTED = {"memories": [HEADER], "total": 1, "offset": 0, "next_offset": None, "invalid": []}
TEAM_SAVE = {
    "version": "v",
    "filename": "user_a.md",
    "name": "a",
    "description": "d",
    "type": "user",
    "body": "b",
    "mtime": "2026-03-04T10:00:00.000+00:00",
    "modified": "",
    "path": "/p/user_a.md",
    "new": True,
}


def test_the_schema_file_is_derived_from_the_shapes() -> None:
    derived = derive()
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == derived, (
        "a shape changed: run `python -m memoryd.cli.schemas` and commit schemas.json"
    )
    error_defs = derived["error"].get("$defs", {})
    for command, schema in derived["commands"].items():
        assert not error_defs.keys() & schema.get("$defs", {}).keys(), command  # one document root holds both


def _valid(command: str, output: Any) -> bool:
    try:
        jsonschema.validate(output, schema_for(command, EXIT_CODES))
    except jsonschema.ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("command", "good", "bad"),
    [
        ("status", STATUS, {k: v for k, v in STATUS.items() if k != "pid"}),
        ("status", STATUS, {**STATUS, "mode": "online"}),
        ("setup", SETUP, {**SETUP, "steps": [{**SETUP["steps"][0], "action": "bogus"}]}),
        ("setup", SETUP, {**SETUP, "surprise": 1}),
        ("list", LISTED, {**LISTED, "memories": [{**HEADER, "mtime": 1772618400.0}]}),  # times are ISO strings
        ("stop", {"stopped": True, "pid": 42}, {"stopped": False, "pid": 42}),
        ("save", TEAM_SAVE, {k: v for k, v in TEAM_SAVE.items() if k != "new"}),
        (
            "list",
            {"error": {"code": "usage", "message": "m"}},
            {"error": {"code": "usage", "message": "m", "extra": 1}},
        ),
    ],
)
def test_a_schema_refuses_a_wrong_output(command: str, good: Any, bad: Any) -> None:
    assert _valid(command, good)
    assert not _valid(command, bad)
