"""Which memories of one store an act falls under: the candidates its features look up (and, for a prompt,
the lexical ranking's best), each scored by the matcher with the store's lexical and dense similarity.
The daemon and `bench/relevance_bench.py` both call `judge`, so the figures are the daemon's."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Protocol

from memoryd.base.text import query_terms, terms
from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_match import meets
from memoryd.relevance.features import named_products
from memoryd.relevance.match import Context, Match, Weights, inputs, score, shared
from memoryd.relevance.memory import Act, Memory
from memoryd.relevance.triggers import Triggers

TOOL_OF = {"edit": "Edit", "command": "Bash"}  # the Claude Code tool an act's channel is
PROMPT_LEXICAL_DEPTH = 10  # a prompt's candidates beyond its features: the lexical ranking's best this many
Cosines = Callable[[list[str]], dict[str, float]]  # filenames -> the prompt's cosine to each (those embedded)


class LexicalIndex(Protocol):
    """What the matcher asks of a store's lexical index (recall's `LexicalIndex`), so relevance needs no recall."""

    def rank(self, query: str, *, k: int = 10, gate: bool = True) -> list[tuple[str, float]]: ...

    def matches(self, q_terms: set[str], filenames: list[str]) -> tuple[dict[str, float], dict[str, list[str]]]: ...

    def present(self, idf: dict[str, float]) -> float: ...


def judge(
    act: Act,
    memories: Mapping[str, Memory],
    triggers: Triggers,
    index: LexicalIndex,
    *,
    cosines: Cosines | None = None,
    exclude: Collection[str] = (),
    weights: Weights | None = None,
    trace: dict[str, dict[str, float]] | None = None,
    written: Mapping[str, AppliesTo] | None = None,
) -> list[Match]:
    """Every candidate's match, most probable first (the caller keeps those at the threshold or above);
    `trace` receives each candidate's inputs (the fit's rows). A memory whose `applies_to` (`written`) the act
    meets is a match with probability 1: what a person or a model wrote is certain, not scored."""
    certain = explicit(act, written or {}, exclude)
    candidates = triggers.candidates(act) - certain.keys()
    bm25: dict[str, float] = {}
    if act.channel == "prompt":
        ranked = index.rank(act.text, k=PROMPT_LEXICAL_DEPTH, gate=False)
        best = max((s for _, s in ranked), default=0.0) or 1.0
        bm25 = {fn: s / best for fn, s in ranked}
        candidates |= bm25.keys()
    names = sorted(fn for fn in candidates if fn in memories and fn not in exclude)
    if not names:
        return sorted(certain.values(), key=lambda m: m.memory)
    idf, held = index.matches(set(query_terms(act.text)), names)
    total = sum(idf.values()) or 1.0
    dense = cosines(names) if cosines is not None and act.channel == "prompt" else {}
    unknown = act.channel == "prompt" and names_unknown(index, act.text)
    out: list[Match] = list(certain.values())
    for fn in names:
        mem = memories[fn]
        common = shared(mem, act)
        ctx = Context(
            lexical=sum(idf[t] for t in held[fn]) / total,
            bm25=bm25.get(fn, 0.0),
            dense=dense.get(fn),
            unknown=unknown,
            rarity={f: triggers.holding(f) for f in common},
        )
        out.append(score(fn, mem, act, ctx, weights, common))
        if trace is not None:
            trace[fn] = inputs(mem, act, common, ctx)
    out.sort(key=lambda m: (-m.probability, m.memory))
    return out


def explicit(act: Act, written: Mapping[str, AppliesTo], exclude: Collection[str] = ()) -> dict[str, Match]:
    """The memories whose written `applies_to` a tool act meets (its paths, commands, tools), each certain."""
    if act.channel == "prompt" or not written:
        return {}
    tool = TOOL_OF[act.channel]
    path = act.paths[0] if act.channel == "edit" and act.paths else ""
    command = act.text if act.channel == "command" else ""
    out: dict[str, Match] = {}
    for fn, a in written.items():
        if fn not in exclude and a and (why := meets(a, tool, path, command)):
            out[fn] = Match(fn, 1.0, (("explicit", why),))
    return out


def names_unknown(index: LexicalIndex, prompt: str) -> bool:
    """The prompt names a product no memory of this store mentions ("a TypeORM migration" asked of a Prisma
    project): one of the matcher's inputs, never a veto on its own."""
    return any((ts := terms(name)) and not index.present({t: 1.0 for t in ts}) for name in named_products(prompt))
