"""The type of each command's --json output, the one home of its shape: the daemon's answer as the API
models it (memoryd/api/models.py), narrowed where the contract names the values and grown by the keys
a command adds; or what the CLI writes itself (memoryd/cli/results.py). Imports the whole API: only
the schema generator (memoryd/cli/schemas.py) reads this module."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from memoryd.api.dream_models import CancelOut, DreamStatusOut, RunOut, RunsOut, RunStartedOut, UndoOut
from memoryd.api.models import (
    ErrorBody,
    ErrorDetail,
    IndexOut,
    MemoryListOut,
    MemoryOut,
    PromptOut,
    RecallLogEntryOut,
    RecallOut,
    SearchOut,
    StatusOut,
)
from memoryd.api.routes.backfill import BackfillProgress, BackfillStarted
from memoryd.api.routes.guard import GuardOut
from memoryd.cli.results import (
    ConfigInitResult,
    ConfigResult,
    DoctorResult,
    ForgetResult,
    GateResult,
    HooksBlock,
    HooksInstalled,
    HooksRemoved,
    InstallServiceResult,
    SetupResult,
    StopResult,
    UninstallResult,
    UninstallServiceResult,
)

# it names InvalidFileOut before models.py defines it: resolve that before a subclass inherits the field
StatusOut.model_rebuild()


class StatusResult(StatusOut):
    """`status`: the daemon's status, plus where its log is and where this project's memory lives."""

    mode: Literal["llm", "offline"]
    log_file: str
    memory_location: dict[str, Any] = Field(
        description="This project's memory dir, Claude Code's, and whether they are one (or {error})."
    )


class SaveResult(MemoryOut):
    """`save` answers the memory as `show` does, plus the file written and whether it is new."""

    created: str = Field(
        "", description="The frontmatter's created stamp; absent after `save --team` (the team answer has only a flag)."
    )
    path: str = Field(description="The file written.")
    new: bool = Field(description="True when the file was created, false for an update.")
    will_stop: str = Field("", description='What the guard holds for it: "will stop: npm, npx — use pnpm".')
    reaches: str = Field(
        "", description='The acts recall brings it to ("edits under src/payments/, commands npm"); absent after --team.'
    )


class RecallResult(RecallOut):
    method: Literal["llm", "local", "skipped"]
    explain: RecallLogEntryOut | None = Field(
        None, description="With --explain: this recall's log entry (null when it is not in the log)."
    )


class DreamStatusResult(DreamStatusOut):
    gates: list[GateResult]  # type: ignore[assignment]  # typed by the CLI (dream.py::typed_gate)


class SearchResult(SearchOut):
    scope: Literal["project", "all"]


class BackfillResult(BackfillStarted):
    progress: BackfillProgress | SkipJsonSchema[None] = Field(
        None, description="Without --no-wait: the jobs' tally once they are done."
    )


class CliErrorDetail(ErrorDetail):
    model_config = ConfigDict(extra="forbid")


class CliError(ErrorBody):
    """Every command's error: the daemon's error shape, with no other key."""

    model_config = ConfigDict(extra="forbid")

    error: CliErrorDetail


COMMAND_SHAPES: dict[str, Any] = {
    "status": StatusResult,
    "stop": StopResult,
    "install-service": InstallServiceResult,
    "uninstall-service": UninstallServiceResult,
    "save": SaveResult,
    "list": MemoryListOut,
    "show": MemoryOut,
    "forget": ForgetResult,
    "index": IndexOut,
    "prompt": PromptOut,
    "recall": RecallResult,
    "dream status": DreamStatusResult,
    "dream run": Annotated[
        RunStartedOut | RunOut, Field(description="{run_id} at once; the finished run with --wait.")
    ],
    "dream cancel": CancelOut,
    "dream runs": RunsOut,
    "dream undo": UndoOut,
    "hooks": Annotated[
        HooksBlock | HooksInstalled | HooksRemoved,
        Field(description="the hooks block; with --install or --uninstall, what changed in the settings file."),
    ],
    "doctor": DoctorResult,
    "grep": SearchResult,
    "backfill": BackfillResult,
    "setup": SetupResult,
    "uninstall": UninstallResult,
    "config": ConfigResult,
    "config init": ConfigInitResult,
    "guard": GuardOut,
}
