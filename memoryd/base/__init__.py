"""The base layer that every other package builds on: the error tree and the named limits, the clock,
checks on outside values, text, files, secrets and similarity, dates, the state DB, metrics and live
activity. It imports nothing of memoryd outside itself."""
