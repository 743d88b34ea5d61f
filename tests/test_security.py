"""Hostile input at the doors: symlinks are never followed, secrets never pass a side door,
foreign Hosts and Origins are refused, and what memoryd creates is private to the user."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from memoryd.base.secrets import redact_record, redact_secrets
from memoryd.server import RedactingFilter
from tests.conftest import LiveDaemon, recall_api, save_memory
from tests.support.servers import loopback_request
from tests.support.transcripts import new_session
from tests.test_extract import turn_end

PROSE_PASSWORD = "4jI0SB7A0!94bxuQCxx7"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def memory_dir(live: LiveDaemon, project: Path) -> Path:
    return live.daemon.stores.for_cwd(str(project)).path


# ---------------------------------------------------------------- symlinks
def test_symlinked_memory_file_is_never_served_recalled_or_listed(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Deploy day", "We deploy on Tuesdays", "Deploys happen on Tuesday afternoons.")
    folder = memory_dir(live, project)
    (folder / "user_tok.md").symlink_to(live.daemon.home / "token")
    (folder / "user_passwd.md").symlink_to("/etc/passwd")
    for name in ("user_tok.md", "user_passwd.md"):
        r = live.client.get(f"/v1/memories/{name}", params={"cwd": str(project)})
        assert r.status_code == 422 and "symbolic link" in r.json()["error"]["message"], r.text
        assert live.daemon.token not in r.text and "root:" not in r.text
    listed = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    assert [m["filename"] for m in listed["memories"]] == ["project_deploy-day.md"]
    status = live.client.get("/v1/status").json()
    invalid = {f["filename"]: f["error"] for f in status["invalid_files"][str(folder)]}
    assert "symbolic link" in invalid["user_tok.md"] and "symbolic link" in invalid["user_passwd.md"]
    # Recall on words of the token's own file name and of /etc/passwd injects neither.
    answer = recall_api(live, project, "tok token passwd root bin bash deploy tuesday")
    assert live.daemon.token not in str(answer) and "root:x" not in str(answer)
    # The index lists only the real memory.
    index = (folder / "MEMORY.md").read_text()
    assert "tok" not in index and "passwd" not in index


def test_save_onto_a_symlink_leaves_its_target_alone(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    save_memory(live, project, "First", "The first memory", "body")
    folder = memory_dir(live, project)
    outside = tmp_path / "outside.md"
    outside.write_text("precious\n")
    (folder / "user_victim.md").symlink_to(outside)
    r = live.client.post(
        "/v1/memories", json={"cwd": str(project), "name": "victim", "description": "d", "type": "user", "body": "x"}
    )
    assert r.status_code == 422 and "symbolic link" in r.text
    assert outside.read_text() == "precious\n" and (folder / "user_victim.md").is_symlink()


def test_a_symlinked_memory_dir_is_refused(live: LiveDaemon, project: Path, tmp_path: Path) -> None:
    folder = memory_dir(live, project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(elsewhere, target_is_directory=True)
    r = live.client.post(
        "/v1/memories", json={"cwd": str(project), "name": "n", "description": "d", "type": "user", "body": "b"}
    )
    assert r.status_code == 403 and "symbolic link" in r.text
    assert list(elsewhere.iterdir()) == []


# ---------------------------------------------------------------- secrets through side doors
def test_a_prose_password_reaches_no_file_record_or_response(live: LiveDaemon, project: Path) -> None:
    session = new_session(live.daemon.settings.transcript_roots[0], str(project))
    session.user(f"Remember that the staging db password is {PROSE_PASSWORD}")
    session.user(f"Remember: never commit {GITHUB_TOKEN} to the repo")
    session.assistant("Noted.")
    job = turn_end(live, session)
    assert job["status"] == "done", job
    assert PROSE_PASSWORD not in str(job) and GITHUB_TOKEN not in str(job)
    live.daemon.session_memory.update(session.session_id, session.path, str(project))
    leaks = []
    transcripts = live.daemon.settings.transcript_roots[0]
    for path in live.daemon.home.rglob("*"):
        if path.is_file() and not path.is_symlink() and transcripts not in path.parents:
            data = path.read_bytes()
            if PROSE_PASSWORD.encode() in data or GITHUB_TOKEN.encode() in data:
                leaks.append(path)
    for path in memory_dir(live, project).parent.rglob("*"):
        if path.is_file() and (PROSE_PASSWORD in path.name or PROSE_PASSWORD.encode() in path.read_bytes()):
            leaks.append(path)
    assert leaks == []
    with sqlite3.connect(live.daemon.home / "state.db") as db:
        dump = "\n".join(db.iterdump())
    assert PROSE_PASSWORD not in dump and GITHUB_TOKEN not in dump


def test_redaction_keeps_the_text_around_the_secret() -> None:
    assert (
        redact_secrets(f"the staging db password is {PROSE_PASSWORD}.")
        == "the staging db password is [secret removed]."
    )
    assert redact_secrets("the password is in 1Password; the password reset flow is broken") == (
        "the password is in 1Password; the password reset flow is broken"
    )
    assert redact_record({"name": f"never commit {GITHUB_TOKEN}", "n": 3, "l": [GITHUB_TOKEN]}) == {
        "name": "never commit [secret removed]",
        "n": 3,
        "l": ["[secret removed]"],
    }


def test_logs_never_print_a_secret(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("memoryd.test-redaction")
    handler = logging.StreamHandler()
    caplog.handler.addFilter(RedactingFilter())
    logger.addHandler(handler)
    try:
        with caplog.at_level(logging.INFO, logger="memoryd.test-redaction"):
            logger.info("refused candidate %s", f"password: {PROSE_PASSWORD}")
    finally:
        logger.removeHandler(handler)
    assert PROSE_PASSWORD not in caplog.text and "[secret removed]" in caplog.text


def test_what_memoryd_creates_is_private(live: LiveDaemon, project: Path) -> None:
    filename = save_memory(live, project, "Private", "A private memory", "body")
    folder = memory_dir(live, project)
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(live.daemon.home) == 0o700
    assert mode(live.daemon.home / "state.db") == 0o600
    assert mode(folder) == 0o700 and mode(folder / filename) == 0o600 and mode(folder / "MEMORY.md") == 0o600


# ---------------------------------------------------------------- Host and Origin
def test_a_foreign_host_is_refused_even_with_the_token(live: LiveDaemon) -> None:
    for host in ("evil.com", "evil.com:80", "127.0.0.1.evil.com"):
        r = live.client.get("/v1/status", headers={"Host": host})
        assert r.status_code == 403 and "loopback" in r.json()["error"]["message"], (host, r.text)
    r = loopback_request("GET", f"{live.url}/v1/health", headers={"Host": "evil.com"})
    assert r.status_code == 403
    for host in ("localhost", f"localhost:{live.server.port}", f"127.0.0.1:{live.server.port}", "[::1]:7377"):
        assert live.client.get("/v1/status", headers={"Host": host}).status_code == 200, host


def test_a_state_change_from_another_origin_is_refused(live: LiveDaemon, project: Path) -> None:
    body = {"cwd": str(project), "name": "n", "description": "d", "type": "user", "body": "b"}
    r = live.client.post("/v1/memories", json=body, headers={"Origin": "https://evil.com"})
    assert r.status_code == 403 and "origin" in r.text
    assert live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] == []
    r = live.client.post("/v1/memories", json=body, headers={"Origin": live.url})
    assert r.status_code in (200, 201), r.text


# ---------------------------------------------------------------- the redaction screen
# Short or punctuated forms of the rules whose value has no 20-character run (the screen's keyword half).
UNBOUNDED_FORMS = [
    "xoxb-1-a",
    "token eyJhbGciOi.eyJzdWIiOj.sig",
    "https://deploy:hunter22@example.com/x",
    "AccountKey=ab/cd+ef/gh+ij/kl+mn/op+qr/st+uv/wx",
    "?sv=2024&sig=ab%2Fcd%2Bef%2Fgh%2Bij%2Fkl%2Bmn%2Fop",
    "aws_key = 'abcdefghij/klmnopqrst+uvwxyz0123/456789ABCD'",
    "sntrys_abcdefghij+klmnopqrst/uvwxyz0123+456789ABCDEF",
    "sq0csp-abcdefghij\\klmnopqrst\\uvwxyz0123\\456789ABCDEFG",
    "//registry.npmjs.org/:_authToken=npm_x",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "PuTTY-User-Key-File-2: ssh-rsa",
    "https://hooks.slack.com/services/T0/B0/abc/def/ghi/jkl/mno",
    "aws_secret_access_key = abcdefghij/klmnopqrst+uvwxyz0123/456789abcd",
]


def test_the_screen_never_hides_a_rule_match() -> None:
    """`redact_secrets` skips every rule on a text its screen clears; a text any rule matches must pass the screen."""
    from memoryd.base.secret_rules import all_rules as _rules
    from memoryd.base.secret_rules import lowered as _lowered
    from memoryd.base.secret_rules import rules_may_match as _rules_may_match
    from tests.support.offline_quality import secret_cases

    rules, _ = _rules()
    matched = 0
    for text in [c.text for c in secret_cases()] + UNBOUNDED_FORMS:
        low = _lowered(text)
        if any(pattern.search(low if on_lower else text) for _, pattern, _, on_lower in rules):
            matched += 1
            assert _rules_may_match(text, low, max(map(len, text.split()), default=0)), text
    assert matched >= len(UNBOUNDED_FORMS) + 40  # the forms above and most of the dev set reach a rule
    assert not _rules_may_match("please fix the failing test in /home/u/app/src/parser.py", "", 30)
