"""`Git`: the git CLI over one bare repository, through subprocess (git is the sync engine).

Only plumbing is used (hash-object, mktree, commit-tree, fetch, push): memoryd keeps no work
tree, so files reach the memory folder only through `MemoryDir`.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryd.team.errors import GitFailed

# Never prompt (a daemon has no terminal) and never run a transport that executes commands.
_SAFE_CONFIG = ("-c", "protocol.ext.allow=never", "-c", "core.askPass=", "-c", "credential.interactive=false")
_URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")


def redact_url(url: str) -> str:
    """A remote URL without its `user:password@` part, for status and logs."""
    return _URL_USERINFO.sub("***@", url)


def blob_id(data: bytes) -> str:
    """The object id git gives `data` as a blob (sha1 repositories), without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    kind: str
    oid: str
    name: str


class Git:
    """Runs git against `git_dir`; every failure becomes `GitFailed` with git's own words."""

    def __init__(
        self, git_dir: Path, *, binary: str = "git", timeout: float = 60.0, env: Mapping[str, str] | None = None
    ) -> None:
        self.git_dir = git_dir
        self.binary = binary
        self.timeout = timeout
        base = dict(os.environ if env is None else env)
        base.update({"GIT_TERMINAL_PROMPT": "0", "GIT_DIR": str(git_dir), "LC_ALL": "C"})
        base.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        for key in ("GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"):
            base.pop(key, None)
        self.env = base

    def run(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None, ok: Sequence[int] = (0,)
    ) -> subprocess.CompletedProcess[bytes]:
        cmd = [self.binary, *_SAFE_CONFIG, *args]
        try:
            done = subprocess.run(
                cmd,
                input=input,
                capture_output=True,
                timeout=self.timeout,
                env={**self.env, **(env or {})},
                check=False,
            )
        except FileNotFoundError as exc:
            raise GitFailed(
                f"git binary {self.binary!r} not found; install git or set [team] git to its path."
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise GitFailed(
                f"git {args[0]} timed out after {self.timeout:g} s; check the remote is reachable."
            ) from exc
        if done.returncode not in ok:
            words = redact_url(
                done.stderr.decode("utf-8", "replace").strip().splitlines()[-1]
                if done.stderr.strip()
                else f"exit {done.returncode}"
            )
            raise GitFailed(f"git {args[0]} failed: {words}")
        return done

    def out(self, *args: str, **kwargs: object) -> str:
        return self.run(*args, **kwargs).stdout.decode("utf-8", "replace").strip()  # type: ignore[arg-type]

    # ------------------------------------------------------------------ repository
    def init_bare(self) -> None:
        self.git_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [self.binary, "init", "--bare", "--quiet", str(self.git_dir)],
            capture_output=True,
            check=True,
            env=self.env,
            timeout=self.timeout,
        )

    def set_remote(self, url: str) -> None:
        self.run("config", "remote.origin.url", url)

    def remote_url(self) -> str:
        return self.out("config", "--get", "remote.origin.url")

    def identity(self) -> tuple[str, str]:
        """user.name and user.email as git sees them (the member's own git config), or empty."""
        name = self.run("config", "--get", "user.name", ok=(0, 1)).stdout.decode("utf-8", "replace").strip()
        email = self.run("config", "--get", "user.email", ok=(0, 1)).stdout.decode("utf-8", "replace").strip()
        return name, email

    # ------------------------------------------------------------------ network
    def fetch(self, branch: str) -> str | None:
        """The remote branch's tip after a fetch, or None when the remote has no such branch."""
        ref = f"refs/remotes/origin/{branch}"
        done = self.run("fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{branch}:{ref}", ok=(0, 128, 1))
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in err:
                self.run("update-ref", "-d", ref, ok=(0, 1))
                return None
            raise GitFailed(
                "git fetch failed: "
                f"{redact_url(err.strip().splitlines()[-1] if err.strip() else 'exit ' + str(done.returncode))}"
            )
        return self.rev(ref)

    def push(self, commit: str, branch: str) -> bool:
        """Fast-forward the remote branch to `commit`; False when the remote moved meanwhile."""
        done = self.run("push", "--quiet", "--porcelain", "origin", f"{commit}:refs/heads/{branch}", ok=(0, 1))
        if done.returncode == 0:
            self.run("update-ref", f"refs/remotes/origin/{branch}", commit)
            return True
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
        if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text:
            return False
        raise GitFailed(f"git push failed: {redact_url(text.strip().splitlines()[-1] if text.strip() else 'exit 1')}")

    # ------------------------------------------------------------------ objects
    def rev(self, ref: str) -> str | None:
        done = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", ok=(0, 1, 128))
        return done.stdout.decode().strip() or None if done.returncode == 0 else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.run("merge-base", "--is-ancestor", older, newer, ok=(0, 1, 128)).returncode == 0

    def count(self, older: str | None, newer: str) -> int:
        spec = f"{older}..{newer}" if older else newer
        return int(self.out("rev-list", "--count", spec) or 0)

    def tree(self, commit: str | None) -> list[TreeEntry]:
        if not commit:
            return []
        raw = self.run("ls-tree", "-z", "--full-tree", commit).stdout.decode("utf-8", "surrogateescape")
        entries = []
        for item in raw.split("\0"):
            if item:
                meta, name = item.split("\t", 1)
                mode, kind, oid = meta.split()
                entries.append(TreeEntry(mode, kind, oid, name))
        return entries

    def blob(self, oid: str) -> bytes:
        return self.run("cat-file", "blob", oid).stdout

    def blobs(self, oids: set[str]) -> dict[str, bytes]:
        """Many blobs through one `git cat-file --batch`."""
        if not oids:
            return {}
        order = sorted(oids)
        raw = self.run("cat-file", "--batch", input="".join(f"{oid}\n" for oid in order).encode()).stdout
        out, pos = {}, 0
        for oid in order:
            end = raw.index(b"\n", pos)
            head = raw[pos:end].split()
            if len(head) != 3:
                raise GitFailed(
                    f"git cat-file: object {oid} is missing from {self.git_dir}; run `memoryd team sync "
                    "--accept-rewrite`."
                )
            size = int(head[2])
            out[oid] = raw[end + 1 : end + 1 + size]
            pos = end + 1 + size + 1
        return out

    def write_blobs(self, datas: list[bytes], tmp: Path) -> None:
        """Store many blobs with one `git hash-object -w` (through temp files)."""
        if not datas:
            return
        tmp.mkdir(parents=True, exist_ok=True)
        paths = [tmp / f"blob-{i}" for i in range(len(datas))]
        for path, data in zip(paths, datas):
            path.write_bytes(data)
        try:
            self.run(
                "hash-object", "-w", "--no-filters", "--stdin-paths", input="".join(f"{p}\n" for p in paths).encode()
            )
        finally:
            for path in paths:
                path.unlink(missing_ok=True)

    def write_tree(self, entries: list[TreeEntry]) -> str:
        lines = "".join(f"{e.mode} {e.kind} {e.oid}\t{e.name}\0" for e in sorted(entries, key=lambda e: e.name))
        return self.out("mktree", "-z", input=lines.encode("utf-8", "surrogateescape"))

    def commit(self, tree: str, parent: str | None, message: str, *, author: str, email: str) -> str:
        args = ["commit-tree", tree, *(("-p", parent) if parent else ()), "-m", message]
        who = {
            "GIT_AUTHOR_NAME": author,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": author,
            "GIT_COMMITTER_EMAIL": email,
        }
        return self.out(*args, env=who)

    def last_authors(self, commit: str) -> dict[str, str]:
        """file → author of the last commit that changed it, over the history of `commit`."""
        raw = self.out("log", "--format=%x01%an", "--name-only", "--no-renames", commit)
        authors: dict[str, str] = {}
        current = ""
        for line in raw.splitlines():
            if line.startswith("\x01"):
                current = line[1:]
            elif line.strip() and line not in authors:
                authors[line] = current
        return authors

    def merge_text(self, base: bytes, ours: bytes, theirs: bytes, tmp: Path) -> tuple[bytes, bool]:
        """git merge-file on three texts: (result, clean)."""
        tmp.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = tmp / name
            path.write_bytes(data)
            paths.append(str(path))
        done = self.run("merge-file", "-p", "-q", *paths, ok=range(0, 128))
        return done.stdout, done.returncode == 0
