"""Memories in and out of a project: read an older memoryd store, Claude Code's own memory dir,
another tool's Markdown notes, a `memoryd export` tarball or JSON lines; plan an import that
never overwrites. Writes are the caller's (through the daemon's REST save, the one write path)."""

from __future__ import annotations

import io
import json
import re
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from memoryd import limits
from memoryd.errors import InvalidRequest
from memoryd.extract.shape import clip, strip_request, upper_first
from memoryd.store.frontmatter import split_frontmatter

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

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


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
            return clip(upper_first(strip_request(text)), limits.INDEX_ENTRY_MAX_CHARS)  # a note's first line, cut between words
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


def _from_dir(directory: Path) -> Iterable[Record]:
    if (directory / limits.PROJECTS_DIRNAME).is_dir() and not any(directory.glob("*.md")):
        raise InvalidRequest(
            f"{directory} holds a whole store (projects/…); pass one project's memory dir, "
            f"e.g. --from {directory}/projects/<project>/memory"
        )
    for path in sorted(directory.glob("*.md")):
        if path.name == limits.INDEX_FILENAME or not path.is_file() or path.is_symlink():
            continue
        record = parse_markdown(path.read_text(encoding="utf-8", errors="replace"), path.name)
        if record is not None:
            yield record


def _from_jsonl(text: str, source: str) -> Iterable[Record]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            yield Record(name=str(data["name"]), description=str(data["description"]), type=str(data["type"]),
                         body=str(data.get("body", "")), source=str(data.get("filename") or f"{source}:{number}"))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidRequest(f"{source} line {number} is not a memory record ({exc}); each line needs name, description, type and body.") from exc


def _from_tar(path: Path) -> Iterable[Record]:
    with tarfile.open(path, "r:*") as tar:
        for member in tar.getmembers():
            name = Path(member.name).name
            if not member.isfile() or not name.endswith(".md") or name == limits.INDEX_FILENAME:
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            record = parse_markdown(handle.read().decode("utf-8", errors="replace"), name)
            if record is not None:
                yield record


def read_source(source: Path) -> list[Record]:
    """Every memory in a directory, a .jsonl file or a tarball (nothing is written)."""
    if source.is_dir():
        return list(_from_dir(source))
    if not source.is_file():
        raise InvalidRequest(f"--from {source}: no such file or directory; pass a memory dir, a .jsonl or a .tar.gz from `memoryd export`.")
    if tarfile.is_tarfile(source):
        return list(_from_tar(source))
    return list(_from_jsonl(source.read_text(encoding="utf-8"), source.name))


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


@dataclass
class Planned:
    record: Record
    action: str  # "save", "duplicate" or "conflict"
    name: str  # the name it is saved under
    reason: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"source": self.record.source, "action": self.action, "name": self.name, "type": self.record.type, "reason": self.reason}


def plan_import(records: list[Record], existing: list[Record]) -> list[Planned]:
    """What importing would do: identical memories are skipped, a name in use gets " (imported)";
    nothing that exists is ever replaced."""
    bodies = {(_norm(r.description), _norm(r.body)) for r in existing}
    names = {(r.type, r.name.strip().lower()) for r in existing}
    plan: list[Planned] = []
    for record in records:
        if (_norm(record.description), _norm(record.body)) in bodies:
            plan.append(Planned(record, "duplicate", record.name, "the same memory exists"))
            continue
        name = record.name
        if (record.type, name.strip().lower()) in names:
            name = record.name + IMPORTED_SUFFIX
            if (record.type, name.strip().lower()) in names:
                plan.append(Planned(record, "conflict", record.name, f"{record.type} memories named {record.name!r} and {name!r} exist; rename one"))
                continue
        plan.append(Planned(record, "save", name, "" if name == record.name else "name in use: saved under a new name"))
        bodies.add((_norm(record.description), _norm(record.body)))
        names.add((record.type, name.strip().lower()))
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

