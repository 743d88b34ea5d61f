"""Screenshots of the web view on a phone (#39): the memory list, a stale memory, the dream page and an edit
conflict at 390 px, light and dark, taken in Debian's headless Chromium (Playwright) from a daemon
with a small demo project (a git repo with a stale memory, a dream run that merged two memories).

Writes docs/img/<page>-390px.png and <page>-390px-dark.png (shown in docs/web-view.md), and
dream.png at 1200 px; prints, per page, whether it scrolls sideways and any word broken across lines.

Run: .venv/bin/python bench/ui_screens.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("memories", "dream", "stale-memory", "conflict")


def demo(live: Any, repo: Path) -> dict[str, str]:
    """A project with a few memories, one of them stale, a finished dream run and one pending review."""

    def save(name: str, description: str, body: str, type_: str = "project") -> str:
        r = live.client.post(
            "/v1/memories",
            json={"cwd": str(repo), "name": name, "description": description, "type": type_, "body": body},
        )
        assert r.status_code in (200, 201), r.text
        return str(r.json()["filename"])

    save("Use pnpm", "Always use pnpm for installs", "Use pnpm.\n\n**Why:** one lockfile.", "feedback")
    save("pnpm only", "Always use pnpm for installs", "Never npm.\n\n**Why:** one lockfile.", "feedback")
    save(
        "Deploying to staging",
        "How staging deploys go: VPN first, then the deploy script",
        "- connect the VPN first\n- then run `./scripts/deploy.sh staging`",
    )
    stale = save(
        "Seeding fixtures", "How to load demo data", "Seed demo data with `scripts/seed_fixtures.sh`, then log in."
    )
    save("Grafana board", "Order latency dashboard in Grafana", "https://grafana.example.com/d/orders", "reference")
    save("Prefers small PRs", "The user reviews small, focused pull requests fastest", "One concern per PR.", "user")
    run_id = live.client.post("/v1/dream/run", json={"cwd": str(repo)}).json()["run_id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        runs = live.client.get("/v1/dream/runs", params={"cwd": str(repo)}).json()["runs"]
        if any(r["run_id"] == run_id and r["status"] != "running" for r in runs):
            break
        time.sleep(0.1)
    return {"stale": stale}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"))
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from memoryd.api.web.views import project_id
    from memoryd.config_sources import load_settings
    from memoryd.service.daemon import Daemon
    from tests.conftest import serve
    from tests.support.browser import BROKEN_WORDS, chromium
    from tests.support.stale_fixture import make_repo

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        (home / "config.toml").write_text("[extract]\nreview = true\n", encoding="utf-8")
        repo = make_repo(Path(tmp) / "shop")
        settings = load_settings(
            {"MEMORYD_HOME": str(home), "MEMORYD_LLM": "off", "MEMORYD_RECALL_DENSE": "off"}, home=home
        )
        settings.transcripts.roots = [str(home / "transcripts")]
        settings.memory.memory_base = ""  # never into the real ~/.claude
        with serve(Daemon(settings)) as live, chromium() as browser:
            made = demo(live, repo)
            store = live.daemon.stores.for_cwd(str(repo))
            live.daemon.review.propose(
                store,
                name="Staging resets nightly",
                description="The staging DB is reset every night at 02:00 UTC",
                type="project",
                body="Staging is wiped at 02:00 UTC.",
            )
            pid = project_id(store.path)
            for scheme in ("light", "dark"):
                context = browser.new_context(
                    viewport={"width": 390, "height": 844}, color_scheme=scheme, timezone_id="Europe/Berlin"
                )
                page = context.new_page()
                page.goto(live.client.post("/v1/ui/login-link").json()["url"])
                suffix = "-390px" + ("-dark" if scheme == "dark" else "")
                for name in PAGES:
                    if name == "conflict":  # an edit that lost the race to another writer's save
                        page.goto(f"{live.url}/ui/p/{pid}/m/{made['stale']}")
                        page.click("details.edit summary")
                        page.fill("textarea[name=body]", "Seed demo data with `make seed`, then log in as demo.")
                        live.client.post(
                            "/v1/memories",
                            json={
                                "cwd": str(repo),
                                "name": "Seeding fixtures",
                                "description": "How to load demo data",
                                "type": "project",
                                "body": f"Seed demo data with `scripts/seed_fixtures.sh`, then log in. ({scheme})",
                            },
                        )
                        page.click("form.edit button:has-text('Save')")
                        page.wait_for_load_state()
                    else:
                        path = {"memories": f"/ui/p/{pid}", "dream": f"/ui/p/{pid}/dream"}.get(
                            name, f"/ui/p/{pid}/m/{made['stale']}"
                        )
                        page.goto(live.url + path)
                    page.wait_for_function("document.querySelectorAll('time:not([data-local])').length === 0")
                    wide = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                    broken = page.evaluate(BROKEN_WORDS)
                    target = out / f"{name}{suffix}.png"
                    target.write_bytes(page.screenshot(full_page=True))
                    print(f"{target.name:28} scroll width {wide[0]}/{wide[1]}  words broken: {broken or 'none'}")
                context.close()
            # The desktop dream page for the docs' table of pages (the live-page test's project has no run).
            context = browser.new_context(viewport={"width": 1200, "height": 800}, color_scheme="light")
            page = context.new_page()
            page.goto(live.client.post("/v1/ui/login-link").json()["url"])
            page.goto(f"{live.url}/ui/p/{pid}/dream")
            page.locator("section.run details summary").first.click()
            page.wait_for_timeout(500)  # Pico turns the open marker in a 0.2 s transition
            (out / "dream.png").write_bytes(page.screenshot(full_page=True))
            print("dream.png                    (1200 px)")
            context.close()
        live.daemon.stop()


if __name__ == "__main__":
    main()
