"""The reliability probes (bench/reliability.py) against a real daemon: every probe must hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.e2e


def test_every_reliability_probe_holds(tmp_path: Path) -> None:
    out = tmp_path / "reliability.json"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "reliability.py"),
            "--dream-kills",
            "3",
            "--review-kills",
            "2",
            "--giant-line-mb",
            "20",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        # Speed is the bench's to report: here issue 52's read probes run a 30 s mixed load with 10x their limits,
        # which still fails a read that waits on writes again (19-35 s before the fix).
        env={**os.environ, "MEMORYD_BENCH_TIMING_SCALE": "10", "MEMORYD_BENCH_LOAD_SECONDS": "30"},
        timeout=1200,  # issue 52's reads probes: a 2-minute mixed load and an import of 2,000 notes
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    items = json.loads(out.read_text())
    # 13 probes in bench/reliability.py; issue 41's: 1 in reliability_identity.py (item 2), 5 in reliability_input.py
    # (items 1, 3, 4, 6, 9) and 5 in reliability_files.py (items 5, 7, 8); issue 52's 5 in reliability_r4.py, 4 in
    # reliability_clients.py and 6 in reliability_reads.py
    assert len(items) == 13 + 1 + 5 + 5 + 5 + 4 + 6 and all(
        i["tried"] > 0 and i["held"] == i["tried"] for i in items
    ), items
