"""`Why`: what recall says about one memory it weighed for a prompt — injected, or left out just
under the cut — so a person can see why the agent was given it. Plain data; the ranker fills it."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable

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
        )


def matched_words(query: str, texts: Iterable[str]) -> tuple[str, ...]:
    """The query's content words (as typed, in order, once each) whose stem occurs in the texts."""
    have = {stem(w) for text in texts for w in words(text) if w not in STOPWORDS}
    return tuple(dict.fromkeys(w for w in words(query) if w not in STOPWORDS and stem(w) in have))
