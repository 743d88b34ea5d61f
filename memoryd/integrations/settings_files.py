"""The one read of Claude Code's settings files: bounded, never a FIFO or device, cached by stat.

A cloned repository controls `<project>/.claude/settings*.json`: issue 41's repo committed it as a
link to `/dev/zero` and took the daemon to 1.5 GB on its first SessionStart. Every read of a
settings file goes through here: a regular file of at most `limits.SETTINGS_FILE_MAX_BYTES`, a
repository's link only when it stays inside the repository, parsed once per (file, stat) state.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from memoryd.base import limits
from memoryd.base.files import read_capped

_CACHE_SIZE = 64  # settings files whose parsed object is kept (user, project, local per recent project)
_cache: OrderedDict[tuple[str, str], tuple[tuple[int, ...], dict[str, Any]]] = OrderedDict()
_cache_lock = threading.Lock()


class SettingsRefused(OSError):
    """A settings file memoryd will not read (a link out of its repository, a FIFO, a device, too large)."""


def _stat_key(path: Path) -> tuple[int, ...] | None:
    """What says the file changed without reading it: the link's and its target's identity and times."""
    try:
        lst = os.lstat(path)
        st = os.stat(path) if os.path.islink(path) else lst
    except OSError:
        return None
    return (lst.st_ino, lst.st_mtime_ns, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _inside(path: Path, root: Path) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_settings_text(path: Path, *, within: Path | None = None) -> str | None:
    """A settings file's text; None when it does not exist. `within`: the repository that controls the
    file (a link may not leave it). Raises SettingsRefused naming why it was not read."""
    if not os.path.lexists(path):
        return None
    if within is not None and not _inside(path, within):
        raise SettingsRefused(f"{path} is a symbolic link out of {within}; memoryd does not follow it")
    try:
        data, _ = read_capped(path, limits.SETTINGS_FILE_MAX_BYTES, follow_links=True)
    except FileNotFoundError:
        return None  # a dangling link
    except OSError as exc:
        raise SettingsRefused(
            f"{path} {exc.strerror}; memoryd ignores it (a settings file is a small regular file)"
        ) from exc
    return data.decode("utf-8", errors="replace")


def read_settings(path: Path | None, *, within: Path | None = None) -> dict[str, Any]:
    """A settings file's object; {} when missing, refused or not a JSON object (Claude Code ignores those too).
    Parsed once per stat state: the hook path asks on every prompt. The object is shared: do not change it."""
    if path is None:
        return {}
    key = _stat_key(path)
    if key is None:
        return {}
    ident = (str(path), str(within))
    with _cache_lock:
        hit = _cache.get(ident)
        if hit is not None and hit[0] == key:
            _cache.move_to_end(ident)
            return hit[1]
    try:
        text = read_settings_text(path, within=within)
        data = json.loads(text or "{}")
    except (OSError, ValueError, RecursionError):
        data = {}
    data = data if isinstance(data, dict) else {}
    with _cache_lock:
        _cache[ident] = (key, data)
        _cache.move_to_end(ident)
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return data


def refusal(path: Path, *, within: Path | None = None) -> str:
    """Why a settings file is not read ("" when it is, or does not exist): for `memoryd doctor`."""
    try:
        read_settings_text(path, within=within)
    except SettingsRefused as exc:
        return str(exc)
    return ""
