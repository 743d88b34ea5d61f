"""A memory file's header (name, description, type, dialect) from its text: plain `key: value`
frontmatter by a line scan, anything else by YAML (same result, ~20x cheaper at 20,000 files).

The one home of header reading: `MemoryDir`'s table and recall's index both use it. It does NOT
write files or keep state.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from memoryd.base import limits
from memoryd.base.errors import InvalidFrontmatter
from memoryd.base.files import Key, SymlinkRefused, read_small_nofollow
from memoryd.base.secrets import name_secrets
from memoryd.store import dialect as dialects
from memoryd.store.frontmatter import head_meta, split_frontmatter
from memoryd.store.model import InvalidFile, MemoryHeader
from memoryd.store.paths import is_memory_filename

SYMLINK_REFUSAL = (
    "is a symbolic link; memoryd never follows links (it could point at a secret outside the memory dir): "
    "replace it with a real file."
)
TOO_LARGE_FIX = "split it or move it out of the memory dir (memoryd never reads it whole)."


def not_a_file(mode: int) -> str:
    """Why a FIFO, socket, device or directory named like a memory is listed invalid, and the fix."""
    kinds = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFDIR: "directory"}
    kind = kinds.get(stat.S_IFMT(mode), "device")
    return f"is a {kind}, not a regular file: memoryd never opens it; move it out of the memory dir."


_FENCE_RE = re.compile(r"^---[ \t]*$")
_KEY_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:[ ](.*))?\Z")
_NESTED_RE = re.compile(r"  ([A-Za-z_][A-Za-z0-9_-]*):(?:[ ](.*))?\Z")
# A value YAML might read as something other than the same text: indicators first, a number,
# date or bool, a comment, a `: ` inside, characters YAML refuses. Those go to YAML.
_BAD_CHAR = r"[^\t\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
_NOT_PLAIN = re.compile(r"""\A[\s'"\[\]{}&*!|>%@`#,?:<=~+.\d-]|:[ \t]|:\Z|[ \t]#|""" + _BAD_CHAR)
_QUOTED = re.compile(r"'((?:[^']|'')*)'" r'|"([^"\\]*)"')
_BAD_CHARS = re.compile(_BAD_CHAR)
_YAML_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null"})
_TYPES = {t: sys.intern(t) for t in limits.MEMORY_TYPES}


def _plain(value: str | None) -> str | None | bool:
    """The value as YAML reads it when that is the text itself (None: empty); False: ask YAML."""
    if value is None:
        return None
    value = value.rstrip(" \t")
    if not value:
        return None
    if (quoted := _QUOTED.fullmatch(value)) is not None:  # 'text' ('' for a quote) or "text" without escapes
        inner = quoted.group(1)
        if _BAD_CHARS.search(value):
            return False
        return inner.replace("''", "'") if inner is not None else quoted.group(2)
    if _NOT_PLAIN.search(value) or value.casefold() in _YAML_WORDS:
        return False
    return value


def fast_meta(lines: list[str]) -> dict[str, Any] | None:
    """Frontmatter lines of plain `key: value` (and Claude Code's `metadata:` / `  type: x`) as
    YAML would load them; None when any line needs YAML."""
    meta: dict[str, Any] = {}
    nested: dict[str, Any] | None = None
    for line in lines:
        if not line:
            nested = None
            continue
        if nested is not None and line.startswith("  "):
            m = _NESTED_RE.match(line)
            if m is None or (value := _plain(m.group(2))) is False:
                return None
            nested[m.group(1)] = value
            continue
        m = _KEY_RE.match(line)
        if m is None or m.group(1).casefold() in _YAML_WORDS:
            return None
        if m.group(1) == "metadata" and m.group(2) is None:
            nested = meta["metadata"] = {}
            continue
        nested = None
        if (value := _plain(m.group(2))) is False:
            return None
        meta[m.group(1)] = value
    if meta.get("metadata") == {}:
        meta["metadata"] = None  # `metadata:` with nothing under it is YAML's null
    return meta


def split_head(text: str, *, source: str) -> tuple[dict[str, Any], int | None]:
    """(frontmatter from the first 30 lines, the line the body starts at or None when YAML was
    needed); InvalidFrontmatter as `head_meta` raises it."""
    lines = text.split("\n", limits.FRONTMATTER_MAX_LINES)
    first = lines[0]
    if "\r" in first or first.startswith("\ufeff") or not _FENCE_RE.match(first):
        return head_meta(text, source=source), None
    head = lines[: limits.FRONTMATTER_MAX_LINES]
    end = next((i for i in range(1, len(head)) if _FENCE_RE.match(head[i])), None)
    if end is not None and sum(map(len, head[1:end])) + end <= limits.FRONTMATTER_MAX_BYTES:  # else refused there
        meta = fast_meta(head[1:end]) if not any("\r" in line for line in head[1:end]) else None
        if meta is not None:
            return meta, end + 1
    return head_meta(text, source=source), None


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def meta_str(value: Any) -> str:
    """A frontmatter value as text (a YAML timestamp in ISO form, nothing as "")."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return iso(value)
    return str(value)


@lru_cache(maxsize=256)
def shared_dir(path: Path) -> Path:
    """One Path object per memory dir, shared by its 20,000 headers."""
    return path


def header_from_meta(filename: str, folder: Path, meta: dict[str, Any], mtime: float) -> MemoryHeader | InvalidFile:
    """A header from parsed frontmatter in either dialect, or why the file is not a memory."""
    prefix = filename.split("_", 1)[0]
    type_ = dialects.type_of(meta) or (prefix if prefix in limits.MEMORY_TYPES and "_" in filename else "")
    if not type_:
        return InvalidFile(
            filename,
            f"has no type; add 'type: <{'|'.join(limits.MEMORY_TYPES)}>' (or Claude Code's "
            f"'metadata:' / '  type: ...') to its frontmatter.",
        )
    if type_ not in limits.MEMORY_TYPES:
        return InvalidFile(
            filename, f"type {type_!r} is not one of {', '.join(limits.MEMORY_TYPES)}; fix the 'type:' line."
        )
    stem = filename[: -len(".md")]
    name = meta_str(meta.get("name")) or (stem.split("_", 1)[-1] if stem.startswith(type_ + "_") else stem).replace(
        "-", " "
    )
    return MemoryHeader(
        filename,
        name,
        meta_str(meta.get("description")),
        _TYPES[type_],
        mtime,
        shared_dir(folder),
        dialects.dialect_of(meta),
    )


class Parsed(NamedTuple):
    header: MemoryHeader | InvalidFile
    meta: dict[str, Any]
    body_line: int | None  # where the body starts, when the fast path read the frontmatter


def parse_header(filename: str, folder: Path, text: str, mtime: float) -> Parsed:
    """A file's header (or why it is not a memory), read from its first 30 lines."""
    if "\x00" in text:
        return Parsed(
            InvalidFile(
                filename,
                "holds NUL bytes (a binary file?); memories are UTF-8 Markdown: move it out of the memory dir.",
            ),
            {},
            None,
        )
    if findings := name_secrets(filename):  # issue 31: a name is written to MEMORY.md, recall's injection and state
        return Parsed(
            InvalidFile(
                filename,
                f"its file name holds what looks like a secret ({findings[0].kind}); memoryd keeps it "
                f"out of the index, recall and team sync: rename the file.",
            ),
            {},
            None,
        )
    try:
        meta, body_line = split_head(text, source=filename)
    except InvalidFrontmatter as exc:
        return Parsed(InvalidFile(filename, exc.message), {}, None)
    return Parsed(header_from_meta(filename, folder, meta, mtime), meta, body_line)


def split_memory(text: str, *, source: str) -> tuple[dict[str, Any], str]:
    """`split_frontmatter` (same result, same errors), without YAML for plain frontmatter."""
    try:
        meta, body_line = split_head(text, source=source)
    except InvalidFrontmatter:
        body_line = None
    if body_line is None:
        return split_frontmatter(text, source=source)
    return meta, body_of(text, body_line, source=source)


def read_text(path: Path | str) -> tuple[str | InvalidFile, os.stat_result | None]:
    """A memory file's text (never through a link) and the stat of what was read, or why it
    cannot be read. FileNotFoundError: it is gone (not a broken memory)."""
    filename = os.path.basename(path)
    st = None
    try:
        raw, st = read_small_nofollow(path, limits.MEMORY_FILE_MAX_BYTES)
        if raw is None:
            return InvalidFile(
                filename, f"is {st.st_size:,} bytes, over {limits.MEMORY_FILE_MAX_BYTES:,}: {TOO_LARGE_FIX}"
            ), st
        return raw.decode("utf-8"), st
    except SymlinkRefused:
        return InvalidFile(filename, SYMLINK_REFUSAL), None
    except UnicodeDecodeError:
        return InvalidFile(
            filename,
            "is not UTF-8 text (a binary file?); memories are UTF-8 Markdown: convert it or move it "
            "out of the memory dir.",
        ), st
    except FileNotFoundError:
        raise
    except OSError as exc:
        return InvalidFile(
            filename, f"unreadable ({exc.__class__.__name__}); check its permissions and encoding."
        ), None


def body_of(text: str, body_line: int | None, *, source: str) -> str:
    """The body after the frontmatter (`split_frontmatter`'s), without a second YAML parse when
    the fast path found where it starts."""
    if body_line is None:
        return split_frontmatter(text, source=source)[1]
    parts = text.split("\n", body_line)
    return parts[body_line].lstrip("\n") if len(parts) > body_line else ""


def read_memory(path: Path) -> tuple[MemoryHeader, str, Key] | None:
    """One read of a memory file: its header, body and signature; None when it is not a valid
    memory (the store lists those as invalid). Never follows a link."""
    filename = path.name
    if not is_memory_filename(filename):
        return None
    try:
        text, st = read_text(path)
    except FileNotFoundError:
        return None
    if isinstance(text, InvalidFile) or st is None:
        return None
    header, _, body_line = parse_header(filename, path.parent, text, st.st_mtime)
    if isinstance(header, InvalidFile):
        return None
    try:
        body = body_of(text, body_line, source=filename)
    except InvalidFrontmatter:
        return None
    return header, body, (st.st_mtime_ns, st.st_size)
