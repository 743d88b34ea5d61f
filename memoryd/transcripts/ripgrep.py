"""`Ripgrep`: big transcript searches run by the ripgrep binary, when one is installed.

ripgrep scans about three times faster than Python's `bytes.find` on real transcripts. The
pattern it gets is rebuilt from Python's own parse of the regex (`rust_pattern`), in ripgrep's
byte mode (`(?-u)`: ASCII classes and case folding, like a Python bytes regex), so both engines
match the same lines; a construct ripgrep lacks (lookaround, backreference, `\\Z`) keeps the
search on the Python scanner. Each work unit is one `rg -j1` process over consecutive files, so
its output comes in file order; the units run on a few threads and are returned in order.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from re import _parser as _sre_parse  # type: ignore[attr-defined]  # the parse tree rust_pattern rebuilds
from typing import IO, Any, Callable, Generator

from memoryd import limits
from memoryd.grep_scan import FileScan
from memoryd.transcripts.grep_pool import in_order, work_units

_P = _sre_parse
_CATEGORIES = {
    _P.CATEGORY_DIGIT: r"\d", _P.CATEGORY_NOT_DIGIT: r"\D", _P.CATEGORY_SPACE: r"\s",
    _P.CATEGORY_NOT_SPACE: r"\S", _P.CATEGORY_WORD: r"\w", _P.CATEGORY_NOT_WORD: r"\W",
}
_ANCHORS = {_P.AT_BEGINNING: "^", _P.AT_END: "$", _P.AT_BOUNDARY: r"\b", _P.AT_NON_BOUNDARY: r"\B"}
_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_ ")


class RipgrepRefused(Exception):
    """ripgrep would not run this search (its message says why); the Python scanner takes it."""


class _Untranslatable(Exception):
    pass


def rust_pattern(compiled: re.Pattern[bytes]) -> str | None:
    """The regex in ripgrep's syntax, matching exactly the lines the Python bytes regex matches,
    or None when it uses something ripgrep cannot express."""
    if compiled.flags & (re.LOCALE | re.DOTALL):
        return None
    try:
        parsed = _sre_parse.parse(compiled.pattern, compiled.flags)
        body = _seq(parsed.data)
    except _Untranslatable:
        return None
    except Exception:  # the parser's internals differ between Python versions: no ripgrep then
        return None
    return ("(?i-u)" if compiled.flags & re.IGNORECASE else "(?-u)") + body


def _byte(value: int) -> str:
    return chr(value) if value in _PLAIN else f"\\x{value:02x}"


def _seq(items: list[tuple[Any, Any]]) -> str:
    return "".join(_node(op, av) for op, av in items)


def _node(op: Any, av: Any) -> str:
    if op is _P.LITERAL:
        return _byte(av)
    if op is _P.NOT_LITERAL:
        return f"[^{_byte(av)}]"
    if op is _P.ANY:
        return "."
    if op is _P.IN:
        return _class(av)
    if op is _P.AT and av in _ANCHORS:
        return _ANCHORS[av]
    if op is _P.BRANCH:
        return "(?:" + "|".join(_seq(alt) for alt in av[1]) + ")"
    if op is _P.SUBPATTERN:
        _group, add, drop, items = av
        flags = ("i" if add & re.IGNORECASE else "") + ("-i" if drop & re.IGNORECASE else "")
        if (add | drop) & ~re.IGNORECASE:
            raise _Untranslatable
        return f"(?{flags}:{_seq(items)})"
    if op in (_P.MAX_REPEAT, _P.MIN_REPEAT):
        lo, hi, items = av
        bound = f"{{{lo},}}" if hi == _P.MAXREPEAT else f"{{{lo},{hi}}}"
        return f"(?:{_seq(items)}){bound}" + ("?" if op is _P.MIN_REPEAT else "")
    raise _Untranslatable  # lookaround, backreference, atomic group, possessive repeat, \A, \Z


def _class(items: list[tuple[Any, Any]]) -> str:
    out = []
    for op, av in items:
        if op is _P.NEGATE:
            out.append("^")
        elif op is _P.LITERAL:
            out.append(_byte(av))
        elif op is _P.RANGE:
            out.append(f"\\x{av[0]:02x}-\\x{av[1]:02x}")
        elif op is _P.CATEGORY and av in _CATEGORIES:
            out.append(_CATEGORIES[av])
        else:
            raise _Untranslatable
    return "[" + "".join(out) + "]"


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


class Ripgrep:
    """Runs work units as `rg -j1` processes on up to `workers` threads; a unit's process is
    killed once it found `max_hits` lines or its time is up."""

    def __init__(self, binary: str, workers: int | None = None) -> None:
        self.binary = binary
        self.workers = workers or min(limits.GREP_POOL_MAX_WORKERS, os.cpu_count() or 1)
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._version: str | None = None
        self.searches = 0  # searches that ran on rg (status)

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

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="memoryd-rg")
            return self._executor

    def scan(
        self, pattern: str, confirm: re.Pattern[bytes], files: list[tuple[Path, int]], max_hits: int, *,
        remaining: Callable[[], float],
    ) -> Generator[tuple[Path | None, FileScan], None, None]:
        """(path, FileScan) per file in the given order, as `GrepPool.scan` gives them. Raises
        `RipgrepRefused` when rg rejects the pattern or cannot run (in practice on the first unit)."""
        sizes = {p: size for p, size in files}
        executor = self._pool()
        self.searches += 1

        def submit(unit: list[Path], seconds: float) -> Future[list[FileScan]]:
            return executor.submit(self.scan_unit, pattern, confirm, unit, sizes, max_hits, seconds)

        yield from in_order(submit, work_units(files, limits.GREP_RIPGREP_UNIT_BYTES), 2 * self.workers, remaining)

    def scan_unit(
        self, pattern: str, confirm: re.Pattern[bytes], paths: list[Path], sizes: dict[Path, int], max_hits: int,
        seconds: float,
    ) -> list[FileScan]:
        """One `rg -j1` over `paths`: a FileScan per file up to the one where `max_hits` lines were
        found or time ran out. Lines are checked again with `confirm` (the Python regex)."""
        if seconds <= 0:
            return [FileScan([], 0, "deadline")]
        names = [str(p) for p in paths]
        index = {os.fsencode(name): i for i, name in enumerate(names)}
        cmd = [self.binary, "--no-config", "-j1", "--no-mmap", "--text", "--null", "--line-number", "--with-filename",
               "--no-heading", "--color=never", "--max-count", str(max_hits), "-e", pattern, "--", *names]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            raise RipgrepRefused(f"cannot run {self.binary}: {exc}") from None
        assert proc.stdout is not None and proc.stderr is not None
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(seconds, expire)
        timer.start()
        errors: list[bytes] = []
        reader = threading.Thread(target=lambda: errors.extend(proc.stderr.readlines()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        hits: list[list[tuple[int, bytes]]] = [[] for _ in paths]
        found, last = 0, -1  # lines kept; index of the file of the latest line
        try:
            for path, line_no, line in _records(proc.stdout, limits.GREP_LINE_MAX_BYTES):
                i = index.get(path)
                if i is None or (len(line) < limits.GREP_LINE_MAX_BYTES and not confirm.search(line)):
                    continue  # (a cut line may match past the cut: rg's word is taken for it)
                hits[i].append((line_no, line))
                found, last = found + 1, i
                if found >= max_hits:
                    break
        finally:
            proc.kill()
            proc.stdout.close()
            rc = proc.wait()
            timer.cancel()
            reader.join()
            proc.stderr.close()
        if found >= max_hits:
            return self._scans(hits[: last + 1], paths[: last + 1], sizes, "hits", set())
        if expired.is_set():  # the files up to the latest hit were read; that one perhaps not to its end
            return self._scans(hits[: last + 1], paths[: last + 1], sizes, "deadline", set()) if last >= 0 else [FileScan([], 0, "deadline")]
        failed = {i for i, name in enumerate(names) for e in errors if e.startswith(b"rg: " + os.fsencode(name) + b":")}
        if rc not in (0, 1) and not failed:
            message = b"".join(errors).decode("utf-8", "replace").strip() or f"exit status {rc}"
            raise RipgrepRefused(message)
        return self._scans(hits, paths, sizes, "done", failed)

    @staticmethod
    def _scans(
        hits: list[list[tuple[int, bytes]]], paths: list[Path], sizes: dict[Path, int], last_status: str, failed: set[int]
    ) -> list[FileScan]:
        scans = [FileScan(h, 0, "error") if i in failed else FileScan(h, sizes.get(p, 0), "done") for i, (h, p) in enumerate(zip(hits, paths, strict=True))]
        if scans and last_status != "done":
            scans[-1] = scans[-1]._replace(status=last_status)
        return scans

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


def _records(stream: IO[bytes], line_max: int) -> Generator[tuple[bytes, int, bytes], None, None]:
    """(path, line number, line) from rg's `path NUL number : line` output; a line over
    `line_max` bytes is cut there (the rest is read past, never held)."""
    while True:
        record = stream.readline(line_max + 4096)
        if not record:
            return
        if not record.endswith(b"\n"):
            while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
        else:
            record = record[:-1]
        nul = record.find(b"\0")
        colon = record.find(b":", nul + 1)
        number = record[nul + 1 : colon]
        if nul < 0 or colon < 0 or not number.isdigit():
            continue
        yield record[:nul], int(number), record[colon + 1 : colon + 1 + line_max]
