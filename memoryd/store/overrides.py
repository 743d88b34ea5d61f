"""`ProjectOverrides`: which `[projects."<root>"]` settings apply to a memory dir, found one way for every
reader (the layout mode, review before write)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memoryd.config import ProjectSettings
from memoryd.store.memdir import MemoryDir
from memoryd.store.registry import StoreRegistry


@dataclass(kw_only=True, eq=False)
class ProjectOverrides:
    """A configured project applies to the memory dir its root resolves to, so the key may be any path inside the
    project and the dir may be one found on disk before any request named the project."""

    stores: StoreRegistry
    per_project: Mapping[str, ProjectSettings]

    def for_store(self, store: MemoryDir) -> ProjectSettings:
        """The settings of every project whose memory dir this is; per key the first project that sets it wins."""
        matching = [
            s for root, s in self.per_project.items() if s.model_fields_set and self._memory_dir_of(root) == store.path
        ]
        return ProjectSettings.model_validate(
            {
                key: next((getattr(s, key) for s in matching if getattr(s, key) is not None), None)
                for key in ProjectSettings.model_fields
            }
        )

    def _memory_dir_of(self, root: str) -> Path | None:
        try:
            return self.stores.memory_dir_for(root)
        except Exception:  # a configured root that no longer resolves configures nothing
            return None
