"""Which memories a prompt gets: the local ranking (BM25F fused with the dense model's cosines
when it is loaded, over the prompt and the session's recent files and commands), then two ways
to speak, each with its reasons kept for people:

- the close-match rule (chat questions worded like the fact): one of the best memories holds
  enough of the prompt's informative words and is close in meaning -> the best five;
- the confidence rule (coding tasks, whose words rarely repeat the rule's): each of the best five
  whose fitted confidence clears a floor, so a memory that fits a task class is injected alone.

A plain function over one store's indexes, so the daemon and the benchmark run the same code.
Every constant was measured on the coding dev set and LoCoMo dev (bench/RESULTS.md §6).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memoryd.base.text import query_terms, terms
from memoryd.recall.dense import FUSION_DEPTH, Backend, DenseIndex, fuse
from memoryd.recall.explain import Why, as_typed
from memoryd.recall.ranker import FIT_DEPTH, MIN_MATCH_IDF, MIN_MATCH_SHARE, LexicalIndex
from memoryd.relevance.applies_derive import CAMEL_NAME, named_tech

CONTEXT_ITEMS = 12  # the session's most recent paths and commands added to the query (lexically)
# The confidence rule: logistic weights over (1, store share, match share, match mass / 10 (at most 3),
# (cosine of the prompt alone - 0.85) * 10, BM25F / best, fused score - best fused, is the best), fitted on the coding
# dev split by `bench/coding_eval.py --fit`; a memory is injected at CONFIDENCE_MIN or above.
CONFIDENCE_WEIGHTS = (-13.2908, 4.773, 1.1834, 1.2528, 2.7859, 6.9498, -4.8422, -0.513)
CONFIDENCE_MIN = 0.15
COSINE_CENTRE = 0.85
# The close-match rule injects, beyond the best memory, only those holding at least this many of the
# prompt's informative words (or confident on their own): a coding prompt's best five otherwise carry
# four that share one word with it ("start postgres locally" got five, issue 38). LoCoMo dev recall@5
# 0.777 -> 0.767; coding dev precision 0.18 -> 0.28 (bench/RESULTS.md §10).
CLOSE_MIN_TERMS = 2
CLOSE_SURE_TERMS = 3
# A close match not close in meaning (below the model's close_similarity), in on its words alone, must also reach this
# confidence: generic commit subjects share three generic words with some memory of any store (issue 49;
# bench/relevance.md "Prompt abstention").
CLOSE_WORDS_MIN = 0.08
# With a model backend, the side-query is skipped when the local ranking leaves nothing to decide:
ELSEWHERE = "the prompt names a product no memory of this store mentions"
NOT_CONFIDENT = "no memory is close enough to the prompt or confident enough for the task"
MODEL_FLOOR = 0.05  # no candidate's confidence reaches this and no close match: clearly silent
MODEL_SURE = 0.60  # every injected memory is a close match at least this confident: clearly sure


@dataclass
class Decision:
    """The ranked candidates (best first), which of them to inject, and why."""

    ranked: list[tuple[str, float]] = field(default_factory=list)
    injected: list[str] = field(default_factory=list)
    silence: str = ""  # why nothing is injected ("" when something is)
    why: dict[str, Why] = field(default_factory=dict)  # the best candidates, injected or left out
    features: dict[str, tuple[float, ...]] = field(
        default_factory=dict
    )  # the confidence rule's inputs (bench/coding_eval.py --fit)

    @property
    def chosen(self) -> list[tuple[str, float]]:
        scores = dict(self.ranked)
        return [(fn, scores[fn]) for fn in self.injected]


def query_text(prompt: str, context: Sequence[str] = ()) -> str:
    """The text ranked: the prompt, then the session's recent paths and commands (paths split at
    '/', '.', '_' and camelCase by the tokeniser)."""
    recent = list(dict.fromkeys(reversed(context)))[:CONTEXT_ITEMS]
    return prompt if not recent else prompt + "\n" + "\n".join(_spread_camel(item) for item in recent)


def context_items(paths: Sequence[str], commands: Sequence[str], cwd: str) -> list[str]:
    """The session's recent paths (relative to the project, where they are inside it) and commands, most recent last."""
    root = cwd.rstrip("/") + "/"
    return [p[len(root) :] if p.startswith(root) else p for p in paths] + list(commands)


def with_parts(prompt: str) -> str:
    """The prompt with the words of its code names added (`BookingRepository` also as "Booking Repository"),
    so a rule about repositories meets a prompt naming one."""
    parts = [_spread_camel(name) for name in CAMEL_NAME.findall(prompt)]
    return prompt if not parts else prompt + "\n" + " ".join(parts)


def _spread_camel(text: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)


def confidence(features: Sequence[float]) -> float:
    z = sum(w * x for w, x in zip(CONFIDENCE_WEIGHTS, features, strict=True))
    return 1.0 / (1.0 + math.exp(-z))


def decide(
    index: LexicalIndex,
    dense: DenseIndex | None,
    backend: Backend | None,
    prompt: str,
    *,
    context: Sequence[str] = (),
    exclude: set[str] | frozenset[str] = frozenset(),
    k: int = 5,
    query_vector: Any = None,
) -> Decision:
    """Rank the store's memories for `prompt` (with the session's `context`) and decide which of the
    best `k` to inject."""
    if backend is None or dense is None or not len(dense):
        return _decide_lexical(index, prompt, query_text(prompt, context), context, exclude, k)
    said = prompt  # as typed: what the embedding reads and names_unknown judges
    prompt = with_parts(prompt)
    text = query_text(prompt, context)
    lexical = index.rank(text, exclude=exclude, k=FUSION_DEPTH, gate=False)
    if not lexical:  # no informative word is in the store: the dense list must not smuggle something in
        return Decision(silence="no word of the prompt is in this store")
    # the prompt alone: each context line would add ~20 ms to the embedding
    vector = backend.query(said) if query_vector is None else query_vector
    fused, cos = fuse(lexical, dense.similarities(vector), weight=backend.fusion_weight, exclude=exclude)
    fused = [(fn, round(score, 4)) for fn, score in fused if fn in index][: max(k, FIT_DEPTH)]
    if not fused:
        return Decision(silence="no memory matched the prompt")
    lex = dict(lexical)
    best_lex = max(lex.values()) or 1.0
    prompt_terms, text_terms = _prompt_terms(index, said, prompt), set(query_terms(text))  # the first among the second
    names = [fn for fn, _ in fused]
    idf, text_held = index.matches(text_terms, names)
    text_mass = sum(idf.values())
    store_share = index.present(idf)
    # the close-match rule, on the prompt's own words (as tuned on chat QA: bench/RESULTS.md §1, §4)
    with index.lock:
        close = index.fits(prompt_terms, names[:FIT_DEPTH])
    known = [cos[fn] for fn in names[:FIT_DEPTH] if fn in cos]
    close = close and (not known or max(known) >= backend.min_similarity)
    # the prompt names a product this store never mentions: maybe about another stack, so only strong evidence
    # speaks ("generate a TypeORM migration" asked of a Prisma project; moments foreign silence 0.875 -> 0.917)
    elsewhere = names_unknown(index, said)
    need, cover = _cover(index, prompt_terms, names[:k])
    item_terms = [(item, set(query_terms(_spread_camel(item)))) for item in context]

    why: dict[str, Why] = {}
    features: dict[str, tuple[float, ...]] = {}
    injected: list[str] = []
    top = fused[0][1]
    for rank, (fn, score) in enumerate(fused[:k]):
        held = set(text_held[fn])
        mass = sum(idf[t] for t in held)
        x = _features(
            store_share, mass, text_mass, cos.get(fn, COSINE_CENTRE), lex.get(fn, 0.0) / best_lex, score - top, rank
        )
        features[fn] = x
        sure_of, matched = confidence(x), bool(held)  # matched: holds an informative word of the prompt or context
        in_prompt = tuple(t for t in text_held[fn] if t in prompt_terms)
        near = _near(rank, sure_of, len(in_prompt), cos.get(fn, COSINE_CENTRE), backend)
        strong = len(in_prompt) >= CLOSE_SURE_TERMS and cos.get(fn, 0.0) >= backend.close_similarity  # not by chance
        rule = _rule(elsewhere=elsewhere, close=close and near, matched=matched, sure_of=sure_of, strong=strong)
        if rule:
            injected.append(fn)
        why[fn] = Why(
            filename=fn,
            name="",
            score=score,
            injected=bool(rule),
            terms=as_typed(prompt, in_prompt),
            paths=as_typed(text, sorted(held - set(in_prompt))),
            dense=round(cos[fn], 4) if fn in cos else None,
            context=tuple(item for item, ts in item_terms if ts & held)[:5],
            confidence=round(sure_of, 3),
            rule=rule,
            cover=cover.get(fn),
            cover_needed=need,
            confidence_min=CONFIDENCE_MIN,
        )
    silence = "" if injected else ELSEWHERE if elsewhere else NOT_CONFIDENT
    return Decision(fused, injected, silence, why, features)


def _prompt_terms(index: LexicalIndex, said: str, prompt: str) -> set[str]:
    """The prompt's informative words, with its code names' parts only where the store knows them (the parts
    "git hub" never dilute a prompt naming GitHub)."""
    return set(query_terms(said)) | {t for t in query_terms(prompt) if index.present({t: 1.0})}


def _near(rank: int, sure_of: float, words: int, cosine: float, backend: Backend) -> bool:
    """Whether a candidate is near enough for the close-match rule: the best, confident, or holding two of the
    prompt's words; and close in meaning too, or holding three and confident enough (a shared word is not a shared
    subject)."""
    near = rank == 0 or sure_of >= CONFIDENCE_MIN or words >= CLOSE_MIN_TERMS
    by_words = words >= CLOSE_SURE_TERMS and sure_of >= CLOSE_WORDS_MIN
    return near and (cosine >= backend.close_similarity or by_words)


def _decide_lexical(
    index: LexicalIndex,
    prompt: str,
    text: str,
    context: Sequence[str],
    exclude: set[str] | frozenset[str],
    k: int,
) -> Decision:
    """Without an embedding model: the lexical ranking's gated best, each a close match (with a product the store
    never mentions in the prompt, only those holding three of its words: `_rule`)."""
    ranked = (
        index.rank(prompt, exclude=exclude, k=k)
        if not context
        else _lexical_with_context(index, prompt, text, exclude, k)
    )
    if ranked and names_unknown(index, prompt):
        _, held = index.matches(set(query_terms(prompt)), [fn for fn, _ in ranked])
        ranked = [(fn, score) for fn, score in ranked if len(held[fn]) >= CLOSE_SURE_TERMS]
        if not ranked:
            return Decision(silence=ELSEWHERE)
    need, cover = _cover(index, set(query_terms(prompt)), [fn for fn, _ in ranked])
    why = {
        fn: Why(
            filename=fn, name="", score=score, injected=True, rule="close match", cover=cover.get(fn), cover_needed=need
        )
        for fn, score in ranked
    }
    return Decision(ranked, [fn for fn, _ in ranked], "" if ranked else "no memory matched the prompt", why)


def _features(
    store_share: float, mass: float, text_mass: float, cosine: float, lex_share: float, behind: float, rank: int
) -> tuple[float, ...]:
    """The confidence model's inputs for one candidate (see CONFIDENCE_WEIGHTS), in its order."""
    return (
        1.0,
        store_share,
        mass / text_mass if text_mass else 0.0,
        min(mass, 30.0) / 10,
        (cosine - COSINE_CENTRE) * 10,
        lex_share,
        behind,
        float(rank == 0),
    )


def _rule(*, elsewhere: bool, close: bool, matched: bool, sure_of: float, strong: bool = False) -> str:
    """Which rule gives a candidate: the close match (the prompt's words covered, and this one near the top), else
    the fitted confidence. A prompt naming a product the store never mentions may be about another stack: it
    weakens the weak evidence only, so then only a close match holding three of the prompt's words and close in
    meaning speaks (what
    the prompt names outright, a path, a program, code, is met by `applies_index.prompt_picks`, never silenced)."""
    if not matched:
        return ""
    if elsewhere:
        return "close match" if close and strong else ""
    if close:
        return "close match"
    return "confident" if sure_of >= CONFIDENCE_MIN else ""


def names_unknown(index: LexicalIndex, prompt: str) -> bool:
    """The prompt names a product no memory of this store mentions ("a TypeORM migration" asked of a
    Prisma project): maybe about another stack, where sharing a generic word with a memory is no match."""
    return any((ts := terms(name)) and not index.present({t: 1.0 for t in ts}) for name in named_tech(prompt))


def _cover(index: LexicalIndex, q_terms: set[str], names: list[str]) -> tuple[float | None, dict[str, float]]:
    """For people: the share of the prompt's word weight each memory holds, and the share the close-match
    rule needs (`LexicalIndex.fits`), both rounded; (None, {}) when the prompt has no informative word."""
    idf, held = index.matches(q_terms, names)
    total = sum(idf.values())
    if not total:
        return None, {}
    need = min(MIN_MATCH_SHARE * total, MIN_MATCH_IDF) / total
    return round(need, 3), {fn: round(sum(idf[t] for t in held[fn]) / total, 3) for fn in names}


def _lexical_with_context(
    index: LexicalIndex, prompt: str, text: str, exclude: set[str] | frozenset[str], k: int
) -> list[tuple[str, float]]:
    """Without the dense model: BM25F over the prompt and its context, gated on the prompt's own words."""
    ranked = index.rank(text, exclude=exclude, k=k, gate=False)
    with index.lock:
        fits = index.fits(set(query_terms(prompt)), [fn for fn, _ in ranked[:FIT_DEPTH]])
    return ranked if fits else []
