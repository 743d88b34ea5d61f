"""`Guard`: answers a tool call with the decision its memories' forbid triggers call for (deny, ask, or the rule
as context), records every held act in the recall log (so the live page shows it), and lists what each project
holds (`memoryd guard`, SessionStart's one line).

It does NOT build Claude Code's JSON (integrations/claude_code_hooks.py) nor read config (it is given its mode).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from memoryd.guard.acts import Act
from memoryd.guard.index import GuardIndex, Rule
from memoryd.guard.match import Hit, meets
from memoryd.guard.mode import OFF, SWITCH_MODES, effective_mode
from memoryd.guard.reason import also_broken, reason
from memoryd.recall.explain import Why
from memoryd.recall.indexes import StoreIndexes
from memoryd.recall.log import RecallLog
from memoryd.store import MemoryDir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A held act: the decision (deny, ask or context), the first rule it met and how, the other rules it breaks,
    and the words for the agent (every rule it breaks, so none is left unsaid)."""

    decision: str
    rule: Rule
    hit: Hit
    reason: str
    others: tuple[tuple[Rule, Hit], ...] = ()


class Guard:
    """Forbid triggers against acts; only they can hold an act, never a similarity score."""

    def __init__(self, *, mode: str, indexes: StoreIndexes, recall_log: RecallLog | None) -> None:
        self.mode = mode
        self.indexes = indexes
        self.recall_log = recall_log
        self.rules_index = GuardIndex()

    def rules(self, store: MemoryDir) -> list[Rule]:
        """The memories of a dir that hold acts (a dir without memory files holds none; nothing is created)."""
        if not store.has_memories():
            return []
        return self.rules_index.rules(store, self.indexes.refresh(store))

    def broken(self, store: MemoryDir) -> list[Rule]:
        """Memories whose `forbid:` does not parse, so they hold nothing."""
        if not store.has_memories():
            return []
        return self.rules_index.broken(store, self.indexes.refresh(store))

    def check(self, store: MemoryDir, act: Act, session_id: str, session_value: str | None = None) -> Verdict | None:
        """The verdict for one act (None: it goes on untouched); a held act is recorded in the recall log."""
        started = time.perf_counter()
        if effective_mode(self.mode, session_value, "deny") == OFF:  # the session or [guard] turned it off
            return None
        held: list[tuple[str, Rule, Hit]] = []
        for rule in self.rules(store):
            decision = effective_mode(self.mode, session_value, rule.forbid.enforce)
            if decision != OFF and (hit := meets(rule.forbid, act)) is not None:
                held.append((decision, rule, hit))
        if not held:
            return None
        # the strictest decision of the rules broken (deny, then ask, then context); the reason names each rule
        decision = min((d for d, _, _ in held), key=SWITCH_MODES.index)
        (_, rule, hit), others = held[0], tuple((r, h) for _, r, h in held[1:])
        words = " ".join([reason(rule, hit), *(also_broken(r, h) for r, h in others)])
        verdict = Verdict(decision, rule, hit, words, others)
        self._record(store, act, session_id, verdict, (time.perf_counter() - started) * 1000)
        return verdict

    def _record(self, store: MemoryDir, act: Act, session_id: str, verdict: Verdict, took_ms: float) -> None:
        if self.recall_log is None:
            return
        whys = [
            Why(
                filename=rule.filename,
                name=rule.name,
                score=1.0,
                injected=True,
                paths=(hit.trigger,),
                rule=f"forbids {hit.kind}",
                held=verdict.decision,
            )
            for rule, hit in ((verdict.rule, verdict.hit), *verdict.others)
        ]
        try:
            self.recall_log.record(
                memory_dir=str(store.path),
                session_id=session_id,
                source="hook:PreToolUse:guard",
                prompt=act.describe(),
                method="guard",
                reason=f"{verdict.decision}: {verdict.hit.describe()}",
                took_ms=took_ms,
                why=whys,
            )
        except Exception:  # the log is for people; never fail the agent's tool call over it
            log.exception("could not record a held act in the recall log")
