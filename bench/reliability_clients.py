"""Issue 52's and 51's probes of memoryd's clients against a program on memoryd's port (run by
bench/reliability.py, group `clients`): one that drips a byte every 0.5 s, one whose chunked answer never ends,
one whose chunk-size line never ends, `python3 -m http.server`, and one that answers a client with no token.
The CLI, the hook command and `memoryd mcp` run as real subprocesses (their address space capped at 1 GB); each
must fail within its deadline with one line, in bounded memory, having sent nothing before the proof. Each probe
records every client's seconds to fail and peak RSS in its Item's `figures`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reliability_harness import Harness, Item

from memoryd.base import limits
from memoryd.integrations.hook_protocol import HOOK_EVENTS
from tests.support.hostile_peers import (
    Behaviour,
    ClientRun,
    HostilePeer,
    HttpServerOnPort,
    drip,
    endless_chunk_size,
    endless_chunks,
    mcp_answer,
    mcp_call,
    plain_answer,
    run_client,
)

START_SLACK_SECONDS = 2.0  # a client's own start (Python, imports) on a shared 2-core machine
MAX_RSS_MB = 200  # the clients hold 30-80 MB; an unbounded answer took them to 1.5 GB
SAVED_TEXT = "the staging database password rotates on Fridays"
HOOK_PROBE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse")


def _env(h: Harness, home: Path, **extra: str) -> dict[str, str]:
    env = {**h.env, "MEMORYD_HOME": str(home), **extra}
    env.pop("MEMORYD_TOKEN", None)
    return env


def _home(h: Harness, name: str, port: int | None, *, token: bool) -> Path:
    """A home whose daemon.json (when `port`) names a live pid (this one) and the stranger's port."""
    home = h.base / name
    home.mkdir()
    if token:
        (home / "token").write_text("token-of-this-user\n")
        os.chmod(home / "token", 0o600)
    if port is not None:
        (home / "daemon.json").write_text(json.dumps({"pid": os.getpid(), "host": "127.0.0.1", "port": port}))
    return home


def _one_line(run: ClientRun) -> str:
    """The client's whole output when it is one line without a traceback, else ''."""
    text = (run.stdout + run.stderr).strip()
    return text if len(text.splitlines()) == 1 and "Traceback" not in text else ""


def _figure(item: Item, label: str, run: ClientRun) -> None:
    item.figures[f"{label} s"] = round(run.seconds, 2)
    item.figures[f"{label} MB"] = round(run.max_rss_mb)


def _clients_against(h: Harness, item: Item, stranger: str, behaviour: Behaviour) -> None:
    """The CLI, each hook event and the MCP server against one stranger: one line, within the deadline, bounded."""
    with HostilePeer(behaviour) as peer:
        home = _home(h, f"clients-{stranger.replace(' ', '-')}", peer.port, token=True)
        env = _env(h, home)
        said = f"something other than memoryd answers on port {peer.port}"
        cli = run_client(["list", "--cwd", str(h.project)], env)
        _figure(item, f"{stranger}: cli", cli)
        item.check(cli.returncode == 3 and said in _one_line(cli), f"{stranger}: cli said {cli.stderr[-160:]!r}")
        item.check(
            cli.seconds < limits.CLIENT_PROOF_SECONDS + START_SLACK_SECONDS, f"{stranger}: cli took {cli.seconds:.1f} s"
        )
        for name in HOOK_PROBE_EVENTS:
            payload = {"hook_event_name": name, "session_id": f"probe-{name}", "cwd": str(h.project), "prompt": "x"}
            hook = run_client(["hook", "claude-code"], env, stdin=json.dumps(payload).encode())
            _figure(item, f"{stranger}: hook {name}", hook)
            budget = HOOK_EVENTS[name][0]
            item.check(hook.returncode == 0 and "Traceback" not in hook.stderr, f"{stranger}: hook {name} failed")
            item.check(
                hook.seconds < budget + START_SLACK_SECONDS, f"{stranger}: hook {name} took {hook.seconds:.1f} s"
            )
        call = mcp_call("memory_recall", {"query": "which package manager?", "cwd": str(h.project)})
        mcp = run_client(["mcp"], env, stdin=call, answered=b'"id":2')
        _figure(item, f"{stranger}: mcp call", mcp)
        answer = mcp_answer(mcp.stdout)
        text = str((answer.get("content") or [{}])[0].get("text", "")) if answer else ""
        item.check(answer.get("isError") is True and said in text, f"{stranger}: mcp answered {text[:120]!r}")
        item.check(mcp.seconds < limits.CLIENT_PROOF_SECONDS + 1, f"{stranger}: mcp took {mcp.seconds:.1f} s")
        for label, run in (("cli", cli), ("mcp", mcp)):
            item.check(run.max_rss_mb < MAX_RSS_MB, f"{stranger}: {label} grew to {run.max_rss_mb:.0f} MB")


def probe_slow_stranger(h: Harness) -> Item:
    """Issue 52 item 3: a stranger that drips one byte every 0.5 s held the hook past 30 s, the CLI and MCP past 60."""
    item = Item("a drip-feeding stranger holds no client")
    _clients_against(h, item, "drip", drip)
    return item


def probe_endless_answer(h: Harness) -> Item:
    """Issue 52 item 4: an endless chunked answer took `memoryd list` to 1.5 GB (MemoryError), MCP to 1.44 GB;
    a chunk-size line without end held the hook past 30 s."""
    item = Item("an endless answer fills no client's memory")
    _clients_against(h, item, "endless chunks", endless_chunks)
    _clients_against(h, item, "endless size line", endless_chunk_size)
    return item


def probe_other_program(h: Harness) -> Item:
    """Issue 51 item 3: `python3 -m http.server` on the port had its HTML quoted by status, list, save and --json,
    and doctor said to read the daemon's log."""
    item = Item("another program on the port: one line naming it")
    with HttpServerOnPort(h.base / "www") as server:
        env = _env(h, h.base / "first-hour-home", MEMORYD_PORT=str(server.port))
        said = f"something other than memoryd answers on port {server.port}"
        save = ["save", "-t", "project", "-n", "n", "-d", "d", "-b", SAVED_TEXT]
        for args in (["status"], ["list"], save, ["list", "--json"]):
            run = run_client([*args, "--cwd", str(h.project)], env)
            _figure(item, f"http.server: {args[0]}{' --json' if '--json' in args else ''}", run)
            line = (
                json.loads(run.stdout or "{}").get("error", {}).get("message", "")
                if "--json" in args
                else _one_line(run)
            )
            item.check(
                run.returncode == 3 and said in line and "MEMORYD_PORT" in line and "<" not in line,
                f"{args[0]}: {(run.stdout + run.stderr)[-160:]!r}",
            )
        doctor = run_client(["doctor", "--json", "--cwd", str(h.project)], env)
        _figure(item, "http.server: doctor --json", doctor)
        checks = {c["name"]: c for c in json.loads(doctor.stdout or '{"checks": []}')["checks"]}
        daemon = checks.get("daemon", {})
        item.check(
            f"port {server.port}" in daemon.get("detail", "") and "MEMORYD_PORT" in daemon.get("fix", ""),
            f"doctor: {daemon}",
        )
        item.check("log" not in daemon.get("fix", "log"), f"doctor's fix: {daemon.get('fix')}")
    return item


def probe_no_token(h: Harness) -> Item:
    """Issue 52 item 9: with no token file, a save's text reached the stranger and the CLI died of a KeyError."""
    item = Item("no token: nothing of a request reaches a stranger")
    with HostilePeer(plain_answer) as peer:
        env = _env(h, _home(h, "no-token", peer.port, token=False))
        save = ["save", "-t", "project", "-n", "staging db", "-d", "rotation", "-b", SAVED_TEXT]
        cli = run_client([*save, "--cwd", str(h.project)], env)
        _figure(item, "no token: cli save", cli)
        item.check(cli.returncode == 3 and _one_line(cli) != "", f"cli save: {(cli.stdout + cli.stderr)[-160:]!r}")
        fields = {"type": "project", "name": "staging db", "description": "rotation", "body": SAVED_TEXT}
        mcp = run_client(
            ["mcp"], env, stdin=mcp_call("memory_save", {**fields, "cwd": str(h.project)}), answered=b'"id":2'
        )
        _figure(item, "no token: mcp save", mcp)
        item.check(mcp_answer(mcp.stdout).get("isError") is True, "mcp save: no error answered")
        received = peer.received()
        item.check(SAVED_TEXT.encode() not in received, "the save's text reached the stranger")
        item.check(b"POST" not in received and b"Authorization" not in received, "a request was sent unproven")
    return item


CLIENT_PROBES = [probe_slow_stranger, probe_endless_answer, probe_other_program, probe_no_token]
