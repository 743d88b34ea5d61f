"""`WebView`: the web view's one service. It holds the parts the pages read and act on and answers
their queries (projects, per-run diffs, spend); plain Python (no HTTP), the routes render its answers.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import asdict, dataclass
from datetime import UTC, date, timedelta
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from memoryd.api.web.filters import as_utc
from memoryd.base.activity import Activity
from memoryd.base.clock import Clock
from memoryd.base.errors import MemorydError, NotFound
from memoryd.dream import DreamService
from memoryd.dream.runs import DreamRun
from memoryd.extract import ExtractionService
from memoryd.llm import LLMClient, UsageMeter
from memoryd.recall.log import RecallEntry, RecallLog
from memoryd.review import ReviewQueue
from memoryd.session_memory import SessionMemory
from memoryd.stale import Finding, StaleChecker
from memoryd.store import MemoryDir, StoreRegistry
from memoryd.store.paths import sanitize_path

CHART_COLORS = ("#2f6fb0", "#d9822b", "#3c9a5f", "#9b59b6", "#c0392b", "#7f8c8d")


@dataclass(frozen=True)
class Project:
    pid: str
    store: MemoryDir
    root: Path | None

    @property
    def title(self) -> str:
        return self.root.name if self.root else self.store.path.parent.name


def project_id(path: Path) -> str:
    """A short stable id for a memory dir, so URLs never carry a filesystem path."""
    return hashlib.sha256(str(path).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class ProjectDir:
    p: Project
    count: int
    pending: int


@dataclass(frozen=True)
class ProjectRow:
    """One project, with every memory dir its memories live in (memoryd's own, Claude Code's folder, ...)."""

    title: str
    root: Path | None
    dirs: list[ProjectDir]

    @property
    def primary(self) -> ProjectDir:
        return max(self.dirs, key=lambda d: (d.count, d.p.root is not None))

    @property
    def count(self) -> int:
        return sum(d.count for d in self.dirs)

    @property
    def pending(self) -> int:
        return sum(d.pending for d in self.dirs)


def project_key(p: Project) -> str:
    """Dirs of one project share a key: both memoryd's base and Claude Code's name a project's folder after its root."""
    return sanitize_path(str(p.root)) if p.root else p.store.path.parent.name


@dataclass(frozen=True, kw_only=True)
class WebView:
    """The web view's one service: built with the parts its pages use, so a route never reaches past it."""

    stores: StoreRegistry
    dream: DreamService
    review: ReviewQueue
    stale: StaleChecker
    extraction: ExtractionService
    session_memory: SessionMemory
    recall_log: RecallLog | None  # None when recall keeps no log: the pages then show no recalls
    activity: Activity
    meter: UsageMeter
    llm: LLMClient
    model: str  # the configured model, named on the spend page when a model backend is on
    read_only: bool  # memory.read_only: the review page says why nothing can be approved
    clock: Clock

    def projects(self) -> list[Project]:
        """Every memory dir memoryd knows (found on disk or named by a request since start)."""
        self.stores.discover()
        found = [Project(project_id(s.path), s, self.dream.project_root(s)) for s in self.stores.known()]
        return sorted(found, key=lambda p: (p.title.casefold(), str(p.store.path)))

    def project_rows(self) -> list[ProjectRow]:
        """The projects page: one row per project, not one per memory dir."""
        groups: dict[str, list[ProjectDir]] = {}
        for p in self.projects():
            groups.setdefault(project_key(p), []).append(
                ProjectDir(p, len(p.store.all_headers()), self.review.pending_count(p.store))
            )
        rows = []
        for dirs in groups.values():
            rooted = next((d.p for d in dirs if d.p.root), dirs[0].p)
            rows.append(ProjectRow(rooted.title, rooted.root, sorted(dirs, key=lambda d: -d.count)))
        return sorted(rows, key=lambda r: r.title.casefold())

    def titles(self) -> dict[str, str]:
        """memory dir → the title of its project row (for the live page's events)."""
        return {str(d.p.store.path): row.title for row in self.project_rows() for d in row.dirs}

    def project(self, pid: str) -> Project:
        for p in self.projects():
            if p.pid == pid:
                return p
        raise NotFound(f"no project {pid!r}; pick one from the list at /ui.")

    def recalls_of(self, p: Project, filename: str) -> list[RecallEntry]:
        """The last recalls that gave this memory to an agent."""
        return self.recall_log.of_memory(str(p.store.path), filename) if self.recall_log is not None else []

    def stale_of(self, p: Project, filename: str) -> Finding | None:
        """What the stale check found in this memory (names the project no longer has); None when fresh or unchecked."""
        try:
            return self.stale.finding(p.store, filename)
        except MemorydError:
            return None  # unreadable: the page says so on its own

    def nav(self, p: Project) -> dict[str, int]:
        """The counts the project's navigation shows beside its links."""
        return {"review": self.review.pending_count(p.store)}

    def runs(self, p: Project) -> list[dict[str, Any]]:
        """The project's dream runs, newest first, each with the diffs of the files it touched."""
        return [
            {**asdict(r), "summary": run_summary(r), "took": took(r), "diffs": self.run_diffs(p.store, r.run_id)}
            for r in self.dream.runs_of(p.store)
        ]

    def run_diffs(self, store: MemoryDir, run_id: str) -> list[dict[str, str]]:
        """For each file a dream run touched: a unified diff from its text before the run to its text now."""
        diffs = []
        for filename, prior in sorted(self.dream.prior_texts(run_id).items()):
            current = store.read_raw(filename)
            lines = difflib.unified_diff(
                (prior or "").splitlines(keepends=True),
                (current or "").splitlines(keepends=True),
                fromfile=f"{filename} (before the run)",
                tofile=f"{filename} (now)" if current is not None else f"{filename} (deleted)",
            )
            diffs.append({"filename": filename, "diff": "".join(lines) or "(no difference now)"})
        return diffs

    def undo_run(self, p: Project, run_id: str) -> bool:
        """Undo one of this project's dream runs; False when the run is not one of its own."""
        if run_id not in {r.run_id for r in self.dream.runs_of(p.store)}:
            return False
        self.dream.undo(run_id)
        return True

    def spend(self, days: int) -> dict[str, Any]:
        """The spend page: tokens per day and purpose over `days`, as rows and a chart, against the daily cap."""
        rows = self.meter.by_day(days)
        today = self.clock.now().astimezone(UTC).date()
        return {
            "chart": spend_chart(rows, today=today, days=days, cap=self.meter.daily_cap),
            "rows": rows,
            "summary": self.meter.summary(),
            "mode": self.llm.mode,
            "model": self.model if self.llm.enabled else None,
            "days": days,
        }


def run_summary(run: DreamRun) -> str:
    """What a dream run did, in words, for the line that leads its section ("Updated 2 memories, deleted 1")."""
    if run.status == "running":
        return "Running"
    ops = [c["op"] for c in run.changes]
    done = [
        f"{verb} {n} memor{'y' if n == 1 else 'ies'}"
        for verb, n in (("updated", ops.count("write")), ("deleted", ops.count("delete")))
        if n
    ]
    said = ", ".join(done).capitalize() or "Changed nothing"
    if run.status == "failed":
        return f"Failed: {said.lower()}"
    if run.status == "cancelled":
        return f"Cancelled: {said.lower()}"
    return said


def took(run: DreamRun) -> str:
    """How long a finished run took, in words ("" while it runs)."""
    start, end = as_utc(run.started_at), as_utc(run.finished_at)
    if start is None or end is None:
        return ""
    seconds = (end - start).total_seconds()
    if seconds < 0.1:
        return "under 0.1 s"
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds / 60:.0f} min"


def spend_chart(rows: list[dict[str, Any]], *, today: date, days: int, cap: int) -> Markup:
    """Tokens per day as stacked bars by purpose, with the daily cap as a dashed line (inline SVG)."""
    width, height, left, bottom, top = 640, 220, 56, 28, 12
    day_list = [(today - timedelta(days=days - 1 - i)).isoformat() for i in range(days)]
    purposes = sorted({r["purpose"] for r in rows})
    color = {p: CHART_COLORS[i % len(CHART_COLORS)] for i, p in enumerate(purposes)}
    totals = {d: sum(r["tokens"] for r in rows if r["day"] == d) for d in day_list}
    most = max([*totals.values(), 1])
    peak = cap if cap and cap <= most * 1.25 else int(most * 1.25) or 1  # the cap line only when it fits the scale
    plot_h = height - bottom - top
    slot = (width - left) / days
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" '
        f'height="{height + 24 * max(1, len(purposes))}" '
        f'viewBox="0 0 {width} {height + 24 * max(1, len(purposes))}" '
        f'aria-label="model tokens per day and purpose" class="chart">'
    ]
    parts.append(
        f'<text x="4" y="{top + 8}" font-size="11">{peak:,}</text><text x="4" y="{height - bottom}" '
        'font-size="11">0</text>'
    )
    for i, d in enumerate(day_list):
        x = left + i * slot + slot * 0.15
        y = height - bottom
        for r in (r for r in rows if r["day"] == d):
            h = plot_h * r["tokens"] / peak
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" height="{h:.1f}" fill="{color[r["purpose"]]}">'
                f"<title>{escape(d)} {escape(r['purpose'])}: {r['tokens']:,} tokens</title></rect>"
            )
        if i % max(1, days // 7) == 0 or i == days - 1:
            parts.append(f'<text x="{x:.1f}" y="{height - 10}" font-size="10">{escape(d[5:])}</text>')
    if cap and cap > peak:
        parts.append(
            f'<text x="{left + 4}" y="{top + 8}" font-size="10" fill="#c0392b">daily cap {cap:,} (above this '
            "scale)</text>"
        )
    elif cap:
        cy = height - bottom - plot_h * cap / peak
        parts.append(
            f'<line x1="{left}" x2="{width}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="#c0392b" stroke-dasharray="4 3"/>'
            f'<text x="{left + 4}" y="{cy - 3:.1f}" font-size="10" fill="#c0392b">daily cap {cap:,}</text>'
        )
    for i, p in enumerate(purposes or ["(no model calls)"]):
        ly = height + 8 + 24 * i
        parts.append(
            f'<rect x="{left}" y="{ly}" width="12" height="12" fill="{color.get(p, "#ccc")}"/>'
            f'<text x="{left + 18}" y="{ly + 10}" font-size="12">{escape(p)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
