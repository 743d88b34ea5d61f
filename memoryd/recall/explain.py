"""`Why`: what recall says about one memory it weighed for a prompt — injected, or left out just
under the cut — so a person can see why the agent was given it. Plain data; the ranker fills it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from memoryd.base.text import STOPWORDS, stem, words


@dataclass(frozen=True)
class Why:
    filename: str
    name: str
    score: float
    injected: bool  # False: left out just under the cut
    terms: tuple[str, ...] = ()  # query words the memory matched
    paths: tuple[str, ...] = ()  # paths / identifiers / file kinds matched
    dense: float | None = None  # cosine similarity with the prompt, when the model is on
    context: tuple[str, ...] = ()  # session-context items (recent files/commands) that contributed
    confidence: float | None = None  # the confidence rule's estimate (recall.decide)
    rule: str = ""  # which rule injected it: "close match" | "confident" ("" when left out)
    cover: float | None = None  # the close-match rule: the share of the prompt's word weight (IDF) this memory holds
    cover_needed: float | None = None  # ... and the share a close match needs
    confidence_min: float | None = None  # the confidence rule's floor (recall.decide.CONFIDENCE_MIN)
    held: str = ""  # the guard (issue 50): deny | ask | context when this memory's forbid trigger met the act

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Why:
        return cls(
            filename=str(data["filename"]),
            name=str(data.get("name", "")),
            score=float(data.get("score") or 0.0),
            injected=bool(data.get("injected")),
            terms=tuple(data.get("terms") or ()),
            paths=tuple(data.get("paths") or ()),
            dense=data.get("dense"),
            context=tuple(data.get("context") or ()),
            confidence=data.get("confidence"),
            rule=str(data.get("rule") or ""),
            cover=data.get("cover"),
            cover_needed=data.get("cover_needed"),
            confidence_min=data.get("confidence_min"),
            held=str(data.get("held") or ""),
        )


def as_typed(text: str, stems: Iterable[str]) -> tuple[str, ...]:
    """The words of `text` (lowercased, in order, once each) whose stem is among `stems`: what a person
    reads instead of `databas, migrat`; a stem no word of `text` gives stays as it is, last."""
    stems = tuple(stems)
    wanted, typed = set(stems), dict[str, str]()
    for w in words(text):
        if w not in STOPWORDS and (s := stem(w)) in wanted:
            typed.setdefault(s, w)
    return tuple(typed.values()) + tuple(s for s in stems if s not in typed)


def matched_words(query: str, texts: Iterable[str]) -> tuple[str, ...]:
    """The query's content words (as typed, in order, once each) whose stem occurs in the texts."""
    have = {stem(w) for text in texts for w in words(text) if w not in STOPWORDS}
    return tuple(dict.fromkeys(w for w in words(query) if w not in STOPWORDS and stem(w) in have))
