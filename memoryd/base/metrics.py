"""Prometheus metrics, one registry per daemon (so tests can run several side by side)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_SUBSECOND = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1)  # every latency's buckets up to a second


def _latency(name: str, doc: str, label: str, registry: CollectorRegistry, *, top: tuple[float, ...]) -> Histogram:
    """A latency histogram by one label: the shared sub-second buckets, then `top` (what is slow for that kind)."""
    return Histogram(name, doc, [label], registry=registry, buckets=_SUBSECOND + top)


class Metrics:
    """Every metric memoryd exports; parts increment the ones they own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.http_requests = Counter(
            "memoryd_http_requests", "HTTP requests by route and status.", ["route", "status"], registry=r
        )
        self.http_latency = _latency("memoryd_http_request_seconds", "HTTP request latency.", "route", r, top=(2.5, 5))
        self.memories_written = Counter(
            "memoryd_memories_written", "Memory files written, by source.", ["source"], registry=r
        )
        self.memories_deleted = Counter("memoryd_memories_deleted", "Memory files deleted.", registry=r)
        self.secrets_refused = Counter(
            "memoryd_secrets_refused", "Writes refused because they held a secret.", ["source"], registry=r
        )
        self.recalls = Counter("memoryd_recalls", "Recall requests by method.", ["method"], registry=r)
        self.recall_latency = _latency("memoryd_recall_seconds", "Recall latency.", "method", r, top=(2, 3))
        self.llm_tokens = Counter(
            "memoryd_llm_tokens",
            "LLM tokens by purpose, backend and direction.",
            ["purpose", "backend", "direction"],
            registry=r,
        )
        self.llm_calls = Counter(
            "memoryd_llm_calls",
            "LLM calls by purpose, backend and outcome.",
            ["purpose", "backend", "outcome"],
            registry=r,
        )
        self.jobs = Counter(
            "memoryd_jobs", "Background jobs finished, by kind and status.", ["kind", "status"], registry=r
        )
        self.dream_runs = Counter("memoryd_dream_runs", "Consolidation runs by outcome.", ["status"], registry=r)
        self.transcript_lines = Counter(
            "memoryd_transcript_lines", "Transcript lines read, by outcome.", ["outcome"], registry=r
        )
        self.uptime = Gauge("memoryd_start_time_seconds", "Unix time the daemon started.", registry=r)

    def render(self) -> bytes:
        return generate_latest(self.registry)
