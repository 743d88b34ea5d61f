"""`Triggers`: which memories an act could match, looked up by its features (a posting list per feature,
a glob filed under its most specific literal folder or its file kind), so 20,000 memories cost a few dict
reads per act, not a match each; and how many memories hold each feature (the matcher's `rare` input)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from memoryd.base.globs import is_wild
from memoryd.relevance.features import MET_BY, Feature, file_kind
from memoryd.relevance.lexicon import words
from memoryd.relevance.memory import Act, Memory

ALWAYS = ("always", "")  # globs with no literal folder nor kind (`**/.env*`): checked against every path


@dataclass
class Triggers:
    postings: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))

    @classmethod
    def of(cls, memories: dict[str, Memory]) -> Triggers:
        t = cls()
        for fn, mem in memories.items():
            t.add(fn, mem)
        t.postings = dict(t.postings)
        return t

    def add(self, fn: str, mem: Memory) -> None:
        post = self.postings
        for kind, value in mem.features:
            post[(kind, value)].add(fn)
            if kind in MET_BY:
                post[(MET_BY[kind], value)].add(fn)
            elif kind == "code_forbidden":
                post[("name", value)].add(fn)
        for glob in mem.globs:
            post[glob_key(glob)].add(fn)
            post[("place", glob)].add(fn)
        for name in mem.names:
            post[("name", name)].add(fn)

    def candidates(self, act: Act) -> set[str]:
        """Every memory that shares a feature with the act (the matcher scores only these)."""
        get = self.postings.get
        out: set[str] = set(get(ALWAYS, ())) if act.paths else set()
        for kind, value in act.features:
            if kind in ("program", "mention", "runner"):
                out |= get(("program", value), set()) | get(("mention", value), set())
            elif kind in ("import", "call", "segment"):
                out |= get(("name", value), set())
            elif kind != "path":
                out |= get((kind, value), set())
        for path in act.paths:
            for segment in path.removeprefix("./").split("/"):
                out |= get(("seg", segment), set())
            out |= get(("ext", file_kind(path)), set())
        return out

    def holding(self, feature: Feature) -> int:
        """How many memories hold a feature (a `place` by its glob)."""
        kind, value = feature
        if kind in ("import", "call", "segment", "code_forbidden"):
            return len(self.postings.get(("name", value), ()))
        if kind in MET_BY:
            return len(self.postings.get((MET_BY[kind], value), ()))
        if kind in ("mention", "runner", "runner_forbidden"):
            return len(self.postings.get(("program", value), set()) | self.postings.get(("mention", value), set()))
        return len(self.postings.get(feature, ()))


def glob_key(glob: str) -> tuple[str, str]:
    """The posting a glob is filed under: its most specific literal folder or name (a generic folder such as
    `src` only when it has nothing else), else the kind of the files it names (`**/*.generated.ts`: ts)."""
    parts = [p for p in glob.split("/") if p and p != "**"]
    literal = [p for p in parts if not is_wild(p)]
    generic = words().generic_dirs
    specific = [p for p in literal if p not in generic]
    if specific:
        return ("seg", specific[-1])
    kind = file_kind(parts[-1]) if parts else ""
    if kind and not is_wild(kind):
        return ("ext", kind)
    return ("seg", literal[-1]) if literal else ALWAYS
