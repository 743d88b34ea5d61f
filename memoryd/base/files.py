"""Atomic file writes, no-follow bounded reads of the files memoryd keeps, and the per-directory writer lock.

Every write in memoryd goes temp file + fsync + rename, under `DirLock`, so concurrent
writers (threads, or two daemons) never interleave and a crash never leaves half a file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Protocol

LOCK_FILENAME = ".memoryd.lock"
TEMP_PREFIX = ".tmp-"
# A memory dir's saves stage their temp files here, out of the watched dir: the watcher then sees
# one rename per file written instead of a create, writes and a rename (each event cost ~0.3 ms).
TEMP_DIRNAME = ".memoryd-tmp"
PRIVATE_FILE_MODE = 0o600  # files memoryd creates: memories, state, logs, notes
PRIVATE_DIR_MODE = 0o700  # dirs memoryd creates under $MEMORYD_HOME and memory dirs
Key = tuple[int, int]  # (mtime_ns, size): "changed since read" without reading
ABSENT: Key = (-1, -1)  # the key of a file that does not exist


class SymlinkRefused(OSError):
    """A memory file, index or memory dir is a symbolic link: memoryd never follows one."""

    def __init__(self, path: Path) -> None:
        super().__init__(errno.ELOOP, "is a symbolic link; memoryd never follows links", str(path))


class TooLarge(OSError):
    """A file over the size its reader allows: refused unread (a FIFO or /dev/zero never ends)."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"is {size:,} bytes, over the {limit:,} memoryd reads", str(path))


def _open_fd_nofollow(path: Path | str, *, follow_links: bool = False) -> int:
    """A read-only fd, refusing a symlink at the last component (O_NOFOLLOW) unless `follow_links`;
    O_NONBLOCK so a FIFO never blocks the open (the callers then refuse anything that is not a regular file)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow_links else os.O_NOFOLLOW)
    try:
        return os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkRefused(Path(path)) from None
        raise


def open_nofollow(path: Path | str) -> BinaryIO:
    """A regular file opened for reading, refusing a symlink at the last component (O_NOFOLLOW)
    and anything that is not a regular file (a FIFO or device would block or leak)."""
    fh = os.fdopen(_open_fd_nofollow(path), "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
    return fh


def read_small_nofollow(
    path: Path | str, limit: int, *, follow_links: bool = False
) -> tuple[bytes | None, os.stat_result]:
    """A regular file's bytes and the stat of what was read, or None when it is over `limit`;
    `open_nofollow`'s refusals, in four syscalls (a load of 20,000 headers does this 20,000 times)."""
    fd = _open_fd_nofollow(path, follow_links=follow_links)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", str(path))
        if st.st_size > limit:
            return None, st
        raw = os.read(fd, st.st_size + 1)
        if len(raw) != st.st_size:  # it grew meanwhile, or a short read: on to EOF or the limit
            while len(raw) <= limit and (more := os.read(fd, limit + 1 - len(raw))):
                raw += more
        return (None if len(raw) > limit else raw), st
    finally:
        os.close(fd)


def read_capped(path: Path | str, limit: int, *, follow_links: bool = False) -> tuple[bytes, os.stat_result]:
    """`read_small_nofollow`, raising TooLarge past `limit`: the one read of a file someone else controls
    (a cloned repo's settings, a memory file), never more than `limit` bytes and never a FIFO or device."""
    data, st = read_small_nofollow(path, limit, follow_links=follow_links)
    if data is None:
        raise TooLarge(path, max(st.st_size, limit + 1), limit)
    return data, st


def try_lock(path: Path) -> int | None:
    """An fd holding an exclusive `flock` on `path` (created 0600, never through a link), or None when
    another holder has it. The kernel lets go when the fd is closed or the process dies (even kill -9)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), PRIVATE_FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes_nofollow(path: Path) -> bytes:
    with open_nofollow(path) as fh:
        return fh.read()


def read_text_nofollow(path: Path) -> str:
    """`read_bytes_nofollow` decoded as UTF-8 (UnicodeDecodeError on a binary file)."""
    return read_bytes_nofollow(path).decode("utf-8")


def make_private_dir(path: Path) -> None:
    """mkdir -p with 0700 for the dirs this creates (existing dirs keep their mode)."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass


def fsync_dir(path: Path) -> None:
    """Make a rename durable by syncing its directory (best effort where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Staged:
    """A temp file written beside its target, not yet synced or renamed (see `publish`)."""

    def __init__(self, path: Path, data: str | bytes, mode: int, tmp_dir: Path | None = None) -> None:
        make_private_dir(path.parent)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        self.path = path
        fd, self.tmp = tempfile.mkstemp(
            prefix=TEMP_PREFIX, suffix=".part", dir=_temp_dir(tmp_dir) if tmp_dir is not None else path.parent
        )
        try:
            with os.fdopen(fd, "wb", closefd=False) as fh:
                fh.write(raw)
            os.fchmod(fd, mode)
            self.stat = os.fstat(fd)  # the target's (mtime_ns, size) once renamed: a rename keeps them
        except BaseException:
            os.close(fd)
            self.discard()
            raise
        self.fd: int | None = fd
        self._synced: Future[None] | None = None
        self.expect: Key | None = None  # the target's key the new text was built from (checked before the rename)
        self.published = False  # renamed over its target: the temp name is no longer ours

    def sync(self) -> None:
        assert self.fd is not None
        os.fsync(self.fd)

    def start_sync(self) -> None:
        """fsync in the background now (the caller prepares the next file meanwhile)."""
        if self._synced is None:
            self._synced = _fsync_pool.submit(self.sync)

    def wait_synced(self) -> None:
        if self._synced is None:
            self.sync()
        else:
            self._synced.result()

    def close(self) -> None:
        if self._synced is not None:
            self._synced.exception()  # never close the fd under a running fsync
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def discard(self) -> None:
        """Drop the temp file unless it was published (safe to call either way)."""
        self.close()
        if self.published:
            return
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


_fsync_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memoryd-fsync")


def stage(path: Path, data: str | bytes, *, mode: int = PRIVATE_FILE_MODE, tmp_dir: Path | None = None) -> Staged:
    """`path`'s new content in a temp file (in `tmp_dir`, a subdir on the same filesystem, when given)."""
    return Staged(path, data, mode, tmp_dir)


def _temp_dir(path: Path) -> Path:
    """The staging subdir, made 0700 when missing; a link or a file there is refused (a temp file
    written through a link would land outside the memory dir)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            os.mkdir(path, PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
        st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise SymlinkRefused(path)
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(
            errno.ENOTDIR, f"memoryd stages saves in {TEMP_DIRNAME}/; move this file away", str(path)
        )
    return path


class TargetMoved(Exception):
    """A staged file's target changed on disk after its new text was built: nothing was renamed."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"{path} changed on disk while memoryd wrote it")
        self.path = path


def key_of(st: os.stat_result) -> Key:
    """The key of a stat result."""
    return (st.st_mtime_ns, st.st_size)


def key_now(path: Path) -> Key:
    """A file's key now (never following a link); ABSENT when it does not exist."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return ABSENT
    return key_of(st)


def key_if_present(path: Path) -> Key | None:
    """A file's key now; None when it does not exist."""
    key = key_now(path)
    return None if key == ABSENT else key


def publish(staged: list[Staged], *, unlink: Path | None = None, sync_dir: bool = True) -> None:
    """Make staged files durable then visible: every temp file fsynced at once (concurrent
    fsyncs share one journal commit), renamed over its target, `unlink` removed, one dir fsync.
    A crash leaves each target whole, old or new, never half-written. A target whose key is no
    longer the one its text was built from (`Staged.expect`) raises TargetMoved before any
    rename, with every temp file kept: the caller rebuilds what moved and publishes again."""
    try:
        for f in staged[1:]:
            f.start_sync()
        for f in staged:
            f.wait_synced()
    except BaseException:
        for f in staged:
            f.discard()
        raise
    for f in staged:  # as late as possible: someone else's write in between is never overwritten blindly
        if f.expect is not None and key_now(f.path) != f.expect:
            raise TargetMoved(f.path)
    try:
        for f in staged:
            os.replace(f.tmp, f.path)
            f.published = True
            f.close()
    except BaseException:
        for f in staged:
            f.discard()
        raise
    if unlink is not None:
        unlink.unlink(missing_ok=True)
    directory = (staged[0].path if staged else unlink or Path(".")).parent
    if sync_dir:
        fsync_dir(directory)


def atomic_write(path: Path, data: str | bytes, *, mode: int = PRIVATE_FILE_MODE, sync_dir: bool = True) -> None:
    """Write `data` to `path` via a unique temp file in the same dir, fsync, then rename.
    A symlink at `path` is replaced by the file, never written through. `sync_dir=False`: the
    caller fsyncs the dir once after several renames (one dir fsync makes them all durable)."""
    publish([stage(path, data, mode=mode)], sync_dir=sync_dir)


def clean_stale_temps(directory: Path) -> int:
    """Remove temp files a crash left behind (in the dir and its staging subdir); returns how many."""
    removed = 0
    staging = directory / TEMP_DIRNAME
    for folder in (directory, staging) if staging.is_dir() and not staging.is_symlink() else (directory,):
        if not folder.is_dir():
            return 0
        for entry in folder.iterdir():
            if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(".part"):
                try:
                    entry.unlink()
                    removed += 1
                except OSError:
                    pass
    return removed


class LockListener(Protocol):
    """Told when a `DirLock` is let go: lets a writer publish what several holders left (group commit)."""

    def releasing(self, idle: bool) -> None:
        """The last holder, before it lets go; `idle`: no other thread is waiting for the lock."""

    def released(self) -> None:
        """The same thread, just after it let go."""


class DirLock:
    """One writer per directory: a re-entrant thread lock plus a file lock for other processes
    (`flock` on `.memoryd.lock`, the kind `filelock` takes, so either sees the other).

    Get it with `dir_lock(path)`: one shared instance per directory, so nested use in one
    thread never opens a second file lock on the same file (which would self-deadlock).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._thread_lock = threading.RLock()
        self._lock_file = directory / LOCK_FILENAME
        self._lock_fd: int | None = None  # held by the outermost holder
        self._depth = 0
        self._waiting = 0  # threads blocked in __enter__
        self._count_guard = threading.Lock()
        self._listeners: weakref.WeakSet[LockListener] = weakref.WeakSet()

    @property
    def waiting(self) -> int:
        """How many other threads are queued for the lock now."""
        return self._waiting

    def listen(self, listener: LockListener) -> None:
        """Tell `listener` each time the lock is let go (held weakly)."""
        self._listeners.add(listener)

    def _take_file_lock(self) -> int:
        """Open (creating the dir when missing) and flock the lock file: three system calls. The
        `filelock` package made twelve (a path resolve, a mkdir, stats) while queued writers
        waited, a quarter of the time the lock was held under load (issue 31)."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self._lock_file, flags, 0o600)
        except FileNotFoundError:
            make_private_dir(self.directory)
            fd = os.open(self._lock_file, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise SymlinkRefused(self._lock_file) from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another process holds it
        except BaseException:
            os.close(fd)
            raise
        return fd

    def __enter__(self) -> DirLock:
        with self._count_guard:
            self._waiting += 1
        try:
            self._thread_lock.acquire()
        finally:
            with self._count_guard:
                self._waiting -= 1
        try:
            if self._depth == 0:
                self._lock_fd = self._take_file_lock()
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth += 1
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._depth > 1:
            self._depth -= 1
            self._thread_lock.release()
            return
        listeners = list(self._listeners)
        try:
            for listener in listeners:
                listener.releasing(self._waiting == 0)
        finally:
            self._depth -= 1
            fd, self._lock_fd = self._lock_fd, None
            if fd is not None:
                os.close(fd)  # lets go of the flock
            self._thread_lock.release()
        for listener in listeners:
            listener.released()


_locks: weakref.WeakValueDictionary[Path, DirLock] = weakref.WeakValueDictionary()  # held by the MemoryDirs alive
_locks_guard = threading.Lock()


def dir_lock(directory: Path) -> DirLock:
    """The shared writer lock of `directory` (one instance while anyone holds it)."""
    with _locks_guard:
        lock = _locks.get(directory)
        if lock is None:
            lock = DirLock(directory)
            _locks[directory] = lock
        return lock
