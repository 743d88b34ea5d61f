"""Watching memory work (#30) over real HTTP: the recall log (ring, redaction, GET /v1/recall/log and
its filters), the live event stream behind the cookie and the Origin check, rendered and sanitised
memory pages, one row per project, and `memoryd recall --explain` / `memoryd ui --print-url`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from memoryd.api.web.markdown import render, sanitize
from memoryd.api.web.views import project_id
from memoryd.base.activity import Activity
from memoryd.base.state_db import StateDB
from memoryd.recall.explain import Why
from memoryd.recall.log import RecallLog
from tests.conftest import LiveDaemon, recall_api, save_memory
from tests.support.servers import DaemonProcess, daemon_env, loopback_client
from tests.test_ui import login

FAKE_KEY = "sk-ant-api03-" + "Zq8vX2mK9pL4nR7tY1wB6cD3fG5hJ0sA" * 2  # shaped like a key; not a key


def test_a_recall_is_logged_with_what_it_gave_and_why(live: LiveDaemon, project: Path) -> None:
    fn = save_memory(
        live,
        project,
        "Staging deploys",
        "Staging deploys need the VPN up first",
        "Connect the VPN, then run deploy.sh.",
    )
    save_memory(
        live,
        project,
        "Grafana board",
        "Order latency dashboard in Grafana",
        "https://grafana.example.com/d/orders",
        "reference",
    )
    data = recall_api(live, project, "how do staging deploys work with the vpn?", session="s-log")
    assert [m["filename"] for m in data["memories"]] == [fn]
    recall_api(live, project, "staging", session="s-other")  # a single word: silent, and logged as such
    log = live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()["entries"]
    assert [e["session_id"] for e in log] == ["s-other", "s-log"]  # newest first
    silent, given = log
    assert silent["injected"] == [] and silent["reason"] == "single-word query" and silent["source"] == "rest"
    [why] = given["injected"]
    assert why["filename"] == fn and why["name"] == "Staging deploys" and why["score"] == data["scores"][fn]
    assert set(why["terms"]) >= {"staging", "deploys", "vpn"} and "how" not in why["terms"]
    assert (
        given["took_ms"] > 0
        and given["prompt"] == "how do staging deploys work with the vpn?"
        and given["memory_dir"].endswith("memory")
    )
    # filters: session, limit; and the token is required
    only = live.client.get("/v1/recall/log", params={"session": "s-log"}).json()["entries"]
    assert [e["id"] for e in only] == [given["id"]]
    assert len(live.client.get("/v1/recall/log", params={"limit": 1}).json()["entries"]) == 1
    assert loopback_client(live.url).get("/v1/recall/log").status_code == 401
    bad = live.client.get("/v1/recall/log", params={"limit": 0})
    assert bad.status_code in (400, 422) and "limit" in bad.text


def test_the_hook_and_mcp_doors_are_named_and_prompts_are_redacted_and_cut(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Staging deploys", "Staging deploys need the VPN up first")
    prompt = f"staging deploys with key {FAKE_KEY} " + "and more words " * 40
    r = live.client.post(
        "/v1/hooks/claude-code",
        json={"hook_event_name": "UserPromptSubmit", "cwd": str(project), "session_id": "hook-1", "prompt": prompt},
    )
    assert r.status_code == 200
    live.client.post(
        "/v1/recall", json={"cwd": str(project), "query": "staging deploys again", "session_id": "m-1", "source": "mcp"}
    )
    hook, mcp = (
        live.client.get("/v1/recall/log", params={"session": s}).json()["entries"][0] for s in ("hook-1", "m-1")
    )
    assert hook["source"] == "hook" and mcp["source"] == "mcp"
    assert FAKE_KEY not in hook["prompt"] and FAKE_KEY[:20] not in hook["prompt"] and len(hook["prompt"]) <= 300
    assert hook["prompt"].startswith("staging deploys with key ") and hook["prompt"].endswith("…")
    stored = live.daemon.state.query("SELECT prompt, why FROM recall_log")
    assert all(FAKE_KEY[:20] not in row["prompt"] for row in stored)
    refused = live.client.post(
        "/v1/recall", json={"cwd": str(project), "query": "a b", "session_id": "x", "source": "smoke-signal"}
    )
    assert refused.status_code in (400, 422) and "source" in refused.text


def _logged(
    log: RecallLog, prompt: str, *, memory_dir: str = "/a", source: str = "rest", why: list[Why] | None = None
) -> None:
    """One local recall of session "s" in the log."""
    log.record(
        memory_dir=memory_dir,
        session_id="s",
        source=source,
        prompt=prompt,
        method="local",
        reason="",
        took_ms=1.0,
        why=why or [],
    )


def test_the_log_is_a_ring_per_memory_dir(tmp_path: Path) -> None:
    state = StateDB(tmp_path / "state.db")
    activity = Activity(clock=time.time)
    seen: list[object] = []
    activity.subscribe(seen.append)
    log = RecallLog(state, clock=time.time, activity=activity, keep=3)
    for i in range(5):
        _logged(log, f"prompt {i}", why=[Why("m.md", "M", 1.0 + i, True, ("prompt",)), Why("n.md", "N", 0.5, False)])
    _logged(log, "other", memory_dir="/b", source="hook")
    assert [e.prompt for e in log.entries(memory_dir="/a")] == ["prompt 4", "prompt 3", "prompt 2"]
    assert [e.prompt for e in log.entries(memory_dir="/b")] == ["other"]
    assert [e.prompt for e in log.of_memory("/a", "m.md")] == ["prompt 4", "prompt 3", "prompt 2"]
    assert log.of_memory("/a", "n.md") == []  # left out is not "recalled"
    assert state.query_one("SELECT COUNT(*) AS n FROM recall_log_hits")["n"] == 3
    assert len(seen) == 6 and log.entries(memory_dir="/a")[0].left_out[0].name == "N"
    state.close()


def _read_events(response: httpx.Response, want: int, out: list[str]) -> None:
    buf = ""
    for chunk in response.iter_text():
        buf += chunk
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            if "event: activity" in block:
                out.append("\n".join(line[6:] for line in block.splitlines() if line.startswith("data: ")))
                if len(out) >= want:
                    return


def test_the_event_stream_needs_the_cookie_and_the_views_own_origin(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Staging deploys", "Staging deploys need the VPN up first")
    assert loopback_client(live.url).get("/ui/activity/stream").status_code == 401  # no cookie
    browser, _ = login(live)
    for headers in (
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        refused = browser.get("/ui/activity/stream", headers=headers)
        assert refused.status_code == 403 and "web view itself" in refused.text, headers
    events: list[str] = []
    with browser.stream(
        "GET", "/ui/activity/stream", headers={"Origin": live.url, "Sec-Fetch-Site": "same-origin"}, timeout=10
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        reader = threading.Thread(target=_read_events, args=(r, 1, events), daemon=True)
        reader.start()
        deadline = time.monotonic() + 5
        while live.daemon.activity.subscribers() == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        recall_api(live, project, "how do staging deploys work?", session="live-1")
        reader.join(5)
    assert events, "no event arrived"
    assert 'class="event recall"' in events[0] and "Staging deploys" in events[0] and "staging, deploys" in events[0]
    deadline = time.monotonic() + 5
    while live.daemon.activity.subscribers() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live.daemon.activity.subscribers() == 0  # the stream let go when the client did
    page = browser.get("/ui/activity").text  # the page lists it too, from the log
    assert "how do staging deploys work?" in page and "live.js" in page


def test_a_memory_page_renders_markdown_safely_and_lists_its_recalls(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    body = (
        "# Deploying\n\n- first the VPN\n- then `deploy.sh`\n\n```sh\n./deploy.sh staging\n```\n\nSee [[Use pnpm]] "
        "and [[nowhere]].\n\n"
        "<script>window.pwned = 1</script>\n\n<img src=x onerror=alert(1)> [click](javascript:alert(1))\n"
    )
    fn = save_memory(live, project, "Deploying", "How staging deploys go", body)
    recall_api(live, project, "how does deploying to staging go?", session="page-1")
    browser, _ = login(live)
    p = project_id(live.daemon.stores.for_cwd(str(project)).path)
    r = browser.get(f"/ui/p/{p}/m/{fn}")
    assert r.status_code == 200 and "script-src 'self'" in r.headers["content-security-policy"]
    article = r.text.split('<article class="markdown">', 1)[1].split("</article>", 1)[0]
    assert (
        "<h1>Deploying</h1>" in article
        and "<li>first the VPN</li>" in article
        and '<code class="language-sh">./deploy.sh staging' in article
    )
    assert f'href="/ui/p/{p}/m/feedback_use-pnpm.md"' in article or f'href="/ui/p/{p}/m/project_use-pnpm.md"' in article
    assert "[[nowhere]]" in article  # an unknown link stays text
    assert (
        "<script" not in article
        and "onerror" not in article.replace("onerror=alert(1)&gt;", "")
        and "javascript:" not in article.split("&lt;")[0]
    )
    assert 'href="javascript' not in article
    assert "<summary" in r.text and "Edit" in r.text and 'name="body"' in r.text  # editing is one click away
    recalled = r.text.split('<section class="recalls">', 1)[1]
    assert "how does deploying to staging go?" in recalled and "score" in recalled


def test_raw_html_in_a_body_is_text_and_the_sanitiser_removes_what_could_run() -> None:
    html = str(
        render(
            '<a href="javascript:alert(1)" onclick="x">a</a>\n\n[b](javascript:alert(1))\n\n[c](https://example.com '
            '"t")\n'
        )
    )
    assert html.count("<a ") == 1 and '<a href="https://example.com" title="t" rel="noopener noreferrer">c</a>' in html
    assert (
        '<p>&lt;a href="javascript:alert(1)" onclick="x"&gt;a&lt;/a&gt;</p>' in html
    )  # shown as the text the file holds
    dirty = (
        '<script>x()</script><p onclick="x()" style="color:red">p</p><a href="javascript:alert(1)">j</a><a '
        'href="JaVaScRiPt:x">k</a>'
        '<img src="x" onerror="y()"><iframe src="https://e.com"></iframe><svg onload="z()"></svg><a '
        'href="/ui/p/1/m/a.md">ok</a>'
    )
    clean = str(sanitize(dirty))
    for bad in (
        "<script",
        "x()",
        "onclick",
        "style=",
        "javascript",
        "JaVaScRiPt",
        "onerror",
        "<iframe",
        "<svg",
        "onload",
    ):
        assert bad not in clean, bad
    assert '<a href="/ui/p/1/m/a.md" rel="noopener noreferrer">ok</a>' in clean and "<p>p</p>" in clean


def test_one_row_per_project_listing_where_its_memories_live(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    save_memory(live, project, "Use pnpm", "Always use pnpm for installs")
    own = live.daemon.stores.for_cwd(str(project))
    # the same project's folder under another base (Claude Code's), known to the daemon without a project root
    other = tmp_path / "claude" / "projects" / own.path.parent.name / "memory"
    other.mkdir(parents=True)
    (other / "user_role.md").write_text(
        "---\nname: Role\ndescription: The user is a data scientist\ntype: user\n---\nData scientist.\n"
    )
    live.daemon.stores.for_path(other)
    browser, _ = login(live)
    page = browser.get("/ui/").text
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0].count("<tr>")
    assert rows == 1 and str(own.path) in page and str(other) in page and ">2<" in page.replace("</td>", "<")


def test_cli_recall_explain_and_ui_print_url(shared_daemon: DaemonProcess, project: Path) -> None:
    with shared_daemon.client() as c:
        fn = c.post(
            "/v1/memories",
            json={
                "cwd": str(project),
                "name": "Staging deploys",
                "description": "Staging deploys need the VPN up first",
                "type": "project",
                "body": "Connect the VPN.",
            },
        ).json()["filename"]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memoryd", *args],
            env=daemon_env(shared_daemon.home, HOME=shared_daemon.env["HOME"]),
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        )

    out = cli("recall", "how do staging deploys work?", "--explain")
    assert out.returncode == 0, out.stderr
    assert (
        "why (cli" in out.stdout
        and f"+ Staging deploys ({fn}): score" in out.stdout
        and "words: staging, deploys" in out.stdout
    )
    silent = cli("recall", "staging", "--explain")
    assert "nothing given: single-word query" in silent.stdout
    data = json.loads(cli("recall", "staging deploys vpn", "--explain", "--json").stdout)
    assert data["explain"]["injected"][0]["filename"] == fn
    url = cli("ui", "--print-url")
    assert (
        url.returncode == 0
        and url.stdout.strip().startswith(shared_daemon.url + "/ui/login?code=")
        and url.stdout.count("\n") == 1
    )
    assert loopback_client(shared_daemon.url).get(url.stdout.strip().removeprefix(shared_daemon.url)).status_code == 303


def test_a_recall_answers_before_its_log_row_is_written(tmp_path: Path) -> None:
    """The log's own write was ~35 % of a recall whose vector was cached (issue 42): a recall hands its row to
    the log's writer and answers; a reader still sees every recall recorded before it."""
    state = StateDB(tmp_path / "state.db")
    log = RecallLog(state, clock=time.time)

    def recall(i: int) -> None:
        _logged(log, f"p{i}")

    with state.transaction():  # another writer holds the database
        answered = threading.Thread(target=recall, args=(1,))
        answered.start()
        answered.join(timeout=10)
        assert not answered.is_alive(), "the recall waited for its log row"
    recall(2)
    assert [e.prompt for e in log.entries(memory_dir="/a")] == ["p2", "p1"]
    recall(3)
    log.close()  # the daemon stopping: what is pending is written first
    assert state.query_one("SELECT COUNT(*) AS n FROM recall_log")["n"] == 3
    state.close()
