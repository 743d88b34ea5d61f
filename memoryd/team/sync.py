"""`TeamRepo`: one project's team folder tied to a git remote, and its sync.

A sync fetches, merges the folder three ways (base: the remote tip last merged), writes what
came in through `MemoryDir.restore`, commits the result on top of the remote tip and pushes it
(a fast-forward: the remote's history is never rewritten). Every file is secret-scanned before
it is committed; capped, suppressed or secret-holding files stay local and are reported.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, InitVar, asdict, dataclass
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.errors import InvalidFrontmatter, MemorydError
from memoryd.base.files import SymlinkRefused, dir_lock, read_small_nofollow
from memoryd.base.secrets import find_secrets, name_secrets, redact_name
from memoryd.config import TeamSettings
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.memdir import MemoryDir
from memoryd.store.paths import is_memory_filename
from memoryd.team.errors import GitFailed, RemoteRewritten
from memoryd.team.git import Git, TreeEntry, blob_id, redact_url
from memoryd.team.merge import merge_file, needs_review
from memoryd.team.push_policy import push_exclusions
from memoryd.team.report import SyncReport
from memoryd.team.state import GIT_DIRNAME, STATE_FILENAME, TeamState

log = logging.getLogger(__name__)
HOUR = 3600.0


def is_memory_file(name: str) -> bool:
    """A memory file (either dialect's name); MEMORY.md is rebuilt by each member, never shared."""
    return is_memory_filename(name)


def _read_regular(path: Path) -> bytes | str | None:
    """A regular file's bytes (never through a link), None when it is absent, else why it is not read."""
    try:
        data, st = read_small_nofollow(path, limits.MEMORY_FILE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except SymlinkRefused:
        return "a symbolic link: memoryd never follows links (it could point at a secret outside the team folder)"
    except OSError:
        return "not a regular file (a FIFO, device or folder): memoryd reads only regular files"
    if data is None:
        return f"over {limits.MEMORY_FILE_MAX_BYTES:,} bytes"
    return data


@dataclass(eq=False)
class TeamRepo:
    """The git side of one team folder: a bare repository of its own under `<home>/team/<key>/`."""

    root: Path
    state: TeamState
    store: MemoryDir
    settings: TeamSettings
    _: KW_ONLY
    env: InitVar[dict[str, str] | None] = None
    clock: Callable[[], float] = time.time

    def __post_init__(self, env: dict[str, str] | None) -> None:
        settings = self.settings
        self.git = Git(self.root / GIT_DIRNAME, binary=settings.git, timeout=settings.git_timeout_seconds, env=env)
        self.lock = threading.Lock()  # one sync at a time per folder
        self.applying = threading.local()  # set while a sync writes incoming files (not a member's write)
        self._identity: tuple[str, str] | None = None

    # ------------------------------------------------------------------ setup
    @classmethod
    def create(cls, root: Path, state: TeamState, store: MemoryDir, settings: TeamSettings, **kwargs: Any) -> TeamRepo:
        repo = cls(root, state, store, settings, **kwargs)
        if not (repo.git.git_dir / "HEAD").is_file():
            repo.git.init_bare()
        repo.git.set_remote(state.remote)
        store.path.mkdir(parents=True, exist_ok=True)
        repo.save_state()
        return repo

    def save_state(self) -> None:
        self.state.save(self.root / STATE_FILENAME)

    @property
    def identity(self) -> tuple[str, str]:
        """(name, email) this member signs team commits with."""
        if self._identity is None:
            git_name, git_email = self.git.identity()
            login = os.environ.get("USER") or os.environ.get("LOGNAME") or "member"
            name = self.settings.author or git_name or login
            self._identity = (name, git_email or f"{login}@localhost")
        return self._identity

    def author_of(self, filename: str) -> str:
        return self.state.authors.get(filename) or self.identity[0]

    # ------------------------------------------------------------------ reading
    def _live(self, refused: dict[str, str] | None = None) -> dict[str, bytes]:
        """The folder's memory files as bytes, read without following links; a link, FIFO, device or
        oversized file is never read (issue 31: a link to /etc/passwd was pushed) and lands in `refused`."""
        out: dict[str, bytes] = {}
        try:
            entries = list(os.scandir(self.store.path))
        except FileNotFoundError:
            return out
        for entry in entries:
            if not is_memory_file(entry.name):
                continue
            data = _read_regular(Path(entry.path))
            if isinstance(data, bytes):
                out[entry.name] = data
            elif data and refused is not None:
                refused[entry.name] = data
        return out

    def _memory_tree(self, commit: str | None) -> tuple[dict[str, str], list[TreeEntry]]:
        """(memory file → blob id, the other entries) of a commit's tree."""
        files, others = {}, []
        for entry in self.git.tree(commit):
            if entry.kind == "blob" and is_memory_file(entry.name):
                files[entry.name] = entry.oid
            else:
                others.append(entry)
        return files, others

    def _base(self, commit: str | None) -> dict[str, str]:
        base, _ = self._memory_tree(commit)
        for name, oid in self.state.pinned.items():
            if oid:
                base[name] = oid
            else:
                base.pop(name, None)
        return base

    def pending(self) -> list[str]:
        """Local changes not on the remote yet (what a sync would try to push)."""
        base = self._base(self.state.last_remote)
        refused: dict[str, str] = {}
        live = {n: blob_id(d) for n, d in self._live(refused).items()}
        return sorted(
            n
            for n in set(base) | set(live)
            if base.get(n) != live.get(n) and n not in refused and (n in live or not name_secrets(n))
        )

    def pushes_last_hour(self) -> int:
        now = self.clock()
        return sum(1 for t in self.state.pushes if now - t < HOUR)

    # ------------------------------------------------------------------ sync
    def sync(self, *, accept_rewrite: bool = False) -> SyncReport:
        """Pull, merge, push; failures are recorded for status and backoff, then raised."""
        with self.lock:
            now = self.clock()
            self.state.last_attempt = now
            try:
                report = self._sync(accept_rewrite)
            except RemoteRewritten as exc:
                self.state.remote_rewritten = True
                self.state.last_error = exc.message
                raise
            except GitFailed as exc:
                self.state.failures += 1
                delay = min(
                    self.settings.retry_base_seconds * 2 ** (self.state.failures - 1), self.settings.retry_max_seconds
                )
                self.state.next_retry = now + delay
                self.state.last_error = exc.message
                log.warning("team sync of %s failed (retry in %.0f s): %s", self.store.path, delay, exc.message)
                raise
            finally:
                self.save_state()
            self.state.failures, self.state.next_retry, self.state.last_error = 0, None, ""
            self.state.last_sync = self.clock()
            self.state.last_report = asdict(report.redacted())
            self.save_state()
            return report

    def _sync(self, accept_rewrite: bool) -> SyncReport:
        report = SyncReport()
        branch = self.state.branch
        started_from = self.state.last_remote
        for _ in range(limits.TEAM_PUSH_ROUNDS):
            remote = self.git.fetch(branch)
            last = self.state.last_remote
            if last and not accept_rewrite and (remote is None or not self.git.is_ancestor(last, remote)):
                what = "deleted" if remote is None else "rewritten (force-pushed)"
                raise RemoteRewritten(
                    f"the team branch {branch!r} on {redact_url(self.state.remote)} was {what} since the last sync; "
                    "nothing was "
                    "merged or pushed and your team memories are untouched. Check with your team, then run "
                    "`memoryd team sync --accept-rewrite` to merge with the new history (both versions of any "
                    "difference are kept)."
                )
            base_commit = None if accept_rewrite else last
            if accept_rewrite:
                self.state.pinned = {}
            accept_rewrite = False
            with dir_lock(self.store.path):
                commit, included = self._merge(base_commit, remote, report)
            self.state.last_remote = remote
            self.state.remote_rewritten = False
            if commit is None:
                break
            if self.git.push(commit, branch):
                self.state.last_remote = commit
                now = self.clock()
                self.state.pushes = [t for t in self.state.pushes if now - t < HOUR] + [now]
                report.commit, report.pushed_ok = commit, True
                report.pushed = sorted(set(report.pushed) | set(included))
                break
            log.info("team push of %s lost a race with another member's; merging again", self.store.path)
        if self.state.last_remote and (self.state.last_remote != started_from or not self.state.authors):
            self.state.authors = self.git.last_authors(self.state.last_remote)
        return report

    def _merge(self, base_commit: str | None, remote: str | None, report: SyncReport) -> tuple[str | None, list[str]]:
        """Merge the live folder with the remote tip; write what came in; return the commit to push."""
        base = self._base(base_commit)
        theirs, others = self._memory_tree(remote)
        refused: dict[str, str] = {}
        live = self._live(refused)
        report.refused = [{"filename": n, "reason": r} for n, r in sorted(refused.items())]
        ours = {n: blob_id(d) for n, d in live.items()}
        # A member's file named with a secret is never written here (so it is absent), nor deleted there for that.
        foreign = {
            n: theirs.get(n, base.get(n, "")) for n in set(base) | set(theirs) if n not in ours and name_secrets(n)
        }
        changed = sorted(
            n for n in set(base) | set(ours) if base.get(n) != ours.get(n) and n not in refused and n not in foreign
        )
        excluded = push_exclusions(
            changed, live, base, theirs, refused, report, self.settings, self.pushes_last_hour(), self.store.path
        )
        local = {**ours, **{n: oid for n, oid in foreign.items() if n in theirs}}
        for name in excluded:  # what stays local is, for this merge, unchanged here
            if base.get(name):
                local[name] = base[name]
            else:
                local.pop(name, None)

        texts: dict[str, bytes] = {blob_id(d): d for d in live.values()}
        wanted = {oid for tree in (base, theirs) for name, oid in tree.items() if oid != local.get(name)}
        texts.update(self.git.blobs(wanted - set(texts)))  # one git process for every text the merge may read

        def text(oid: str | None) -> str | None:
            if oid is None:
                return None
            if oid not in texts:
                texts[oid] = self.git.blob(oid)
            return texts[oid].decode("utf-8", "replace")

        me = self.identity[0]
        authors: dict[str, str] | None = None
        merged: dict[str, str] = {}
        for name in sorted(set(base) | set(local) | set(theirs)):
            b, o, t = base.get(name), local.get(name), theirs.get(name)
            if o in (t, b) or t == b:
                result = o if t in (o, b) else t
            else:
                if authors is None:
                    authors = self.git.last_authors(remote) if remote else {}
                theirs_by = authors.get(name) or "another member"
                done = merge_file(
                    text(b), text(o), text(t), merge_text=self._merge_text, ours_label=me, theirs_label=theirs_by
                )
                result = None
                if done.text is not None:
                    data = done.text.encode("utf-8")
                    result = blob_id(data)
                    texts[result] = data
                (report.conflicts if done.conflict else report.merged).append(name)
            if result is not None:
                merged[name] = result

        pinned = self._apply(merged, live, ours, base, theirs, excluded, text, report)
        self.state.pinned = pinned
        included = [n for n in changed if n not in excluded]
        for name, oid in list(merged.items()):  # the last check before anything enters git: no secrets
            if oid != theirs.get(name) and (name_secrets(name) or find_secrets(texts[oid].decode("utf-8", "replace"))):
                if name in theirs:
                    merged[name] = theirs[name]
                else:
                    del merged[name]
                included = [n for n in included if n != name]
        if merged == theirs:
            return None, included
        self.git.write_blobs([texts[oid] for oid in set(merged.values()) - set(theirs.values())], self.root / "blobs")
        tree = self.git.write_tree([*others, *(TreeEntry("100644", "blob", oid, name) for name, oid in merged.items())])
        message = f"memoryd: team memory from {me}\n\n" + "\n".join(f"- {n}" for n in included or sorted(merged))
        if find_secrets(message, field="commit message"):  # an author name or a remote's file name: say less
            message = "memoryd: team memory\n"
        name, email = self.identity
        return self.git.commit(tree, remote, message, author=name, email=email), included

    def _apply(
        self,
        merged: dict[str, str],
        live: dict[str, bytes],
        ours: dict[str, str],
        base: dict[str, str],
        theirs: dict[str, str],
        excluded: dict[str, str],
        text: Callable[[str | None], str | None],
        report: SyncReport,
    ) -> dict[str, str]:
        """Write incoming changes through `MemoryDir.restore`; returns the new pins (file → merge base)."""
        pinned: dict[str, str] = {}
        self.applying.on = True
        try:
            for name in sorted(set(merged) | set(ours)):
                target = merged.get(name)
                if name in excluded:
                    if theirs.get(name) != base.get(name):
                        pinned[name] = base.get(name, "")
                    continue
                if ours.get(name) == target:
                    continue
                if target is not None and name_secrets(name):  # a member's file named with a secret: never written here
                    report.kept_local.append(name)
                    continue
                data = _read_regular(self.store.path / name)
                current = blob_id(data) if isinstance(data, bytes) else None
                if current != ours.get(name) or isinstance(
                    data, str
                ):  # written here meanwhile (the next sync merges it), or now a link
                    pinned[name] = base.get(name, "")
                    report.kept_local.append(name)
                    continue
                try:
                    incoming = text(target)
                    if incoming is not None:
                        split_frontmatter(incoming, source=name)  # a hostile header (an alias bomb) never lands here
                    self.store.restore(name, incoming)
                except MemorydError as exc:
                    log.warning("team sync left %s as it is here: %s", name, exc.message)
                    if isinstance(exc, InvalidFrontmatter):  # reported with why, not only kept out (issue 52)
                        report.invalid.append({"filename": name, "reason": exc.message})
                    pinned[name] = base.get(name, "")
                    report.kept_local.append(name)
                    continue
                if name in report.merged or name in report.conflicts:
                    continue
                (report.pulled if target is not None else report.removed).append(name)
        finally:
            self.applying.on = False
        return pinned

    def _merge_text(self, base: str, ours: str, theirs: str) -> tuple[str, bool]:
        out, clean = self.git.merge_text(base.encode(), ours.encode(), theirs.encode(), self.root / "merge")
        return out.decode("utf-8", "replace"), clean

    # ------------------------------------------------------------------ status
    def needs_review(self) -> list[str]:
        """Team memories that still hold both versions of a concurrent edit."""
        out = []
        for h in self.store.all_headers():
            try:
                if needs_review(self.store.get(h.filename).body):
                    out.append(h.filename)
            except MemorydError:
                continue
        return sorted(out)

    def status(self) -> dict[str, Any]:
        s = self.state
        origin = self.git.rev(f"refs/remotes/origin/{s.branch}")
        behind = (
            self.git.count(s.last_remote, origin)
            if origin and origin != s.last_remote and not s.remote_rewritten
            else 0
        )
        pending = self.pending()
        return {
            "memory_dir": s.memory_dir,
            "team_dir": str(self.store.path),
            "remote": redact_url(s.remote),
            "branch": s.branch,
            "author": self.identity[0],
            "entries": len(self.store.all_headers()),
            "needs_review": self.needs_review(),
            "ahead": len(pending),
            "pending": [redact_name(n) for n in pending],
            "behind": behind,
            "last_sync": s.last_sync,
            "last_attempt": s.last_attempt,
            "last_error": s.last_error,
            "consecutive_failures": s.failures,
            "next_retry": s.next_retry,
            "remote_rewritten": s.remote_rewritten,
            "limits": {
                "max_entries": self.settings.max_entries,
                "max_push_bytes": self.settings.max_push_bytes,
                "max_pushes_per_hour": self.settings.max_pushes_per_hour,
                "pushes_last_hour": self.pushes_last_hour(),
            },
            "last_report": s.last_report,
        }
