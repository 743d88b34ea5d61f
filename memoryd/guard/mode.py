"""What happens to an act a memory forbids: `deny` (Claude Code refuses the tool call and the model reads why),
`ask` (the person is asked), `context` (the act goes on, the rule arrives with it as today), `off`.

Trigger: a session's MEMORYD_GUARD (forwarded by the hook like MEMORYD_RECALL), else the memory's `enforce:`,
else `[guard] mode`. Why: the person at the keyboard outranks a file, a file outranks the default. Outcome: one
mode per act; `[guard] mode = "off"` turns the guard off whatever the files say.
"""

from __future__ import annotations

from typing import Literal

DENY, ASK, CONTEXT, OFF = "deny", "ask", "context", "off"
Mode = Literal["deny", "ask", "context", "off"]
DEFAULT_MODE: Mode = "deny"  # docs/guard.md "Choosing the default": measured with bench/guard_bench.py and claude -p
SWITCH_OFF = ("off", "0", "false", "no")
SWITCH_MODES = (DENY, ASK, CONTEXT)


def effective_mode(config_mode: str, session_value: str | None, enforce: str) -> str:
    """The mode for one act from the session's switch, the daemon's setting and the memory's own `enforce:`."""
    session = (session_value or "").strip().lower()
    if session in SWITCH_OFF:
        return OFF
    if session in SWITCH_MODES:
        return session
    if config_mode == OFF:
        return OFF
    return enforce or config_mode
