"""The save answer says which acts a memory reaches (issue 49): derived from its text or written in its
`applies_to`, and how to give it some when it reaches none; the same text is derived once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memoryd.relevance.applies_derive import derive
from tests.conftest import LiveDaemon


def saved(live: LiveDaemon, cwd: Path, name: str, description: str, **extra: Any) -> dict[str, Any]:
    r = live.client.post(
        "/v1/memories",
        json={"cwd": str(cwd), "name": name, "description": description, "type": "feedback", "body": "", **extra},
    )
    assert r.status_code in (200, 201), r.text
    return dict(r.json())


def test_the_save_says_what_a_memory_reaches(live: LiveDaemon, project: Path) -> None:
    pnpm = saved(live, project, "Package manager", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml")
    assert "commands npm" in pnpm["reaches"]
    paid = saved(live, project, "Payments", "Charges under src/payments/ are idempotent")
    assert paid["reaches"] == "edits under src/payments/"
    written = saved(live, project, "Deploys", "Ask first", applies_to={"commands": ["kubectl"], "paths": ["infra/**"]})
    assert written["reaches"] == "edits under infra/, commands kubectl"
    kind = saved(live, project, "Be kind", "Answer briefly")
    assert kind["reaches"] == "no act: add --path or --command"


def test_the_same_text_is_derived_once() -> None:
    a = derive("Migrations", "Never edit db/migrations/ by hand", "", "feedback")
    assert derive("Migrations", "Never edit db/migrations/ by hand", "", "feedback") is a
    assert derive("Migrations", "Never edit db/seeds/ by hand", "", "feedback").paths == ("db/seeds/**",)
