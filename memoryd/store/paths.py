"""Where memories live: cwd → canonical git root → memory dir, and safe filenames inside it.

It does NOT create directories or read memory files; it only computes paths and refuses
names that could escape the memory dir.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from memoryd.base import limits
from memoryd.base.errors import Forbidden, InvalidCwd, InvalidFilename
from memoryd.base.files import read_capped
from memoryd.base.validation import check_path

# A memory filename: any bare `*.md` name (memoryd's `<type>_<slug>.md`, Claude Code's `<kebab-slug>.md`):
# no separators, no control chars, no leading dot, no `..`; the length is checked in bytes below.
FILENAME_RE = re.compile(r"^(?!\.)(?!.*\.\.)[^/\\\x00-\x1f\x7f]+\.md$")
FILENAME_MAX_BYTES = 255  # NAME_MAX on Linux and macOS


def sanitize_path(name: str) -> str:
    """Claude Code's `sanitizePath`: every non-ASCII-alphanumeric char becomes '-'.

    JS works on UTF-16 code units, so an astral char (emoji) becomes '--'. Names over 200
    chars are cut and suffixed with the CLI's hash (djb2 in base36, as the npm build does).
    """
    out = []
    for ch in unicodedata.normalize("NFC", name):
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        else:
            out.append("--" if ord(ch) > 0xFFFF else "-")
    sanitized = "".join(out)
    if len(sanitized) <= limits.SANITIZED_PATH_MAX:
        return sanitized
    return f"{sanitized[: limits.SANITIZED_PATH_MAX]}-{_djb2_base36(name)}"


def _djb2_base36(name: str) -> str:
    """CC's `Math.abs(djb2Hash(name)).toString(36)`: 32-bit `h*31 + code unit` over UTF-16."""
    data = name.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    n = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits or "0"


def _small_text(path: Path) -> str:
    """One of git's pointer files, bounded: a `.git` in a project someone else made may be anything (issue 41)."""
    return read_capped(path, limits.GIT_POINTER_MAX_BYTES, follow_links=True)[0].decode("utf-8", errors="replace")


def read_gitdir_file(dot_git: Path) -> Path | None:
    """A worktree's `.git` is a file `gitdir: <path>`; return that path."""
    try:
        text = _small_text(dot_git).strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text[len("gitdir:") :].strip())
    return gitdir if gitdir.is_absolute() else (dot_git.parent / gitdir)


def find_canonical_git_root(start: Path) -> Path | None:
    """The main working tree of the repo containing `start`, so all worktrees share one root.

    Mirrors CC's `findCanonicalGitRoot`: a linked worktree's `.git` file → gitdir →
    `commondir`, with the back-link verified; a bare repo's root is its common dir.
    Reads files only (no `git` subprocess), so it is cheap enough for every request.
    """
    current = start
    for candidate in (current, *current.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate
        if dot_git.is_file():
            gitdir = read_gitdir_file(dot_git)
            if gitdir is None:
                return candidate
            commondir_file = gitdir / "commondir"
            try:
                common = Path(_small_text(commondir_file).strip())
            except OSError:
                return candidate  # a submodule or odd layout: the worktree is its own root
            common = common if common.is_absolute() else (gitdir / common)
            common = Path(os.path.realpath(common))
            # Back-link: <gitdir>/gitdir names this worktree's .git file.
            try:
                back = Path(_small_text(gitdir / "gitdir").strip())
            except OSError:
                return candidate
            if Path(os.path.realpath(back)) != Path(os.path.realpath(dot_git)):
                return candidate
            return common.parent if common.name == ".git" else common
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir() and (candidate / "refs").is_dir():
            return candidate  # bare repository
    return None


def canonical_cwd(cwd: str) -> Path:
    """Validate an agent's cwd and return it realpath'd and NFC-normalised."""
    check_path(cwd, field="cwd", error=InvalidCwd)
    path = Path(unicodedata.normalize("NFC", cwd))
    return Path(unicodedata.normalize("NFC", os.path.realpath(path)))


def project_root(cwd: str) -> Path:
    """The project a cwd belongs to: its canonical git root, else the cwd itself."""
    path = canonical_cwd(cwd)
    return find_canonical_git_root(path) or path


def default_memory_dir(memory_base: Path, cwd: str) -> Path:
    """`<base>/projects/<sanitized canonical root>/memory`."""
    root = project_root(cwd)
    project_dir = memory_base / limits.PROJECTS_DIRNAME / sanitize_path(str(root))
    memory_dir = project_dir / limits.MEMORY_DIRNAME
    for part in (project_dir, memory_dir):
        if part.is_symlink():
            raise Forbidden(
                f"{part} is a symbolic link; memoryd never follows links inside its memory base. "
                "Replace it with a real directory, or set memory_dir in the config to the place you want."
            )
    return memory_dir


def resolve_memory_dir(
    cwd: str, *, env_override: str, config_dir: str, memory_base: Path, default: Callable[[str], Path] | None = None
) -> Path:
    """Precedence: MEMORYD_MEMORY_DIR → trusted config `memory_dir` → default layout.

    The config value comes only from memoryd's own config file, never from a file inside
    the project (a cloned repo must not redirect where memories are written).
    """
    canonical_cwd(cwd)  # validate even when an override wins
    for override in (env_override, config_dir):
        if override:
            return Path(os.path.realpath(Path(override).expanduser()))
    return default(cwd) if default is not None else default_memory_dir(memory_base, cwd)


def is_memory_filename(filename: str) -> bool:
    """A bare `*.md` name that can only name a file directly inside the memory dir (not the index)."""
    if not isinstance(filename, str) or not FILENAME_RE.match(filename) or filename == limits.INDEX_FILENAME:
        return False
    try:
        return len(filename.encode("utf-8")) <= FILENAME_MAX_BYTES
    except UnicodeEncodeError:  # a lone surrogate cannot name a file
        return False


def check_filename(filename: str) -> str:
    """Refuse anything but a bare `*.md` name: no separators, no `..`, no leading dot, no other extension."""
    if not is_memory_filename(filename):
        raise InvalidFilename(
            f"invalid memory filename {filename!r}: use a bare file name ending in .md, such as <type>_<slug>.md "
            f"(e.g. feedback_testing.md) or testing-notes.md, with no '/', '\\', '..' or leading '.', "
            f"at most {FILENAME_MAX_BYTES} bytes."
        )
    return filename


def memory_path(memory_dir: Path, filename: str) -> Path:
    """The path of a memory file, guaranteed to lie directly inside `memory_dir`."""
    check_filename(filename)
    path = memory_dir / filename
    if path.parent != memory_dir:  # defence in depth; the regex already forbids separators
        raise InvalidFilename(f"{filename!r} would leave the memory dir; use a bare filename.")
    return path


_APOSTROPHE = re.compile(r"(?<=[A-Za-z])'(?=[A-Za-z])")  # don't, it's: one word, as a typographic ’ always was


def slugify(name: str) -> str:
    """A filename-safe slug: ASCII letters/digits and '-', at most SLUG_MAX_CHARS; an apostrophe
    inside a word is dropped ("Don't use jest" → dont-use-jest, not don-t-…). Names with no ASCII
    letters (e.g. all CJK) get a short stable hash so they stay distinct."""
    return _slug(_APOSTROPHE.sub("", name) if "'" in name else name, name)


def slug_spellings(name: str) -> tuple[str, ...]:
    """The slugs a memory of this name may have on disk: today's, and the one before apostrophes
    were dropped ("don-t-…"), so a save still finds the file an older version named."""
    now = slugify(name)
    before = _slug(name, name) if "'" in name else now
    return (now,) if before == now else (now, before)


def _slug(text: str, name: str) -> str:
    ascii_name = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")
    if len(slug) > limits.SLUG_MAX_CHARS:  # cut between words, never inside one
        cut = slug[: limits.SLUG_MAX_CHARS + 1].rfind("-")
        slug = slug[: cut if cut > 0 else limits.SLUG_MAX_CHARS].rstrip("-")
    if not slug:
        slug = "memory-" + hashlib.sha256(name.encode()).hexdigest()[:10]
    return slug
