"""Recall: which memories an agent gets on each prompt (LLM side-query or the local ranker)."""

from memoryd.recall.service import RecallResult, RecallService

__all__ = ["RecallResult", "RecallService"]
