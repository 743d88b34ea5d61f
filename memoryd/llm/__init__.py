"""The one LLM client of the daemon (recall, extraction, dream): the official anthropic SDK."""

from memoryd.llm.client import LLMClient, LLMResult, UsageMeter, extract_json

__all__ = ["LLMClient", "LLMResult", "UsageMeter", "extract_json"]
