"""Recall: which memories an agent gets on each prompt (LLM side-query or the local ranker)."""

from memoryd.recall.recalled import RecallResult
from memoryd.recall.service import RecallService

__all__ = ["RecallResult", "RecallService"]
