"""The structured answers memoryd asks models for (through tool use), validated with pydantic.

Loose on purpose: fields the callers check themselves (type names, filenames) are plain
strings here, so one odd item is dropped by the caller instead of failing the whole answer.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class RecallSelection(BaseModel):
    selected_memories: list[str] = Field(
        description="Filenames of the memories that will clearly help (at most 5); empty when none will."
    )


class ExtractedMemory(BaseModel):
    name: str
    type: str = Field(description="user, feedback, project or reference")
    description: str = Field(description="one specific line")
    body: str = Field("", description="markdown")
    filename: str | None = Field(None, description="an existing memory file to update, or null for a new one")
    applies_to: dict[str, list[str]] | None = Field(
        None, description="paths (globs), commands and tools the memory applies to; omit when none"
    )


class Extraction(BaseModel):
    memories: list[ExtractedMemory] = Field(description="Durable memories worth keeping; empty when nothing is.")


# One change a consolidation proposes; dream/plan.py's Action is this plus what only a planner knows. (No docstring:
# it would become the schema's description the model is sent.)
class DreamAction(BaseModel):
    op: str = Field(description="write or delete")
    filename: str | None = None
    name: str = ""
    type: str = ""
    description: str = ""
    body: str = ""
    why: str = ""
    applies_to: dict[str, list[str]] | None = None


class DreamPlan(BaseModel):
    actions: list[DreamAction] = Field(default_factory=list)
    summary: str = ""
