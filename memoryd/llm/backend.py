"""What every backend takes and gives: one `Call` in, one `Answer` out, or a `BackendError`
that says whether trying again could help (429/529/5xx, connection) and how long to wait."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Call:
    purpose: str
    system: str
    messages: list[dict[str, Any]]
    max_tokens: int
    timeout: float
    temperature: float = 0.0
    tool: dict[str, Any] | None = None  # {"name", "description", "input_schema"}: ask for structured output


@dataclass(frozen=True)
class Answer:
    text: str
    input_tokens: int
    output_tokens: int
    model: str
    data: dict[str, Any] | None = None  # the tool's input when the model answered through the tool


@dataclass
class BackendError(Exception):
    """A failed call. `message` is for people (what happened, what to do); never a secret."""

    message: str
    transient: bool = False
    retry_after: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


class Backend(Protocol):
    name: str
    model: str

    def call(self, call: Call) -> Answer: ...

    def describe(self) -> dict[str, Any]:
        """What doctor and /v1/status show: model, endpoint or binary, signed in."""
        ...


def is_transient_status(status: int) -> bool:
    """429 (rate limit), 529 (overloaded), 408/409 and every 5xx are worth another try."""
    return status in (408, 409, 429) or status >= 500


def parse_retry_after(value: str | None) -> float | None:
    """`retry-after` in seconds (the HTTP-date form is rare on these APIs and ignored)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """A conversation flattened for a backend that takes one prompt (the CLI)."""
    parts: list[str] = []
    for m in messages:
        content = m.get("content")
        text = (
            content
            if isinstance(content, str)
            else "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
        )
        parts.append(text if m.get("role") == "user" and len(messages) == 1 else f"{m.get('role', 'user')}: {text}")
    return "\n\n".join(parts)
