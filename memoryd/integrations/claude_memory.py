"""Claude Code's own memory: where it lives for a project, and whether it is on.

`memory_base = "auto"` makes memoryd the engine behind that directory instead of a rival
copy. Only trusted settings may move it (user, local, managed): a cloned repo's shared
`.claude/settings.json` must never redirect where memories are written, nor a
`.claude/settings.local.json` that git tracks or another user owns (issue 31), and a memory dir
reached through a symbolic link is refused.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import stat
import subprocess
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memoryd.base import limits
from memoryd.base.errors import Forbidden
from memoryd.integrations.settings_files import read_settings, refusal
from memoryd.store.dialect import CLAUDE_CODE, MEMORYD, Dialect
from memoryd.store.paths import canonical_cwd, find_canonical_git_root, read_gitdir_file, sanitize_path

if TYPE_CHECKING:
    from memoryd.config import Settings

AUTO = "auto"
SETTINGS_FILENAME = "settings.json"
LOCAL_SETTINGS_FILENAME = "settings.local.json"
MANAGED_SETTINGS = {
    "Darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
    "Linux": Path("/etc/claude-code/managed-settings.json"),
}
# CLAUDE_CODE_DISABLE_AUTO_MEMORY: truthy turns native memory off, falsy forces it on (even under --bare).
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

Scope = Literal["managed", "local", "project", "user"]


def claude_config_dir(env: Mapping[str, str]) -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude` (of the daemon's HOME)."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".claude"


def claude_code_set_up(env: Mapping[str, str]) -> bool:
    return claude_config_dir(env).is_dir()


def managed_settings_path() -> Path | None:
    return MANAGED_SETTINGS.get(platform.system())


def _index_mtime(folder: Path) -> int:
    """The mtime of the git index governing `folder` (0: none found), so `git add` invalidates `_git_tracks`."""
    for parent in (folder, *folder.parents):
        dot = parent / ".git"
        try:
            if dot.is_file():
                dot = (read_gitdir_file(dot) or dot).resolve()
            return (dot / "index").stat().st_mtime_ns
        except (OSError, ValueError):
            if dot.exists():
                return 0
    return 0


def git_tracks(path: Path, st: os.stat_result) -> bool:
    """Does git track this file? Asked of git once per (file, index) state (the hook path asks per prompt)."""
    return _git_tracks(str(path), (st.st_ino, st.st_mtime_ns, st.st_size, _index_mtime(path.parent)))


@functools.lru_cache(maxsize=256)
def _git_tracks(path: str, _key: tuple[int, int, int, int]) -> bool:
    """`git ls-files --error-unmatch`; without a git binary, a file inside a repository counts as tracked."""
    folder = os.path.dirname(path)
    git = shutil.which("git")
    if git is None:
        return find_canonical_git_root(Path(folder)) is not None
    try:
        done = subprocess.run(
            [git, "-C", folder, "ls-files", "--error-unmatch", "--", os.path.basename(path)],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return True
    return done.returncode == 0


def untrusted_reason(path: Path, scope: Scope) -> str:
    """Why a settings file may not move the memory dir ("" when it may). Decided on the file: a link,
    one owned by another user (root may own managed settings), or a local file that git tracks (a cloned
    repo would then choose where memories are written: issue 31, `autoMemoryDirectory: ~/.ssh`)."""
    try:
        st = path.lstat()
    except OSError:
        return ""  # no file: nothing to trust
    if stat.S_ISLNK(st.st_mode):
        return f"{path} is a symbolic link"
    owners = {os.getuid(), 0} if scope == "managed" else {os.getuid()}
    if st.st_uid not in owners:
        return f"{path} is owned by another user (uid {st.st_uid})"
    if scope == "local" and git_tracks(path, st):
        return f"{path} is tracked by git (a repository's file, not yours: untrack it with `git rm --cached`)"
    return ""


def _trusted_json(path: Path | None, scope: Scope, within: Path | None = None) -> dict[str, Any]:
    return {} if path is None or untrusted_reason(path, scope) else read_settings(path, within=within)


def settings_layers(
    project: Path, env: Mapping[str, str], managed: Path | None = None
) -> list[tuple[Scope, dict[str, Any]]]:
    """Claude Code's settings files, highest precedence first (managed > local > project > user);
    an untrusted managed, local or user file counts as absent (`untrusted_reason`)."""
    managed = managed if managed is not None else managed_settings_path()
    dot = project / ".claude"
    repo = find_canonical_git_root(project) or project  # a repository's files: bounded, links kept inside it
    return [
        ("managed", _trusted_json(managed, "managed")),
        ("local", _trusted_json(dot / LOCAL_SETTINGS_FILENAME, "local", repo)),
        ("project", read_settings(dot / SETTINGS_FILENAME, within=repo)),
        ("user", _trusted_json(claude_config_dir(env) / SETTINGS_FILENAME, "user")),
    ]


def ignored_settings(project: Path, env: Mapping[str, str]) -> list[str]:
    """The settings files memoryd does not read for this project, each with why (a link out of the
    repository, a FIFO or device, over SETTINGS_FILE_MAX_BYTES): Claude Code may still read them."""
    repo, dot = find_canonical_git_root(project) or project, project / ".claude"
    files = [(dot / SETTINGS_FILENAME, repo), (dot / LOCAL_SETTINGS_FILENAME, repo)]
    return [
        why
        for path, within in [*files, (claude_config_dir(env) / SETTINGS_FILENAME, None)]
        if (why := refusal(path, within=within))
    ]


def auto_memory_directory(project: Path, env: Mapping[str, str], managed: Path | None = None) -> Path | None:
    """`autoMemoryDirectory` from trusted settings only (never the repo's shared settings.json)."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    for scope, data in settings_layers(project, env, managed):
        value = data.get("autoMemoryDirectory")
        if scope == "project" or not isinstance(value, str) or not value.strip():
            continue
        value = value.strip()
        chosen = home / value[2:] if value.startswith("~/") else Path(value) if Path(value).is_absolute() else None
        if chosen is not None and not (scope == "local" and foreign_store(chosen, project, env)):
            return chosen
    return None


def foreign_store(chosen: Path, project: Path, env: Mapping[str, str]) -> bool:
    """Is a project's own settings file (`settings.local.json`, trusted when git does not track it, as in an
    unpacked archive) pointing it into memoryd's home or another project's folder of Claude Code's (issue 52)?"""
    where = Path(os.path.realpath(os.path.abspath(chosen)))
    memoryd_home = Path(os.path.realpath(Path(env.get("MEMORYD_HOME") or limits.DEFAULT_HOME).expanduser()))
    if where.is_relative_to(memoryd_home):
        return True
    projects = Path(os.path.realpath(claude_config_dir(env) / limits.PROJECTS_DIRNAME))
    root = find_canonical_git_root(project) or project
    own = projects / project_folder(projects, root)
    return where.is_relative_to(projects) and not where.is_relative_to(own)


@dataclass(frozen=True)
class NativeMemory:
    """Is Claude Code's own auto memory on for a session, and which switch decided it."""

    enabled: bool
    reason: str


def native_memory(
    project: Path, env: Mapping[str, str], session_env: Mapping[str, str] | None = None, managed: Path | None = None
) -> NativeMemory:
    """Claude Code's `isAutoMemoryEnabled`: env switch > --bare > settings > on by default.

    `session_env` holds the switches the session's own process had (forwarded by the hook);
    the daemon's environment stands in when a hook did not forward them.
    """
    switches = session_env if session_env is not None else env
    flag = (switches.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY") or "").strip().lower()
    if flag in _TRUE:
        return NativeMemory(False, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=1")
    if flag in _FALSE:
        return NativeMemory(True, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=0")
    if (switches.get("CLAUDE_CODE_SIMPLE") or "").strip().lower() in _TRUE:
        return NativeMemory(False, "--bare")
    for scope, data in settings_layers(project, env, managed):
        value = data.get("autoMemoryEnabled")
        if isinstance(value, bool):
            return NativeMemory(value, f"autoMemoryEnabled: {str(value).lower()} in {scope} settings")
    return NativeMemory(True, "on by default")


# ---------------------------------------------------------------------- folder names
def project_folder(projects: Path, root: Path) -> str:
    """The CLI's folder name for a project root; a long name reuses an existing folder with the
    same 200-char prefix first (the hash after it differs between Claude Code's builds)."""
    name = sanitize_path(unicodedata.normalize("NFC", str(root)))
    if len(name) <= limits.SANITIZED_PATH_MAX:
        return name
    prefix = name[: limits.SANITIZED_PATH_MAX] + "-"
    try:
        existing = sorted(
            e.name for e in os.scandir(projects) if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)
        )
    except OSError:
        existing = []
    return existing[0] if existing else name


def _checked(memory_dir: Path) -> Path:
    for part in (memory_dir.parent, memory_dir):
        if part.is_symlink():
            raise Forbidden(
                f"{part} is a symbolic link; memoryd never follows links inside its memory base. "
                "Replace it with a real directory, or set memory_dir in the config to the place you want."
            )
    return memory_dir


def claude_memory_dir(cwd: str, env: Mapping[str, str], managed: Path | None = None) -> Path:
    """The directory Claude Code itself uses as this project's auto memory."""
    launch = canonical_cwd(cwd)
    root = find_canonical_git_root(launch) or launch
    custom = auto_memory_directory(launch, env, managed) or (
        auto_memory_directory(root, env, managed) if root != launch else None
    )
    if custom is not None:  # a link there is refused, as everywhere else a memory dir is resolved
        return Path(os.path.realpath(_checked(Path(os.path.abspath(custom)))))
    config = claude_config_dir(env)
    pinned = env.get("CLAUDE_CODE_PROJECT_DIR_NAME", "")
    if pinned and env.get("CLAUDE_CONFIG_DIR"):
        return _checked(config / limits.PROJECTS_DIRNAME / pinned / limits.MEMORY_DIRNAME)
    projects = config / limits.PROJECTS_DIRNAME
    return _checked(projects / project_folder(projects, root) / limits.MEMORY_DIRNAME)


def base_memory_dir(base: Path, cwd: str) -> Path:
    """`<base>/projects/<the CLI's folder name>/memory` for a base other than Claude Code's."""
    launch = canonical_cwd(cwd)
    root = find_canonical_git_root(launch) or launch
    projects = base / limits.PROJECTS_DIRNAME
    return _checked(projects / project_folder(projects, root) / limits.MEMORY_DIRNAME)


# In memoryd's own store for a project: the user imported it into Claude Code's dir (`memoryd import`).
MOVED_MARKER = ".memoryd-moved"


def _has_memories(directory: Path) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(
                e.name.endswith(".md") and e.name != limits.INDEX_FILENAME and e.is_file(follow_symlinks=False)
                for e in entries
            )
    except OSError:
        return False


def pending_own_store(home: Path, cwd: str) -> Path | None:
    """memoryd's own store for this project while it holds memories not yet imported into Claude
    Code's dir: it keeps being served, so nothing moves under the user when ~/.claude appears."""
    own = base_memory_dir(home, cwd)
    return own if not (own / MOVED_MARKER).exists() and _has_memories(own) else None


def mark_moved(own: Path, target: Path) -> None:
    """From now on this project is served from `target` (Claude Code's dir); `own` stays as it was."""
    (own / MOVED_MARKER).write_text(json.dumps({"moved_to": str(target)}) + "\n", encoding="utf-8")


def auto_resolver(home: Path, env: Mapping[str, str] | None = None) -> Callable[[str], Path]:
    """cwd → memory dir for `memory_base = "auto"`: Claude Code's when it is set up, else $MEMORYD_HOME's;
    a project with memories in $MEMORYD_HOME's stays there until they are imported (`pending_own_store`)."""
    env = dict(os.environ) if env is None else env

    def resolve(cwd: str) -> Path:
        if claude_code_set_up(env):
            return pending_own_store(home, cwd) or claude_memory_dir(cwd, env)
        return base_memory_dir(home, cwd)

    return resolve


def is_claude_memory_dir(memory_dir: Path, cwd: str, env: Mapping[str, str]) -> bool:
    """Does memoryd serve this project from the very directory Claude Code loads natively?"""
    try:
        return Path(os.path.realpath(claude_memory_dir(cwd, env))) == Path(os.path.realpath(memory_dir))
    except Exception:
        return False


def memory_location(settings: Settings, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The StoreRegistry's `memory_base` (where discovery looks), `default_dir` and `claude_code_tree`: Claude
    Code's tree even before it exists, so a folder's style never hangs on when the daemon started (#51)."""
    env = dict(os.environ) if env is None else env
    tree = claude_config_dir(env)
    if settings.memory.memory_base.strip() != AUTO:
        return {"memory_base": settings.memory_base, "default_dir": None, "claude_code_tree": tree}
    base = tree if claude_code_set_up(env) else settings.home
    return {"memory_base": base, "default_dir": auto_resolver(settings.home, env), "claude_code_tree": tree}


def write_dialect(memory_dir: Path, env: Mapping[str, str]) -> Dialect:
    """The style the next save writes in this folder, by the daemon's own rule (`MemoryDir.dialect`, its default
    from `StoreRegistry.dialect_for`): the one most of its memories use, else Claude Code's inside its tree."""
    from memoryd.store import MemoryDir

    default = CLAUDE_CODE if memory_dir.is_relative_to(claude_config_dir(env)) else MEMORYD
    store = MemoryDir(memory_dir, default_dialect=default)
    if store.has_memories():
        store.all_headers()  # the table loaded: its dialect counts are the folder's
    return store.dialect()


def resolve_for(settings: Settings, cwd: str, env: Mapping[str, str] | None = None) -> Path:
    """The memory dir memoryd uses for a cwd under these settings (doctor, status, import)."""
    from memoryd.store.paths import resolve_memory_dir

    where = memory_location(settings, env)
    return resolve_memory_dir(
        cwd,
        env_override=settings.memory_dir_override,
        config_dir=settings.memory.memory_dir,
        memory_base=where["memory_base"],
        default=where["default_dir"],
    )


def _memory_files(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.glob("*.md") if p.name != limits.INDEX_FILENAME and p.is_file()]
    except OSError:
        return []


def describe(
    settings: Settings,
    cwd: str,
    *,
    hooks_installed: bool,
    hooks_forward_env: bool = True,
    env: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Where a project's memory lives and who loads it, each finding with its fix (doctor, status)."""
    env = dict(os.environ) if env is None else env
    memory_dir = resolve_for(settings, cwd, env)
    launch = canonical_cwd(cwd)
    set_up = claude_code_set_up(env)
    cc_dir = claude_memory_dir(cwd, env) if set_up else None
    same = cc_dir is not None and Path(os.path.realpath(cc_dir)) == Path(os.path.realpath(memory_dir))
    native = native_memory(launch, env) if set_up else NativeMemory(False, "Claude Code is not set up (no ~/.claude)")
    info: dict[str, Any] = {
        "memory_dir": str(memory_dir),
        "memory_base": settings.memory.memory_base or str(settings.home),
        "dialect": write_dialect(memory_dir, env),
        "claude_code_dir": str(cc_dir) if cc_dir else None,
        "same_as_claude_code": same,
        "native_memory": native.enabled,
        "native_reason": native.reason,
        "ignored_settings": ignored_settings(launch, env),
    }
    pending = (
        pending_own_store(settings.home, cwd)
        if set_up and cc_dir is not None and settings.memory.memory_base.strip() == AUTO
        else None
    )
    pending = (
        pending
        if pending is not None and Path(os.path.realpath(pending)) == Path(os.path.realpath(memory_dir))
        else None
    )
    if native.enabled and not same and cc_dir is not None and pending is None:
        info.update(
            context="two indexes",
            fix=f'two memories for one project: set memory_base = "auto" in {settings.home}/config.toml '
            f"(then memoryd import --from '{memory_dir}'), or turn Claude Code's own memory off (autoMemoryEnabled: "
            "false)",
        )
    elif not hooks_installed:
        info.update(
            context="once (Claude Code only)" if native.enabled else "not injected",
            fix="memoryd setup, or memoryd hooks --install (memoryd's recall and extraction need its hooks)",
        )
    elif not hooks_forward_env:
        info.update(
            context="once, unless a session sets CLAUDE_CODE_DISABLE_AUTO_MEMORY",
            fix="memoryd hooks --install again: the installed hooks predate the native-memory check",
        )
    elif pending is not None:
        info.update(context="once (memoryd injects its own store's MEMORY.md)", fix="")
    else:
        info.update(
            context="once (Claude Code loads MEMORY.md; memoryd adds recall)"
            if native.enabled
            else "once (memoryd injects MEMORY.md)",
            fix="",
        )
    info["old_store"] = (
        {
            "path": str(pending),
            "memories": len(_memory_files(pending)),
            "moves_to": str(cc_dir),
            "fix": f"memoryd import --from '{pending}' (--dry-run first shows what; until then this project is served "
            "from there)",
        }
        if pending
        else None
    )
    return info


def location_report(settings: Settings, cwd: str) -> dict[str, Any]:
    """`describe` with the installed hooks looked up; `{"error": …}` when the cwd cannot be resolved."""
    from memoryd.integrations.claude_code import hooks_forward_session_env, installed_scopes
    from memoryd.integrations.claude_plugin import plugin_enabled

    try:
        hooks = bool(installed_scopes(Path(cwd)) or plugin_enabled(Path(cwd)))
        return describe(settings, cwd, hooks_installed=hooks, hooks_forward_env=hooks_forward_session_env(Path(cwd)))
    except Exception as exc:  # e.g. a symlinked project folder: the message names the fix
        return {"error": str(exc)}


def location_lines(info: dict[str, Any] | None) -> list[str]:
    """Human lines for `memoryd status`."""
    if not info:
        return []
    if "error" in info:
        return [f"memory:  {info['error']}"]
    lines = [
        f"memory:  {info['memory_dir']} ({'Claude Code' if info['same_as_claude_code'] else 'memoryd'} dir, dialect "
        f"{info['dialect']})",
        f"native:  Claude Code's auto memory {'on' if info['native_memory'] else 'off'} ({info['native_reason']})",
        f"context: MEMORY.md reaches the model {info['context']}",
    ]
    if info.get("fix"):
        lines.append(f"fix:     {info['fix']}")
    lines += [f"ignored: {why}" for why in info.get("ignored_settings") or ()]
    if info.get("old_store"):
        old = info["old_store"]
        lines.append(
            f"import:  {old['memories']} memories stay in memoryd's own store until you import them into "
            f"{old['moves_to']}: {old['fix']}"
        )
    return lines
