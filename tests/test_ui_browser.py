"""The web view in a real headless Chromium (Debian's, driven by Playwright): log in through the
one-time link, find a memory, edit it, approve a pending one, undo a dream run, and a page on
another origin cannot call the API. Screenshots of each page go to bench/screens/ (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.api.web.views import project_id
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings, save_memory, serve
from tests.support.browser import chromium
from tests.support.servers import ThreadedServer
from tests.support.stale_fixture import make_repo
from tests.test_dream import wait_run

pytestmark = pytest.mark.e2e
SCREENS = Path(__file__).resolve().parents[1] / "bench" / "screens"


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def foreign_page_app(daemon_url: str, delete_url: str, cwd: str) -> Any:
    """An ASGI app serving a page that tries to read the API and to post a delete form to the web view."""
    html = f"""<!doctype html><html><body><h1>another site</h1><pre id="out"></pre>
<form id="csrf" method="post" action="{daemon_url}{delete_url}"><input name="csrf" value="guess"></form>
<script>
async function attack() {{
  const out = [];
  try {{ const r = await fetch("{daemon_url}/v1/memories?cwd={cwd}", {{credentials: "include"}});
        out.push("read:" + r.status); }}
  catch (e) {{ out.push("read:blocked"); }}
  try {{ const r = await fetch("{daemon_url}/ui/", {{credentials: "include"}}); out.push("ui:" + r.status); }}
  catch (e) {{ out.push("ui:blocked"); }}
  try {{ await fetch("{daemon_url}{delete_url}", {{method: "POST", mode: "no-cors", credentials: "include",
        headers: {{"Content-Type": "application/x-www-form-urlencoded"}}, body: "csrf=guess"}});
        out.push("post:sent"); }}
  catch (e) {{ out.push("post:blocked"); }}
  document.getElementById("out").textContent = out.join(" ");
}}
</script></body></html>""".encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": html})

    return app


def shot(page: Any, name: str) -> None:
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)


def test_web_view_in_chromium(home: Path, tmp_path: Path, browser: Any) -> None:
    (home / "config.toml").write_text("[extract]\nreview = true\n", encoding="utf-8")
    repo = make_repo(tmp_path / "shop")
    with serve(Daemon(make_settings(home))) as live:
        store = live.daemon.stores.for_cwd(str(repo))
        a = save_memory(
            live,
            repo,
            "Use pnpm",
            "Always use pnpm for installs",
            "Use pnpm.\n\n**Why:** lockfile.\n**How to apply:** installs.",
            "feedback",
        )
        b = save_memory(
            live,
            repo,
            "pnpm only",
            "Always use pnpm for installs",
            "Never npm.\n\n**Why:** lockfile.\n**How to apply:** installs.",
            "feedback",
        )
        save_memory(
            live,
            repo,
            "Order totals",
            "Where order totals are computed",
            "Totals are computed in `src/shopapi/orders.py` by `compute_total()`.",
        )
        save_memory(
            live, repo, "Seeding fixtures", "How to load demo data", "Seed demo data with `scripts/seed_fixtures.sh`."
        )
        save_memory(
            live,
            repo,
            "Grafana board",
            "Order latency dashboard in Grafana",
            "https://grafana.example.com/d/orders",
            "reference",
        )
        live.daemon.meter.record("extract", 42_000, 3_000)
        live.daemon.meter.record("recall", 9_000, 400)
        live.daemon.meter.record("dream", 18_000, 2_500)
        item = live.daemon.review.propose(
            store,
            name="Staging resets nightly",
            description="The staging DB is reset every night at 02:00 UTC",
            type="project",
            body="Staging is wiped at 02:00 UTC.\n\n**Why:** fresh demo data.\n**How to apply:** do not keep test "
            "orders there.",
        )
        assert item is not None
        run_id = live.client.post("/v1/dream/run", json={"cwd": str(repo)}).json()["run_id"]
        assert wait_run(live, repo, run_id)["status"] == "done"
        merged = {f: store.read_raw(f) for f in (a, b)}
        pid = project_id(store.path)

        context = browser.new_context(viewport={"width": 1200, "height": 800})
        page = context.new_page()
        # Log in through the one-time link: it lands on the project list with an HttpOnly cookie.
        link = live.client.post("/v1/ui/login-link").json()["url"]
        page.goto(link)
        assert page.url == f"{live.url}/ui/" and page.locator("h1").inner_text() == "Projects"
        [cookie] = context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/ui"
        assert page.evaluate("document.cookie") == ""  # invisible to scripts
        shot(page, "projects")
        page.goto(link)  # a used link logs no one in
        assert "already used" in page.content()
        # Find a memory.
        page.goto(f"{live.url}/ui/")
        page.click("text=shop")
        page.fill("input[name=q]", "order totals")
        page.click("button:has-text('Filter')")
        assert page.locator("table.memories tbody tr").count() == 1
        shot(page, "memories")
        # Open it and edit it.
        page.click("table.memories a:has-text('Order totals')")
        page.click("details.edit summary")  # the page shows the rendered body; Edit opens the form
        page.fill("input[name=description]", "Order totals are computed by compute_total() in cents")
        page.click("button:has-text('Save')")
        page.wait_for_load_state()  # a form's answer page: a click waits only for it to start loading
        assert "Done: saved" in page.content()
        assert (
            store.get("project_order-totals.md").description == "Order totals are computed by compute_total() in cents"
        )
        shot(page, "memory")
        page.click("nav.project >> text=MEMORY.md")
        assert "compute_total() in cents" in page.locator("pre.index").inner_text()
        shot(page, "index")
        # Approve the pending memory.
        page.click("nav.project >> text=Review")
        assert page.locator("section.pending").count() == 1
        shot(page, "review")
        page.click("section.pending button:has-text('Approve')")
        page.wait_for_load_state()  # a form's answer page: a click waits only for it to start loading
        assert "Done: approved" in page.content() and page.locator("section.pending").count() == 0
        assert "Staging resets nightly" in {h.name for h in store.all_headers()}
        # Undo the dream run, after reading its diff.
        page.click("nav.project >> text=Dream runs")
        page.locator("details summary").first.click()
        assert "(before the run)" in page.locator("pre.diff").first.inner_text()
        shot(page, "dream")
        page.click("button:has-text('Undo this run')")
        page.wait_for_load_state()  # a form's answer page: a click waits only for it to start loading
        assert f"undid {run_id}" in page.content()
        assert {f: store.read_raw(f) for f in (a, b)} != merged and store.exists(a) and store.exists(b)
        for name, path in (
            ("stale", f"/ui/p/{pid}/stale"),
            ("jobs", f"/ui/p/{pid}/jobs"),
            ("sessions", "/ui/sessions"),
            ("spend", "/ui/spend"),
        ):
            page.goto(live.url + path)
            assert page.locator("h1").count() == 1
            shot(page, name)
        assert "seed_fixtures.sh" in page.goto(f"{live.url}/ui/p/{pid}/stale").text()
        page.goto(f"{live.url}/ui/spend")
        assert page.locator("svg.chart rect").count() >= 3

        # A page on another origin (same host, another port: same site, so the cookie even goes along).
        target = "project_order-totals.md"
        with ThreadedServer(foreign_page_app(live.url, f"/ui/p/{pid}/m/{target}/delete", str(repo))) as foreign:
            evil = context.new_page()
            evil.goto(foreign.url)
            evil.evaluate("attack()")
            evil.wait_for_function("document.getElementById('out').textContent.length > 0")
            result = evil.locator("#out").inner_text()
            assert "read:blocked" in result and "ui:blocked" in result, result
            with evil.expect_navigation():
                evil.evaluate("document.getElementById('csrf').submit()")  # a classic cross-site form post
            refused = evil.content()  # the refusal may be JSON (the Origin check) or the view's 403 page
            assert "403" in refused or "forbidden" in refused.lower() or "origin" in refused.lower(), refused[:300]
        assert store.exists(target)  # nothing the other origin tried changed anything
        context.close()


def test_edit_form_does_not_overwrite_a_save_made_while_it_was_open(live: Any, project: Path, browser: Any) -> None:
    """#40 bug 1 through the real page: the form keeps the version it showed; a newer save survives, the person
    chooses."""
    body = "Use pnpm.\n\n**Why:** one lockfile."
    r = live.client.post(
        "/v1/memories",
        json={"cwd": str(project), "name": "Use pnpm", "description": "Always pnpm", "type": "feedback", "body": body},
    )
    filename, opened = r.json()["filename"], r.json()["version"]
    store = live.daemon.stores.for_cwd(str(project))
    context = browser.new_context(viewport={"width": 1200, "height": 800}, timezone_id="Asia/Tokyo")
    page = context.new_page()
    page.goto(live.client.post("/v1/ui/login-link").json()["url"])
    page.goto(f"{live.url}/ui/p/{project_id(store.path)}/m/{filename}")
    # Times read in the viewer's zone (static/time.js), the exact UTC time kept in the title (#39 item 8).
    modified = page.locator("p.meta time").last
    modified.wait_for()
    page.wait_for_function("document.querySelector('p.meta time').dataset.local === '1'")
    assert "UTC" not in modified.inner_text() and modified.get_attribute("title").endswith(" UTC")
    page.click("details.edit summary")
    page.fill("textarea[name=body]", body + "\nNever npm, not even for one-off scripts.")
    # While the form is open, another writer saves (a REST client, as extraction or an editor would).
    theirs = body + "\nCI pins pnpm 9."
    r = live.client.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "Use pnpm",
            "description": "Always pnpm",
            "type": "feedback",
            "body": theirs,
            "expected_version": opened,
        },
    )
    assert r.status_code == 200, r.text
    page.click("form.edit button:has-text('Save')")
    page.wait_for_load_state()
    assert store.get(filename).body == theirs  # the newer save is still there
    assert "Nothing was saved" in page.locator("[role=alert]").inner_text()
    assert "CI pins pnpm 9." in page.locator("section.theirs").inner_text()
    assert "not even for one-off scripts" in page.locator("section.mine").inner_text()
    shot(page, "conflict")
    # Edit the merge: it starts with both texts' lines; the person saves it.
    merged = page.locator("form.merge textarea[name=body]").input_value()
    assert "CI pins pnpm 9." in merged and "not even for one-off scripts" in merged
    page.click("form.merge button:has-text('Save the merge')")
    page.wait_for_load_state()
    assert "Done: saved" in page.content()
    saved = store.get(filename).body
    assert "CI pins pnpm 9." in saved and "Never npm, not even for one-off scripts." in saved and "\r" not in saved
    context.close()
