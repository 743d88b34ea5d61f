"""`LLMClient`: every LLM call of the daemon goes through `complete`, metered by purpose and
held to a daily token cap. Foreign errors become `LLMUnavailable` / `TokenBudgetExceeded`
here, so callers fall back without knowing the SDK.

It does NOT hold prompts; recall, extraction and dream own theirs.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Callable


from memoryd.errors import LLMUnavailable, TokenBudgetExceeded

if TYPE_CHECKING:
    import anthropic
from memoryd.metrics import Metrics
from memoryd.store.secrets import redact_secrets
from memoryd.state import StateDB

log = logging.getLogger(__name__)

USAGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_usage (
    day TEXT NOT NULL,
    purpose TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, purpose)
);
"""


@dataclass(frozen=True)
class LLMResult:
    text: str
    input_tokens: int
    output_tokens: int
    model: str


class UsageMeter:
    """Token spend per UTC day and purpose, in SQLite and Prometheus."""

    def __init__(self, state: StateDB, metrics: Metrics, *, daily_cap: int, now: Callable[[], datetime]) -> None:
        self.state = state
        self.metrics = metrics
        self.daily_cap = daily_cap
        self._now = now
        state.migrate("llm_usage", USAGE_SCHEMA)

    def today(self) -> str:
        return self._now().astimezone(timezone.utc).date().isoformat()

    def used_today(self) -> int:
        row = self.state.query_one("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS n FROM llm_usage WHERE day = ?", (self.today(),))
        return int(row["n"]) if row else 0

    def check_cap(self, purpose: str) -> None:
        if self.daily_cap and self.used_today() >= self.daily_cap:
            raise TokenBudgetExceeded(
                f"daily LLM token cap of {self.daily_cap:,} reached; {purpose} runs offline until 00:00 UTC. "
                "Raise [llm] daily_token_cap in config.toml to allow more."
            )

    def record(self, purpose: str, input_tokens: int, output_tokens: int, *, failed: bool = False) -> None:
        self.state.execute(
            "INSERT INTO llm_usage(day, purpose, calls, failures, input_tokens, output_tokens) VALUES (?, ?, 1, ?, ?, ?) "
            "ON CONFLICT(day, purpose) DO UPDATE SET calls = calls + 1, failures = failures + excluded.failures, "
            "input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens",
            (self.today(), purpose, int(failed), input_tokens, output_tokens),
        )
        self.metrics.llm_tokens.labels(purpose, "input").inc(input_tokens)
        self.metrics.llm_tokens.labels(purpose, "output").inc(output_tokens)
        self.metrics.llm_calls.labels(purpose, "error" if failed else "ok").inc()

    def by_day(self, days: int = 14) -> list[dict[str, Any]]:
        """Tokens per UTC day and purpose over the last `days` days, oldest first."""
        first = (self._now().astimezone(timezone.utc).date() - timedelta(days=days - 1)).isoformat()
        rows = self.state.query("SELECT day, purpose, input_tokens + output_tokens AS tokens FROM llm_usage WHERE day >= ? ORDER BY day", (first,))
        return [{"day": r["day"], "purpose": r["purpose"], "tokens": int(r["tokens"])} for r in rows]

    def summary(self) -> dict[str, Any]:
        rows = self.state.query("SELECT purpose, calls, failures, input_tokens, output_tokens FROM llm_usage WHERE day = ?", (self.today(),))
        by_purpose = {r["purpose"]: {k: r[k] for k in ("calls", "failures", "input_tokens", "output_tokens")} for r in rows}
        used = sum(v["input_tokens"] + v["output_tokens"] for v in by_purpose.values())
        return {"day": self.today(), "tokens_used": used, "daily_cap": self.daily_cap, "by_purpose": by_purpose}


def _redacted(message: dict[str, Any]) -> dict[str, Any]:
    """A message with every text part passed through `redact_secrets`."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": redact_secrets(content)}
    if isinstance(content, list):
        parts = [{**p, "text": redact_secrets(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p for p in content]
        return {**message, "content": parts}
    return message


class LLMClient:
    """The anthropic SDK behind one method. `enabled` is False in offline mode."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        base_url: str = "",
        timeout_seconds: float = 60.0,
        meter: UsageMeter,
        enabled: bool = True,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout_seconds = timeout_seconds
        self.meter = meter
        self.enabled = enabled and bool(api_key)
        self._client: "anthropic.Anthropic | None" = None
        if self.enabled:
            # Imported here: the SDK costs ~65 MB of RSS, which an offline daemon never needs.
            import anthropic

            self._client = anthropic.Anthropic(
                api_key=api_key,
                base_url=base_url or None,
                timeout=timeout_seconds,
                max_retries=0,  # callers own their deadlines; a retry would blow them
            )

    @property
    def mode(self) -> str:
        return "llm" if self.enabled else "offline"

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
    ) -> LLMResult:
        """One Messages API call; raises LLMUnavailable or TokenBudgetExceeded, never SDK errors."""
        if not self.enabled or self._client is None:
            raise LLMUnavailable("no LLM configured: set ANTHROPIC_API_KEY (and unset MEMORYD_LLM=off) to enable LLM mode.")
        self.meter.check_cap(purpose)
        if messages is None:
            messages = [{"role": "user", "content": user or ""}]
        messages = [_redacted(m) for m in messages]  # the one door to a model: no secret passes it
        import anthropic

        try:
            response = self._client.messages.create(  # type: ignore[call-overload]  # temperature passed by ** (SDKs differ)
                model=self.model,
                system=system,
                messages=messages,
                max_tokens=max_tokens,
                timeout=timeout if timeout is not None else self.timeout_seconds,
                **({"temperature": temperature} if _sdk_takes_temperature() else {}),
            )
        except anthropic.APITimeoutError as exc:
            self.meter.record(purpose, 0, 0, failed=True)
            raise LLMUnavailable(f"the LLM did not answer {purpose} in time; the offline path was used.") from exc
        except anthropic.AuthenticationError as exc:
            self.meter.record(purpose, 0, 0, failed=True)
            raise LLMUnavailable("the LLM refused the API key (401): set a valid ANTHROPIC_API_KEY, or MEMORYD_LLM=off.") from exc
        except anthropic.APIStatusError as exc:
            self.meter.record(purpose, 0, 0, failed=True)
            raise LLMUnavailable(f"the LLM answered HTTP {exc.status_code} for {purpose}; it will be retried later.") from exc
        except anthropic.APIError as exc:
            self.meter.record(purpose, 0, 0, failed=True)
            raise LLMUnavailable(f"the LLM could not be reached for {purpose} ({exc.__class__.__name__}); check ANTHROPIC_BASE_URL and the network.") from exc
        usage = getattr(response, "usage", None)
        input_tokens = int(getattr(usage, "input_tokens", 0) or 0)
        output_tokens = int(getattr(usage, "output_tokens", 0) or 0)
        self.meter.record(purpose, input_tokens, output_tokens)
        text = "".join(getattr(block, "text", "") for block in response.content if getattr(block, "type", "") == "text")
        return LLMResult(text=text, input_tokens=input_tokens, output_tokens=output_tokens, model=getattr(response, "model", self.model))


@functools.cache
def _sdk_takes_temperature() -> bool:
    """anthropic 2.x dropped `temperature` from Messages.create; pass it only where the SDK takes it."""
    import anthropic

    return "temperature" in inspect.signature(anthropic.resources.Messages.create).parameters

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
    raise LLMUnavailable(f"the LLM answered without a JSON {'object' if expect is dict else 'array'}; the offline path was used.")
