"""The web view over real HTTP: login by one-time link, the cookie's reach (/ui only), CSRF and
Origin checks on forms, editing/deleting through the one write path, dream diffs and undo, spend."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoryd.api.web.views import project_id
from tests.conftest import LiveDaemon, save_memory
from tests.support.clock import POLL_SECONDS
from tests.support.servers import loopback_client, loopback_request
from tests.support.stale_fixture import make_repo


def login(live: LiveDaemon) -> tuple[httpx.Client, str]:
    """A browser-like client (no bearer token) logged in through a one-time link; returns it and the CSRF token."""
    url = live.client.post("/v1/ui/login-link").json()["url"]
    browser = loopback_client(live.url, timeout=10)
    r = browser.get(url.removeprefix(live.url))
    assert r.status_code == 303 and r.headers["location"] == "/ui/"
    return browser, csrf_of(browser.get("/ui/").text)


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, html
    return match.group(1)


def pid(live: LiveDaemon, project: Path) -> str:
    return project_id(live.daemon.stores.for_cwd(str(project)).path)


def test_login_link_works_once_and_sets_a_strict_httponly_cookie_scoped_to_ui(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    anonymous = loopback_client(live.url, timeout=10)
    assert anonymous.get("/ui/").status_code == 401
    assert anonymous.post("/v1/ui/login-link").status_code == 401  # only a token holder mints links
    url = live.client.post("/v1/ui/login-link").json()["url"]
    assert url.startswith(live.url + "/ui/login?code=")
    r = anonymous.get(url.removeprefix(live.url))
    cookie = r.headers["set-cookie"].lower()
    assert r.status_code == 303 and "httponly" in cookie and "samesite=strict" in cookie and "path=/ui" in cookie
    page = anonymous.get("/ui/")
    assert page.status_code == 200 and "project" in page.text and "text/html" in page.headers["content-type"]
    # The cookie is a /ui credential only: the JSON API still wants the bearer token.
    cookies = {"memoryd_ui": anonymous.cookies["memoryd_ui"]}
    assert (
        loopback_request("GET", f"{live.url}/v1/memories", params={"cwd": str(project)}, cookies=cookies).status_code
        == 401
    )
    assert loopback_request("GET", f"{live.url}/docs", cookies=cookies).status_code == 401
    # A used (or made-up) code logs no one in.
    again = loopback_client(live.url, timeout=10)
    assert again.get(url.removeprefix(live.url)).status_code == 401 and "memoryd_ui" not in again.cookies
    assert again.get("/ui/login?code=guess").status_code == 401
    assert again.get("/ui/").status_code == 401
    # The bearer token still opens the view.
    assert live.client.get("/ui/").status_code == 200


def test_search_filter_open_and_index(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs", type_="feedback")
    save_memory(live, project, "Grafana board", "Latency dashboard lives in Grafana", type_="reference")
    browser, _ = login(live)
    p = pid(live, project)
    assert "Use pnpm" in browser.get(f"/ui/p/{p}").text
    found = browser.get(f"/ui/p/{p}", params={"q": "grafana"}).text
    assert "Grafana board" in found and "Use pnpm" not in found
    typed = browser.get(f"/ui/p/{p}", params={"type": "feedback"}).text
    assert "Use pnpm" in typed and "Grafana board" not in typed
    index = browser.get(f"/ui/p/{p}/index").text
    assert "feedback_use-pnpm.md" in index and "over its limit" not in index
    assert browser.get(f"/ui/p/{p}/m/feedback_use-pnpm.md").status_code == 200
    assert browser.get("/ui/p/nope").status_code == 404
    assert browser.get(f"/ui/p/{p}/m/feedback_nope.md").status_code == 404


def test_index_page_shows_the_truncation_warning(live: LiveDaemon, project: Path) -> None:
    store = live.daemon.stores.for_cwd(str(project))
    for i in range(205):
        store.save(name=f"Note {i}", description=f"fact number {i}", type="project", body="x")
    browser, _ = login(live)
    page = browser.get(f"/ui/p/{pid(live, project)}/index").text
    assert "over its limit" in page and "WARNING: MEMORY.md is over 200 lines" in page


def test_edit_needs_csrf_and_the_daemons_own_origin(live: LiveDaemon, project: Path) -> None:
    filename = save_memory(live, project, "Use pnpm", "Always use pnpm for installs", body="Use pnpm.")
    browser, csrf = login(live)
    p = pid(live, project)
    path = f"/ui/p/{p}/m/{filename}"
    store = live.daemon.stores.for_cwd(str(project))
    form = {
        "name": "Use pnpm",
        "description": "Always use pnpm, never npm",
        "body": "Use pnpm.\n\n**Why:** lockfile.",
        "version": store.get(filename).version,
    }
    before = store.read_raw(filename)
    own = {"origin": live.url}
    assert browser.post(path, data={**form, "csrf": "wrong"}, headers=own).status_code == 403
    assert browser.post(path, data=form, headers=own).status_code == 403
    assert browser.post(path, data={**form, "csrf": csrf}).status_code == 403  # no Origin at all
    other_port = live.url.rsplit(":", 1)[0] + ":1"  # same site (a cookie would be sent), another origin
    assert browser.post(path, data={**form, "csrf": csrf}, headers={"origin": other_port}).status_code == 403
    assert browser.post(path, data={**form, "csrf": csrf}, headers={"origin": "http://evil.example"}).status_code == 403
    assert store.read_raw(filename) == before
    r = browser.post(path, data={**form, "csrf": csrf}, headers=own)
    assert r.status_code == 303, r.text
    m = store.get(filename)
    assert m.description == "Always use pnpm, never npm" and "**Why:** lockfile." in m.body
    assert "never npm" in store.served_index().content
    # A secret is refused with the form shown again, and nothing stored changes.
    saved = store.read_raw(filename)
    form["version"] = store.get(filename).version
    r = browser.post(path, data={**form, "body": "key AKIAIOSFODNN7EXAMPLE", "csrf": csrf}, headers=own)
    assert r.status_code == 422 and "AKIAIOSFODNN7EXAMPLE" in r.text and 'role="alert"' in r.text
    assert version_of(r.text) == form["version"]  # the form shown again still edits the version first shown
    assert store.read_raw(filename) == saved
    # The bearer token needs neither CSRF nor Origin (no ambient credential to abuse).
    assert live.client.post(path, data={**form, "description": "By token"}).status_code == 303
    assert store.get(filename).description == "By token"


def version_of(html: str, form: str = "") -> str:
    """The version a page's form (the first one after `form`, a class name) will save against."""
    match = re.search(r'name="version" value="([^"]*)"', html[html.index(form) if form else 0 :])
    assert match, html
    return match.group(1)


def test_edit_form_never_overwrites_a_newer_save_and_lets_the_person_choose(live: LiveDaemon, project: Path) -> None:
    """#40 bug 1: the form carries the version it showed; a save made since is not overwritten."""
    filename = save_memory(live, project, "Use pnpm", "Always use pnpm for installs", body="Use pnpm.")
    browser, csrf = login(live)
    path = f"/ui/p/{pid(live, project)}/m/{filename}"
    store = live.daemon.stores.for_cwd(str(project))
    shown = version_of(browser.get(path).text)
    assert shown == store.get(filename).version
    # Another writer saves while the page is open (a REST client here; extraction and editors are the same).
    theirs = {"cwd": str(project), "name": "Use pnpm", "description": "Always use pnpm for installs", "type": "project"}
    r = live.client.post(
        "/v1/memories", json={**theirs, "body": "Use pnpm.\nCI runs pnpm 9.", "expected_version": shown}
    )
    assert r.status_code == 200, r.text
    newer = store.read_raw(filename)
    own = {"origin": live.url}
    mine = {"name": "Use pnpm", "description": "Always use pnpm for installs", "csrf": csrf}
    r = browser.post(path, data={**mine, "body": "Use pnpm.\r\nNever npm.", "version": shown}, headers=own)
    assert r.status_code == 409, r.text[:500]
    assert store.read_raw(filename) == newer  # nothing overwritten
    assert "CI runs pnpm 9." in r.text and "Never npm." in r.text  # both texts shown
    assert "Keep mine" in r.text and "Take theirs" in r.text
    merge = r.text[r.text.index('class="edit merge"') :]
    assert "Use pnpm.\nCI runs pnpm 9.\nNever npm." in merge  # the merge starts with every line of both
    now = version_of(r.text, "keep-mine")
    assert now == store.get(filename).version
    # A form that names no version (a page from before this fix) cannot overwrite either.
    r = browser.post(path, data={**mine, "body": "Blind."}, headers=own)
    assert r.status_code == 409 and store.read_raw(filename) == newer
    # Keep mine: saved against the version the conflict page showed, CRLF from the browser stored as LF.
    r = browser.post(path, data={**mine, "body": "Use pnpm.\r\nNever npm.", "version": now}, headers=own)
    assert r.status_code == 303, r.text[:500]
    assert store.get(filename).body == "Use pnpm.\nNever npm."
    # Deleted meanwhile: the conflict says so, and keeping mine puts the memory back.
    shown = store.get(filename).version
    assert live.client.delete(f"/v1/memories/{filename}", params={"cwd": str(project)}).status_code in (200, 204)
    r = browser.post(path, data={**mine, "body": "Back.", "version": shown, "type": "project"}, headers=own)
    assert r.status_code == 409 and "deleted" in r.text and not store.exists(filename)
    r = browser.post(
        path, data={**mine, "body": "Back.", "version": version_of(r.text, "keep-mine"), "type": "project"}, headers=own
    )
    assert r.status_code == 303, r.text[:3000]
    assert store.get(filename).body == "Back."


def test_phone_friendly_pages_local_times_stale_findings_review_counts_and_a_favicon(
    live: LiveDaemon, tmp_path: Path
) -> None:
    """#39 items 8 and 9: the memory page shows its stale findings with code as code; the project bar
    counts pending reviews; times are <time datetime> in UTC (time.js shows them in local time); the
    dream page leads with what a run did; every page names an inline favicon (no /favicon.ico 401)."""
    repo = make_repo(tmp_path / "shop")
    stale = save_memory(
        live, repo, "Seeding fixtures", "How to load demo data", "Seed with `scripts/seed_fixtures.sh`."
    )
    save_memory(live, repo, "Use pnpm", "Always use pnpm for installs", "Use pnpm.", "feedback")
    save_memory(live, repo, "pnpm only", "Always use pnpm for installs", "Never npm.", "feedback")
    store = live.daemon.stores.for_cwd(str(repo))
    assert live.daemon.review.propose(
        store, name="Staging resets", description="Reset nightly", type="project", body="x"
    )
    run_id = live.client.post("/v1/dream/run", json={"cwd": str(repo)}).json()["run_id"]
    assert wait_run(live, repo, run_id)["status"] == "done"
    browser, _ = login(live)
    p = pid(live, repo)
    page = browser.get(f"/ui/p/{p}/m/{stale}").text
    assert 'class="stale"' in page and "<code>scripts/seed_fixtures.sh</code>" in page
    assert re.search(r'Review <span class="count"[^>]*>1</span>', page)
    assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">[^<]+ UTC</time>', page)
    assert 'rel="icon" href="data:image/svg+xml' in page
    dream = browser.get(f"/ui/p/{p}/dream").text
    first = dream[dream.index('<section class="run"') :]
    assert re.search(r"<h2>Updated 1 memory, deleted 1 memory</h2>", first), first[:400]
    assert (
        f"<code>{run_id}</code>" in first.split("</h2>")[1]
    )  # the id comes after what the run did, not in the heading
    assert "<code>scripts/seed_fixtures.sh</code>" in first and "`" not in first.split("<details")[0]
    assert not re.search(r"\d\d:\d\d:\d\d\.\d{6}", dream) and "+00:00" not in dream  # no raw timestamps
    listing = browser.get(f"/ui/p/{p}").text
    assert "<time datetime=" in listing and "UTC</time></td></tr>" in listing
    assert browser.get("/ui/static/time.js").status_code == 200
    icon = live.client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml") and "<svg" in icon.text


def test_delete_asks_first_then_deletes(live: LiveDaemon, project: Path) -> None:
    filename = save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    browser, csrf = login(live)
    p = pid(live, project)
    confirm = browser.get(f"/ui/p/{p}/m/{filename}/delete")
    assert confirm.status_code == 200 and "Yes, delete it" in confirm.text
    assert live.daemon.stores.for_cwd(str(project)).exists(filename)  # asking deletes nothing
    # Saved again while the confirmation was open: nothing is deleted, the person is asked about the new text.
    asked = version_of(confirm.text)
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs", body="Use pnpm. CI pins pnpm 9.")
    path = f"/ui/p/{p}/m/{filename}/delete"
    r = browser.post(path, data={"csrf": csrf, "version": asked}, headers={"origin": live.url})
    assert (
        r.status_code == 409
        and "CI pins pnpm 9." in r.text
        and live.daemon.stores.for_cwd(str(project)).exists(filename)
    )
    assert browser.post(path, data={"csrf": csrf}, headers={"origin": live.url}).status_code == 409  # no version
    r = browser.post(path, data={"csrf": csrf, "version": version_of(r.text)}, headers={"origin": live.url})
    assert r.status_code == 303
    assert not live.daemon.stores.for_cwd(str(project)).exists(filename)
    assert "Use pnpm" not in live.daemon.stores.for_cwd(str(project)).served_index().content


def wait_run(live: LiveDaemon, project: Path, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        runs = live.client.get("/v1/dream/runs", params={"cwd": str(project)}).json()["runs"]
        run = next((r for r in runs if r["run_id"] == run_id), None)
        if run and run["status"] != "running":
            return run
        time.sleep(POLL_SECONDS)
    raise AssertionError("run did not finish")


def test_dream_run_shows_a_diff_and_undoes(live: LiveDaemon, project: Path) -> None:
    a = save_memory(live, project, "Use pnpm", "Always use pnpm for installs", body="Use pnpm.")
    b = save_memory(live, project, "pnpm only", "Always use pnpm for installs", body="Never npm.")
    store = live.daemon.stores.for_cwd(str(project))
    before = {f: store.read_raw(f) for f in (a, b)}
    run_id = live.client.post("/v1/dream/run", json={"cwd": str(project)}).json()["run_id"]
    assert wait_run(live, project, run_id)["status"] == "done"
    browser, csrf = login(live)
    p = pid(live, project)
    page = browser.get(f"/ui/p/{p}/dream").text
    assert (
        run_id in page
        and "Undo this run" in page
        and "(before the run)" in page
        and ("+Use pnpm." in page or "+Never npm." in page)
    ), page
    r = browser.post(f"/ui/p/{p}/dream/{run_id}/undo", data={"csrf": csrf}, headers={"origin": live.url})
    assert r.status_code == 303
    assert {f: store.read_raw(f) for f in (a, b)} == before
    assert "Undo this run" not in browser.get(f"/ui/p/{p}/dream").text
    again = browser.post(f"/ui/p/{p}/dream/{run_id}/undo", data={"csrf": csrf}, headers={"origin": live.url})
    assert again.status_code == 409 and "already undone" in again.text


def test_jobs_sessions_and_spend_pages(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    live.daemon.meter.record("extract", 1200, 300)
    live.daemon.meter.record("recall", 500, 20)
    browser, _ = login(live)
    spend = browser.get("/ui/spend").text
    assert (
        "<svg" in spend
        and "extract" in spend
        and "1,500" in spend
        and "daily cap 2,000,000 (above this scale)" in spend
        and "offline" in spend
    )
    assert browser.get(f"/ui/p/{pid(live, project)}/jobs").status_code == 200
    assert browser.get("/ui/sessions").status_code == 200
    assert browser.get("/ui/sessions/nope").status_code == 404


def test_no_cors_and_foreign_hosts_refused(module_live: LiveDaemon) -> None:
    live = module_live  # a login of its own
    r = httpx.options(
        f"{live.url}/ui/", headers={"origin": "http://evil.example", "access-control-request-method": "POST"}
    )
    assert "access-control-allow-origin" not in r.headers
    browser, _ = login(live)
    assert browser.get("/ui/", headers={"host": "evil.example"}).status_code == 403  # DNS rebinding
    assert browser.get("/ui/../v1/memories").status_code in (401, 404)


@pytest.mark.parametrize("path", ["/ui/logout"])
def test_logout_ends_the_session(module_live: LiveDaemon, path: str) -> None:
    live = module_live  # a login of its own
    browser, csrf = login(live)
    assert browser.post(path, data={"csrf": csrf}, headers={"origin": live.url}).status_code == 200
    assert loopback_request("GET", f"{live.url}/ui/", cookies={"memoryd_ui": "x"}).status_code == 401
    assert browser.get("/ui/").status_code == 401


def test_memoryd_ui_prints_a_working_one_time_link(live: LiveDaemon, home: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.support.servers import daemon_env

    env = {**daemon_env(home), "MEMORYD_PORT": live.url.rsplit(":", 1)[1], "MEMORYD_TOKEN": live.daemon.token}
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "ui", "--no-browser", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    link = json.loads(done.stdout)
    assert link["opened"] is False and live.daemon.token not in done.stdout
    browser = loopback_client(live.url, timeout=10)
    assert browser.get(link["url"].removeprefix(live.url)).status_code == 303
    assert browser.get("/ui/").status_code == 200


def test_message_pages_and_a_refused_review_edit(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    """Each page that says one thing (web/pages.py message_page) keeps its status, title and words; a review
    edit the store refuses shows the queue again with the person's text and the reason (#40 kept them alike)."""
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    other = tmp_path / "other"
    other.mkdir()
    save_memory(live, other, "Use uv", "Always use uv for Python installs")
    browser, csrf = login(live)
    form = {"csrf": csrf}
    origin = {"origin": live.url}
    p, q = pid(live, project), pid(live, other)
    r = browser.post(f"/ui/p/{p}/dream/dr_nothing/undo", data=form, headers=origin)
    assert r.status_code == 404 and "No such run" in r.text and "run dr_nothing is not a run of this project." in r.text
    r = browser.get("/ui/sessions/s-none")
    assert r.status_code == 404 and "No notes" in r.text and "session s-none has no notes yet." in r.text
    store = live.daemon.stores.for_cwd(str(project))
    item = live.daemon.review.propose(
        store, name="Staging resets", description="Reset nightly", type="project", body="x"
    )
    assert item is not None
    edit = {**form, "action": "save", "name": "Staging resets", "description": "Reset nightly", "body": "x"}
    r = browser.post(f"/ui/p/{q}/review/{item}", data=edit, headers=origin)
    assert r.status_code == 404 and "Not in this project" in r.text and f"{item} is not waiting" in r.text
    refused = {**edit, "description": " ", "body": "my own words"}
    r = browser.post(f"/ui/p/{p}/review/{item}", data=refused, headers=origin)
    assert r.status_code == 422 and "description is empty" in r.text and "my own words" in r.text
    assert "Logged out" in browser.post("/ui/logout", data=form, headers=origin).text
    r = loopback_client(live.url, timeout=10).get("/ui/login?code=made-up")
    assert r.status_code == 401 and "Login link used or expired" in r.text


def test_a_person_creates_a_memory_from_the_web_view(live: LiveDaemon, project: Path) -> None:
    """#51 item 7: a "New memory" form, checked as the edit form is (CSRF, the daemon's own Origin) and
    validated as the API is; a name in use is never overwritten by it."""
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs", body="Use pnpm.")
    browser, csrf = login(live)
    p = pid(live, project)
    listing = browser.get(f"/ui/p/{p}").text
    assert f'href="/ui/p/{p}/new"' in listing and "New memory" in listing
    form_page = browser.get(f"/ui/p/{p}/new")
    assert form_page.status_code == 200 and 'name="description"' in form_page.text
    csrf = csrf_of(form_page.text)
    store = live.daemon.stores.for_cwd(str(project))
    path, own = f"/ui/p/{p}/new", {"origin": live.url}
    form = {"type": "feedback", "name": "Real DB in tests", "description": "Integration tests use the real DB"}
    form |= {"body": "No mocks.\r\n\r\n**Why:** a mocked test hid a broken migration."}
    before = sorted(h.filename for h in store.list())
    assert browser.post(path, data={**form, "csrf": "wrong"}, headers=own).status_code == 403
    assert browser.post(path, data={**form, "csrf": csrf}).status_code == 403  # no Origin
    assert browser.post(path, data={**form, "csrf": csrf}, headers={"origin": "http://evil.example"}).status_code == 403
    assert sorted(h.filename for h in store.list()) == before
    # the API's validation, the form shown again with what was typed and the fix
    r = browser.post(path, data={**form, "type": "secrets", "csrf": csrf}, headers=own)
    assert r.status_code == 422 and "unknown memory type" in r.text and "Integration tests use the real DB" in r.text
    r = browser.post(path, data={**form, "body": "key AKIAIOSFODNN7EXAMPLE", "csrf": csrf}, headers=own)
    assert r.status_code == 422 and 'role="alert"' in r.text
    taken = {**form, "type": "project", "name": "Use pnpm", "csrf": csrf}  # the same type and name: never overwritten
    r = browser.post(path, data=taken, headers=own)
    assert r.status_code == 409 and "Use pnpm" in r.text
    assert sorted(h.filename for h in store.list()) == before and "Use pnpm." in store.get(before[0]).body
    r = browser.post(path, data={**form, "csrf": csrf}, headers=own)
    assert r.status_code == 303, r.text
    created = r.headers["location"].split("/m/")[1].split("?")[0]
    m = store.get(created)
    assert (m.type, m.name, m.description) == ("feedback", "Real DB in tests", "Integration tests use the real DB")
    assert m.body == "No mocks.\n\n**Why:** a mocked test hid a broken migration."  # LF, as memory files hold
    assert "Real DB in tests" in store.served_index().content
