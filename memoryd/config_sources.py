"""Where settings come from: the embedded defaults, `$MEMORYD_HOME/config.toml`, then environment variables,
merged and checked into one `Settings` (`load_settings`), and which of them set each value (`setting_sources`)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memoryd.base import limits
from memoryd.base.errors import ConfigError
from memoryd.config import (
    CONFIG_FILENAME,
    DEFAULT_HOME,
    EXAMPLE_FILENAME,
    LLM_BACKENDS,
    PROJECT_TABLE_FIX,
    Settings,
    not_a_directory,
)


def _set(data: dict[str, Any], section: str, key: str, value: Any) -> None:
    data.setdefault(section, {})[key] = value


# Environment variables that override one file setting: name → (section, key).
ENV_SETTINGS: dict[str, tuple[str, str]] = {
    "MEMORYD_HOST": ("server", "host"),
    "MEMORYD_PORT": ("server", "port"),
    "MEMORYD_RECALL_DENSE": ("recall", "dense"),
}
# Read from the environment only (never the file), as `load_settings` fills them in.
ENV_ONLY = (
    "MEMORYD_HOME",
    "MEMORYD_TOKEN",
    "MEMORYD_MEMORY_DIR",
    "MEMORYD_LLM",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)
SECRET_ENV = {"MEMORYD_TOKEN", "ANTHROPIC_API_KEY"}


def _env_value(name: str, raw: str) -> Any:
    if name == "MEMORYD_PORT":
        try:
            return int(raw)
        except ValueError as exc:
            raise ConfigError(f"MEMORYD_PORT={raw!r} is not a port number; set it to e.g. 7377.") from exc
    return raw.strip().lower() if name == "MEMORYD_RECALL_DENSE" else raw


def example_config() -> str:
    """The commented example config shipped in the package: every setting with its default."""
    from importlib.resources import files

    return files("memoryd").joinpath(EXAMPLE_FILENAME).read_text(encoding="utf-8")


def setting_sources(env: Mapping[str, str] | None = None, *, home: Path | None = None) -> list[dict[str, Any]]:
    """Each file setting's effective value and where it came from: default, the config file, or an
    environment variable; then the environment-only ones (secrets as "set", never their value)."""
    env = os.environ if env is None else env
    settings = load_settings(env, home=home)
    path = settings.home / CONFIG_FILENAME
    in_file = read_config_file(path)
    from_env = {where: name for name, where in ENV_SETTINGS.items() if env.get(name)}
    rows = []
    for section, values in settings.model_dump(mode="json").items():
        if not isinstance(values, dict) or section == "projects":
            continue
        for key, value in values.items():
            source = (
                f"env {from_env[(section, key)]}"
                if (section, key) in from_env
                else str(path)
                if key in in_file.get(section, {})
                else "default"
            )
            rows.append({"setting": f"{section}.{key}", "value": value, "source": source})
    for project, overrides in settings.projects.items():
        rows.append(
            {"setting": f"projects.{project!r}", "value": overrides.model_dump(exclude_none=True), "source": str(path)}
        )
    for name in ENV_ONLY:
        if env.get(name):
            rows.append(
                {
                    "setting": name,
                    "value": "(set, not shown)" if name in SECRET_ENV else env[name],
                    "source": f"env {name}",
                }
            )
    return rows


def _problem(loc: tuple[int | str, ...], message: str) -> str:
    """One invalid setting as the file spells it; a project's key quoted, with what its table takes."""
    message = message.removeprefix("Value error, ")
    if loc[:1] != ("projects",) or len(loc) < 2:
        return f"{'.'.join(str(p) for p in loc)}: {message}"
    where = ".".join([f'projects."{loc[1]}"', *(str(p) for p in loc[2:])])
    return f"{where}: {message} ({PROJECT_TABLE_FIX})"


def read_config_file(path: Path) -> dict[str, Any]:
    """config.toml's tables ({} when there is none). A FIFO, a directory, a link to nothing or an unreadable
    file is refused by name, never silently taken for "no config" (nor waited on)."""
    from memoryd.base.config_files import FileRefused, read_small_file

    aside = "move it aside to use the defaults"
    fixes = {
        "kind": f"memoryd reads its settings from a TOML file: {aside}",
        "access": f"fix its permissions or {aside}",
    }
    try:
        got = read_small_file(path, limits.SETTINGS_FILE_MAX_BYTES)
    except FileRefused as exc:
        raise ConfigError(f"{exc}; {fixes.get(exc.why, aside)}.") from exc
    if got is None:
        if path.is_symlink():
            raise ConfigError(f"{path} is a link to a missing file; fix the link or {aside}.")
        return {}
    raw, _ = got
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it or {aside}.") from exc


def load_settings(env: Mapping[str, str] | None = None, *, home: Path | None = None) -> Settings:
    """Build Settings from the defaults, the user's config file, then the environment."""
    env = os.environ if env is None else env
    home = home or Path(env.get("MEMORYD_HOME") or DEFAULT_HOME).expanduser()
    path = home / CONFIG_FILENAME
    data = read_config_file(path)
    for name, (section, key) in ENV_SETTINGS.items():
        if env.get(name):
            _set(data, section, key, _env_value(name, env[name]))
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(e["loc"], e["msg"]) for e in exc.errors())
        raise ConfigError(
            f"invalid setting in {path} or the environment ({problems}); `memoryd config init --print` "
            "shows every setting with its default and what it does."
        ) from exc
    settings.home = home
    settings.token_override = env.get("MEMORYD_TOKEN", "")
    settings.memory_dir_override = env.get("MEMORYD_MEMORY_DIR", "")
    if settings.memory_dir_override and (why := not_a_directory(settings.memory_dir_override)):
        raise ConfigError(f"invalid setting in the environment (MEMORYD_MEMORY_DIR: {why}).")
    settings.anthropic_api_key = env.get("ANTHROPIC_API_KEY", "")
    settings.anthropic_base_url = env.get("ANTHROPIC_BASE_URL", "")
    llm_env = env.get("MEMORYD_LLM", "").strip().lower()
    settings.llm_forced_off = llm_env in {"off", "0", "false", "no"}
    settings.llm_backend_override = llm_env if llm_env in LLM_BACKENDS else ""
    return settings
