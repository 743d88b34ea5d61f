"""What a consolidation changes, as a list of actions: the offline (deterministic) planner
and the LLM planner. Planning reads only; `DreamService` applies actions through the store.

Offline: merge near-duplicates (same type, similar name/description/body; the newest wording
wins, distinct body lines are kept), make relative dates absolute against each file's
modified date, distil daily-log bullets into topic files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.dates import absolutize_dates, code_spans_kept
from memoryd.base.errors import LLMUnavailable, TokenBudgetExceeded
from memoryd.base.similarity import NEAR_DUPLICATE, near_duplicate, similarity, supersedes
from memoryd.extract import shape as shaping
from memoryd.llm import LLMClient
from memoryd.llm.schemas import DreamAction, DreamPlan
from memoryd.relevance.applies import checked_applies
from memoryd.store import MemoryDir, MemoryHeader
from memoryd.store.paths import FILENAME_RE
from memoryd.store.prompt import MEMORY_TYPES_TEXT, WHAT_NOT_TO_SAVE

_LOG_BULLET = re.compile(
    r"^\s*[-*]\s+(?:\d{1,2}:\d{2}\s+)?(?:\[(?P<type>user|feedback|project|reference)\]\s+)?(?P<text>.+)$"
)
LLM_CONTEXT_MAX_CHARS = limits.DREAM_LLM_CONTEXT_MAX_CHARS


class Action(DreamAction):
    """One change of a plan, in the shape the LLM planner asks the model for, plus what only a planner knows."""

    merged_into: str | None = None  # a delete that merged this file into another: `[[links]]` follow it

    @classmethod
    def rewrite(cls, memory: Any, *, description: str, body: str, why: str) -> Action:
        """A write over an existing memory: its file, name and type stay, its text changes."""
        return cls(
            op="write",
            filename=memory.filename,
            name=memory.name,
            type=memory.type,
            description=description,
            body=body,
            why=why,
        )


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    method: str = "offline"
    notes: list[str] = field(default_factory=list)


def _modified_date(memory: Any) -> date:
    for value in (memory.modified, memory.created):
        try:
            return datetime.fromisoformat(str(value).replace("Z", "+00:00")).date()
        except ValueError:
            continue
    return datetime.fromtimestamp(memory.mtime).date()


def daily_logs(store: MemoryDir) -> list[Path]:
    base = store.path / limits.DAILY_LOGS_DIRNAME
    return sorted(base.glob("*/*/*.md")) if base.is_dir() else []


def offline_plan(store: MemoryDir, *, processed_logs: set[str]) -> Plan:
    """The deterministic plan: near-duplicates merged, superseded memories deleted, relative dates made absolute,
    daily logs distilled."""
    plan = Plan()
    memories = []
    for header in store.all_headers():
        try:
            memories.append(store.get(header.filename))
        except Exception:
            plan.notes.append(f"skipped unreadable {header.filename}")
    memories.sort(key=lambda m: -m.mtime)  # newest first, so the newest wording survives
    merged_away: set[str] = set()
    _merge_near_duplicates(memories, plan, merged_away)
    _delete_superseded(memories, plan, merged_away)
    plan.actions = [a for a in plan.actions if not (a.op == "write" and a.filename in merged_away)]
    _absolute_dates(memories, plan, merged_away)
    known = [m.description for m in memories if m.filename not in merged_away]  # to skip near-duplicate entries
    for log in daily_logs(store):
        if f"{log}:{log.stat().st_mtime_ns}" not in processed_logs:
            plan.logs.append(log)
            plan.actions.extend(_distilled(log, known))
    return plan


def _merge_near_duplicates(memories: list[Any], plan: Plan, merged_away: set[str]) -> None:
    """Phase 3a: each group of near-duplicates becomes its newest memory with the others' distinct body lines."""
    for i, keep in enumerate(memories):
        if keep.filename in merged_away:
            continue
        group = [m for m in memories[i + 1 :] if m.filename not in merged_away and near_duplicate(keep, m)]
        if not group:
            continue
        lines = keep.body.rstrip().split("\n")
        deletes = []
        for other in group:
            for line in other.body.split("\n"):
                if line.strip() and line.strip() not in {kept.strip() for kept in lines}:
                    lines.append(line)
            merged_away.add(other.filename)
            deletes.append(
                Action(
                    op="delete",
                    filename=other.filename,
                    why=f"near-duplicate of {keep.filename}",
                    merged_into=keep.filename,
                )
            )
        # The merged file first, then the deletes: each delete points its `[[links]]` at the written file.
        plan.actions.append(
            Action.rewrite(
                keep, description=keep.description, body="\n".join(lines), why=f"merged {len(group)} near-duplicate(s)"
            )
        )
        plan.actions.extend(deletes)


def _delete_superseded(memories: list[Any], plan: Plan, merged_away: set[str]) -> None:
    """Phase 3a': a newer memory that contradicts an older one ("uses npm" → "moved to pnpm") wins; the older
    file's text stays in the run's backup, so undo brings it back."""
    for i, newer in enumerate(memories):
        for older in memories[i + 1 :]:
            if {newer.filename, older.filename} & merged_away or not supersedes(newer, older):
                continue
            merged_away.add(older.filename)
            plan.actions.append(
                Action(
                    op="delete",
                    filename=older.filename,
                    why=f'superseded by {newer.filename}: was "{older.description[:120]}"',
                    merged_into=newer.filename,
                )
            )


def _absolute_dates(memories: list[Any], plan: Plan, merged_away: set[str]) -> None:
    """Phase 3b: relative dates made absolute, against the date the memory was written."""
    written = {a.filename for a in plan.actions if a.op == "write"}
    for m in memories:
        if m.filename in merged_away:
            continue
        ref = _modified_date(m)
        body = next((a.body for a in plan.actions if a.op == "write" and a.filename == m.filename), m.body)
        fixed_body, fixed_desc = absolutize_dates(body, ref), absolutize_dates(m.description, ref)
        if not (code_spans_kept(body, fixed_body) and code_spans_kept(m.description, fixed_desc)):
            plan.notes.append(f"refused a date rewrite of {m.filename}: it would change code")  # the write-path guard
            continue
        if fixed_body == body and fixed_desc == m.description:
            continue
        if m.filename in written:
            for a in plan.actions:
                if a.op == "write" and a.filename == m.filename:
                    a.body, a.description, a.why = fixed_body, fixed_desc, a.why + "; dates made absolute"
        else:
            why = f"relative dates made absolute (against {ref.isoformat()})"
            plan.actions.append(Action.rewrite(m, description=fixed_desc, body=fixed_body, why=why))


def _distilled(log: Path, known: list[str]) -> list[Action]:
    """Phase 2/3c: one new memory per bullet of a daily log that no known memory already says (`known` grows)."""
    actions = []
    day = log.stem
    for type_, text, extra in _log_entries(log.read_text(encoding="utf-8", errors="replace")):
        if len(text) < 8:
            continue
        name, _, rest = text.partition(": ")
        if not rest or len(name) > 80:  # a plain bullet, not `name: description` from the daily-log writer
            name, rest = shaping.title(text), shaping.strip_request(text)
        try:
            dated = (
                absolutize_dates(rest, date.fromisoformat(day)),
                absolutize_dates(extra, date.fromisoformat(day)),
            )
            if code_spans_kept(rest, dated[0]) and code_spans_kept(extra, dated[1]):
                rest, extra = dated
        except ValueError:
            pass
        if any(similarity(rest, d) >= NEAR_DUPLICATE for d in known):
            continue
        description = shaping.clip(rest, shaping.DESCRIPTION_MAX_CHARS)
        body = extra or (
            shaping.body(rest, reason=f"noted in the daily log of {day}") if type_ in ("feedback", "project") else rest
        )
        actions.append(
            Action(
                op="write", name=name, type=type_, description=description, body=body, why=f"distilled from {log.name}"
            )
        )
        known.append(description)
    return actions


def _log_entries(text: str) -> list[tuple[str, str, str]]:
    """(type, first line, indented continuation) for each `- HH:MM [type] …` bullet of a daily log."""
    entries: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        m = _LOG_BULLET.match(line)
        if m and not line.startswith("  "):
            entries.append((m.group("type") or "project", m.group("text").strip(), []))
        elif entries and line.startswith("  "):
            entries[-1][2].append(line[2:])
    return [(t, first, "\n".join(rest).strip()) for t, first, rest in entries]


DREAM_SYSTEM = f"""You consolidate a coding agent's memory directory, in four phases:
1. Orient: read the manifest and the files below.
2. Gather signal: daily logs (if any) first, then memories that drifted or contradict each other.
3. Consolidate: merge new signal into existing files rather than creating near-duplicates; when two
   memories contradict, the newest wins and the old claim is corrected at the source; convert relative
   dates to absolute dates (YYYY-MM-DD); delete facts that are stale or derivable.
4. Prune and index: keep the set small; one memory per topic; each description one specific line.

{MEMORY_TYPES_TEXT}

{WHAT_NOT_TO_SAVE}

Answer with JSON only: {{"actions": [{{"op": "write", "filename": "existing file to update, or omit for a new one",
"name": "...", "type": "user|feedback|project|reference", "description": "...", "body": "...",
"applies_to": {{"paths": [], "commands": [], "tools": []}}}},
{{"op": "delete", "filename": "...", "why": "..."}}], "summary": "one paragraph"}}.
Return {{"actions": []}} when nothing needs to change. Never include secrets.
- When a memory is about particular files, commands or tools, give a write "applies_to": {{"paths": ["globs relative to the project, e.g. db/migrations/**"], "commands": ["programs it is about or forbids, e.g. npm"], "tools": ["Bash", "Edit", "Write"]}} (only the lists that apply); recall then brings it when the agent is about to run or edit one of them. Omit it for memories not tied to files or commands.
A write without "applies_to" keeps what the file has."""  # noqa: E501 (the prompt's lines as the model reads them)


def llm_plan(
    store: MemoryDir,
    llm: LLMClient,
    *,
    processed_logs: set[str],
    timeout: float | None = None,
    today: date | None = None,
) -> Plan:
    """Ask the model for the actions; every action is validated here (unknown files dropped)."""
    headers: list[MemoryHeader] = store.all_headers()
    context, logs = _llm_context(store, headers, processed_logs)
    result = llm.complete(
        purpose="dream",
        system=DREAM_SYSTEM,
        user=f"Today is {(today or date.today()).isoformat()}.\n\n{context}",
        max_tokens=limits.DREAM_LLM_MAX_TOKENS,
        timeout=timeout,
        schema=DreamPlan,
    )
    data = result.data.model_dump()
    plan = Plan(method="llm", logs=logs)
    types = {h.filename: h.type for h in headers}
    for raw in data.get("actions") or []:
        if isinstance(raw, dict):
            _add_checked(plan, raw, types)
    if data.get("summary"):
        plan.notes.append(str(data["summary"])[:500])
    return plan


def _llm_context(store: MemoryDir, headers: list[MemoryHeader], processed_logs: set[str]) -> tuple[str, list[Path]]:
    """The model's view of the directory within LLM_CONTEXT_MAX_CHARS, and the daily logs it shows in full."""
    # The manifest always lists every file, so the model knows what exists even when contents are cut.
    parts = [
        "## Manifest (newest first)",
        *(f"- {h.filename} [{h.type}] {h.name}: {h.description}"[: limits.INDEX_ENTRY_MAX_CHARS * 2] for h in headers),
    ]
    budget = LLM_CONTEXT_MAX_CHARS - sum(len(p) + 1 for p in parts)
    omitted = 0
    for h in headers:
        try:
            m = store.get(h.filename)
        except Exception:
            continue
        body = (
            m.body
            if len(m.body) <= limits.DREAM_LLM_FILE_MAX_CHARS
            else m.body[: limits.DREAM_LLM_FILE_MAX_CHARS] + "\n[... cut]"
        )
        block = (
            f"=== {h.filename} (type {h.type}, modified {m.modified or h.mtime})\nname: {m.name}\ndescription: "
            f"{m.description}\n{body}"
        )
        if len(block) > budget:
            omitted += 1
            continue
        budget -= len(block) + 2
        parts.append(block)
    if omitted:
        parts.append(f"({omitted} files not shown for size; do not delete or rewrite files you have not seen)")
    # Only logs shown in full are marked processed; the rest wait for the next run.
    logs = []
    for p in daily_logs(store):
        if f"{p}:{p.stat().st_mtime_ns}" in processed_logs:
            continue
        block = f"=== daily log {p.name}\n{p.read_text(encoding='utf-8', errors='replace')}"
        if len(block) > budget:
            break
        budget -= len(block) + 2
        parts.append(block)
        logs.append(p)
    return "\n\n".join(parts), logs


def _add_checked(plan: Plan, raw: dict[str, Any], types: dict[str, str]) -> None:
    """One action the model proposed, added when valid (`types`: the type of each known file), else a note why."""
    op = raw.get("op")
    filename = raw.get("filename") or None
    if filename is not None and (not isinstance(filename, str) or not FILENAME_RE.match(filename)):
        plan.notes.append(f"dropped an action on an invalid filename {json.dumps(filename)[:80]}")
        return
    if op == "delete":
        if filename in types:
            into = raw.get("merged_into")
            plan.actions.append(
                Action(
                    op="delete",
                    filename=filename,
                    why=str(raw.get("why", ""))[:200],
                    merged_into=into if into in types else None,
                )
            )
        else:
            plan.notes.append(f"dropped delete of unknown file {filename}")
    elif op == "write":
        type_ = str(raw.get("type", ""))
        if type_ not in limits.MEMORY_TYPES or not raw.get("name") or not raw.get("description"):
            plan.notes.append("dropped a write without a valid type, name and description")
            return
        if filename is not None and filename not in types:
            filename = None  # a new file: the store names it
        if filename is not None and types[filename] != type_:
            plan.notes.append(f"dropped a write of {filename} as type {type_}: it is a {types[filename]} memory")
            return
        plan.actions.append(
            Action(
                op="write",
                filename=filename,
                name=str(raw["name"]),
                type=type_,
                description=str(raw["description"]),
                body=str(raw.get("body", "")),
                why=str(raw.get("why", ""))[:200],
                applies_to=checked_applies(raw.get("applies_to")),
            )
        )


def make_plan(store: MemoryDir, llm: LLMClient, *, processed_logs: set[str], today: date) -> Plan:
    """The LLM's plan when a model is set up and answers; else the deterministic one, with a note why."""
    if not llm.enabled:
        return offline_plan(store, processed_logs=processed_logs)
    try:
        return llm_plan(store, llm, processed_logs=processed_logs, today=today)
    except (LLMUnavailable, TokenBudgetExceeded) as exc:
        plan = offline_plan(store, processed_logs=processed_logs)
        plan.notes.insert(0, f"LLM unavailable ({exc.message}); deterministic consolidation used")
        return plan
