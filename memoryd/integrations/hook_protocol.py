"""Claude Code's hook protocol as memoryd speaks it: the endpoint, the events it answers and their
budgets, the session switches a hook forwards. No imports: the hook forwarder reads this on every call."""

HOOK_PATH = "/v1/hooks/claude-code"
# The session's own switches travel in this header (the daemon's env is not the session's): native memory's,
# and MEMORYD_RECALL=off, which turns recall off for that one session.
SESSION_ENV_HEADER = "X-Claude-Code-Env"
# MEMORYD_GUARD (off, or a mode) sets the guard for that session (issue 50).
SESSION_ENV_VARS = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CLAUDE_CODE_SIMPLE", "MEMORYD_RECALL", "MEMORYD_GUARD")
RECALL_SWITCH = "MEMORYD_RECALL"
GUARD_SWITCH = "MEMORYD_GUARD"
RECALL_OFF_VALUES = ("off", "0", "false", "no")
# The tools whose calls recall answers before they run (the hooks' `matcher`, a regex over the tool name).
TOOL_MATCHER = "Bash|Edit|Write|MultiEdit|NotebookEdit|Read"  # Read: the guard keeps files a rule forbids unread

# event → (the forwarder's own deadline in seconds, the hook's timeout in Claude Code, whether Claude Code
# reads the answer). A tool call waits on PreToolUse, so its budget is the shortest.
HOOK_EVENTS: dict[str, tuple[float, int, bool]] = {
    "SessionStart": (4, 5, True),
    "UserPromptSubmit": (3, 5, True),
    "PreToolUse": (1, 3, True),
    "Stop": (2, 5, False),
    "SubagentStop": (2, 5, False),
    "PreCompact": (2, 5, False),
    "SessionEnd": (1, 2, False),
}
# The async UserPromptSubmit hook (`"async": true`): it waits for the model's pick for the prompt and hands it
# over at the turn's next tool batch. (its deadline in seconds, its timeout in Claude Code)
AWAIT_MODEL_ARG = "--await-model"
AWAIT_MODEL_QUERY = "await=model"
AWAIT_MODEL_BUDGET = (25.0, 30)

# Events whose answer carries recalled memories (nothing of it when MEMORYD_RECALL=off).
RECALL_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse"})

DOWN_NOTE = (
    "memoryd is not running, so this session gets no memories from it. Start it with "
    "`memoryd serve` in a terminal, or run it as a user service with `memoryd setup`; "
    "`memoryd doctor` checks the install."
)
STRANGER_NOTE = (
    "memoryd could not be reached: another program answers on memoryd's port ({address}) and did not prove "
    "it is this user's memoryd, so nothing was sent to it and this session gets no memories. "
    "`memoryd doctor` names the fix."
)
RECALL_OFF_NOTE = "memoryd recall is off for this session (MEMORYD_RECALL=off): no memories are injected."


def recall_off(value: str | None) -> bool:
    return (value or "").strip().lower() in RECALL_OFF_VALUES
