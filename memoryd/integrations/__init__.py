"""Adapters between agents' formats and memoryd's core (Claude Code first)."""
