"""`anthropic` and `messages-api`: the official SDK against api.anthropic.com or any
Anthropic-compatible `/v1/messages` (Ollama >= 0.14, llama-server, LM Studio)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from memoryd.llm.backend import Answer, BackendError, Call, is_transient_status, parse_retry_after

LOCAL_PLACEHOLDER_KEY = "memoryd-local"  # local servers ignore the key, the SDK insists on one


class MessagesBackend:
    """One SDK client, no SDK retries: `LLMClient` owns the one retry policy for every backend."""

    def __init__(self, *, name: str, model: str, api_key: str, base_url: str, timeout: float) -> None:
        import anthropic  # here: the SDK costs ~65 MB of RSS, which an offline daemon never needs

        self.name = name
        self.model = model
        self.base_url = base_url
        self._has_key = bool(api_key)
        self._client = anthropic.Anthropic(
            api_key=api_key or LOCAL_PLACEHOLDER_KEY, base_url=base_url or None, timeout=timeout, max_retries=0
        )

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "base_url": self.base_url or "https://api.anthropic.com",
            "signed_in": self._has_key if self.name == "anthropic" else None,
        }

    def _key_fix(self) -> str:
        if self.name == "anthropic":
            return 'set a valid ANTHROPIC_API_KEY, or [llm] backend = "off"'
        return "set [llm] api_key to the key your server expects"

    def call(self, call: Call) -> Answer:
        import anthropic

        kwargs: dict[str, Any] = {}
        if call.tool is not None:
            kwargs.update(tools=[call.tool], tool_choice={"type": "tool", "name": call.tool["name"]})
        if _sdk_takes_temperature():
            kwargs["temperature"] = call.temperature
        try:
            # plain dicts for messages and tools; temperature passed by ** (SDKs differ)
            response = self._client.messages.create(
                model=self.model,
                system=call.system,
                messages=call.messages,  # type: ignore[arg-type]
                max_tokens=call.max_tokens,
                timeout=call.timeout,
                **kwargs,
            )
        except anthropic.APITimeoutError as exc:
            raise BackendError(f"{self.name} did not answer {call.purpose} within {call.timeout:g} s") from exc
        except anthropic.AuthenticationError as exc:
            raise BackendError(f"{self.name} refused the API key (401): {self._key_fix()}") from exc
        except anthropic.APIStatusError as exc:
            retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
            raise BackendError(
                f"{self.name} answered HTTP {exc.status_code} for {call.purpose}",
                transient=is_transient_status(exc.status_code),
                retry_after=retry_after,
            ) from exc
        except anthropic.APIError as exc:
            where = self.base_url or "api.anthropic.com"
            raise BackendError(
                f"{self.name} could not be reached at {where} ({exc.__class__.__name__}): check [llm] base_url and "
                "that the server runs",
                transient=True,
            ) from exc
        usage = getattr(response, "usage", None)
        data = None
        for block in response.content:
            if (
                isinstance(block, anthropic.types.ToolUseBlock)
                and call.tool is not None
                and block.name == call.tool["name"]
                and isinstance(block.input, dict)
            ):
                data = block.input
                break
        text = "".join(getattr(block, "text", "") for block in response.content if getattr(block, "type", "") == "text")
        return Answer(
            text=text,
            data=data,
            input_tokens=int(getattr(usage, "input_tokens", 0) or 0),
            output_tokens=int(getattr(usage, "output_tokens", 0) or 0),
            model=getattr(response, "model", self.model),
        )


@functools.cache
def _sdk_takes_temperature() -> bool:
    """anthropic 2.x dropped `temperature` from Messages.create; pass it only where the SDK takes it."""
    import anthropic

    return "temperature" in inspect.signature(anthropic.resources.Messages.create).parameters
