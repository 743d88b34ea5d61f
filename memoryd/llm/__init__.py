"""The one LLM client of the daemon (recall, extraction, session notes, dream) and its
backends: the anthropic SDK, any Anthropic-compatible Messages API, the user's `claude`."""

from memoryd.llm.client import LLMClient, LLMResult, extract_json
from memoryd.llm.meter import UsageMeter

__all__ = ["LLMClient", "LLMResult", "UsageMeter", "extract_json"]
