"""Deterministic session notes without an LLM: what can be read straight off the transcript."""

from __future__ import annotations

from memoryd.transcripts.parser import Entry

_PATH_KEYS = ("file_path", "notebook_path", "path")
_LINE_CHARS = 200


def _one_line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def build_sections(entries: list[Entry]) -> dict[str, str]:
    """Title and task from the prompts, files from tool calls, errors from failed tool results, worklog from turns."""
    prompts = [e for e in entries if e.is_prompt and not e.is_sidechain]
    tool_names: dict[str, str] = {}
    files: dict[str, list[str]] = {}
    commands: list[str] = []
    errors: list[str] = []
    worklog: list[str] = []
    last_prose = ""
    turn_tools = 0
    for e in entries:
        if e.is_prompt and not e.is_sidechain:
            worklog.append(f"- {e.timestamp[:16].replace('T', ' ')} user: {_one_line(e.text, 120)}")
            turn_tools = 0
        for use in e.tool_uses:
            tool_names[use.id] = use.name
            turn_tools += 1
            for key in _PATH_KEYS:
                value = use.input.get(key)
                if isinstance(value, str) and value:
                    names = files.setdefault(value, [])
                    if use.name not in names:
                        names.append(use.name)
            command = use.input.get("command")
            if use.name == "Bash" and isinstance(command, str) and command.strip():
                commands.append(f"- `{_one_line(command, 160)}`")
        for result in e.tool_results:
            if result.is_error:
                tool = tool_names.get(result.tool_use_id, "tool")
                errors.append(f"- {tool}: {_one_line(result.text or 'failed', 200)}")
        if e.kind == "assistant" and e.text.strip():
            last_prose = e.text.strip()
            worklog.append(f"- assistant: {_one_line(e.text, 120)}" + (f" ({turn_tools} tool calls)" if turn_tools else ""))
    sections: dict[str, str] = {}
    if prompts:
        sections["Session Title"] = _one_line(prompts[0].text.splitlines()[0], 80)
        task = prompts[0].text.strip()
        later = [f"- {_one_line(p.text)}" for p in prompts[1:]]
        sections["Task specification"] = task + ("\n\nLater requests:\n" + "\n".join(later) if later else "")
    if last_prose:
        sections["Current State"] = "Last assistant message: " + _one_line(last_prose, 600)
    if files:
        sections["Files and Functions"] = "\n".join(f"- {path} ({', '.join(names)})" for path, names in files.items())
    if commands:
        sections["Workflow"] = "\n".join(dict.fromkeys(commands))
    if errors:
        sections["Errors & Corrections"] = "\n".join(errors)
    if worklog:
        sections["Worklog"] = "\n".join(worklog)
    return sections
