"""Relevance: which memories an act (a prompt, a shell command, an edit) falls under. Plain functions over text,
no store: `applies*` is the matcher the daemon decides with (what a memory applies to, derived from its text,
and whether an act meets it); `features`/`match`/`judge` the fitted matcher measured beside it; every word list
lives in `data/`, read through `lexicon`. Recall (`memoryd/recall/`) indexes a store's memories with these."""
