"""What a recall hands the agent: each memory as it is shown (its header and text), and the answer as a whole
(the injection, the method, why each was given or left out)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memoryd.recall.explain import Why
from memoryd.recall.inject import age_days, header_for, memory_text, truncate_content
from memoryd.recall.refs import MemoryRef, Origin
from memoryd.store.model import Memory


@dataclass
class RecalledFields:
    """What the agent is shown of a recalled memory, declared once: RecalledMemory and the API's answer
    (api/models.py RecalledMemoryOut) both take these fields, in this order."""

    filename: str
    name: str
    type: str
    description: str
    content: str
    header: str
    age_days: int


@dataclass
class RecalledMemory(RecalledFields):
    score: float | None = None
    origin: Origin = "personal"  # which store it came from (recall/refs.py)
    author: str = ""  # team memories: who changed it last

    @property
    def key(self) -> str:
        """Its candidate key (recall/refs.py): the store it came from and its file name."""
        return MemoryRef(self.origin, self.filename).key

    @property
    def text(self) -> str:
        """What the agent reads: the whole memory, name and description included."""
        return memory_text(self.name, self.description, self.type, self.content)


@dataclass
class RecallResult:
    memories: list[RecalledMemory] = field(default_factory=list)
    injection: str = ""
    method: str = "skipped"  # llm | local | skipped
    budget_used_bytes: int = 0
    reason: str = ""  # why skipped, or why the LLM was not used
    scores: dict[str, float] = field(default_factory=dict)
    why: list[Why] = field(default_factory=list)  # each memory injected, then those left out just under the cut
    took_ms: float = 0.0
    lexical_only: bool = True  # ranked without any vector (tool time, the model off or not loaded)
    vectors_missing: int = 0  # memories ranked lexically only, their vector still owed (issue 52: reads never wait)


def shown(
    memory: Memory, origin: Origin, *, now: float, score: float | None, note: str, stale: str, author: str
) -> RecalledMemory:
    """A memory as the agent sees it: its header (age or stale caveat, why it comes now, whose it is) and its text."""
    days = age_days(memory.mtime, now)
    header = (
        (f"{stale}\n\n" if stale else "")
        + (f"This memory {note}.\n" if note else "")
        + header_for(str(memory.path), days)
    )
    if origin == "global":
        header = f"Global memory (yours, in every project).\n{header}"
    elif origin == "team":
        header = f"Team memory, last changed by {author or 'a team member'}.\n{header}"
    return RecalledMemory(
        filename=memory.path.name,
        name=memory.name,
        type=memory.type,
        description=memory.description,
        content=truncate_content(memory.body),
        header=header,
        age_days=days,
        score=score,
        origin=origin,
        author=author,
    )
