"""Request bodies of the API (pydantic), so /docs shows them and bad JSON gets a clear 4xx."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SaveMemoryRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    cwd: str = Field(..., description="The agent's working directory; names the project.")
    name: str = Field(..., description="Short title; the same type+name updates that memory.")
    description: str = Field(..., description="One specific line; recall decides relevance from it.")
    type: str = Field(..., description="user, feedback, project or reference.")
    body: str = Field("", description="Markdown body; feedback/project carry **Why:** and **How to apply:** lines.")
    expected_version: str | None = Field(
        None, description="The `version` from the GET you edited (an If-Match): 409 when the file changed since, nothing written."
    )
