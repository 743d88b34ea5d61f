"""Which layout a project's memory uses: `topics` (one file per memory) or `daily-log`."""

from __future__ import annotations

from collections.abc import Mapping

from memoryd.config import ProjectSettings
from memoryd.store.memdir import MemoryDir
from memoryd.store.overrides import ProjectOverrides
from memoryd.store.registry import StoreRegistry


class ProjectModes:
    """`[projects."<root>"] mode` when set for the store's project, else `[memory] mode`."""

    def __init__(self, *, stores: StoreRegistry, default: str, per_project: Mapping[str, ProjectSettings]) -> None:
        self.default = default
        self.overrides = ProjectOverrides(stores=stores, per_project=per_project)

    def mode_for(self, store: MemoryDir) -> str:
        return self.overrides.for_store(store).mode or self.default
