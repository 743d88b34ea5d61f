"""Settings memoryd cannot use are refused by name before anything starts (issue 41 item 8): every number
finite and in a range, memory dirs that are directories, a config.toml that is a file. Real files, real
`memoryd config` and `memoryd serve` subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel

from memoryd.base.errors import ConfigError
from memoryd.config import Settings
from memoryd.config_sources import load_settings

# End-to-end (daemons and CLIs as subprocesses against oversized and special files):
# CI runs it after the fast suite, which stays under 2 minutes.
pytestmark = pytest.mark.e2e


def numeric_settings() -> list[tuple[str, str, type, BaseModel]]:
    """(section, key, int or float, the section's model) of every number a config file can set."""
    found = []
    for section, field in Settings.model_fields.items():
        model = field.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or section == "projects":
            continue
        for key, info in model.model_fields.items():
            if info.annotation in (int, float):
                found.append((section, key, info.annotation, model))
    return found


def test_every_numeric_setting_has_a_finite_range() -> None:
    numbers = numeric_settings()
    assert len(numbers) >= 20  # the walk found them (the check below is vacuous otherwise)
    unbounded = [
        f"{section}.{key}"
        for section, key, _, model in numbers
        if not any(isinstance(m, (annotated_types.Le, annotated_types.Lt)) for m in model.model_fields[key].metadata)
    ]
    assert not unbounded, f"settings without an upper bound: {unbounded}"


@pytest.mark.parametrize("value", ["inf", "nan", "1e308", "-inf"])
def test_a_number_out_of_range_names_its_key(tmp_path: Path, value: str) -> None:
    for section, key, kind, _ in numeric_settings():
        literal = value if kind is float else "9" * 30  # an int setting: a number far past its range
        (tmp_path / "config.toml").write_text(f"[{section}]\n{key} = {literal}\n")
        with pytest.raises(ConfigError) as refused:
            load_settings({}, home=tmp_path)
        assert f"{section}.{key}:" in refused.value.message


def memoryd(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "ANTHROPIC_", "CLAUDE"))}
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env={**clean, "MEMORYD_HOME": str(home), "HOME": str(home.parent), "MEMORYD_RECALL_DENSE": "off", **env},
        capture_output=True,
        text=True,
        timeout=60,  # the old code waited on a config.toml FIFO, or served for ever with a FIFO memory dir
        check=False,
    )


def refused_in_one_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    line = done.stderr.strip()
    assert done.returncode == 2, done.stderr[-2000:]
    assert "\n" not in line and "Traceback" not in line, line
    assert all(word in line for word in words), line


def test_config_and_serve_refuse_an_infinite_interval(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[dream]\ncheck_interval_seconds = inf\n[llm]\ntimeout_seconds = 1e308\n")
    for args in (("config",), ("serve", "--port", "0")):
        refused_in_one_line(memoryd(home, *args), "dream.check_interval_seconds", "llm.timeout_seconds", "finite")


@pytest.mark.parametrize("key", ["memory_dir", "memory_base", "MEMORYD_MEMORY_DIR"])
def test_a_memory_dir_that_is_a_fifo_is_refused(tmp_path: Path, key: str) -> None:
    home, fifo = tmp_path / "home", tmp_path / "fifo"
    home.mkdir()
    os.mkfifo(fifo)
    env = {}
    if key == "MEMORYD_MEMORY_DIR":
        env[key] = str(fifo)
    else:
        (home / "config.toml").write_text(f'[memory]\n{key} = "{fifo}"\n')
    for args in (("config",), ("serve", "--port", "0")):
        refused_in_one_line(memoryd(home, *args, **env), key, f"{fifo} is a FIFO (named pipe), not a directory")
    assert not (home / "daemon.json").exists()


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling link"])
def test_a_config_toml_that_is_not_a_file_is_refused(tmp_path: Path, kind: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = home / "config.toml"
    if kind == "fifo":
        os.mkfifo(config)
    elif kind == "directory":
        config.mkdir()
    else:
        config.symlink_to(tmp_path / "dotfiles" / "memoryd.toml")
    what = {"fifo": "is a FIFO (named pipe)", "directory": "is a directory", "dangling link": "link to a missing file"}
    for args in (("config",), ("serve", "--port", "0")):
        refused_in_one_line(memoryd(home, *args), str(config), what[kind], "move it aside")


def test_a_config_toml_kept_as_a_link_is_read(tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    target = tmp_path / "dotfiles" / "memoryd.toml"
    target.write_text("[recall]\nmax_memories = 3\n")
    (tmp_path / "config.toml").symlink_to(target)
    assert load_settings({}, home=tmp_path).recall.max_memories == 3
