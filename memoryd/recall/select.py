"""The LLM side-query of the seeds: the manifest of candidate memories, the selection prompt,
and parsing `{"selected_memories": [...]}` (unknown filenames dropped)."""

from __future__ import annotations

from datetime import UTC, datetime

from memoryd.base import limits
from memoryd.base.errors import LLMUnavailable
from memoryd.llm import LLMClient
from memoryd.llm.client import extract_json
from memoryd.llm.schemas import RecallSelection
from memoryd.store.model import MemoryHeader

PURPOSE = "recall"
SELECT_MEMORIES_PROMPT = """You are selecting memories that will be useful to an AI coding assistant as it processes a user's query. You will be given the user's query and a list of available memory files with their filenames and descriptions.

Return a JSON object with a "selected_memories" array of filenames for the memories that will clearly be useful (up to 5). Only include memories that you are certain will be helpful based on their name and description.
- If you are unsure if a memory will be useful, do not include it.
- If no memories would clearly be useful, return an empty array."""  # noqa: E501 (the seeds' prompt, verbatim)


def manifest(headers: list[MemoryHeader], *, max_bytes: int = limits.RECALL_MANIFEST_MAX_BYTES) -> str:
    """One line per memory: `[type] filename (timestamp): description`, best-ranked first, cut at `max_bytes`."""
    lines, used = [], 0
    cap = limits.RECALL_MANIFEST_DESCRIPTION_MAX_CHARS
    for h in headers:
        stamp = datetime.fromtimestamp(h.mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        description = h.description if len(h.description) <= cap else h.description[: cap - 1] + "…"
        line = f"[{h.type}] {h.filename} ({stamp}): {description}"
        used += len(line.encode("utf-8")) + 1
        if used > max_bytes:
            break
        lines.append(line)
    return "\n".join(lines)


def parse_selection(text: str, known: set[str], limit: int) -> list[str]:
    """The selected filenames that exist among the candidates, in the model's order, deduplicated."""
    data = extract_json(text, expect=dict)
    chosen = data.get("selected_memories")
    if not isinstance(chosen, list):
        raise LLMUnavailable('the LLM answer had no "selected_memories" list; the local ranking was used.')
    out: list[str] = []
    for item in chosen:
        if isinstance(item, str):
            name = item.strip().rsplit("/", 1)[-1]
            if name in known and name not in out:
                out.append(name)
    return out[:limit]


def select_with_llm(
    llm: LLMClient,
    query: str,
    candidates: list[MemoryHeader],
    *,
    limit: int,
    timeout: float,
    recent: list[str] | None = None,
) -> list[str]:
    """One side-query; raises LLMUnavailable/TokenBudgetExceeded on any failure. `recent`: the session's
    latest files and commands, so the model knows what the prompt is about to touch."""
    working = "\n".join(f"- {item}" for item in (recent or [])[: limits.RECALL_SIDE_QUERY_RECENT_ITEMS])
    answer = llm.complete(
        purpose=PURPOSE,
        system=SELECT_MEMORIES_PROMPT,
        user=f"Query: {query}\n\n"
        + (f"Recently touched in this session:\n{working}\n\n" if working else "")
        + f"Available memories:\n{manifest(candidates)}",
        max_tokens=limits.RECALL_SIDE_QUERY_MAX_TOKENS,
        timeout=timeout,
        schema=RecallSelection,
    )
    return parse_selection(answer.text, {h.filename for h in candidates}, limit)
