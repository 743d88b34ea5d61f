"""Issue 31, hostile input round two: alias bombs, links and secret names in team sync, settings a
cloned repo chooses, framing, Origin ports and split secrets. Each test drives the real door."""

from __future__ import annotations

import resource
import time
from pathlib import Path

from memoryd.errors import InvalidFrontmatter
from memoryd.store.frontmatter import split_frontmatter
from tests.conftest import LiveDaemon, recall_api, save_memory

# 9 levels of 9 aliases: ~387 million strings once a value becomes text (issue 31: 361 bytes → 5 GB).
ALIAS_BOMB = "---\nname: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi")
) + "description: *i\ntype: user\n---\nbody\n"


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    try:
        split_frontmatter(ALIAS_BOMB, source="user_bomb.md")
    except InvalidFrontmatter as exc:
        assert "anchor or alias" in exc.message and "user_bomb.md" in exc.message
    else:
        raise AssertionError("an alias bomb parsed")
    assert time.perf_counter() - started < 0.5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50_000  # KB: nothing was built


def test_deep_or_huge_frontmatter_is_refused_and_plain_yaml_still_parses() -> None:
    for text, reason in (("---\na: " + "[" * 40 + "]" * 40 + "\n---\n", "nests deeper"),
                         ("---\ndescription: " + "x" * 20_000 + "\n---\n", "over"),
                         ("---\nitems: [" + ", ".join(["1"] * 3_000) + "]\n---\n", "values")):
        try:
            split_frontmatter(text)
        except InvalidFrontmatter as exc:
            assert reason in exc.message, exc.message
        else:
            raise AssertionError(reason)
    meta, body = split_frontmatter("---\nname: 'x: y'\nmetadata:\n  type: user\ntags: [a, b]\n---\nhi\n")
    assert meta == {"name": "x: y", "metadata": {"type": "user"}, "tags": ["a", "b"]} and body == "hi\n"


def test_an_alias_bomb_in_the_memory_dir_is_listed_invalid_and_costs_nothing(live: LiveDaemon, project: Path) -> None:
    save_memory(live, project, "Deploy day", "We deploy on Tuesdays", "Deploys happen on Tuesday afternoons.")
    folder = live.daemon.stores.for_cwd(str(project)).path
    (folder / "user_bomb.md").write_text(ALIAS_BOMB)
    started = time.perf_counter()
    listed = live.client.get("/v1/memories", params={"cwd": str(project)}).json()
    assert [m["filename"] for m in listed["memories"]] == ["project_deploy-day.md"]
    invalid = {f["filename"]: f["error"] for f in live.client.get("/v1/status").json()["invalid_files"][str(folder)]}
    assert "anchor or alias" in invalid["user_bomb.md"]
    r = live.client.get("/v1/memories/user_bomb.md", params={"cwd": str(project)})
    assert r.status_code == 422 and "anchor or alias" in r.json()["error"]["message"]
    assert "lol" not in str(recall_api(live, project, "lol deploy tuesday"))
    assert time.perf_counter() - started < 5
    assert "bomb" not in (folder / "MEMORY.md").read_text()
