"""YAML frontmatter through pyyaml: parse, render, and read only the head of a file.

The one home of frontmatter parsing: every door (store, team restore, import, web view, MCP) comes
here, and YAML that could expand is refused before it is loaded (`check_yaml`). It does NOT
validate memory semantics (types, sizes); `memoryd.store.memdir` does.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import yaml

from memoryd.base import limits
from memoryd.base.errors import InvalidFrontmatter
from memoryd.base.files import open_nofollow

# A fence is a line of exactly `---` (trailing blanks allowed).
_FENCE_RE = re.compile(r"^---[ \t]*$")
# libyaml's safe loader/dumper when pyyaml was built with it (same results, several times faster).
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def split_frontmatter(text: str, *, source: str = "memory") -> tuple[dict[str, Any], str]:
    """Return (meta, body). No leading fence → empty meta. Broken YAML → InvalidFrontmatter."""
    if text.startswith("\ufeff"):
        text = text[1:]  # a BOM from some editors
    lines = text.split("\n")
    if not lines or not _FENCE_RE.match(lines[0]):
        return {}, text
    for end in range(1, len(lines)):
        if _FENCE_RE.match(lines[end]):
            break
    else:
        raise InvalidFrontmatter(
            f"{source}: frontmatter opened with '---' is never closed; add a '---' line after the fields."
        )
    raw = "\n".join(lines[1:end])
    try:
        meta = load_yaml(raw, source=source) if raw.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        raise InvalidFrontmatter(
            f"{source}: YAML frontmatter does not parse{where}; quote values that contain ': ' or "
            f"start with special characters."
        ) from exc
    if not isinstance(meta, dict):
        raise InvalidFrontmatter(f"{source}: frontmatter must be key: value pairs (name, description, type).")
    body = "\n".join(lines[end + 1 :])
    return meta, body.lstrip("\n")


def check_yaml(raw: str, *, source: str) -> None:
    """Refuse YAML that could cost more than its size: anchors or aliases (an alias bomb of 361
    bytes expands to gigabytes once a value becomes text), deep nesting, too many nodes, too many
    bytes. Reads parser events only, so nothing is built before the checks pass (issue 31)."""
    if len(raw) > limits.FRONTMATTER_MAX_BYTES:
        raise InvalidFrontmatter(
            f"{source}: frontmatter is {len(raw):,} characters, over "
            f"{limits.FRONTMATTER_MAX_BYTES:,}; keep name, description and type short and put the rest in the body."
        )
    depth = nodes = 0
    for event in yaml.parse(raw, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise InvalidFrontmatter(
                f"{source}: frontmatter uses a YAML anchor or alias ('&' / '*'), which memoryd "
                f"refuses (it can expand a small file into gigabytes); write each value out."
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limits.FRONTMATTER_MAX_DEPTH:
                raise InvalidFrontmatter(
                    f"{source}: frontmatter nests deeper than {limits.FRONTMATTER_MAX_DEPTH} levels; "
                    f"use flat key: value pairs."
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            nodes += 1
            if nodes > limits.FRONTMATTER_MAX_NODES:
                raise InvalidFrontmatter(
                    f"{source}: frontmatter holds over {limits.FRONTMATTER_MAX_NODES:,} values; use "
                    f"flat key: value pairs."
                )


def load_yaml(raw: str, *, source: str) -> Any:
    """YAML through the safe loader once `check_yaml` has passed it; yaml.YAMLError as pyyaml raises it."""
    check_yaml(raw, source=source)
    return yaml.load(raw, Loader=_Loader)  # noqa: S506 (a safe loader, aliases refused above)


def render_frontmatter(meta: dict[str, Any], body: str) -> str:
    """`---\\n<yaml>---\\n\\n<body>\\n` with unicode kept as is and no line folding."""
    head = yaml.dump(
        meta, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000, default_flow_style=False
    )
    body = body.strip("\n")
    return f"---\n{head}---\n\n{body}\n" if body else f"---\n{head}---\n"


def read_head(path: Path, max_lines: int = limits.FRONTMATTER_MAX_LINES) -> str:
    """The first `max_lines` lines of a file, without reading the rest."""
    out: list[str] = []
    with io.TextIOWrapper(open_nofollow(path), encoding="utf-8", errors="replace") as fh:
        for _ in range(max_lines):
            line = fh.readline(limits.FRONTMATTER_MAX_BYTES + 1)  # one line of a 200 MB file is never read whole
            if not line:
                break
            out.append(line)
    return "".join(out)


def head_meta(text: str, *, source: str, max_lines: int = limits.FRONTMATTER_MAX_LINES) -> dict[str, Any]:
    """Frontmatter from the first 30 lines only (memoryScan.ts); a longer header is refused."""
    lines = text.split("\n", max_lines)[:max_lines]
    if not lines or not _FENCE_RE.match(lines[0].rstrip("\r").lstrip("\ufeff")):
        return {}
    if not any(_FENCE_RE.match(line.rstrip("\r")) for line in lines[1:]):
        raise InvalidFrontmatter(
            f"{source}: no closing '---' within the first {max_lines} lines; keep the frontmatter short."
        )
    meta, _ = split_frontmatter("\n".join(lines), source=source)
    return meta


def read_header_meta(path: Path) -> dict[str, Any]:
    """`head_meta` of a file, reading only its first lines."""
    return head_meta(read_head(path), source=path.name)
