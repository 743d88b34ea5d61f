"""Stale memories: names a memory makes that its project no longer has (checked against git)."""

from memoryd.stale.service import Finding, StaleChecker

__all__ = ["Finding", "StaleChecker"]
