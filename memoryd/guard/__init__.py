"""The guard (issue 50): a memory that forbids an act holds it, and tells the agent what to do instead."""
