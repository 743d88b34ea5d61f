"""Team memory through git: two members, each with their own MEMORYD_HOME and daemon (uvicorn
on loopback), a bare repository on local disk as the remote, and the real git CLI."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, serve

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git("init", "--bare", "-q", str(path))
    return path


class Member:
    """One person: a MEMORYD_HOME, a project checkout, and a running daemon."""

    def __init__(self, live: LiveDaemon, project: Path) -> None:
        self.live = live
        self.daemon: Daemon = live.daemon
        self.project = project
        self.cwd = str(project)

    def post(self, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        r = self.live.client.post(path, json={"cwd": self.cwd, **body})
        assert r.status_code == status, r.text
        return r.json()  # type: ignore[no-any-return]

    def get(self, path: str, status: int = 200) -> dict[str, Any]:
        r = self.live.client.get(path, params={"cwd": self.cwd})
        assert r.status_code == status, r.text
        return r.json()  # type: ignore[no-any-return]

    def init(self, remote: Path | str, **extra: Any) -> dict[str, Any]:
        return self.post("/v1/team/init", {"remote": str(remote), **extra})

    def save(
        self, name: str, description: str, body: str, *, type_: str = "project", status: int = 201
    ) -> dict[str, Any]:
        return self.post(
            "/v1/team/memories", {"name": name, "description": description, "type": type_, "body": body}, status
        )

    def sync(self, status: int = 200, **extra: Any) -> dict[str, Any]:
        return self.post("/v1/team/sync", extra, status)

    def status(self) -> dict[str, Any]:
        return self.get("/v1/team/status")

    def recall(self, query: str, session: str) -> dict[str, Any]:
        return self.post("/v1/recall", {"query": query, "session_id": session})

    @property
    def team_dir(self) -> Path:
        return self.daemon.stores.memory_dir_for(self.cwd) / "team"


@pytest.fixture
def members(tmp_path: Path) -> Iterator[Any]:
    """`members(**team_settings)` → (alice, bob), each with their own home and project."""
    with ExitStack() as stack:

        def make(**team: Any) -> tuple[Member, Member]:
            out = []
            for who in ("alice", "bob"):
                home = tmp_path / who / "memoryd-home"
                project = tmp_path / who / "project"
                (project / ".git").mkdir(parents=True)
                settings = make_settings(home)
                settings.team.author = who
                settings.team.debounce_seconds = 3600.0  # tests sync by hand unless they test the debounce
                settings.team.sync_interval_minutes = 0
                settings.dream.enabled = False
                for key, value in team.items():
                    setattr(settings.team, key, value)
                out.append(Member(stack.enter_context(serve(Daemon(settings))), project))
            return out[0], out[1]

        yield make


def remote_history(remote: Path) -> str:
    return git("--git-dir", str(remote), "log", "-p", "--all")


def remote_files(remote: Path, branch: str = "memory") -> set[str]:
    return set(git("--git-dir", str(remote), "ls-tree", "--name-only", branch).split())


# ---------------------------------------------------------------------------- sharing
def test_a_save_by_one_reaches_the_others_recall_after_sync(members: Any, remote: Path) -> None:
    alice, bob = members()
    first = alice.init(remote)
    assert first["sync_error"] == "" and first["remote"] == str(remote) and first["branch"] == "memory"
    saved = alice.save(
        "Deploy day",
        "We deploy production on Tuesdays only",
        "Deploys go out Tuesday mornings.\n\n**Why:** support is staffed.",
    )
    assert saved["origin"] == "team" and "/team/" in saved["path"]
    assert alice.status()["ahead"] == 1
    report = alice.sync()
    assert report["pushed"] == [saved["filename"]] and report["pushed_ok"]
    assert remote_files(remote) == {saved["filename"]}
    assert alice.status()["ahead"] == 0

    bob.post(
        "/v1/memories",
        {"name": "My editor", "description": "I use vim keybindings when we deploy", "type": "user", "body": "vim"},
        201,
    )
    joined = bob.init(remote)
    assert joined["sync"]["pulled"] == [saved["filename"]]
    assert (bob.team_dir / saved["filename"]).read_text() == (alice.team_dir / saved["filename"]).read_text()
    assert saved["filename"] in (bob.team_dir / "MEMORY.md").read_text()

    got = bob.recall("which day do we deploy production", "s1")
    by_origin = {m.get("origin", "personal"): m for m in got["memories"]}
    assert by_origin["team"]["filename"] == saved["filename"]
    assert by_origin["team"]["author"] == "alice"
    assert "Team memory, last changed by alice" in by_origin["team"]["header"]
    assert "personal" in by_origin, "personal memories are recalled beside team ones"
    # the session ledger knows what it surfaced from either folder
    again = bob.recall("which day do we deploy production", "s1")
    assert saved["filename"] not in [m["filename"] for m in again["memories"]]
    # personal memories never leave the machine
    assert not any("vim" in line for line in remote_history(remote).splitlines())


def test_team_memory_needs_init_and_stays_out_of_personal_stores(members: Any, remote: Path) -> None:
    alice, _ = members()
    r = alice.live.client.post(
        "/v1/team/memories", json={"cwd": alice.cwd, "name": "x", "description": "y", "type": "project", "body": "z"}
    )
    assert r.status_code == 404 and r.json()["error"]["code"] == "team_not_configured"
    assert "memoryd team init" in r.json()["error"]["message"]
    alice.init(remote)
    alice.save("Staging resets", "The staging DB resets Sunday night", "Sunday 23:00 UTC.")
    known = {str(s.path) for s in alice.daemon.stores.known()}
    assert str(alice.team_dir) not in known, "extraction and dream iterate known(): the team folder must not be there"
    personal = alice.get("/v1/memories")
    assert personal["memories"] == [], "a team save is not a personal memory"
    assert [m["author"] for m in alice.get("/v1/team/memories")["memories"]] == ["alice"]


# ---------------------------------------------------------------------------- never lose an edit
def test_a_conflict_keeps_what_only_theirs_says_and_no_sentence_twice() -> None:
    """Issue 32: a merged body never says a sentence twice; theirs adds only what ours lacks, or nothing."""
    from memoryd.extract.shape import repeated_sentences
    from memoryd.team.merge import merge_memory

    def clash(base: str, ours: str, theirs: str) -> tuple[str, bool]:
        return ours, False  # git merge-file's verdict on overlapping edits

    head = "---\nname: Release checklist\ndescription: Steps\ntype: project\n---\n"
    ours = head + "Run the full test suite. Tag the release.\n"
    merged = merge_memory(
        head + "Run the tests.\n",
        ours,
        head + "Run the full test suite. Announce it in #releases.\n",
        merge_text=clash,
        ours_label="bob",
        theirs_label="alice",
    )
    assert merged.conflict and merged.text is not None and "Announce it in #releases." in merged.text
    assert repeated_sentences(merged.text) == [] and merged.text.count("Run the full test suite.") == 1
    same = merge_memory(
        head + "Run the tests.\n",
        ours,
        head + "Tag the release.\n",
        merge_text=clash,
        ours_label="bob",
        theirs_label="alice",
    )
    assert not same.conflict and same.text == ours  # theirs said nothing new


def _both_synced(alice: Member, bob: Member, remote: Path, body: str) -> str:
    alice.init(remote)
    fn = alice.save("Release checklist", "Steps before a release", body)["filename"]
    alice.sync()
    bob.init(remote)
    assert (bob.team_dir / fn).is_file()
    return str(fn)


def test_concurrent_edits_of_one_memory_keep_both_versions(members: Any, remote: Path) -> None:
    alice, bob = members()
    fn = _both_synced(alice, bob, remote, "Run the tests.")
    alice.save(
        "Release checklist", "Steps before a release", "Run the full test suite and the smoke tests.", status=200
    )
    bob.save("Release checklist", "Steps before a release", "Run the tests, then tag the release.", status=200)
    assert alice.sync()["pushed"] == [fn]
    report = bob.sync()
    assert report["conflicts"] == [fn] and report["pushed"] == [fn]
    text = (bob.team_dir / fn).read_text()
    assert "Run the full test suite and the smoke tests." in text and "Run the tests, then tag the release." in text
    assert (
        "Needs review:** bob and alice" in text
        and "### Version by bob" in text
        and "### Only in alice's version" in text
    )
    assert text.count("modified:") == 1 and bob.status()["needs_review"] == [fn]
    assert alice.sync()["pulled"] == [fn]
    assert (alice.team_dir / fn).read_text() == text
    # the merged file is an ordinary memory: listed, and saving the resolved text clears the review
    listed = {m["filename"]: m for m in alice.get("/v1/team/memories")["memories"]}
    assert listed[fn]["name"] == "Release checklist"
    alice.save(
        "Release checklist", "Steps before a release", "Run the full test suite, then tag the release.", status=200
    )
    assert alice.status()["needs_review"] == []
    alice.sync()
    assert bob.sync()["pulled"] == [fn] and bob.status()["needs_review"] == []


def test_concurrent_edits_of_different_lines_merge_cleanly(members: Any, remote: Path) -> None:
    alice, bob = members()
    body = "1. Run the tests.\n\n2. Update the changelog.\n\n3. Tag the release."
    fn = _both_synced(alice, bob, remote, body)
    alice.save(
        "Release checklist",
        "Steps before a release",
        body.replace("Run the tests.", "Run the full test suite."),
        status=200,
    )
    bob.save(
        "Release checklist",
        "Steps before a release",
        body.replace("Tag the release.", "Tag and sign the release."),
        status=200,
    )
    alice.sync()
    report = bob.sync()
    assert report["merged"] == [fn] and report["conflicts"] == []
    text = (bob.team_dir / fn).read_text()
    assert "Run the full test suite." in text and "Tag and sign the release." in text and "Needs review" not in text
    assert text.count("modified:") == 1


def test_deletes_propagate_and_an_edit_beats_a_concurrent_delete(members: Any, remote: Path) -> None:
    alice, bob = members()
    fn = _both_synced(alice, bob, remote, "Run the tests.")
    other = alice.save("On-call", "Who is on call this week", "See the rota.")["filename"]
    alice.sync()
    bob.sync()
    assert (bob.team_dir / other).is_file()

    r = alice.live.client.delete(f"/v1/team/memories/{other}", params={"cwd": alice.cwd})
    assert r.status_code == 204
    alice.sync()
    assert bob.sync()["removed"] == [other]
    assert not (bob.team_dir / other).exists() and other not in (bob.team_dir / "MEMORY.md").read_text()
    assert other not in remote_files(remote)

    # alice deletes what bob edits at the same time: bob's edit survives for both
    alice.live.client.delete(f"/v1/team/memories/{fn}", params={"cwd": alice.cwd})
    bob.save("Release checklist", "Steps before a release", "Run the tests and the linters.", status=200)
    alice.sync()
    bob.sync()
    assert "linters" in (bob.team_dir / fn).read_text()
    alice.sync()
    assert "linters" in (alice.team_dir / fn).read_text()


# ---------------------------------------------------------------------------- safety
def test_a_planted_secret_never_reaches_the_remote(members: Any, remote: Path) -> None:
    alice, bob = members()
    alice.init(remote)
    clean = alice.save("CI", "CI runs on every push", "GitHub Actions, workflow ci.yml.")["filename"]
    planted = "reference_ci-token.md"
    (alice.team_dir / planted).write_text(
        f"---\nname: CI token\ndescription: the token CI uses\ntype: reference\n---\n\nThe token is {SECRET}\n"
    )
    report = alice.sync()
    assert report["pushed"] == [clean]
    assert [s["filename"] for s in report["secret_skipped"]] == [planted]
    assert "GitHub token" in report["secret_skipped"][0]["findings"][0] and SECRET not in str(report)
    assert SECRET not in remote_history(remote)
    assert (alice.team_dir / planted).read_text().count(SECRET) == 1, "the local file is left as it is"
    status = alice.status()
    assert status["pending"] == [planted] and status["last_report"]["secret_skipped"][0]["filename"] == planted
    # fixed by hand: now it is pushed, and the history still holds no secret
    (alice.team_dir / planted).write_text(
        "---\nname: CI token\ndescription: the token CI uses\ntype: reference\n---\n\nThe token is in 1Password, item "
        "CI.\n"
    )
    assert alice.sync()["pushed"] == [planted]
    assert SECRET not in remote_history(remote)
    bob.init(remote)
    assert (bob.team_dir / planted).is_file()


def test_an_incoming_secret_is_never_written_to_a_memory_file(members: Any, remote: Path, tmp_path: Path) -> None:
    """Someone pushes a secret into the branch with plain git: memoryd does not write it here (MemoryDir refuses it)
    and says so."""
    alice, _ = members()
    alice.init(remote)
    alice.save("CI", "CI runs on every push", "GitHub Actions.")
    alice.sync()
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", "memory", str(remote), str(clone))
    (clone / "reference_leak.md").write_text(f"---\nname: Leak\ndescription: d\ntype: reference\n---\n\n{SECRET}\n")
    git("-c", "user.name=x", "-c", "user.email=x@x", "add", ".", cwd=clone)
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "leak", cwd=clone)
    git("push", "-q", "origin", "memory", cwd=clone)
    report = alice.sync()
    assert report["kept_local"] == ["reference_leak.md"]
    assert not (alice.team_dir / "reference_leak.md").exists()


# ---------------------------------------------------------------------------- remote trouble
def test_remote_offline_keeps_local_work_and_retries_with_backoff(members: Any, remote: Path, tmp_path: Path) -> None:
    alice, bob = members(retry_base_seconds=30.0)
    alice.init(remote)
    alice.sync()
    away = tmp_path / "remote-away.git"
    remote.rename(away)
    fn = alice.save("Flaky test", "test_upload is flaky on CI", "Retry it once.")["filename"]
    r = alice.live.client.post("/v1/team/sync", json={"cwd": alice.cwd})
    assert r.status_code == 503 and r.json()["error"]["code"] == "git_failed"
    status = alice.status()
    assert status["consecutive_failures"] == 1 and status["last_error"].startswith("git fetch failed")
    assert status["next_retry"] - status["last_attempt"] == pytest.approx(30.0)
    assert status["pending"] == [fn] and (alice.team_dir / fn).is_file()
    assert not alice.daemon.team.due(alice.daemon.team.repo_for(alice.cwd)), "in backoff: the scheduler waits"
    alice.live.client.post("/v1/team/sync", json={"cwd": alice.cwd})
    assert alice.status()["consecutive_failures"] == 2
    assert alice.status()["next_retry"] - alice.status()["last_attempt"] == pytest.approx(60.0)

    away.rename(remote)
    assert alice.sync()["pushed"] == [fn]
    status = alice.status()
    assert status["consecutive_failures"] == 0 and status["last_error"] == "" and status["ahead"] == 0
    bob.init(remote)
    assert (bob.team_dir / fn).is_file()


def test_a_force_pushed_remote_is_detected_and_not_followed(members: Any, remote: Path, tmp_path: Path) -> None:
    alice, bob = members()
    fn = _both_synced(alice, bob, remote, "Run the tests.")
    clone = tmp_path / "clone"
    git("clone", "-q", "-b", "memory", str(remote), str(clone))
    git(
        "-c",
        "user.name=x",
        "-c",
        "user.email=x@x",
        "commit",
        "-q",
        "--amend",
        "-m",
        "rewritten",
        "--allow-empty",
        cwd=clone,
    )
    (clone / fn).unlink()
    git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "drop it", cwd=clone)
    git("push", "-q", "--force", "origin", "memory", cwd=clone)
    before = (alice.team_dir / fn).read_text()

    r = alice.live.client.post("/v1/team/sync", json={"cwd": alice.cwd})
    assert r.status_code == 409 and r.json()["error"]["code"] == "remote_rewritten"
    assert "--accept-rewrite" in r.json()["error"]["message"]
    assert (alice.team_dir / fn).read_text() == before
    status = alice.status()
    assert status["remote_rewritten"] and not alice.daemon.team.due(alice.daemon.team.repo_for(alice.cwd))

    report = alice.sync(accept_rewrite=True)
    assert report["pushed"] == [fn], (
        "with no common history nothing counts as deleted: the file is kept and pushed back"
    )
    assert fn in remote_files(remote) and not alice.status()["remote_rewritten"]


# ---------------------------------------------------------------------------- caps
def test_entry_cap_refuses_new_saves_and_keeps_extra_files_local(members: Any, remote: Path) -> None:
    alice, _ = members(max_entries=2)
    alice.init(remote)
    alice.save("One", "first team memory", "1")
    alice.save("Two", "second team memory", "2")
    alice.save("Two", "second team memory, updated", "2b", status=200)  # an update is not a new entry
    r = alice.live.client.post(
        "/v1/team/memories",
        json={"cwd": alice.cwd, "name": "Three", "description": "third", "type": "project", "body": "3"},
    )
    assert r.status_code == 422 and r.json()["error"]["code"] == "entries_capped"
    assert "max_entries = 2" in r.json()["error"]["message"]
    (alice.team_dir / "project_three.md").write_text("---\nname: Three\ndescription: third\ntype: project\n---\n\n3\n")
    report = alice.sync()
    assert report["entries_capped"] == ["project_three.md"] and len(report["pushed"]) == 2
    assert remote_files(remote) == {"project_one.md", "project_two.md"}
    status = alice.status()
    assert status["limits"]["max_entries"] == 2 and status["entries"] == 3 and status["pending"] == ["project_three.md"]


def test_push_rate_and_size_limits_suppress_pushes_and_keep_changes_local(members: Any, remote: Path) -> None:
    alice, bob = members(max_pushes_per_hour=1, max_push_bytes=64 * 1024)
    alice.init(remote)
    big = "x" * 40_000
    a = alice.save("Big one", "a big reference", big, type_="reference")["filename"]
    b = alice.save("Big two", "another big reference", big, type_="reference")["filename"]
    report = alice.sync()
    assert report["pushed"] == [a] and report["push_suppressed"] == {"size": [b]}
    bob.init(remote)
    assert sorted(p.name for p in bob.team_dir.glob("*_*.md")) == [a]

    c = bob.save("Small", "a small one", "s")["filename"]
    assert bob.sync()["pushed"] == [c]
    # alice has pushed once this hour: her next changes wait, while she still pulls bob's
    report = alice.sync()
    assert report["push_suppressed"] == {"rate": [b]} and report["pulled"] == [c]
    status = alice.status()
    assert status["limits"]["pushes_last_hour"] == 1 and status["limits"]["max_pushes_per_hour"] == 1
    assert status["pending"] == [b] and (alice.team_dir / b).is_file()


# ---------------------------------------------------------------------------- schedule
def test_a_team_write_is_pushed_by_the_debounced_sync(members: Any, remote: Path) -> None:
    alice, _ = members(debounce_seconds=0.2)
    alice.init(remote)
    fn = alice.save("Code review", "Two approvals for infra changes", "Two approvals.")["filename"]
    deadline = time.monotonic() + 30
    while fn not in (remote_files(remote) if git("--git-dir", str(remote), "branch", "--list", "memory") else set()):
        assert time.monotonic() < deadline, "the debounced sync never pushed"
        time.sleep(0.1)
    assert alice.status()["last_sync"] is not None


def test_the_scheduled_sync_runs_when_the_interval_has_passed(members: Any, remote: Path) -> None:
    alice, _ = members(sync_interval_minutes=0.001)  # 60 ms
    alice.init(remote)
    team = alice.daemon.team
    repo = team.repo_for(alice.cwd)
    fn = alice.save("Code owners", "Infra changes need the infra team", "See CODEOWNERS.")["filename"]
    while not team.due(repo):
        time.sleep(0.02)
    team.tick()  # the scheduler's job
    assert fn in remote_files(remote) and repo.state.last_report["pushed"] == [fn]


def test_init_refuses_option_like_remotes_and_bad_branches(members: Any) -> None:
    alice, _ = members()
    for body, field in (
        ({"remote": "--upload-pack=touch /tmp/x"}, "remote"),
        ({"remote": "ext::sh -c id"}, "remote"),
        ({"remote": "/tmp/r.git", "branch": "../x"}, "branch"),
    ):
        r = alice.live.client.post("/v1/team/init", json={"cwd": alice.cwd, **body})
        assert r.status_code == 400 and field in r.json()["error"]["message"], r.text


def test_the_llm_side_query_sees_team_memories_beside_personal_ones(
    tmp_path: Path, remote: Path, project: Path
) -> None:
    from tests.support.messages_api import ScriptedMessagesAPI

    with ScriptedMessagesAPI() as api:
        settings = make_settings(tmp_path / "home", ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=api.url)
        settings.team.author, settings.team.debounce_seconds, settings.dream.enabled = "carol", 3600.0, False
        with serve(Daemon(settings)) as live:
            carol = Member(live, project)
            carol.init(remote)
            personal = carol.post(
                "/v1/memories",
                {"name": "Deploys", "description": "How I deploy", "type": "project", "body": "make deploy"},
                201,
            )
            team = carol.save("Deploys", "How the team deploys", "Argo, Tuesdays.")
            assert personal["filename"] == team["filename"], "the same filename in both folders stays distinct"
            api.push(json.dumps({"selected_memories": [f"team:{team['filename']}"]}))
            got = carol.recall("how do we deploy this service", "s1")
            assert got["method"] == "llm"
            assert [(m["filename"], m.get("origin"), m.get("author")) for m in got["memories"]] == [
                (team["filename"], "team", "carol")
            ]
            manifest = api.requests[-1]["messages"][0]["content"]
            assert f"team:{team['filename']}" in manifest and f"] {personal['filename']} (" in manifest
