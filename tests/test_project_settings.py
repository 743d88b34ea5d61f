"""Per-project overrides (`[projects."<root>"]`): typed when the config loads, with an error that names the key
and the fix, and found one way by both readers (the layout mode and review before write)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.base.errors import ConfigError
from memoryd.config import ProjectSettings
from memoryd.config_sources import load_settings, setting_sources
from memoryd.service.daemon import Daemon
from tests.conftest import make_settings


def load(home: Path, table: str, root: str = "/home/me/app") -> ProjectSettings:
    (home / "config.toml").write_text(f'[projects."{root}"]\n{table}\n', encoding="utf-8")
    return load_settings({"MEMORYD_HOME": str(home)}, home=home).projects[root]


@pytest.mark.parametrize(
    ("table", "mode", "review"),
    [
        ('mode = "daily-log"', "daily-log", None),
        ('mode = "topics"\nreview = true', "topics", True),
        ("review = false", None, False),
        ('review = "yes"', None, True),  # the spellings review used to parse itself
        ('review = " On "', None, True),
        ('review = "1"', None, True),
        ('review = "off"', None, False),
        ('review = "NO"', None, False),
        ("review = 1", None, True),
        ('mode = ""', None, None),  # blank: follows the global setting, as before
        ("", None, None),
    ],
)
def test_config_files_that_worked_keep_their_meaning(
    home: Path, table: str, mode: str | None, review: bool | None
) -> None:
    overrides = load(home, table)
    assert (overrides.mode, overrides.review) == (mode, review)


@pytest.mark.parametrize(
    ("table", "key"), [('mode = "weekly"', "mode"), ('review = "maybe"', "review"), ('modes = "daily-log"', "modes")]
)
def test_a_bad_project_table_names_the_key_and_the_fix(home: Path, table: str, key: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load(home, table)
    message = raised.value.message
    assert f'projects."/home/me/app".{key}:' in message, message
    assert 'takes mode = "topics" or "daily-log" and review = true or false' in message, message


def test_memoryd_config_shows_what_a_project_sets(home: Path) -> None:
    (home / "config.toml").write_text(
        '[projects."/home/me/app"]\nmode = "daily-log"\nreview = "yes"\n', encoding="utf-8"
    )
    rows = {r["setting"]: r for r in setting_sources({"MEMORYD_HOME": str(home)}, home=home)}
    assert rows["projects.'/home/me/app'"]["value"] == {"mode": "daily-log", "review": True}


def test_both_readers_find_a_project_by_any_path_inside_it(home: Path, project: Path) -> None:
    """Keyed by a subfolder of the project, the table applies to the project's memory dir, for the mode and for
    review alike, also to a dir found on disk before any request named the project."""
    (project / "src").mkdir()
    other = project.parent / "other"
    (other / ".git").mkdir(parents=True)
    (home / "config.toml").write_text(
        f'[projects."{project / "src"}"]\nmode = "daily-log"\nreview = "on"\n', encoding="utf-8"
    )
    daemon = Daemon(make_settings(home))
    try:
        found_on_disk = daemon.stores.for_path(daemon.stores.memory_dir_for(str(project)))
        for store in (found_on_disk, daemon.stores.for_cwd(str(project / "src"))):
            assert daemon.modes.mode_for(store) == "daily-log" and daemon.review.wanted(store) is True
        elsewhere = daemon.stores.for_cwd(str(other))
        assert daemon.modes.mode_for(elsewhere) == "topics" and daemon.review.wanted(elsewhere) is False
    finally:
        daemon.state.close()


def test_per_key_the_first_project_that_sets_it_wins(home: Path, project: Path) -> None:
    """Two tables for one memory dir (its root and a subfolder): each key comes from the first that sets it."""
    (project / "docs").mkdir()
    (home / "config.toml").write_text(
        f'[projects."{project}"]\nreview = true\n[projects."{project / "docs"}"]\nmode = "daily-log"\nreview = false\n',
        encoding="utf-8",
    )
    daemon = Daemon(make_settings(home))
    try:
        store = daemon.stores.for_cwd(str(project))
        assert daemon.modes.mode_for(store) == "daily-log" and daemon.review.wanted(store) is True
    finally:
        daemon.state.close()
