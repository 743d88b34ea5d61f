"""The memory section of a system prompt: types, how to save, what not to save, the index."""

from __future__ import annotations

from pathlib import Path

from memoryd.store.dialect import CLAUDE_CODE, MEMORYD, Dialect
from memoryd.store.index import ServedIndex

WHAT_NOT_TO_SAVE = """## What NOT to save
- Code patterns, architecture, file paths: derivable from reading the project.
- Git history and recent changes: `git log` / `git blame` are authoritative.
- Debugging solutions: the fix is in the code, the commit message has the context.
- Anything already in CLAUDE.md files.
- Ephemeral task details: use tasks, not memory.
- Secrets of any kind (keys, tokens, passwords): memoryd refuses them."""

MEMORY_TYPES_TEXT = """## Memory types
- **user**: the user's role, goals, knowledge and preferences.
- **feedback**: corrections *and* confirmations of how you work; the body has **Why:** and **How to apply:** lines.
- **project**: ongoing work, decisions, deadlines, incidents; the body has **Why:** and **How to apply:** lines; dates are absolute (2026-03-05, never "Thursday").
- **reference**: pointers to external systems (dashboards, trackers, docs)."""  # noqa: E501 (as the agent reads it)


# How a new file is named and typed in each dialect (store/dialect.py): the text tells the folder's real naming.
_FILE_NAMING: dict[Dialect, tuple[str, str]] = {
    MEMORYD: ("`<type>_<slug>.md` (e.g. `feedback_testing-preferences.md`)", "type: feedback"),
    CLAUDE_CODE: ("`<slug>.md` in kebab case (e.g. `testing-preferences.md`)", "metadata:\n  type: feedback"),
}


def build_memory_prompt(memory_dir: Path, index: ServedIndex, dialect: Dialect = MEMORYD) -> str:
    """What an agent needs to use memory well, ending with the index as served; files named as `dialect` (the
    one the folder's new files get) names them."""
    naming, type_line = _FILE_NAMING[dialect]
    return f"""# Memory

You have a persistent, file-based memory at `{memory_dir}`. It survives compaction and sessions.
Only remember what cannot be derived from the current project state.

{MEMORY_TYPES_TEXT}

## How to save a memory
Write one Markdown file per memory in `{memory_dir}/`, named {naming}, with YAML frontmatter:

```markdown
---
name: Testing preferences
description: Use the real database in tests, never mocks (one specific line; recall reads it)
{type_line}
---
Integration tests hit a real database.

**Why:** mocked tests passed while the prod migration failed last quarter.
**How to apply:** when writing tests, start the test database; do not mock the ORM.
```

Update an existing file rather than creating a near-duplicate. Never write memory content into
MEMORY.md: it is an index that memoryd rebuilds. (`memoryd save` does the same from a shell.)

{WHAT_NOT_TO_SAVE}

## Current memory index (MEMORY.md)
{index.content.rstrip() if index.content.strip() else "(No memories saved yet.)"}
"""
