"""`TranscriptService`: watches the agents' transcript folders and queues changed files for the
one `TranscriptPipeline`, which reads them. A root that does not exist yet is watched through
its nearest existing parent and picked up the moment it appears. It does NOT extract memories.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import InitVar, dataclass
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from memoryd.base.errors import Forbidden, InvalidPath
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.base.validation import check_transcript_path
from memoryd.transcripts.context import SessionContext, SessionContexts
from memoryd.transcripts.folders import is_sidechain_path
from memoryd.transcripts.pipeline import Advance, TranscriptPipeline

log = logging.getLogger(__name__)

__all__ = ["TranscriptService", "is_sidechain_path"]

# A hook brings the transcript up to date itself only when this little is unread (a turn's worth,
# a few ms to parse); more goes to the background reader and the hook answers from what is known.
HOOK_READ_MAX_BYTES = 256 * 1024
HOOK_WAIT_SECONDS = (
    0.25  # how long a hook waits for another reader of a small transcript before going on without its news
)


class _Handler(FileSystemEventHandler):
    def __init__(self, service: TranscriptService) -> None:
        self.service = service

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write", "deleted"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            if event.is_directory:
                self.service.root_may_have_appeared(Path(str(raw)))
            elif str(raw).endswith(".jsonl"):
                self.service.queue_path(Path(str(raw)))


class _ParentHandler(FileSystemEventHandler):
    """On the nearest existing parent of a missing root: any dir event may be the root appearing."""

    def __init__(self, service: TranscriptService) -> None:
        self.service = service

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            self.service.root_may_have_appeared(Path(str(event.src_path)))


@dataclass(kw_only=True, eq=False)
class TranscriptService:
    """Owns the observer and the ingest queue; the pipeline owns the cursors."""

    roots: list[Path]
    state: StateDB
    metrics: Metrics
    watch: bool = True  # watch the roots with watchdog; off: the catch-up at start and the paths hooks name
    clock: InitVar[Callable[[], float]] = time.time

    def __post_init__(self, clock: Callable[[], float]) -> None:
        self.pipeline = TranscriptPipeline(state=self.state, metrics=self.metrics, clock=clock)
        self.contexts = SessionContexts(self.state)  # what each session works on, learned as lines are read
        self.pipeline.subscribe(self.contexts)
        self._queue: queue.Queue[Path | None] = queue.Queue()
        self._pending: set[Path] = set()
        self._pending_lock = threading.Lock()
        self._watch_lock = threading.Lock()
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._watched: list[str] = []
        self._waiting: dict[str, Any] = {}  # missing root → watch handle on its nearest existing parent

    # ------------------------------------------------------------------ roots
    def real_roots(self) -> list[Path]:
        return [Path(os.path.realpath(r)) for r in self.roots]

    def check_under_root(self, transcript_path: str) -> Path:
        """The realpath of a transcript that lies under a configured root; Forbidden otherwise."""
        check_transcript_path(transcript_path)
        real = Path(os.path.realpath(os.path.expanduser(transcript_path)))
        for root in self.real_roots():
            if real == root or (root in real.parents and real.is_dir()):
                raise InvalidPath(
                    f"transcript_path {transcript_path} is a directory; pass the session's .jsonl transcript file "
                    "under it."
                )
            if root in real.parents:
                return real
        raise Forbidden(
            f"transcript_path {transcript_path} is not a file under the configured transcript roots "
            f"({', '.join(map(str, self.roots))}); add its folder to [transcripts] roots in config.toml."
        )

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._worker = threading.Thread(target=self._run, name="memoryd-transcripts", daemon=True)
        self._worker.start()
        if self.watch:
            self._observer = Observer()
            self._observer.daemon = True
            for root in self.roots:
                self._watch_root(root)
            self._observer.start()
        for path in self.changed_since_last_run():
            self.queue_path(path)

    def _watch_root(self, root: Path) -> None:
        """Watch a root recursively; a missing one through its nearest existing parent (not
        recursively: that parent may be the home dir), one level closer each time a dir appears."""
        with self._watch_lock:
            observer = self._observer
            if observer is None or str(root) in self._watched:
                return
            waiting = self._waiting.pop(str(root), None)
            if waiting is not None:
                observer.unschedule(waiting)
            if root.is_dir():
                observer.schedule(_Handler(self), str(root), recursive=True)
                self._watched.append(str(root))
                appeared = waiting is not None
            else:
                parent = root.parent
                while not parent.is_dir() and parent != parent.parent:
                    parent = parent.parent
                self._waiting[str(root)] = observer.schedule(_ParentHandler(self), str(parent), recursive=False)
                if waiting is None:
                    log.info("transcript root %s does not exist yet; watching %s until it appears", root, parent)
                appeared = False
        if appeared:
            log.info("transcript root %s appeared; watching it", root)
            for found in self._files_under(root):
                self.queue_path(found)
        elif str(root) in self._waiting and (root.is_dir() or not self._waiting_on_nearest(root)):
            self._watch_root(root)  # a level appeared between the check and the schedule

    def _waiting_on_nearest(self, root: Path) -> bool:
        watch = self._waiting.get(str(root))
        parent = root.parent
        while not parent.is_dir() and parent != parent.parent:
            parent = parent.parent
        return watch is None or Path(watch.path) == parent

    def root_may_have_appeared(self, path: Path) -> None:
        try:
            for root in self.roots:
                if str(root) in self._waiting and (root == path or root.is_relative_to(path)):
                    self._watch_root(root)
        except Exception:  # on the observer's thread: log, never kill it
            log.exception("following transcript root %s failed", path)

    def stop(self) -> None:
        with self._watch_lock:
            observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)
        if self._worker is not None:
            self._queue.put(None)
            self._worker.join(timeout=10)
            self._worker = None

    def queue_path(self, path: Path) -> None:
        with self._pending_lock:
            if path in self._pending:
                return
            self._pending.add(path)
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            if path is None:
                return
            with self._pending_lock:
                self._pending.discard(path)
            try:
                self.ingest(path)
            except Exception:
                log.exception("ingesting %s failed", path)

    @staticmethod
    def _files_under(root: Path) -> list[Path]:
        """Every transcript under a root; links are not followed out of it."""
        found: list[Path] = []
        for folder, _dirs, files in os.walk(root):  # os.walk does not follow directory links
            found.extend(
                Path(folder) / f for f in files if f.endswith(".jsonl") and not os.path.islink(os.path.join(folder, f))
            )
        return found

    def changed_since_last_run(self) -> list[Path]:
        """Start-up catch-up: transcripts whose size or mtime differ from what was last read."""
        # A file whose cursor stops short of its size (ingest interrupted between batches, or a
        # partial last line) is read again too: only its tail, from the cursor.
        known = {
            r["path"]: (r["size"], r["mtime"])
            for r in self.state.query("SELECT path, size, mtime FROM transcript_files WHERE offset >= size")
        }
        changed: list[Path] = []
        for root in self.roots:
            if not root.is_dir():
                continue
            for path in self._files_under(root):
                try:
                    st = path.stat()
                except OSError:
                    continue
                if known.get(str(path)) != (st.st_size, st.st_mtime):
                    changed.append(path)
        return changed

    # ------------------------------------------------------------------ ingest
    def ingest(self, path: Path) -> Advance:
        """Hand a changed file to the pipeline."""
        return self.pipeline.advance(path)

    def session_context(self, session_id: str, transcript: Path | None = None) -> SessionContext | None:
        """What the pipeline learned of a session, for a hook: the transcript's unread tail is read
        first when it is small and no other reader holds the file, else queued for the background
        reader. The cost never grows with the transcript (issue #27)."""
        if transcript is not None:
            row = self.pipeline.row(transcript)
            try:
                st = os.stat(transcript)
            except OSError:
                st = None
            if st is not None and (row is None or not self.pipeline.unchanged(transcript, row)):
                offset, inode = (int(row["offset"]), int(row["inode"])) if row else (0, st.st_ino)
                # a replaced or shrunk file is read again from its start: never on a hook
                small = inode == st.st_ino and 0 <= st.st_size - offset <= HOOK_READ_MAX_BYTES
                # another reader holds a small file only briefly (the watcher's read of the same lines): wait for it
                if not small or self.pipeline.advance(transcript, timeout=HOOK_WAIT_SECONDS).busy:
                    self.queue_path(transcript)
        return self.contexts.get(session_id)

    def file_state(self, path: Path) -> dict[str, Any] | None:
        return self.pipeline.row(path)

    def status(self) -> dict[str, Any]:
        row = self.state.query_one(
            "SELECT COUNT(*) AS files, COALESCE(SUM(lines),0) AS lines, COALESCE(SUM(malformed),0) AS malformed, "
            "COALESCE(SUM(oversized),0) AS oversized, COUNT(DISTINCT session_id) AS sessions FROM transcript_files"
        )
        return {
            "roots": [str(r) for r in self.roots],
            "watched": list(self._watched),
            "waiting_for": sorted(self._waiting),
            "files": int(row["files"]) if row else 0,
            "sessions": int(row["sessions"]) if row else 0,
            "lines": int(row["lines"]) if row else 0,
            "malformed_lines": int(row["malformed"]) if row else 0,
            "oversized_lines": int(row["oversized"]) if row else 0,
            "bytes_read": self.pipeline.bytes_read,
            "queued": self._queue.qsize(),
        }
