"""What the CLI prints with --json that is no daemon answer, as TypedDicts: `--json-schema` is derived
from them (memoryd/cli/shapes.py) and mypy checks the CLI's writers against them. `closed=True`: no
other key may appear. Types only: writers import them under TYPE_CHECKING, so no command starts slower."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

ServiceManager = Literal["systemd", "launchd"]
SetupAction = Literal["done", "already", "would", "skipped", "failed"]
GateUnit = Literal["hours", "seconds", "sessions", "pid", ""]


class StopResult(TypedDict, closed=True):
    stopped: Literal[True]
    pid: int


class InstallServiceResult(TypedDict, closed=True):
    """Written by memoryd/service/units.py::install_service."""

    manager: ServiceManager
    path: str
    unit: str
    dry_run: bool
    config_added: list[str]
    secrets_file: str | None
    secrets: list[str]
    commands: list[str]
    ran: list[str]


class UninstallServiceResult(TypedDict, closed=True):
    """Written by memoryd/service/units.py::uninstall_service."""

    manager: ServiceManager
    path: str
    dry_run: bool
    installed: bool
    commands: list[str]
    ran: list[str]
    failed: list[str]
    removed: list[str]


class ForgetResult(TypedDict, closed=True):
    deleted: str


class HooksBlock(TypedDict, closed=True):
    """`hooks`: the block to paste into a Claude Code settings file (memoryd/integrations/claude_code.py::hooks_block)."""  # noqa: E501 (the schema's description, one line)

    hooks: dict[str, Any]


class HooksRemoved(TypedDict):
    """`hooks --uninstall`: what changed in the settings file (claude_code.py::uninstall_hooks)."""

    path: str
    changed: bool
    backup: str | None


class HooksInstalled(HooksRemoved):
    """`hooks --install` (claude_code.py::install_hooks): also the events now hooked."""

    events: list[str]


class CheckResult(TypedDict, closed=True):
    name: str
    ok: bool
    detail: str
    fix: str


class DoctorResult(TypedDict, closed=True):
    ok: bool
    checks: list[CheckResult]


class DoctorSummary(TypedDict, closed=True):
    """`setup`'s closing doctor run: only the failed checks, and how many ran."""

    ok: bool
    failed: list[CheckResult]
    checks: int


class SetupStep(TypedDict, closed=True):
    step: str
    action: SetupAction
    detail: str
    foreground: NotRequired[str]  # the command to run the daemon by hand, when no service could be installed
    command: NotRequired[str]  # the command that finishes the step (a pending import)


class SetupResult(TypedDict, closed=True):
    dry_run: bool
    steps: list[SetupStep]
    doctor: DoctorSummary | None


class MemoryPlace(TypedDict, closed=True):
    """A folder holding memories: `uninstall` says where they stay (in_home: `--purge` removes it with MEMORYD_HOME)."""

    path: str
    memories: int
    in_home: bool


class UninstallResult(TypedDict, closed=True):
    """`uninstall`: each step as setup reports its own, where the memories are, and the command that removes the
    package (memoryd/cli/uninstall.py)."""

    dry_run: bool
    purge: bool
    steps: list[SetupStep]
    memories: list[MemoryPlace]
    package: str


class ConfigSetting(TypedDict, closed=True):
    setting: str
    value: Any
    source: str


class ConfigResult(TypedDict, closed=True):
    path: str
    exists: bool
    settings: list[ConfigSetting]


class ConfigInitResult(TypedDict, closed=True):
    path: str
    written: Literal[True]


class GateResult(TypedDict, closed=True):
    """A dream gate as `dream status` prints it: numbers (or null) with their unit."""

    name: str
    passes: bool
    value: float | None
    threshold: float | None
    unit: GateUnit
    detail: str
