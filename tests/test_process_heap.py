"""The daemon's glibc tuning (base/process.py `tune_malloc`), checked in a fresh process: after a big block
is freed, the next big block still gets its own mapping instead of landing in the heap and staying resident."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memoryd.base.process import MALLOC_MMAP_THRESHOLD

_PROBE = textwrap.dedent(
    """
    import ctypes, json, sys
    from memoryd.base.process import tune_malloc

    class Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                   "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = Info
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    took = tune_malloc() if sys.argv[1] == "tuned" else {}
    libc.free(libc.malloc(8 << 20))  # glibc's default raises its mmap threshold to 8 MB here
    before = libc.mallinfo2().hblkhd
    block = libc.malloc(1 << 20)
    mapped = libc.mallinfo2().hblkhd - before
    libc.free(block)
    print(json.dumps({"took": took, "mapped": mapped}))
    """
)


def _probe(mode: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or "libc" not in (ctypes.util.find_library("c") or ""), reason="glibc only"
)
def test_a_big_block_keeps_its_own_mapping_after_a_bigger_one_was_freed() -> None:
    tuned = _probe("tuned")
    assert tuned["took"] == {"arena_max": True, "mmap_threshold": True, "trim_threshold": True}
    assert tuned["mapped"] >= 1 << 20  # unmapped, so handed back, the moment it is freed
    assert MALLOC_MMAP_THRESHOLD < 1 << 20
    assert _probe("default")["mapped"] == 0  # glibc's default: the heap takes it, and keeps its pages


@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.confstr("CS_GNU_LIBC_VERSION"), reason="glibc only")
def test_the_daemon_starts_itself_over_once_with_the_thread_caches_off(home: Path) -> None:
    """`memoryd serve` execs itself (same pid, same arguments) with glibc's per-thread caches of freed blocks off:
    35 threads' caches had held RSS ~3.5 MB up in the soak (issue 42). A tunable the user set is kept."""
    from tests.support.servers import DaemonProcess, daemon_env

    proc = DaemonProcess(home=home, env=daemon_env(home, GLIBC_TUNABLES="glibc.malloc.arena_max=4")).start()
    try:
        assert proc.proc is not None
        pid = proc.proc.pid
        # what the exec passed (glibc's tunable parser cuts the string at each ":" in place, hence the search)
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert b"\0GLIBC_TUNABLES=glibc.malloc.arena_max=4" in environ and b"glibc.malloc.tcache_count=0\0" in environ
        assert Path(f"/proc/{pid}/cmdline").read_text().split("\0")[1:5] == ["-m", "memoryd", "serve", "--port"]
        assert proc.client().get("/v1/health").status_code == 200  # the pid that answers is the one started
        assert json.loads((home / "daemon.json").read_text())["pid"] == pid
    finally:
        proc.kill()
