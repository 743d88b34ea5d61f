"""Why an act or a prompt meets a memory, as a typed value (what met it, and the path, program or word it met on):
code branches on `Reason.via`; the sentence people read (`--explain`, the recall log, the web view) is made
by `Reason.text` only."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Via(Enum):
    """What an act or a prompt met a memory by."""

    PATH = "path"  # an edit's path under one of its globs
    KIND = "kind"  # an edit of a file kind its headline's language names
    COMMAND = "command"  # a command running what it names
    COMMAND_PATH = "command_path"  # a command touching a path under its globs
    CUE = "cue"  # an edit writing code it names
    CODE = "code"  # an edit importing or calling a name it rules out ("not moment": `moment(...)`)
    CODE_SUBJECT = "code_subject"  # an edit writing code of a subject it rules out ("raw hex values": `#3b82f6`)
    TOOL = "tool"  # a tool its written `tools` list names
    FORBIDDEN = "forbidden"  # a command running a program it forbids
    PROMPT_PROGRAM = "prompt_program"  # a prompt naming a manager it chooses against or a program it forbids
    PROMPT_PATH = "prompt_path"  # a prompt naming a path under its globs
    PROMPT_CUE = "prompt_cue"  # a prompt naming code it names
    PROMPT_PACKAGE = "prompt_package"  # a prompt naming a package its scoped names stand for
    PROMPT_ACT = "prompt_act"  # a prompt asking to commit, push or open a pull request
    PROMPT_ROLE = "prompt_role"  # a prompt naming code of a layer it is about
    SUBJECT = "subject"  # a subject both are about (the weakest: no name shared)


# The sentence for each (value: the path, program, code or subject met; where: the glob or role it met on).
_TEXT = {
    Via.PATH: "path {value} matches {where}",
    Via.KIND: "{value} is a .{where} file, and this rule is about them",
    Via.COMMAND: "command runs {value}",
    Via.COMMAND_PATH: "command touches {value}, matches {where}",
    Via.CUE: "the edit writes {value}",
    Via.CODE: "the edit {where}s {value}, which this memory rules out",
    Via.CODE_SUBJECT: "the edit writes {value} code, which this memory rules out",
    Via.TOOL: "tool {value}",
    Via.FORBIDDEN: "the command runs {value}, which this memory forbids",
    Via.PROMPT_PROGRAM: "prompt names {value}",
    Via.PROMPT_PATH: "prompt names {value}",
    Via.PROMPT_CUE: "prompt names {value}",
    Via.PROMPT_PACKAGE: "prompt names the {value} package",
    Via.PROMPT_ACT: "prompt asks to {value}",
    Via.PROMPT_ROLE: "prompt names {value}, a {where}",
    Via.SUBJECT: "subject: {value}",
}
# The prompt names what the memory is about (a program, a path, code, a package, a layer): it leads the answer.
_NAMING = frozenset({Via.PROMPT_PROGRAM, Via.PROMPT_PATH, Via.PROMPT_CUE, Via.PROMPT_PACKAGE, Via.PROMPT_ROLE})


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a memory applies: how it was met and on what."""

    via: Via
    value: str
    where: str = ""

    def text(self) -> str:
        """The reason in words, for people."""
        return _TEXT[self.via].format(value=self.value, where=self.where)

    @property
    def names_it(self) -> bool:
        """The prompt names what the memory is about (not an act it asks for, not a subject)."""
        return self.via in _NAMING

    @property
    def language_only(self) -> bool:
        """Only the edited file's language: a whole language is a memory's widest reach at tool time."""
        return self.via is Via.KIND

    @property
    def subject_only(self) -> bool:
        """Only a shared subject: the weakest reason, which other evidence may outweigh."""
        return self.via is Via.SUBJECT
