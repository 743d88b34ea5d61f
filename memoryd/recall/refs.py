"""`MemoryRef`: which store a recall candidate is in — the project's, its team folder, or the user's global
memories — and its file name. The one home of a memory's origin; its `key` is the name the side-query's manifest
shows and the model answers with (a '/' would be cut by `parse_selection`, hence `team:` and `global:`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Origin = Literal["personal", "team", "global"]
KEY_PREFIX: dict[Origin, str] = {"personal": "", "team": "team:", "global": "global:"}


@dataclass(frozen=True)
class MemoryRef:
    origin: Origin
    filename: str

    @property
    def key(self) -> str:
        return KEY_PREFIX[self.origin] + self.filename

    @classmethod
    def of(cls, key: str) -> MemoryRef:
        """The ref a candidate key (or a model's answer) names."""
        for origin, prefix in KEY_PREFIX.items():
            if prefix and key.startswith(prefix):
                return cls(origin, key[len(prefix) :])
        return cls("personal", key)
