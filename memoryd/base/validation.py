"""Checks on values that come from outside (session ids, paths, text), in one place so the API
models and the core refuse the same input with the same fix-naming message.

It does NOT touch the filesystem: a value that passes may still name a path that does not exist.
"""

from __future__ import annotations

import os
import re

from memoryd.base import limits
from memoryd.base.errors import InvalidPath, InvalidRequest, InvalidSessionId, InvalidText

_SESSION_ID = re.compile(rf"^[A-Za-z0-9][A-Za-z0-9._-]{{0,{limits.SESSION_ID_MAX_CHARS - 1}}}$")
_SURROGATE = re.compile("[\ud800-\udfff]")
TRANSCRIPT_PATH_EXAMPLE = "~/.claude/projects/<project>/<session id>.jsonl (the hook JSON's transcript_path)"


def check_session_id(session_id: str, *, field: str = "session_id") -> str:
    """An agent's session id: letters, digits, '.', '_', '-' (no spaces, no separators)."""
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id):
        shown = repr(session_id)[:80] if isinstance(session_id, str) else type(session_id).__name__
        raise InvalidSessionId(
            f"{field} {shown} is not valid: pass the agent's own session id (Claude Code's hook JSON has it), "
            f"made of letters, digits, '.', '_' or '-', at most {limits.SESSION_ID_MAX_CHARS} characters."
        )
    return session_id


def check_text(value: str, *, field: str) -> str:
    """Text memoryd may store: no lone surrogate (e.g. a JSON "\\ud800"), which UTF-8 cannot encode."""
    found = _SURROGATE.search(value)
    if found is not None:
        raise InvalidText(
            f"{field} holds a lone surrogate (U+{ord(found.group()):04X} at character {found.start()}), which is not "
            "valid "
            "Unicode: send real characters (a JSON \\ud83d\\ude00 pair is fine, a lone \\ud800 is not)."
        )
    return value


def check_path(value: str, *, field: str, error: type[InvalidRequest] = InvalidPath, example: str = "$PWD") -> str:
    """An absolute path the filesystem can hold: no NUL, no lone surrogate, every component at most
    NAME_MAX bytes and the whole at most PATH_MAX bytes. Raises `error` (a subclass of InvalidRequest)."""
    if not isinstance(value, str) or not value:
        raise error(f"{field} is required: pass an absolute path, e.g. {example}.")
    if "\x00" in value:
        raise error(f"{field} contains a NUL byte (\\u0000); pass a plain absolute path.")
    if _SURROGATE.search(value):
        raise error(f"{field} holds a lone surrogate (e.g. \\ud800), which no file name can hold; pass the real path.")
    if not value.startswith("/"):
        raise error(f"{field} must be an absolute path, got {value[:200]!r}; pass e.g. {example}.")
    size = len(value.encode("utf-8"))
    if size > limits.PATH_MAX_BYTES:
        raise error(
            f"{field} is {size:,} bytes, over the {limits.PATH_MAX_BYTES:,}-byte path limit; pass the real path."
        )
    for part in value.split("/"):
        if len(part.encode("utf-8")) > limits.PATH_COMPONENT_MAX_BYTES:
            raise error(
                f"{field} has a component of {len(part.encode('utf-8')):,} bytes ({part[:40]}…), over the "
                f"{limits.PATH_COMPONENT_MAX_BYTES}-byte limit of a file name; no such directory can exist, pass the "
                "real path."
            )
    return value


def check_transcript_path(value: str, *, field: str = "transcript_path") -> str:
    """A transcript path as an agent sends it (`~` allowed): `check_path` after expanding the user."""
    check_path(
        os.path.expanduser(value) if isinstance(value, str) else value, field=field, example=TRANSCRIPT_PATH_EXAMPLE
    )
    return value
