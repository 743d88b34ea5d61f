"""`LLMClient`: every model call of the daemon goes through `complete`, whatever the backend
(anthropic SDK, any Messages API, the user's `claude`): metered per purpose and backend, held
to the daily token cap, retried by one policy, structured answers validated with pydantic.
Foreign errors become `LLMUnavailable` / `TokenBudgetExceeded` here, so callers fall back
without knowing the backend.

It does NOT hold prompts; recall, extraction and dream own theirs.
"""

from __future__ import annotations

import json
import logging
import random
import re
import threading
import time
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from memoryd.base import limits
from memoryd.base.errors import LLMUnavailable, TokenBudgetExceeded
from memoryd.base.secrets import redact_secrets
from memoryd.llm.backend import Backend, BackendError, Call
from memoryd.llm.meter import UsageMeter

if TYPE_CHECKING:
    from memoryd.config import Settings

log = logging.getLogger(__name__)

INTERACTIVE_PURPOSES = frozenset({"recall"})  # an agent waits on these: no retries, ever
TOOL_NAME = "answer"


@dataclass(frozen=True)
class LLMResult:
    text: str
    input_tokens: int
    output_tokens: int
    model: str
    data: Any = None  # the validated pydantic model when `complete` was given a schema
    backend: str = ""


def _redacted(message: dict[str, Any]) -> dict[str, Any]:
    """A message with every text part passed through `redact_secrets`."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": redact_secrets(content)}
    if isinstance(content, list):
        parts = [
            {**p, "text": redact_secrets(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
            for p in content
        ]
        return {**message, "content": parts}
    return message


class LLMClient:
    """One backend behind one method. `enabled` is False in offline mode (`why_offline` says why)."""

    def __init__(
        self,
        *,
        api_key: str = "",
        model: str = "",
        base_url: str = "",
        timeout_seconds: float = 60.0,
        meter: UsageMeter,
        enabled: bool = True,
        backend: Backend | None = None,
        retries: int = limits.LLM_RETRIES,
        why_offline: str = "",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if backend is None and enabled and api_key:
            from memoryd.llm.sdk import MessagesBackend

            backend = MessagesBackend(
                name="anthropic", model=model, api_key=api_key, base_url=base_url, timeout=timeout_seconds
            )
        self.backend = backend if enabled else None
        self.timeout_seconds = timeout_seconds
        self.meter = meter
        self.retries = retries
        self.why_offline = (
            why_offline or "no LLM configured: set ANTHROPIC_API_KEY, sign in to `claude`, or set [llm] backend."
        )
        self._sleep = sleep
        self._last: dict[str, Any] | None = None
        self._last_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, *, meter: UsageMeter) -> LLMClient:
        from memoryd.llm.choose import choose_backend

        backend, why = choose_backend(settings)
        return cls(
            backend=backend,
            timeout_seconds=settings.llm.timeout_seconds,
            meter=meter,
            retries=settings.llm.retries,
            why_offline=why,
            enabled=backend is not None,
        )

    @property
    def enabled(self) -> bool:
        return self.backend is not None

    @property
    def mode(self) -> str:
        return "llm" if self.enabled else "offline"

    @property
    def model(self) -> str | None:
        return self.backend.model if self.backend is not None else None

    @property
    def backend_name(self) -> str:
        return self.backend.name if self.backend is not None else "off"

    def status(self) -> dict[str, Any]:
        """Backend, model, signed in, last call's outcome and today's spend, for /v1/status and doctor."""
        info: dict[str, Any] = {"mode": self.mode, "backend": self.backend_name, "model": self.model}
        if self.backend is not None:
            info.update(self.backend.describe())
        else:
            info["why_offline"] = self.why_offline
        spend = self.meter.summary()
        info["tokens_today"] = spend["tokens_used"]
        info["daily_cap"] = spend["daily_cap"]
        info["last_call"] = self._last
        if not self.enabled:
            info["status_line"] = self.why_offline
        elif spend["cap_reached"]:
            info["status_line"] = (
                f"daily token cap of {spend['daily_cap']:,} reached: offline until 00:00 UTC ([llm] daily_token_cap)"
            )
        else:
            info["status_line"] = f"{self.backend_name} ({self.model}), {spend['tokens_used']:,} tokens today"
        return info

    def complete(
        self,
        *,
        purpose: str,
        system: str,
        messages: list[dict[str, Any]] | None = None,
        user: str | None = None,
        max_tokens: int = 1024,
        timeout: float | None = None,
        temperature: float = 0.0,
        schema: type[BaseModel] | None = None,
    ) -> LLMResult:
        """One model answer; with `schema`, asked for through tool use and validated (`result.data`).

        Raises LLMUnavailable or TokenBudgetExceeded, never a backend's own errors. Background
        purposes retry 429/529/5xx with backoff; recall does not retry at all.
        """
        if self.backend is None:
            raise LLMUnavailable(self.why_offline)
        backend = self.backend
        messages = messages if messages is not None else [{"role": "user", "content": user or ""}]
        messages = [_redacted(m) for m in messages]  # the one door to every backend: no secret passes it
        call = Call(
            purpose=purpose,
            system=system,
            messages=messages,
            max_tokens=max_tokens,
            timeout=timeout if timeout is not None else self.timeout_seconds,
            temperature=temperature,
            tool=tool_for(schema) if schema is not None else None,
        )
        transient_left = 0 if purpose in INTERACTIVE_PURPOSES else self.retries
        malformed_left = limits.LLM_MALFORMED_RETRIES
        attempt = 0
        while True:
            try:
                self.meter.check_cap(purpose)
            except TokenBudgetExceeded as exc:
                self._note(purpose, "cap", exc.message)
                raise
            attempt += 1
            try:
                answer = backend.call(call)
            except BackendError as exc:
                self._failed(purpose, backend.name, exc, attempt, may_retry=transient_left > 0)
                transient_left -= 1
                continue
            self.meter.record(purpose, answer.input_tokens, answer.output_tokens, backend=backend.name)
            if schema is None:
                self._note(purpose, "ok", "")
                return LLMResult(
                    answer.text, answer.input_tokens, answer.output_tokens, answer.model, backend=backend.name
                )
            try:
                data = validate(schema, answer.data, answer.text)
            except (ValidationError, LLMUnavailable) as exc:
                if malformed_left > 0:
                    malformed_left -= 1
                    log.info("%s: the model's answer did not fit the schema; asking once more", purpose)
                    continue
                self._note(purpose, "malformed", "the answer did not fit the schema twice")
                raise LLMUnavailable(
                    f"{backend.name} answered {purpose} twice without valid structured output; the offline path was "
                    "used."
                ) from exc
            self._note(purpose, "ok", "")
            return LLMResult(
                json.dumps(data.model_dump(), ensure_ascii=False),
                answer.input_tokens,
                answer.output_tokens,
                answer.model,
                data=data,
                backend=backend.name,
            )

    def _failed(self, purpose: str, backend: str, exc: BackendError, attempt: int, *, may_retry: bool) -> None:
        """A failed call is metered; a transient failure with retries left waits its backoff (the caller tries
        again), any other raises LLMUnavailable."""
        self.meter.record(purpose, exc.input_tokens, exc.output_tokens, failed=True, backend=backend)
        if exc.transient and may_retry:
            wait = backoff_seconds(attempt, exc.retry_after)
            log.info("%s: %s; retry %d in %.1f s", purpose, exc.message, attempt, wait)
            self._sleep(wait)
            return
        tried = f" (after {attempt} tries)" if attempt > 1 else ""
        self._note(purpose, "error", exc.message + tried)
        raise LLMUnavailable(f"{exc.message}{tried}; the offline path was used.") from exc

    def _note(self, purpose: str, outcome: str, detail: str) -> None:
        with self._last_lock:
            self._last = {
                "purpose": purpose,
                "backend": self.backend_name,
                "outcome": outcome,
                "detail": detail,
                "at": self.meter.now().astimezone(UTC).isoformat(timespec="seconds"),
            }


def backoff_seconds(attempt: int, retry_after: float | None) -> float:
    """The server's retry-after when it sent one, else 1, 2, 4 … s with jitter; capped."""
    if retry_after is not None:
        return min(retry_after, limits.LLM_RETRY_MAX_WAIT_SECONDS)
    base = limits.LLM_RETRY_BASE_SECONDS * 2.0 ** (attempt - 1)
    return min(base * (0.5 + random.random() / 2), limits.LLM_RETRY_MAX_WAIT_SECONDS)


def tool_for(schema: type[BaseModel]) -> dict[str, Any]:
    """The one tool the model must call to answer: its input is the schema."""
    return {
        "name": TOOL_NAME,
        "description": f"Give your answer as {schema.__name__}. Call this exactly once.",
        "input_schema": schema.model_json_schema(),
    }


def validate(schema: type[BaseModel], data: dict[str, Any] | None, text: str) -> BaseModel:
    """The tool input, or for servers that answer in text instead (some local models), the JSON in the text."""
    if data is not None:
        return schema.model_validate(data)
    list_field = _only_list_field(schema)
    bracket, brace = text.find("["), text.find("{")
    if (
        list_field is not None and bracket != -1 and (brace == -1 or bracket < brace)
    ):  # a bare array, as the old prompts asked for
        try:
            return schema.model_validate({list_field: extract_json(text, expect=list)})
        except (LLMUnavailable, ValidationError):
            pass
    return schema.model_validate(extract_json(text, expect=dict))


def _only_list_field(schema: type[BaseModel]) -> str | None:
    fields = list(schema.model_fields.items())
    if len(fields) == 1 and typing.get_origin(fields[0][1].annotation) is list:
        return fields[0][0]
    return None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str, *, expect: type = dict) -> Any:
    """The first JSON object (or array) in a model's answer, code fences allowed.

    Raises LLMUnavailable when there is none: "the LLM answered garbage" is a fallback case.
    """
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    opener = "{" if expect is dict else "["
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find(opener)
        while start != -1:
            try:
                value, _ = decoder.raw_decode(candidate[start:])
            except json.JSONDecodeError:
                start = candidate.find(opener, start + 1)
                continue
            if isinstance(value, expect):
                return value
            start = candidate.find(opener, start + 1)
    raise LLMUnavailable(
        f"the LLM answered without a JSON {'object' if expect is dict else 'array'}; the offline path was used."
    )
