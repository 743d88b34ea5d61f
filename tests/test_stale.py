"""Stale memories against a real git repo: the labelled dev set through GET /v1/stale, the recall
caveat, a commit that fixes a name, dream's proposals, the CLI, and what the name finder skips."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.base import limits
from memoryd.service.daemon import Daemon
from memoryd.stale.project import ProjectFacts
from memoryd.stale.refs import FLAG, PACKAGE, PATH, SCRIPT, SYMBOL, Ref, find_refs
from tests.conftest import LiveDaemon, make_settings, recall_api, save_memory, serve
from tests.support.clock import POLL_SECONDS
from tests.support.servers import daemon_env
from tests.support.stale_fixture import git, labelled_memories, make_repo, make_ts_shop, ts_shop_memories
from tests.test_ui import login, pid


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop")


@pytest.fixture
def slive(home: Path) -> Iterator[LiveDaemon]:
    with serve(Daemon(make_settings(home))) as live:
        yield live


def stale_report(live: LiveDaemon, cwd: Path) -> dict[str, Any]:
    r = live.client.get("/v1/stale", params={"cwd": str(cwd)})
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def test_dev_set_precision_and_recall(slive: LiveDaemon, repo: Path) -> None:
    labels = {}
    for m in labelled_memories():
        labels[save_memory(slive, repo, m["name"], m["description"], m["body"], m["type"])] = m["stale"]
    assert len(labels) >= 30 and 0 < sum(labels.values()) < len(labels)
    report = stale_report(slive, repo)
    assert report["checked"] and report["project_root"] == str(repo)
    flagged = {m["filename"] for m in report["memories"]}
    true_pos = sum(1 for f in flagged if labels[f])
    precision = true_pos / max(1, len(flagged))
    recall = true_pos / sum(labels.values())
    assert precision >= 0.9 and recall >= 0.8, (precision, recall, flagged)
    reasons = {m["filename"]: " ".join(m["reasons"]) for m in report["memories"]}
    assert (
        "src/shopapi/billing.py" in reasons["project_where-order-totals-live.md"]
        and "git ls-files" in reasons["project_where-order-totals-live.md"]
    )
    assert "db-reset" in reasons["feedback_reset-the-database-before-integration-tests.md"]


def test_recall_adds_a_caveat_and_a_commit_clears_the_flag(slive: LiveDaemon, repo: Path) -> None:
    stale = save_memory(
        slive,
        repo,
        "Seeding fixtures",
        "How to load demo data into the shop",
        "Seed demo data with `scripts/seed_fixtures.sh` after migrating.",
    )
    fresh = save_memory(
        slive,
        repo,
        "Deploying to staging",
        "How staging deploys of the shop work",
        "Deploy with `scripts/deploy.sh staging`.",
    )
    result = recall_api(slive, repo, "how do I seed demo data into the shop?", session="s1")
    by_file = {m["filename"]: m for m in result["memories"]}
    assert (
        stale in by_file
        and "Possibly stale" in result["injection"]
        and "scripts/seed_fixtures.sh" in result["injection"]
    )
    result = recall_api(slive, repo, "how do staging deploys of the shop work?", session="s2")
    assert fresh in {m["filename"] for m in result["memories"]}
    blocks = result["injection"].split("<system-reminder>")
    assert not any("Possibly stale" in b for b in blocks if fresh in b)  # a fresh memory gets no caveat
    # The script is added and committed: the memory is fresh again.
    (repo / "scripts" / "seed_fixtures.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "seed script")
    assert stale_report(slive, repo)["memories"] == []


def test_dream_proposes_updating_or_removing_stale_memories(slive: LiveDaemon, repo: Path) -> None:
    filename = save_memory(
        slive,
        repo,
        "Cart state",
        "Where the frontend keeps the cart",
        "The cart lives in `frontend/src/store/cart.ts`.",
    )
    run_id = slive.client.post("/v1/dream/run", json={"cwd": str(repo)}).json()["run_id"]
    deadline = time.monotonic() + 20
    while True:
        run = next(
            r
            for r in slive.client.get("/v1/dream/runs", params={"cwd": str(repo)}).json()["runs"]
            if r["run_id"] == run_id
        )
        if run["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(POLL_SECONDS)
    assert run["status"] == "done", run
    note = next(n for n in run["notes"] if n.startswith("stale:"))
    assert filename in note and "frontend/src/store/cart.ts" in note and "update" in note and "remove" in note


def test_cli_and_web_view_list_stale_memories(slive: LiveDaemon, repo: Path, home: Path) -> None:
    filename = save_memory(
        slive, repo, "Discount logic", "Where percentage discounts are applied", "Applied by `calculate_discount()`."
    )
    env = {**daemon_env(home), "MEMORYD_PORT": slive.url.rsplit(":", 1)[1], "MEMORYD_TOKEN": slive.daemon.token}
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "stale"], env=env, capture_output=True, text=True, timeout=30, cwd=repo
    )
    assert done.returncode == 0 and filename in done.stdout and "calculate_discount" in done.stdout, done.stderr
    browser, _ = login(slive)
    page = browser.get(f"/ui/p/{pid(slive, repo)}/stale").text
    assert filename in page and "calculate_discount" in page


def test_a_project_that_is_not_a_git_repo_is_not_checked(slive: LiveDaemon, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    save_memory(slive, plain, "Old file", "Points at a file", "See `src/gone.py`.")
    report = stale_report(slive, plain)
    assert report == {"checked": False, "project_root": str(plain), "memories": []}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Totals are in `src/app/billing.py`.", [Ref(PATH, "src/app/billing.py")]),
        (
            "Run `npm run storybook` then `make db-reset`.",
            [Ref(SCRIPT, "storybook", "npm"), Ref(SCRIPT, "db-reset", "make")],
        ),
        ("Pass `--batch-size 500`.", [Ref(FLAG, "--batch-size")]),
        ("Call `get_db_session()` or `PaypalClient.refund`.", [Ref(SYMBOL, "get_db_session"), Ref(SYMBOL, "refund")]),
        ("HTTP goes through the `requests` library.", [Ref(PACKAGE, "requests")]),
        ("We removed `src/legacy.py`; never use `requests`.", []),  # the sentence already says it is gone
        ("The user knows Node.js and Next.js; see https://x.example/a/b.json and `~/.config/app.toml`.", []),
        ("Use `pnpm install --frozen-lockfile` and `git rebase -i --autosquash`.", []),  # not the project's own flags
    ],
)
def test_find_refs(text: str, expected: list[Ref]) -> None:
    assert find_refs(text) == expected


# ---------------------------------------------------------------- the caveat tells the truth (#38 item 6)
@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "acme").mkdir()
    return make_ts_shop(tmp_path / "acme")


def test_ts_shop_flags_only_what_is_gone(slive: LiveDaemon, shop: Path) -> None:
    """Memories written as a person would, over a machine's checkout: an untracked lockfile, an ignored
    env file and build dirs, installed dev dependencies, placeholders and examples are no reason to doubt."""
    labels = {}
    for m in ts_shop_memories():
        labels[save_memory(slive, shop, m["name"], m["description"], m["body"], m["type"])] = m["stale"]
    flagged = {m["filename"]: m["reasons"] for m in stale_report(slive, shop)["memories"]}
    assert {f for f in flagged if not labels[f]} == set(), flagged  # no false "possibly stale"
    assert {f for f, stale in labels.items() if stale} == set(flagged)  # and every real loss found
    reasons = {f.split("_", 1)[1]: " ".join(r) for f, r in flagged.items()}
    assert "src/lib/legacy-cart.ts" in reasons["cart-state.md"]
    assert "node_modules/.bin" in reasons["release-notes.md"]  # `pnpm changeset`: nothing runs it


def test_recall_caveat_for_untracked_and_ignored_paths(slive: LiveDaemon, shop: Path) -> None:
    lock = save_memory(
        slive, shop, "Lockfile", "Which lockfile", "The lockfile is `pnpm-lock.yaml`; tests run with `pnpm vitest`."
    )
    result = recall_api(slive, shop, "which lockfile does this project use?")
    assert lock in {m["filename"] for m in result["memories"]}
    assert "Possibly stale" not in result["injection"], result["injection"]
    # A file that is gone and comes back untracked (the git index does not change): the caveat goes at once.
    gone = save_memory(slive, shop, "Reset script", "How to reset", "Reset with `scripts/reset-db.sh` first.")
    result = recall_api(slive, shop, "how do I reset the database?", session="s2")
    assert gone in {m["filename"] for m in result["memories"]} and "Possibly stale" in result["injection"]
    (shop / "scripts" / "reset-db.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    result = recall_api(slive, shop, "how do I reset the database?", session="s3")
    assert gone in {m["filename"] for m in result["memories"]} and "Possibly stale" not in result["injection"]


def facts_missing(root: Path, text: str) -> list[str]:
    facts = ProjectFacts.load(root)
    gone, whole = facts.missing(find_refs(text, cli_names=frozenset(facts.cli_names)), history_timeout=30)
    assert whole
    return [r.describe() for r in gone]


def test_paths_tracked_untracked_ignored_and_gone(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.ts").write_text("x\n", encoding="utf-8")
    (root / "src" / "old.ts").write_text("x\n", encoding="utf-8")
    (root / ".gitignore").write_text("dist/\n.env.local\n*.log\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    git(root, "rm", "-q", "src/old.ts")
    git(root, "commit", "-q", "-m", "two")
    (root / "notes.md").write_text("untracked\n", encoding="utf-8")
    (root / "src" / "draft.ts").write_text("untracked\n", encoding="utf-8")
    (root / ".env.local").write_text("KEY=1\n", encoding="utf-8")
    assert facts_missing(root, "See `src/main.ts`, `notes.md`, `draft.ts` and `src/draft.ts`.") == []
    assert facts_missing(root, "Secrets are in `.env.local`; builds go to `dist/`; logs in `server.log`.") == []
    assert facts_missing(root, "The parser is `src/old.ts`.") == ["path `src/old.ts`"]
    assert facts_missing(root, "The parser was in `old.ts`, under `src/`.") == ["path `old.ts`"]
    # Never in the tree: another project's files, a tool's output, a wrong guess; nothing says they are gone.
    assert facts_missing(root, "It writes `src/prompts/` and `src/copilot-instructions.md` in your project.") == []


def test_programs_run_through_a_package_manager(tmp_path: Path) -> None:
    root = tmp_path / "web"
    root.mkdir()
    manifest = {"scripts": {"test": "vitest run"}, "devDependencies": {"vitest": "^2", "typescript": "^5"}}
    (root / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    runners = (
        "Run `pnpm vitest`, `pnpm dlx depcheck`, `npx tsx a.ts`, `uv run pytest`, `bunx eslint`, `yarn vitest`, "
        "`npm run test`, `poetry run app`, `pipx run black .`, `pnpm run <script>` and `pnpm typescript`."
    )
    assert facts_missing(root, runners) == []  # node_modules not installed: a dependency's program is enough
    assert facts_missing(root, "Release with `pnpm changeset`.") == []  # not installed: nothing says it is gone
    (root / "node_modules" / ".bin").mkdir(parents=True)
    (root / "node_modules" / ".bin" / "tsc").write_text("#!/bin/sh\n", encoding="utf-8")
    assert facts_missing(root, runners + " Typecheck with `pnpm tsc`.") == []
    assert facts_missing(root, "Release with `pnpm changeset`.") == ["script `pnpm changeset`"]
    assert facts_missing(root, "Run `pnpm run storybook` or `npm run vitest`.") == [
        "script `pnpm storybook`",
        "script `npm vitest`",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Tests: `pnpm vitest`.", [Ref(SCRIPT, "vitest", "pnpm", implicit=True)]),
        ("Any script: `pnpm run <script>`; a file: `src/{name}.ts`; logs: `logs/…`; `test:int:pg|sqlite`.", []),
        ("Put it in `src/components/ComponentName/index.tsx` or `web/src/pages/NewPage.tsx`.", []),
        (
            "Add a migration.\n\n**How to apply:** `db/migrations/0003_add_email.sql`, then `make migrate`.",
            [Ref(SCRIPT, "migrate", "make")],
        ),
        ("Queries live in files, e.g. `queries/orders.sql`.", []),
        ("Import from `@/hooks/useCart`, `@tanstack/react-query` and `github.com/pkg/errors`.", []),
        ("Write `import type { X } from './x'` and `from .tools import Tool`.", []),
        ("The cart is in `src/lib/legacy-cart.ts`.", [Ref(PATH, "src/lib/legacy-cart.ts")]),
        # A library's members, called or not (#51: `vi.fn()` was "names `fn`" on day 0); a project's stay checked.
        ("Mock with `vi.fn()`, parse with `JSON.parse`, join with `os.path.join`.", []),
        ("Then `cart.add_item()` and `PaypalClient.refund()`.", [Ref(SYMBOL, "add_item"), Ref(SYMBOL, "refund")]),
    ],
)
def test_find_refs_skips_what_claims_nothing(text: str, expected: list[Ref]) -> None:
    assert find_refs(text) == expected


def test_a_slow_history_never_holds_recall_and_the_caveat_follows(
    slive: LiveDaemon, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall gives git history no time at all here: the memory comes without a caveat (nothing is claimed
    that was not checked), the check finishes off recall's path, and a later recall carries the caveat."""
    monkeypatch.setattr(limits, "STALE_HISTORY_RECALL_TIMEOUT_SECONDS", 0.0)
    stale = save_memory(slive, repo, "Cart store", "Where the cart lives", "The cart is `frontend/src/store/cart.ts`.")
    first = recall_api(slive, repo, "where does the cart live?", session="a")
    assert stale in {m["filename"] for m in first["memories"]} and "Possibly stale" not in first["injection"]
    deadline = time.monotonic() + 30
    while True:
        later = recall_api(slive, repo, "where does the cart live?", session=f"b{time.monotonic()}")
        if "Possibly stale" in later["injection"] or time.monotonic() > deadline:
            break
        time.sleep(POLL_SECONDS)
    assert "frontend/src/store/cart.ts" in later["injection"] and "Possibly stale" in later["injection"]
