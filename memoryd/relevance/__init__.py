"""Relevance: which memories an act (a prompt, a shell command, an edit) falls under, and which acts a
memory's rule forbids. Acts and memories are read into one feature space; word lists live in `data/`."""
