"""Issue 31, hostile input round two: alias bombs, links and secret names in team sync, settings a
cloned repo chooses, framing, Origin ports and split secrets. Each test drives the real door."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from memoryd.base import limits
from memoryd.base.errors import InvalidFrontmatter
from memoryd.store.frontmatter import split_frontmatter
from tests.conftest import LiveDaemon, recall_api, save_memory

# 9 levels of 9 aliases: ~387 million strings once a value becomes text (issue 31: 361 bytes → 5 GB).
ALIAS_BOMB = (
    "---\nname: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    + "".join(f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))
    + "description: *i\ntype: user\n---\nbody\n"
)


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        split_frontmatter(ALIAS_BOMB, source="user_bomb.md")
    except InvalidFrontmatter as exc:
        assert "anchor or alias" in exc.message and "user_bomb.md" in exc.message
    else:
        raise AssertionError("an alias bomb parsed")
    assert time.perf_counter() - started < 0.5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KB: nothing was built


def test_deep_or_huge_frontmatter_is_refused_and_plain_yaml_still_parses() -> None:
    for text, reason in (
        ("---\na: " + "[" * 40 + "]" * 40 + "\n---\n", "nests deeper"),
        ("---\ndescription: " + "x" * 20_000 + "\n---\n", "over"),
        ("---\nitems: [" + ", ".join(["1"] * 3_000) + "]\n---\n", "values"),
    ):
        try:
            split_frontmatter(text)
        except InvalidFrontmatter as exc:
            assert reason in exc.message, exc.message
        else:
            raise AssertionError(reason)
    meta, body = split_frontmatter("---\nname: 'x: y'\nmetadata:\n  type: user\ntags: [a, b]\n---\nhi\n")
    assert meta == {"name": "x: y", "metadata": {"type": "user"}, "tags": ["a", "b"]} and body == "hi\n"


def test_an_alias_bomb_in_the_memory_dir_is_listed_invalid_and_costs_nothing(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Deploy day", "We deploy on Tuesdays", "Deploys happen on Tuesday afternoons.")
    folder = live.daemon.stores.for_cwd(str(project)).path
    (folder / "user_bomb.md").write_text(ALIAS_BOMB)
    started = time.perf_counter()
    listed = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    assert [m["filename"] for m in listed["memories"]] == ["project_deploy-day.md"]
    invalid = {f["filename"]: f["error"] for f in live.client.get("/v1/status").json()["invalid_files"][str(folder)]}
    assert "anchor or alias" in invalid["user_bomb.md"]
    r = live.client.get("/v1/memories/user_bomb.md", params={"cwd": str(project)})
    assert r.status_code == 422 and "anchor or alias" in r.json()["error"]["message"]
    assert "lol" not in str(recall_api(live, project, "lol deploy tuesday"))
    assert time.perf_counter() - started < 5
    assert "bomb" not in (folder / "MEMORY.md").read_text()


# ---------------------------------------------------------------- team sync
from tests.test_team import SECRET, git, members, remote, remote_files, remote_history  # noqa: E402,F401 (fixtures)

SECRET_NAME = f"user_{SECRET}.md"


def test_team_sync_never_follows_a_link_or_reads_a_fifo(members: Any, remote: Path, tmp_path: Path) -> None:
    alice, _ = members()
    alice.init(remote)
    clean = alice.save("CI", "CI runs on every push", "GitHub Actions, workflow ci.yml.")["filename"]
    outside = tmp_path / "id_rsa"
    outside.write_text("PRECIOUS-OUTSIDE-FILE\n")
    (alice.team_dir / "user_passwd.md").symlink_to(outside)
    os.mkfifo(alice.team_dir / "user_fifo.md")
    report = alice.sync()
    assert report["pushed"] == [clean]
    assert {r["filename"] for r in report["refused"]} == {"user_passwd.md", "user_fifo.md"}
    assert "PRECIOUS" not in remote_history(remote) and remote_files(remote) == {clean}
    assert alice.status()["pending"] == []
    assert (alice.team_dir / "user_passwd.md").is_symlink() and outside.read_text() == "PRECIOUS-OUTSIDE-FILE\n"


def test_a_secret_in_a_file_name_reaches_no_remote_index_or_recall(members: Any, remote: Path, tmp_path: Path) -> None:
    alice, bob = members()
    alice.init(remote)
    alice.save("CI", "CI runs on every push", "GitHub Actions.")
    (alice.team_dir / SECRET_NAME).write_text(
        "---\nname: harmless\ndescription: deploy notes\ntype: user\n---\n\ndeploy notes\n"
    )
    report = alice.sync()
    assert [s["filename"] for s in report["secret_skipped"]] == [
        "user_[secret removed] (GitHub Token in the file name).md"
    ]
    assert SECRET not in json.dumps(report)
    assert not [p for p in (alice.daemon.home / "team").rglob("*.json") if SECRET in p.read_text()], (
        "a state file holds the name"
    )
    assert SECRET not in remote_history(remote) and SECRET not in git(
        "--git-dir", str(remote), "log", "--all", "--format=%B"
    )
    # Pushed with plain git by a member: never written on another member's disk.
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", "memory", str(remote), str(clone))
    (clone / SECRET_NAME).write_text(
        "---\nname: harmless\ndescription: deploy notes\ntype: user\n---\n\ndeploy notes\n"
    )
    git("-c", "user.name=x", "-c", "user.email=x@x", "add", ".", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "notes", cwd=clone)
    git("push", "-q", "origin", "memory", cwd=clone)
    bob.init(remote)
    assert not (bob.team_dir / SECRET_NAME).exists()
    # In alice's own folder it is listed invalid: kept out of MEMORY.md and the model's context.
    assert SECRET not in (alice.team_dir / "MEMORY.md").read_text()
    assert SECRET not in json.dumps(alice.recall("deploy notes harmless", "s1"))
    invalid = {f["filename"]: f["error"] for f in alice.get("/v1/team/memories")["invalid"]}
    assert "secret" in invalid[SECRET_NAME]


def test_an_alias_bomb_from_the_team_remote_is_kept_out(members: Any, remote: Path, tmp_path: Path) -> None:
    alice, _ = members()
    alice.init(remote)
    alice.save("CI", "CI runs on every push", "GitHub Actions.")
    alice.sync()
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", "memory", str(remote), str(clone))
    (clone / "user_bomb.md").write_text(ALIAS_BOMB)
    git("-c", "user.name=x", "-c", "user.email=x@x", "add", ".", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "bomb", cwd=clone)
    git("push", "-q", "origin", "memory", cwd=clone)
    started = time.perf_counter()
    report = alice.sync()
    assert report["kept_local"] == ["user_bomb.md"] and not (alice.team_dir / "user_bomb.md").exists()
    assert time.perf_counter() - started < 5


# ---------------------------------------------------------------- Claude Code settings trust
from memoryd.base.errors import Forbidden  # noqa: E402
from memoryd.integrations.claude_memory import claude_memory_dir, untrusted_reason  # noqa: E402


def test_a_cloned_repo_cannot_choose_the_memory_dir_through_tracked_local_settings(tmp_path: Path) -> None:
    user = {"HOME": str(tmp_path / "user")}
    (tmp_path / "user" / ".claude").mkdir(parents=True)
    ssh = tmp_path / "user" / ".ssh"
    ssh.mkdir()
    repo = tmp_path / "cloned"
    git("init", "-q", str(repo))
    local = repo / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text(json.dumps({"autoMemoryDirectory": "~/.ssh"}))
    default_before = claude_memory_dir(str(repo), user)
    git("add", "-f", ".claude/settings.local.json", cwd=repo)
    assert default_before == ssh  # untracked and the user's own: trusted, as Claude Code does
    assert "tracked by git" in untrusted_reason(local, "local")
    assert claude_memory_dir(str(repo), user) != ssh
    assert claude_memory_dir(str(repo), user).name == "memory"
    if os.getuid() == 0:  # a file another user owns is not trusted either (chown needs root)
        git("rm", "-q", "--cached", ".claude/settings.local.json", cwd=repo)
        assert claude_memory_dir(str(repo), user) == ssh
        os.chown(local, 65534, 65534)
        assert "another user" in untrusted_reason(local, "local") and claude_memory_dir(str(repo), user) != ssh


def test_an_auto_memory_directory_that_is_a_link_is_refused(tmp_path: Path) -> None:
    user = {"HOME": str(tmp_path / "user")}
    (tmp_path / "user" / ".claude").mkdir(parents=True)
    (tmp_path / "real").mkdir()
    (tmp_path / "user" / "mem").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "user" / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/mem"}))
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    try:
        claude_memory_dir(str(project), user)
    except Forbidden as exc:
        assert "symbolic link" in exc.message
    else:
        raise AssertionError("a linked memory dir was followed")
    link = project / ".claude" / "settings.local.json"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "user" / ".claude" / "settings.json")
    assert "symbolic link" in untrusted_reason(link, "local")


# ---------------------------------------------------------------- framing and Origin ports
def test_the_web_view_refuses_to_be_framed(module_live: LiveDaemon) -> None:
    live = module_live  # reads headers only
    for path in ("/ui", "/ui/login"):
        r = live.client.get(path, follow_redirects=False)
        assert r.headers["x-frame-options"] == "DENY", (path, r.status_code)
        policy = r.headers.get_list("content-security-policy")
        assert len(policy) == 1 and "frame-ancestors 'none'" in policy[0], (path, policy)
    assert "x-frame-options" not in live.client.get("/v1/health").headers


def test_an_origin_on_another_loopback_port_is_refused(live: LiveDaemon, project: Path) -> None:
    body = {"cwd": str(project), "name": "n", "description": "d", "type": "user", "body": "b"}
    other = f"http://127.0.0.1:{live.server.port + 1 if live.server.port < 65535 else 3000}"
    for path, payload in (
        ("/v1/memories", body),
        ("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ("/ui/logout", {}),
    ):
        r = live.client.post(path, json=payload, headers={"Origin": other})
        assert r.status_code == 403 and "origin" in r.text, (path, r.status_code, r.text)
    assert live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] == []
    r = live.client.post("/v1/memories", json=body, headers={"Origin": f"http://localhost:{live.server.port}"})
    assert r.status_code in (200, 201), r.text


# ---------------------------------------------------------------- review approve vs kill -9
from memoryd.review.queue import APPROVING, CRASH_ENV, ReviewQueue  # noqa: E402
from memoryd.service.daemon import Daemon  # noqa: E402
from tests.conftest import make_settings, serve  # noqa: E402
from tests.support.servers import DaemonProcess, daemon_env  # noqa: E402


def _pending_item(home: Path, project: Path, name: str = "pnpm only") -> str:
    (home / "config.toml").write_text("[extract]\nreview = true\n", encoding="utf-8")
    with serve(Daemon(make_settings(home))) as live:
        store = live.daemon.stores.for_cwd(str(project))
        item = live.daemon.review.propose(
            store, name=name, description="always pnpm, never npm", type="feedback", body="The lockfile is pnpm's."
        )
        assert item is not None
        return item


@pytest.mark.e2e
def test_kill_9_between_the_write_and_the_decision_settles_as_approved(home: Path, project: Path) -> None:
    """A real SIGKILL of the daemon subprocess right after the memory is written; the restart settles it."""
    item = _pending_item(home, project)
    proc = DaemonProcess(home=home, env=daemon_env(home, **{CRASH_ENV: "review-approve-written"})).start()
    try:
        with proc.client(timeout=10) as c:
            try:
                c.post(f"/v1/review/{item}/approve")
            except httpx.HTTPError:
                pass
        assert proc.proc is not None and proc.proc.wait(timeout=10) == -9
    finally:
        proc.kill()
    proc = DaemonProcess(home=home, env=daemon_env(home)).start()
    try:
        with proc.client(timeout=10) as c:
            assert c.get("/v1/review", params={"cwd": str(project)}).json()["items"] == []
            [approved] = c.get("/v1/review", params={"cwd": str(project), "status": "approved"}).json()["items"]
            assert approved["item_id"] == item and approved["filename"]
            assert [m["filename"] for m in c.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]] == [
                approved["filename"]
            ]
            assert (
                c.post(f"/v1/review/{item}/reject").status_code == 404
            )  # decided: a reject cannot leave the memory behind
    finally:
        proc.kill()


def test_a_crash_before_the_write_puts_the_item_back_in_the_queue(home: Path, project: Path) -> None:
    item = _pending_item(home, project, "yarn never")
    daemon = Daemon(make_settings(home))
    daemon.state.execute(
        "UPDATE review_items SET status = ? WHERE item_id = ?", (APPROVING, item)
    )  # the journal, then the crash
    queue = ReviewQueue(daemon.state, stores=daemon.stores, default=True, per_project={})  # the next start
    assert queue.get(item).status == "pending" and daemon.stores.for_cwd(str(project)).all_headers() == []
    daemon.state.close()


def test_a_crash_after_the_write_settles_the_item_as_approved(home: Path, project: Path) -> None:
    """The fast twin of the kill -9 test: the journal and the memory on disk, then the next start."""
    item = _pending_item(home, project, "pnpm always")
    daemon = Daemon(make_settings(home))
    pending = daemon.review.get(item)
    daemon.state.execute("UPDATE review_items SET status = ? WHERE item_id = ?", (APPROVING, item))
    saved = daemon.stores.for_cwd(str(project)).save(
        name=pending.name,
        description=pending.description,
        type=pending.type,
        body=pending.body,
        source="review",
    )
    queue = ReviewQueue(daemon.state, stores=daemon.stores, default=True, per_project={})  # the next start
    [approved] = queue.items(status="approved")
    assert approved.item_id == item and approved.filename == saved.memory.filename and queue.items() == []
    daemon.state.close()


# ---------------------------------------------------------------- import streams
import io  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tarfile  # noqa: E402

from tests.support.bombs import RepeatedBytes  # noqa: E402

GOOD = "---\nname: good one\ndescription: a memory that imports\ntype: user\n---\nThe user likes tea.\n"


def _import_rss(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """`memoryd import …` as a real process, and its peak RSS in MB (VmHWM: ru_maxrss would keep the forking
    parent's)."""
    code = (
        "import runpy, sys\nsys.argv = ['memoryd', *sys.argv[1:]]\ntry:\n    runpy.run_module('memoryd', "
        "run_name='__main__')\n"
        "finally:\n    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n    print('RSS', "
        "int(hwm.split()[1]) // 1024, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "import", *args], env=daemon_env(home), capture_output=True, text=True, timeout=120
    )
    return done, int(done.stderr.rsplit("RSS ", 1)[1].split()[0])


def test_import_sizes_before_reading_and_skips_only_the_bad_files(
    shared_daemon: DaemonProcess, project: Path, tmp_path: Path
) -> None:
    source = tmp_path / "notes"
    source.mkdir()
    (source / "big.md").write_bytes(b"x" * (limits.IMPORT_FILE_MAX_BYTES * 40))
    (source / "broken.md").write_text("---\nname: [unclosed\n---\nbody\n")
    (source / "bomb.md").write_text(ALIAS_BOMB)
    (source / "good.md").write_text(GOOD)
    (source / "link.md").symlink_to(source / "good.md")
    done, rss = _import_rss(shared_daemon.home, "--cwd", str(project), "--from", str(source), "--json")
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["counts"] == {"saved": 1, "invalid": 4}, done.stdout
    reasons = {row["source"]: row["reason"] for row in result["memories"] if row["action"] == "invalid"}
    assert (
        "over" in reasons["big.md"]
        and "does not parse" in reasons["broken.md"]
        and "alias" in reasons["bomb.md"]
        and "link" in reasons["link.md"]
    )
    # A tarball whose one member inflates to 200 MB: refused by its header, never read; the rest imports.
    archive = tmp_path / "bomb.tar.gz"
    with tarfile.open(
        archive, "w:gz", compresslevel=1
    ) as tar:  # 0.9 MB that inflates to 200 MB, made in a third of level 9's time
        big = tarfile.TarInfo("memory/user_big.md")
        big.size = 200 * 1024 * 1024
        tar.addfile(big, io.BufferedReader(RepeatedBytes(big.size), 1 << 20))
        good = tarfile.TarInfo("memory/user_tea.md")
        data = GOOD.replace("good one", "tea").replace("a memory that imports", "green tea, no sugar").encode()
        good.size = len(data)
        tar.addfile(good, io.BytesIO(data))
    done, rss = _import_rss(shared_daemon.home, "--cwd", str(project), "--from", str(archive), "--json")
    result = json.loads(done.stdout)
    assert result["counts"] == {"saved": 1, "invalid": 1} and rss < 150, (result, rss)


# ---------------------------------------------------------------- secrets split by whitespace
from memoryd.base.secrets import find_secrets, redact_secrets  # noqa: E402

ANTHROPIC = "sk-ant-api03-" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz"
SPLIT_FORMS = [
    " ".join(SECRET),  # spaced out, one character at a time
    " ".join(SECRET[i : i + 4] for i in range(0, len(SECRET), 4)),  # in groups
    SECRET[:20] + "\n" + SECRET[20:],  # wrapped at a line width
    ANTHROPIC[:15] + "\n  " + ANTHROPIC[15:30] + "\n  " + ANTHROPIC[30:],  # over three indented lines
    "AKIA\nIOSFODNN7EXAMPLE",
]


def test_a_secret_split_by_whitespace_is_found_and_redacted_whole() -> None:
    for form in SPLIT_FORMS:
        # (a wrapped token may take the next line's first word with it)
        text = f"the deploy credential:\n{form}\nkeep it safe"
        assert find_secrets(text), form
        redacted = redact_secrets(text)
        assert "it safe" in redacted and not any(part in redacted for part in form.split() if len(part) >= 4), redacted


def test_the_split_pass_adds_no_false_positive() -> None:
    """The dev set's look-alikes and this repository's own code and docs: no split finding."""
    from tests.support.offline_quality import secret_cases

    assert [c.text for c in secret_cases() if not c.secret and find_secrets(c.text)] == []
    root = Path(__file__).resolve().parents[1]
    texts = [
        p.read_text(encoding="utf-8")
        for pattern in ("memoryd/**/*.py", "*.md", "docs/*.md")
        for p in root.glob(pattern)
    ]
    assert [f for text in texts for chunk in text.split("\n\n") for f in find_secrets(chunk) if "split" in f.kind] == []


def test_a_split_secret_is_refused_at_save(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # a refused save into its own project
    r = live.client.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "deploy",
            "description": "d",
            "type": "reference",
            "body": "token:\n" + SPLIT_FORMS[2],
        },
    )
    assert r.status_code == 422 and "split by whitespace" in r.text and SECRET[:20] not in r.text
