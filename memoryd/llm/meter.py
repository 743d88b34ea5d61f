"""`UsageMeter`: token spend per UTC day, purpose and backend, in SQLite and Prometheus,
and the daily cap that holds for every backend."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from memoryd.base.errors import TokenBudgetExceeded
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB

SPEND_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_spend (
    day TEXT NOT NULL,
    purpose TEXT NOT NULL,
    backend TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, purpose, backend)
);
"""
_COUNTS = ("calls", "failures", "input_tokens", "output_tokens")


class UsageMeter:
    def __init__(self, state: StateDB, metrics: Metrics, *, daily_cap: int, now: Callable[[], datetime]) -> None:
        self.state = state
        self.metrics = metrics
        self.daily_cap = daily_cap
        self.now = now
        state.migrate("llm_spend", SPEND_SCHEMA)

    def today(self) -> str:
        return self.now().astimezone(UTC).date().isoformat()

    def used_today(self) -> int:
        row = self.state.query_one(
            "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS n FROM llm_spend WHERE day = ?", (self.today(),)
        )
        return int(row["n"]) if row else 0

    def cap_reached(self) -> bool:
        return bool(self.daily_cap) and self.used_today() >= self.daily_cap

    def check_cap(self, purpose: str) -> None:
        if self.cap_reached():
            raise TokenBudgetExceeded(
                f"daily LLM token cap of {self.daily_cap:,} reached; {purpose} runs offline until 00:00 UTC. "
                "Raise [llm] daily_token_cap in config.toml to allow more."
            )

    def record(
        self, purpose: str, input_tokens: int, output_tokens: int, *, failed: bool = False, backend: str = "anthropic"
    ) -> None:
        self.state.execute(
            "INSERT INTO llm_spend(day, purpose, backend, calls, failures, input_tokens, output_tokens) VALUES (?, ?, "
            "?, 1, ?, ?, ?) "
            "ON CONFLICT(day, purpose, backend) DO UPDATE SET calls = calls + 1, failures = failures + "
            "excluded.failures, "
            "input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + "
            "excluded.output_tokens",
            (self.today(), purpose, backend, int(failed), input_tokens, output_tokens),
        )
        self.metrics.llm_tokens.labels(purpose, backend, "input").inc(input_tokens)
        self.metrics.llm_tokens.labels(purpose, backend, "output").inc(output_tokens)
        self.metrics.llm_calls.labels(purpose, backend, "error" if failed else "ok").inc()

    def by_day(self, days: int = 14) -> list[dict[str, Any]]:
        """Tokens per UTC day and purpose over the last `days` days, oldest first (the web view's chart)."""
        first = (self.now().astimezone(UTC).date() - timedelta(days=days - 1)).isoformat()
        rows = self.state.query(
            "SELECT day, purpose, SUM(input_tokens + output_tokens) AS tokens FROM llm_spend WHERE day >= ? GROUP BY "
            "day, purpose ORDER BY day",
            (first,),
        )
        return [{"day": r["day"], "purpose": r["purpose"], "tokens": int(r["tokens"])} for r in rows]

    def summary(self) -> dict[str, Any]:
        """Today's spend, by purpose (all backends) and by backend then purpose."""
        rows = self.state.query(
            "SELECT purpose, backend, calls, failures, input_tokens, output_tokens FROM llm_spend WHERE day = ?",
            (self.today(),),
        )
        by_purpose: dict[str, dict[str, int]] = {}
        by_backend: dict[str, dict[str, dict[str, int]]] = {}
        for r in rows:
            total = by_purpose.setdefault(r["purpose"], dict.fromkeys(_COUNTS, 0))
            for k in _COUNTS:
                total[k] += r[k]
            by_backend.setdefault(r["backend"], {})[r["purpose"]] = {k: r[k] for k in _COUNTS}
        used = sum(v["input_tokens"] + v["output_tokens"] for v in by_purpose.values())
        return {
            "day": self.today(),
            "tokens_used": used,
            "daily_cap": self.daily_cap,
            "cap_reached": bool(self.daily_cap) and used >= self.daily_cap,
            "by_purpose": by_purpose,
            "by_backend": by_backend,
        }
