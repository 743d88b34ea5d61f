"""`ReviewQueue`: memories extraction proposed while review is on, kept in SQLite (never in the
memory dir, so neither MEMORY.md nor recall sees them) until approved, edited or rejected.

Approval writes through `MemoryDir.save`, the one write path, journaled: the item is marked
`approving` before the write and `approved` after it, and at start an item a crash left
`approving` is settled from the memory dir (written: approved; not written: pending again), so a
kill -9 never leaves a memory written beside a still-pending item (issue 31). A rejection keeps
the proposal's fingerprint, so extraction does not propose the same memory again.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, replace
from pathlib import Path
from typing import Any

from memoryd.base.errors import ReviewItemNotFound
from memoryd.base.secrets import check_no_secrets
from memoryd.base.state_db import StateDB, from_row
from memoryd.config import ProjectSettings
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.fields import validate_fields
from memoryd.store.model import draft_fields
from memoryd.store.overrides import ProjectOverrides

SCHEMA = """
CREATE TABLE IF NOT EXISTS review_items (
    item_id TEXT PRIMARY KEY,
    memory_dir TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    target TEXT,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    filename TEXT,
    created_at REAL NOT NULL,
    decided_at REAL
);
CREATE INDEX IF NOT EXISTS review_items_dir ON review_items(memory_dir, status, created_at);
CREATE TABLE IF NOT EXISTS review_rejected (
    memory_dir TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    rejected_at REAL NOT NULL,
    PRIMARY KEY (memory_dir, fingerprint)
);
"""
PENDING, APPROVED, REJECTED = "pending", "approved", "rejected"
APPROVING = "approving"  # the journal: set before the memory is written, settled at start after a crash
# Tests only: the named point kills this process with SIGKILL, so a test restarts the daemon into the
# real recovery (`settle_crashed`) instead of imitating the crash.
CRASH_ENV = "MEMORYD_TEST_CRASH_AT"
log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ReviewItem:
    """A memory extraction proposed, waiting for (or after) a person's decision; `target` is the memory it updates,
    `filename` the one written once approved."""

    item_id: str
    memory_dir: str
    name: str
    description: str
    type: str
    body: str
    target: str | None
    fingerprint: str
    status: str
    filename: str | None
    created_at: float
    decided_at: float | None


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _words(text: str) -> str:
    return " ".join(text.casefold().split())


def fingerprint(type_: str, name: str, description: str) -> str:
    """What makes two proposals "the same memory": type, name and description, case and spacing aside
    (a re-extraction rewords the body more often than the title)."""
    return hashlib.sha256(f"{type_}\n{_words(name)}\n{_words(description)}".encode()).hexdigest()[:32]


@dataclass(eq=False)
class ReviewQueue:
    """Pending memories per memory dir, and the policy that says which dirs need review."""

    state: StateDB
    _: KW_ONLY
    stores: StoreRegistry
    default: bool  # `[extract] review`; a project's own setting overrides it
    per_project: InitVar[Mapping[str, ProjectSettings]]
    clock: Callable[[], float] = time.time

    def __post_init__(self, per_project: Mapping[str, ProjectSettings]) -> None:
        self.overrides = ProjectOverrides(stores=self.stores, per_project=per_project)
        self.state.migrate("review_queue", SCHEMA)
        self.settle_crashed()

    # ------------------------------------------------------------------ policy
    def wanted(self, store: MemoryDir) -> bool:
        """`[projects."<root>"] review` when set for the store's project, else `[extract] review`."""
        override = self.overrides.for_store(store).review
        return self.default if override is None else override

    # ------------------------------------------------------------------ proposals
    def propose(
        self, store: MemoryDir, *, name: str, description: str, type: str, body: str, target: str | None = None
    ) -> str | None:
        """Queue a proposal; returns its id, or None when the same memory was rejected before.
        Refused content (secrets, bad fields) raises, like a save would, and is never queued."""
        name, description = name.strip(), " ".join(description.split())
        validate_fields(name, description, type, body)
        check_no_secrets({"name": name, "description": description, "body": body})
        fp = fingerprint(type, name, description)
        key = str(store.path)
        if self.state.query_one("SELECT 1 FROM review_rejected WHERE memory_dir = ? AND fingerprint = ?", (key, fp)):
            return None
        same = self.state.query_one(
            "SELECT item_id FROM review_items WHERE memory_dir = ? AND fingerprint = ? AND status = ?",
            (key, fp, PENDING),
        )
        if same is not None:  # proposed again while waiting: keep one item, with the newest body
            self.state.execute(
                "UPDATE review_items SET body = ?, target = ? WHERE item_id = ?", (body, target, same["item_id"])
            )
            return str(same["item_id"])
        item_id = "rv_" + uuid.uuid4().hex[:12]
        self.state.execute(
            "INSERT INTO review_items(item_id, memory_dir, name, description, type, body, target, fingerprint, "
            "status, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item_id, key, name, description, type, body, target, fp, PENDING, self.clock()),
        )
        return item_id

    def items(self, store: MemoryDir | None = None, status: str = PENDING) -> list[ReviewItem]:
        """Items of one memory dir (or all) with that status, oldest first."""
        where, params = ("AND memory_dir = ?", (str(store.path),)) if store is not None else ("", ())
        rows = self.state.query(
            f"SELECT * FROM review_items WHERE status = ? {where} ORDER BY created_at, item_id", (status, *params)
        )
        return [self._item(r) for r in rows]

    def pending_count(self, store: MemoryDir) -> int:
        row = self.state.query_one(
            "SELECT COUNT(*) AS n FROM review_items WHERE memory_dir = ? AND status = ?", (str(store.path), PENDING)
        )
        return int(row["n"]) if row else 0

    def get(self, item_id: str) -> ReviewItem:
        row = self.state.query_one("SELECT * FROM review_items WHERE item_id = ? AND status = ?", (item_id, PENDING))
        if row is None:
            raise ReviewItemNotFound(
                f"no pending memory {item_id!r} (already approved or rejected?); list them with `memoryd review list`."
            )
        return self._item(row)

    # ------------------------------------------------------------------ decisions
    def edit(
        self, item_id: str, *, name: str | None = None, description: str | None = None, body: str | None = None
    ) -> ReviewItem:
        """Change a pending proposal before approving it (checked like a save; nothing changes on refusal)."""
        item = self.get(item_id)
        new = {
            "name": (name if name is not None else item.name).strip(),
            "description": " ".join((description if description is not None else item.description).split()),
            "body": body if body is not None else item.body,
        }
        validate_fields(new["name"], new["description"], item.type, new["body"])
        check_no_secrets(new)
        self.state.execute(
            "UPDATE review_items SET name = ?, description = ?, body = ? WHERE item_id = ?",
            (new["name"], new["description"], new["body"], item_id),
        )
        return self.get(item_id)

    def approve(self, item_id: str) -> ReviewItem:
        """Write the proposal through the store's one write path; the item is kept as approved.
        Journaled (`approving` around the write), so a crash part-way is settled at the next start."""
        item = self.get(item_id)
        store = self.stores.for_path(Path(item.memory_dir))
        target = item.target if item.target and store.exists(item.target) else None
        if not self.state.execute(
            "UPDATE review_items SET status = ? WHERE item_id = ? AND status = ?", (APPROVING, item_id, PENDING)
        ):
            self.get(item_id)  # decided meanwhile (a second approve or a reject): say so
        try:
            saved = store.save(**draft_fields(item), filename=target, source="review")
        except BaseException:
            self.state.execute(
                "UPDATE review_items SET status = ? WHERE item_id = ? AND status = ?", (PENDING, item_id, APPROVING)
            )
            raise
        crash_point("review-approve-written")
        self.state.execute(
            "UPDATE review_items SET status = ?, filename = ?, decided_at = ? WHERE item_id = ?",
            (APPROVED, saved.memory.filename, self.clock(), item_id),
        )
        return replace(item, status=APPROVED, filename=saved.memory.filename)

    def settle_crashed(self) -> list[str]:
        """At start: items a crash left `approving` become approved when their memory is in the
        memory dir, else pending again. Returns the ids settled."""
        settled = []
        for row in self.state.query("SELECT * FROM review_items WHERE status = ?", (APPROVING,)):
            item = self._item(row)
            try:
                filename = self._written(item)
            except Exception as exc:  # the memory dir cannot be read now: settled at a later start
                log.warning("review item %s left approving: %s", item.item_id, exc.__class__.__name__)
                continue
            if filename is None:
                self.state.execute("UPDATE review_items SET status = ? WHERE item_id = ?", (PENDING, item.item_id))
            else:
                self.state.execute(
                    "UPDATE review_items SET status = ?, filename = ?, decided_at = ? WHERE item_id = ?",
                    (APPROVED, filename, self.clock(), item.item_id),
                )
            settled.append(item.item_id)
        return settled

    def _written(self, item: ReviewItem) -> str | None:
        """The memory file that holds this item's memory (type, description and body; not the name, which
        Claude Code's dialect stores in its own form), if any."""
        store = self.stores.for_path(Path(item.memory_dir))
        for header in store.all_headers():
            if (
                header.type == item.type
                and _words(header.description) == _words(item.description)
                and _words(store.get(header.filename).body) == _words(item.body)
            ):
                return header.filename
        return None

    def reject(self, item_id: str) -> ReviewItem:
        """Drop the proposal and remember its fingerprint: the same memory is not proposed again."""
        item = self.get(item_id)
        with self.state.transaction() as db:
            if not db.execute(
                "UPDATE review_items SET status = ?, decided_at = ? WHERE item_id = ? AND status = ?",
                (REJECTED, self.clock(), item_id, PENDING),
            ).rowcount:
                raise ReviewItemNotFound(
                    f"memory {item_id!r} is being approved or was decided meanwhile; list them with `memoryd review "
                    "list`."
                )
            db.execute(
                "INSERT OR REPLACE INTO review_rejected(memory_dir, fingerprint, rejected_at) VALUES (?, ?, ?)",
                (item.memory_dir, item.fingerprint, self.clock()),
            )
        return replace(item, status=REJECTED)

    @staticmethod
    def _item(row: Any) -> ReviewItem:
        return from_row(ReviewItem, row)
