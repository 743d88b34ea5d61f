"""The JSON Schema of each command's `--json` output (`memoryd COMMAND --json-schema`) and of the one
error shape, derived from their types (memoryd/cli/shapes.py) with pydantic. Deriving imports the whole
API (~1 s), so the schemas are kept in schemas.json, which tests/test_cli_schemas.py holds equal to a
fresh derivation: after changing a shape, run `python -m memoryd.cli.schemas` to rewrite it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SCHEMA_FILE = Path(__file__).with_name("schemas.json")
DRAFT = "https://json-schema.org/draft/2020-12/schema"
NO_JSON = {"description": "no JSON output"}
TIME = {"type": "string", "format": "date-time"}
TIME_KEYS = ("mtime", "next_check")  # and every `*_at` key


def is_time_key(key: str) -> bool:
    """Keys whose values are times: typed as ISO-8601 strings here, and printed so by output.normalize."""
    return key in TIME_KEYS or key.endswith("_at")


def schema_for(command: str, exit_codes: dict[int, str]) -> dict[str, Any]:
    """The command's success schema and the shared error schema, with the exit codes the CLI uses."""
    schemas = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    success, error = schemas["commands"].get(command, NO_JSON), schemas["error"]
    defs = {**success.get("$defs", {}), **error.get("$defs", {})}  # one root for every "#/$defs/..." reference
    return {
        "$schema": DRAFT,
        "title": f"memoryd {command} --json",
        "anyOf": [_without_defs(success), _without_defs(error)],
        **({"$defs": defs} if defs else {}),
        "exit_codes": {str(k): v for k, v in exit_codes.items()},
    }


def _without_defs(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "$defs"}


# ------------------------------------------------------------------ derivation (tests and the rewrite only)
def derive() -> dict[str, Any]:
    """Every command's success schema, and the error's, from their types."""
    from memoryd.cli.shapes import COMMAND_SHAPES, CliError

    return {
        "error": _schema(CliError),
        "commands": {command: _schema(shape) for command, shape in COMMAND_SHAPES.items()},
    }


def _schema(shape: Any) -> dict[str, Any]:
    from pydantic import TypeAdapter

    schema: dict[str, Any] = _iso_times(TypeAdapter(shape).json_schema())
    return schema


def _iso_times(schema: Any) -> Any:
    """Times as the CLI prints them (output.normalize): ISO-8601 strings under the time keys, whether
    the daemon's model has them as epoch numbers or as strings."""
    if isinstance(schema, list):
        return [_iso_times(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _iso_times(value) for key, value in schema.items()}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            name: _as_time(prop) if is_time_key(name) else prop for name, prop in out["properties"].items()
        }
    return out


def _as_time(prop: dict[str, Any]) -> dict[str, Any]:
    """A time property: each of its non-null forms becomes an ISO-8601 string."""
    if "anyOf" in prop:
        return {**prop, "anyOf": [form if form.get("type") == "null" else TIME for form in prop["anyOf"]]}
    return {**{k: v for k, v in prop.items() if k != "type"}, **TIME}


def write() -> None:
    SCHEMA_FILE.write_text(json.dumps(derive(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write()
