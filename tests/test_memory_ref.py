"""`MemoryRef`: a recall candidate's store and file name, and the key the side-query's manifest shows for it."""

from __future__ import annotations

import pytest

from memoryd.recall.refs import MemoryRef


@pytest.mark.parametrize(
    ("key", "origin", "filename"),
    [
        ("feedback_pnpm.md", "personal", "feedback_pnpm.md"),
        ("team:deploy-day.md", "team", "deploy-day.md"),
        ("global:user_prefers-short-answers.md", "global", "user_prefers-short-answers.md"),
        ("teams-notes.md", "personal", "teams-notes.md"),  # a file name that merely starts like a prefix
    ],
)
def test_a_key_names_one_store_and_file_and_round_trips(key: str, origin: str, filename: str) -> None:
    ref = MemoryRef.of(key)
    assert (ref.origin, ref.filename) == (origin, filename) and ref.key == key
