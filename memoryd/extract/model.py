"""Extraction through the model: the pending turns and the memory manifest in, candidates out."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.base import limits
from memoryd.extract.offline import Candidate
from memoryd.extract.prompts import EXTRACTION_SYSTEM, extraction_user_message
from memoryd.llm import LLMClient
from memoryd.llm.schemas import Extraction
from memoryd.relevance.applies import checked_applies
from memoryd.store import MemoryDir

TRANSCRIPT_PROMPT_MAX_CHARS = 30_000  # bound on the session delta sent to the LLM (its newest part)


@dataclass(frozen=True)
class ModelCandidate(Candidate):
    """A candidate from the model, with what it applies to when the model said (checked; None: not said)."""

    applies_to: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class CandidateForFile(ModelCandidate):
    """A candidate the model tied to an existing file."""

    filename: str = ""


def extract_with_model(llm: LLMClient, transcript: str, store: MemoryDir) -> list[Candidate]:
    """Ask the model for memories worth keeping from `transcript` (rendered turns); drop malformed items."""
    transcript = transcript[-TRANSCRIPT_PROMPT_MAX_CHARS:]
    manifest = "\n".join(f"- [{h.type}] {h.filename}: {h.name} — {h.description}" for h in store.scan_memory_headers())
    result = llm.complete(
        purpose="extract",
        system=EXTRACTION_SYSTEM,
        user=extraction_user_message(manifest, transcript),
        max_tokens=2048,
        schema=Extraction,
    )
    candidates: list[Candidate] = []
    for item in (m.model_dump() for m in result.data.memories):
        if not isinstance(item, dict):
            continue
        name, type_ = str(item.get("name", "")).strip(), str(item.get("type", "")).strip()
        description, body = str(item.get("description", "")).strip(), str(item.get("body", ""))
        if type_ not in limits.MEMORY_TYPES or not name or not description:
            continue
        filename = str(item.get("filename") or "")
        applies = checked_applies(item.get("applies_to"))
        candidates.append(
            CandidateForFile(
                name=name, type=type_, description=description, body=body, filename=filename, applies_to=applies
            )
            if filename
            else ModelCandidate(name=name, type=type_, description=description, body=body, applies_to=applies)
        )
    return candidates
