"""Claude Code's settings files as memoryd rewrites them (issue 41 item 7): through a link into a dotfiles
repo, keeping the file's mode, one backup that keeps the original, and a FIFO or directory refused by name
instead of hanging or a traceback. Real files, real `memoryd` subprocesses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memoryd.integrations.claude_code import BACKUP_SUFFIX, hook_command, hooks_block, install_hooks, uninstall_hooks

ORIGINAL = {
    "theme": "dark",
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
}


def memoryd(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "CLAUDE", "XDG_RUNTIME_DIR"))}
    env |= {"HOME": str(tmp_path / "user"), "MEMORYD_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,  # the old code waited on a FIFO for ever
        check=False,
    )


def test_install_writes_through_a_link_keeps_the_mode_and_the_first_backup(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    original = json.dumps(ORIGINAL, indent=4) + "\n"
    dotfiles.write_text(original)
    dotfiles.chmod(0o644)
    link = tmp_path / "user" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles)
    block = hooks_block(hook_command(tmp_path / "mhome", "memoryd"))

    first = install_hooks(link, block)
    assert link.is_symlink() and os.readlink(link) == str(dotfiles)  # the link stays a link
    installed = json.loads(dotfiles.read_text())
    assert set(block["hooks"]) <= set(installed["hooks"]) and installed["theme"] == "dark"  # the target got them
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o644
    backup = Path(first["backup"])
    assert backup == link.with_name("settings.json" + BACKUP_SUFFIX)  # beside the link, not in the repo
    assert backup.read_text() == original

    uninstall_hooks(link)
    assert json.loads(dotfiles.read_text()) == ORIGINAL and link.is_symlink()
    again = install_hooks(link, block)
    assert Path(again["backup"]) == backup and backup.read_text() == original  # never overwritten
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o644 and link.is_symlink()
    assert sorted(p.name for p in dotfiles.parent.iterdir()) == ["claude-settings.json"]  # no temp file left


def test_a_new_settings_file_is_private_and_has_no_backup(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    result = install_hooks(path, hooks_block(hook_command(tmp_path / "mhome", "memoryd")))
    assert result["backup"] is None and stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_fifo_or_directory_settings_file_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    settings = tmp_path / "user" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    os.mkfifo(settings) if kind == "fifo" else settings.mkdir()
    for args in (("hooks", "--install"), ("hooks", "--uninstall"), ("setup", "--hooks", "--no-service")):
        done = memoryd(tmp_path, *args)
        line = done.stderr.strip()
        assert done.returncode == 2, (args, done.stderr)
        assert "\n" not in line and "Traceback" not in line, line
        what = "a FIFO (named pipe)" if kind == "fifo" else "a directory"
        assert f"{settings} is {what}, not a regular file" in line and "move it aside" in line
    assert stat.S_ISFIFO(settings.stat().st_mode) if kind == "fifo" else settings.is_dir()  # nothing changed
    assert not settings.with_name("settings.json" + BACKUP_SUFFIX).exists()


def test_config_and_claude_settings_refuse_a_file_in_their_own_words(tmp_path: Path) -> None:
    """config.toml and a Claude Code settings file share one bounded read (base/config_files.py read_small_file);
    each refusal names the file and why, then the reader's own fix, word for word as before (#40)."""
    from memoryd.base.errors import ConfigError, InvalidRequest
    from memoryd.config_sources import read_config_file
    from memoryd.integrations.claude_code import SettingsFile

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"#" * (2 * 1024 * 1024))
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    aside = "move it aside to use the defaults."
    for name, why in (("fifo", "is a FIFO (named pipe), not a regular file"), ("big", "is over 1024 KB")):
        path = tmp_path / name
        with pytest.raises(ConfigError) as config:
            read_config_file(path)
        fix = "memoryd reads its settings from a TOML file: " if name == "fifo" else ""
        assert str(config.value) == f"{path} {why}; {fix}{aside}"
        with pytest.raises(InvalidRequest) as claude:
            SettingsFile(path)
        assert str(claude.value) == (
            f"{path} {why}; Claude Code reads it as a regular JSON file: move it aside (mv '{path}' '{path}.moved'), "
            "then run the command again. Nothing was changed."
        )
    with pytest.raises(ConfigError, match="is a link to a missing file; fix the link or move it aside"):
        read_config_file(tmp_path / "dangling")
    assert SettingsFile(tmp_path / "dangling").data == {} and read_config_file(tmp_path / "nothing") == {}
