"""Memories in and out of a project: read an older memoryd store, Claude Code's own memory dir,
another tool's Markdown notes, a `memoryd export` tarball or JSON lines; plan an import that
never overwrites. Writes are the caller's (through the daemon's REST save, the one write path).

Reading streams with bounded memory whatever the input: each file is sized before it is read (a
tar member by its header), links and FIFOs are never opened, and one bad file is reported as
`Skipped` while the rest is imported (issue 31)."""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from memoryd.base import limits
from memoryd.base.errors import InvalidRequest, MemorydError
from memoryd.base.files import SymlinkRefused, read_small_nofollow
from memoryd.extract.shape import clip, strip_request, upper_first
from memoryd.store.frontmatter import split_frontmatter
from memoryd.store.paths import slugify

DEFAULT_TYPE = "project"
IMPORTED_SUFFIX = " (imported)"


@dataclass(frozen=True)
class Record:
    """One memory as it travels: what REST save takes, plus where it came from."""

    name: str
    description: str
    type: str
    body: str
    source: str = ""


@dataclass(frozen=True)
class Skipped:
    """A file (or JSON line) not imported, and why; the rest of the source still is."""

    source: str
    reason: str


@dataclass
class Budget:
    """What one import may hold: files looked at and bytes of text kept (limits.IMPORT_MAX_*)."""

    files: int = 0
    bytes: int = 0
    skipped: list[Skipped] = field(default_factory=list)

    def admit(self, source: str, size: int) -> bool:
        """Count a file of `size` bytes; False (and a Skipped) when it must not be read."""
        self.files += 1
        if size > limits.IMPORT_FILE_MAX_BYTES:
            self.skipped.append(
                Skipped(
                    source,
                    f"is {size:,} bytes, over the {limits.IMPORT_FILE_MAX_BYTES:,} one save can carry; split it.",
                )
            )
            return False
        if self.bytes + size > limits.IMPORT_MAX_BYTES:
            self.skipped.append(
                Skipped(
                    source,
                    f"not read: this import already holds {limits.IMPORT_MAX_BYTES // 2**20} MB; import the rest "
                    "separately.",
                )
            )
            return False
        self.bytes += size
        return True

    @property
    def full(self) -> bool:
        return self.files >= limits.IMPORT_MAX_FILES


def _type_of(meta: dict[str, Any], filename: str) -> str:
    """Top-level `type`, Claude Code's nested `metadata.type`, a `<type>_` name prefix, else project."""
    metadata = meta.get("metadata")
    nested: dict[str, Any] = metadata if isinstance(metadata, dict) else {}
    for value in (meta.get("type"), nested.get("type"), filename.split("_", 1)[0] if "_" in filename else None):
        if isinstance(value, str) and value.strip().lower() in limits.MEMORY_TYPES:
            return value.strip().lower()
    return DEFAULT_TYPE


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return clip(
                upper_first(strip_request(text)), limits.INDEX_ENTRY_MAX_CHARS
            )  # a note's first line, cut between words
    return ""


def parse_markdown(text: str, filename: str) -> Record | None:
    """A Markdown memory in either dialect, or a plain note (name from the file, description from its first line)."""
    meta, body = split_frontmatter(text, source=filename)
    stem = filename[:-3] if filename.endswith(".md") else filename
    name = str(meta.get("name") or "").strip() or stem.replace("_", " ").replace("-", " ")
    description = str(meta.get("description") or "").strip() or _first_line(body)
    body = body.strip("\n")
    if not description and not body:
        return None
    return Record(name=name, description=description or name, type=_type_of(meta, filename), body=body, source=filename)


def _markdown(data: bytes, name: str, budget: Budget) -> Iterator[Record]:
    """`parse_markdown` of one file's bytes; a refused header is reported, not raised."""
    try:
        record = parse_markdown(data.decode("utf-8", errors="replace"), name)
    except MemorydError as exc:
        budget.skipped.append(Skipped(name, exc.message))
        return
    if record is not None:
        yield record


def _read_file(path: Path, budget: Budget) -> bytes | None:
    """A regular file's bytes (never through a link, sized before it is read), or None and a Skipped."""
    try:
        data, st = read_small_nofollow(path, limits.IMPORT_FILE_MAX_BYTES)
    except SymlinkRefused:
        budget.skipped.append(
            Skipped(path.name, "is a symbolic link: memoryd never follows links; copy the file itself.")
        )
        return None
    except OSError as exc:
        budget.skipped.append(Skipped(path.name, f"is not a readable regular file ({exc.__class__.__name__})."))
        return None
    return data if budget.admit(path.name, st.st_size if data is None else len(data)) and data is not None else None


def _from_dir(directory: Path, budget: Budget) -> Iterator[Record]:
    if (directory / limits.PROJECTS_DIRNAME).is_dir() and not any(directory.glob("*.md")):
        raise InvalidRequest(
            f"{directory} holds a whole store (projects/…); pass one project's memory dir, "
            f"e.g. --from {directory}/projects/<project>/memory"
        )
    for path in sorted(directory.glob("*.md")):
        if path.name == limits.INDEX_FILENAME:
            continue
        if budget.full:
            budget.skipped.append(
                Skipped(path.name, f"not read: one import looks at {limits.IMPORT_MAX_FILES:,} files at most.")
            )
            return
        if (data := _read_file(path, budget)) is not None:
            yield from _markdown(data, path.name, budget)


def _lines(fh: IO[bytes], budget: Budget, source: str) -> Iterator[tuple[int, bytes]]:
    """(number, line) of a JSON-lines file, each read with a bounded `readline`; a longer line is
    skipped to its end without being kept."""
    number = 0
    while chunk := fh.readline(limits.IMPORT_FILE_MAX_BYTES + 1):
        number += 1
        line, size = chunk, len(chunk)
        while not chunk.endswith(b"\n") and (chunk := fh.readline(limits.IMPORT_FILE_MAX_BYTES + 1)):
            line, size = b"", size + len(chunk)  # longer than the limit: read on to its end, keep nothing
        if line.strip() or size > limits.IMPORT_FILE_MAX_BYTES:
            if budget.full:
                budget.skipped.append(
                    Skipped(
                        f"{source}:{number}",
                        f"not read: one import looks at {limits.IMPORT_MAX_FILES:,} records at most.",
                    )
                )
                return
            if budget.admit(f"{source}:{number}", size):
                yield number, line


def _from_jsonl(fh: IO[bytes], source: str, budget: Budget) -> Iterator[Record]:
    for number, line in _lines(fh, budget, source):
        try:
            data = json.loads(line)
            yield Record(
                name=str(data["name"]),
                description=str(data["description"]),
                type=str(data["type"]),
                body=str(data.get("body", "")),
                source=str(data.get("filename") or f"{source}:{number}"),
            )
        except (ValueError, KeyError, TypeError) as exc:
            budget.skipped.append(
                Skipped(
                    f"{source}:{number}",
                    f"is not a memory record ({exc.__class__.__name__}); each line needs name, description, type and "
                    "body.",
                )
            )


def _from_tar(path: Path, budget: Budget) -> Iterator[Record]:
    with tarfile.open(path, "r:*") as tar:
        try:
            for seen, member in enumerate(
                tar, 1
            ):  # streamed: a member's size is known from its header before it is read
                name = Path(member.name).name
                if (
                    seen > limits.IMPORT_MAX_FILES or budget.full
                ):  # tarfile keeps each header seen: bounded by the count
                    budget.skipped.append(
                        Skipped(name, f"not read: one import looks at {limits.IMPORT_MAX_FILES:,} files at most.")
                    )
                    return
                if not member.isfile() or not name.endswith(".md") or name == limits.INDEX_FILENAME:
                    continue
                if not budget.admit(name, member.size) or (handle := tar.extractfile(member)) is None:
                    continue
                yield from _markdown(handle.read(limits.IMPORT_FILE_MAX_BYTES + 1), name, budget)
        except (tarfile.TarError, OSError, EOFError) as exc:
            budget.skipped.append(
                Skipped(
                    path.name,
                    f"the archive is damaged after {budget.files} files ({exc.__class__.__name__}); what came before "
                    "was read.",
                )
            )


def read_source(source: Path) -> tuple[list[Record], list[Skipped]]:
    """Every memory in a directory, one .md file, a .jsonl file or a tarball, and what was skipped
    and why (nothing is written)."""
    budget = Budget()
    if source.is_dir():
        return list(_from_dir(source, budget)), budget.skipped
    if not source.is_file():
        raise InvalidRequest(
            f"--from {source}: no such file or directory; pass a memory dir, a .jsonl or a .tar.gz from `memoryd "
            "export`."
        )
    if source.suffix == ".md":
        data = _read_file(source, budget)
        return (list(_markdown(data, source.name, budget)) if data is not None else []), budget.skipped
    if tarfile.is_tarfile(source):
        return list(_from_tar(source, budget)), budget.skipped
    with source.open("rb") as fh:
        return list(_from_jsonl(fh, source.name, budget)), budget.skipped


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass
class Planned:
    record: Record
    action: str  # "save", "duplicate" or "conflict"
    name: str  # the name it is saved under
    reason: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "source": self.record.source,
            "action": self.action,
            "name": self.name,
            "type": self.record.type,
            "reason": self.reason,
        }


def _claims(type_: str, name: str, filename: str = "") -> set[tuple[str, str]]:
    """The names a memory holds, as a save matches them: its title and its slug (per type), and for a file
    in Claude Code's dialect (no `<type>_` prefix) its slug and file stem over every type (issue 41)."""
    keys = {(type_, name.strip().casefold()), (type_, slugify(name)), ("file", filename)}
    stem = filename.removesuffix(".md")
    if filename and not stem.startswith(f"{type_}_"):
        keys |= {("*", slugify(name)), ("*", slugify(stem))}
    return keys


def _taken(record: Record, name: str, names: set[tuple[str, str]]) -> bool:
    keys = {(record.type, name.strip().casefold()), (record.type, slugify(name)), ("*", slugify(name))}
    return bool(keys & names)


def plan_import(records: list[Record], existing: list[Record]) -> list[Planned]:
    """What importing would do: identical memories are skipped, a name (or file name) in use gets
    " (imported)"; nothing that exists is ever replaced (the save itself is create-only too)."""
    bodies = {(_norm(r.description), _norm(r.body)) for r in existing}
    names = {key for r in existing for key in _claims(r.type, r.name, r.source)}
    plan: list[Planned] = []
    for record in records:
        if (_norm(record.description), _norm(record.body)) in bodies:
            plan.append(Planned(record, "duplicate", record.name, "the same memory exists"))
            continue
        name = record.name
        file = record.source.rsplit("/", 1)[-1]
        same_file = file.endswith(".md") and bool({("file", file), ("*", slugify(file[:-3]))} & names)
        if _taken(record, name, names) or same_file:
            name = record.name + IMPORTED_SUFFIX
            if _taken(record, name, names):
                plan.append(
                    Planned(
                        record,
                        "conflict",
                        record.name,
                        f"{record.type} memories named {record.name!r} and {name!r} exist; rename one",
                    )
                )
                continue
        plan.append(Planned(record, "save", name, "" if name == record.name else "name in use: saved under a new name"))
        bodies.add((_norm(record.description), _norm(record.body)))
        names |= _claims(record.type, name, f"{slugify(name)}.md")
    return plan


def export_jsonl(records: Iterable[dict[str, Any]]) -> str:
    """One JSON object a line with every field REST save takes (and the filename it had)."""
    keys = ("filename", "name", "description", "type", "body")
    return "".join(json.dumps({k: r.get(k, "") for k in keys}, ensure_ascii=False) + "\n" for r in records)


def export_tar(files: dict[str, str]) -> bytes:
    """A gzip tarball of the memory files as they are on disk (unknown keys and [[links]] kept)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for filename, text in sorted(files.items()):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"memory/{filename}")
            info.size = len(data)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
