"""Which layout a project's memory uses: `topics` (one file per memory) or `daily-log`."""

from __future__ import annotations

from memoryd.store.memdir import MemoryDir
from memoryd.store.registry import StoreRegistry


class ProjectModes:
    """`[projects."<root>"] mode` when set for the store's project, else `[memory] mode`."""

    def __init__(self, *, stores: StoreRegistry, default: str, per_project: dict[str, dict[str, str | bool]]) -> None:
        self.stores = stores
        self.default = default
        self.per_project = per_project

    def mode_for(self, store: MemoryDir) -> str:
        root = self.stores.project_root_of(store.path)
        if root is not None:
            override = self.per_project.get(str(root), {}).get("mode")
            if override:
                return str(override)
        return self.default
