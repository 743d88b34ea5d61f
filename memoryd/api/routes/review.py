"""The review queue over HTTP: list pending memories, edit, approve (written then), reject."""

from __future__ import annotations

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from memoryd.api.deps import ReviewDep, StoresDep
from memoryd.review import queue as review_queue

router = APIRouter(tags=["review"])


class ReviewItem(BaseModel):
    """A memory extraction proposed, as review/queue.py's ReviewItem holds it (all but its fingerprint)."""

    item_id: str = Field(description="The proposal's id (`rv_…`), for edit, approve and reject.")
    memory_dir: str = Field(description="The memory dir it would be written to.")
    name: str = Field(description="The memory's title.")
    description: str = Field(description="Its one-line description.")
    type: str = Field(description="user, feedback, project or reference.")
    body: str = Field(description="Its Markdown body.")
    target: str | None = Field(None, description="The existing memory this proposal updates, if any.")
    status: str = Field(..., description="pending, approved or rejected.")
    filename: str | None = Field(None, description="The file written, once approved.")
    created_at: float
    decided_at: float | None = None


class ReviewList(BaseModel):
    items: list[ReviewItem]
    review: bool = Field(..., description="Whether extraction for this project queues memories for review.")


class ReviewEdit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, description="New title.")
    description: str | None = Field(None, description="New one-line description.")
    body: str | None = Field(None, description="New Markdown body.")


def _item(item: review_queue.ReviewItem) -> ReviewItem:
    """The API's shape of the core's review item (all but its fingerprint)."""
    return ReviewItem.model_validate(item, from_attributes=True)


@router.get("/v1/review", response_model=ReviewList)
def review_list(
    review: ReviewDep,
    stores: StoresDep,
    cwd: str = Query(..., description="The agent's working directory; names the project."),
    status: str = Query("pending", pattern="^(pending|approved|rejected)$"),
) -> ReviewList:
    """Memories extraction proposed for this project, waiting for a decision (oldest first)."""
    store = stores.for_cwd(cwd)
    return ReviewList(items=[_item(i) for i in review.items(store, status)], review=review.wanted(store))


@router.patch("/v1/review/{item_id}", response_model=ReviewItem)
def review_edit(item_id: str, edit: ReviewEdit, review: ReviewDep) -> ReviewItem:
    """Change a pending memory before approving it."""
    return _item(review.edit(item_id, name=edit.name, description=edit.description, body=edit.body))


@router.post("/v1/review/{item_id}/approve", response_model=ReviewItem)
def review_approve(item_id: str, review: ReviewDep) -> ReviewItem:
    """Write the memory (it joins MEMORY.md and recall)."""
    item = review.approve(item_id)
    return _item(item)


@router.post("/v1/review/{item_id}/reject", response_model=ReviewItem)
def review_reject(item_id: str, review: ReviewDep) -> ReviewItem:
    """Drop the memory; extraction will not propose it again."""
    return _item(review.reject(item_id))
