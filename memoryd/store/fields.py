"""What a memory's fields may hold: a known type, a one-line name and a description within their limits, a body
within its size, no NUL byte; each refusal names the limit and the fix."""

from __future__ import annotations

from memoryd.base import limits
from memoryd.base.errors import InvalidMemory


def validate_fields(name: str, description: str, type_: str, body: str) -> None:
    """Refuse unknown types and empty or oversized fields, naming the limit."""
    if type_ not in limits.MEMORY_TYPES:
        raise InvalidMemory(f"unknown memory type {type_!r}: use one of {', '.join(limits.MEMORY_TYPES)}.")
    for field, value in (("name", name), ("description", description), ("body", body)):
        if "\x00" in value:  # issue 41: the file was written, then refused on its re-read and left behind
            raise InvalidMemory(f"{field} holds a NUL byte (\\x00): memories are UTF-8 text; remove it and save again.")
    headlines = (  # each: its limit, then the fix for an empty one and for a long one
        (
            "name",
            name,
            limits.MEMORY_NAME_MAX_CHARS,
            "give the memory a short title, e.g. 'Testing preferences'.",
            "shorten the title and put detail in the body.",
        ),
        (
            "description",
            description,
            limits.MEMORY_DESCRIPTION_MAX_CHARS,
            "add one specific line; recall decides relevance from it.",
            "keep it to one line and move detail into the body.",
        ),
    )
    for field, value, most, if_empty, if_long in headlines:
        if not value.strip():
            raise InvalidMemory(f"{field} is empty: {if_empty}")
        if len(value) > most:
            raise InvalidMemory(f"{field} is {len(value)} chars, over {most}: {if_long}")
        if field == "name" and "\n" in value.strip():
            raise InvalidMemory("name spans several lines: use a one-line title.")
    size = len(body.encode("utf-8"))
    if size > limits.MEMORY_BODY_MAX_BYTES:
        raise InvalidMemory(
            f"body is {size:,} bytes, over {limits.MEMORY_BODY_MAX_BYTES:,}: split it into several focused memories."
        )
