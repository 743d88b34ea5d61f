"""The bearer token: made on first start (mode 0600), `MEMORYD_TOKEN` overrides the file."""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

from memoryd.base import limits

log = logging.getLogger(__name__)
TOKEN_FILENAME = limits.TOKEN_FILENAME


def token_path(home: Path) -> Path:
    return home / TOKEN_FILENAME


def read_token(home: Path, override: str = "") -> str | None:
    """The token clients should send, or None when the daemon has never started."""
    if override:
        return override
    try:
        return token_path(home).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def load_or_create_token(home: Path, override: str = "") -> str:
    """Return the token, creating `$MEMORYD_HOME/token` (0600) the first time."""
    if override:
        return override
    path = token_path(home)
    home.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, limits.TOKEN_FILE_MODE)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            os.chmod(path, limits.TOKEN_FILE_MODE)
            log.warning("token file %s was readable by others (mode %o); reset it to 0600", path, mode)
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    token = secrets.token_urlsafe(limits.TOKEN_BYTES)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    log.info("created a new API token in %s", path)
    return token


def token_matches(expected: str, presented: str) -> bool:
    return hmac.compare_digest(expected.encode(), presented.encode())
