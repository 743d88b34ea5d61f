"""Claude Code's memory dialect (as 2.1.330 writes it) beside memoryd's; MEMORY.md lines memoryd
did not write; `[[links]]` kept and followed through merges; crash leftovers; bounded registry."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.base import limits
from memoryd.dream.plan import offline_plan
from memoryd.store.index_publisher import INDEX_BACKUP_FILENAME
from memoryd.store.memdir import MemoryDir
from memoryd.store.registry import StoreRegistry

if TYPE_CHECKING:
    from tests.conftest import LiveDaemon

# Files exactly as the Claude Code CLI's agent writes them with its Write tool.
CC_DEBUG = """---
name: debugging-notes
description: The staging DB is reset every Sunday night; reseed before Monday demos
metadata:
  type: project
  owner: platform-team
---

Staging is wiped weekly. See [[deploy-checklist]] before reseeding.
"""
CC_DEPLOY = """---
name: deploy-checklist
description: Steps to deploy the API safely
metadata:
  type: reference
---

1. Run migrations. 2. Tag the release. Related: [[debugging-notes]]
"""
CC_INDEX = """# Memory index

Note to self: the staging DB is reset every Sunday night

- [Debugging notes](debugging-notes.md) — staging resets weekly, reseed first
- [Deploy checklist](deploy-checklist.md) — how we ship
"""


def _cc_dir(tmp_path: Path) -> MemoryDir:
    path = tmp_path / "memory"
    path.mkdir()
    (path / "debugging-notes.md").write_text(CC_DEBUG)
    (path / "deploy-checklist.md").write_text(CC_DEPLOY)
    (path / "MEMORY.md").write_text(CC_INDEX)
    return MemoryDir(path)


def test_claude_code_files_are_read_with_their_nested_type(tmp_path: Path) -> None:
    store = _cc_dir(tmp_path)
    assert store.invalid_files() == []
    listed = {h.filename: (h.type, h.name, h.dialect) for h in store.list()}
    assert listed == {
        "debugging-notes.md": ("project", "debugging-notes", "claude-code"),
        "deploy-checklist.md": ("reference", "deploy-checklist", "claude-code"),
    }
    memory = store.get("debugging-notes.md")
    assert memory.type == "project" and "[[deploy-checklist]]" in memory.body


def test_a_new_save_in_a_claude_code_dir_uses_its_dialect_and_keeps_the_index(tmp_path: Path) -> None:
    store = _cc_dir(tmp_path)
    saved = store.save(
        name="Testing preferences", description="Use the real database in tests", type="feedback", body="No mocks."
    ).memory
    assert saved.filename == "testing-preferences.md"
    text = saved.path.read_text()
    # the title kept as `name`, as Claude Code's own memory files have it; the file name is the slug (#51)
    assert "name: Testing preferences\n" in text and "metadata:\n  type: feedback\n" in text and "\ntype:" not in text
    index = store.index_path.read_text()
    for line in CC_INDEX.strip().splitlines():
        assert line in index.splitlines(), f"lost {line!r}"
    assert "](testing-preferences.md)" in index and index.count("](debugging-notes.md)") == 1
    assert (store.path / INDEX_BACKUP_FILENAME).read_text() == CC_INDEX
    # The same title again updates that file, whatever dialect spelled its name.
    again = store.save(
        name="testing preferences", description="Real DB in tests, always", type="feedback", body="No mocks at all."
    )
    assert not again.created and again.memory.filename == "testing-preferences.md"
    assert (store.path / INDEX_BACKUP_FILENAME).read_text() == CC_INDEX, (
        "the backup is of the index as found, written once"
    )


def test_a_rewrite_keeps_unknown_keys_nested_type_and_links(tmp_path: Path) -> None:
    store = _cc_dir(tmp_path)
    store.save(
        name="debugging-notes",
        description="Staging resets Sundays",
        type="project",
        body="Reseed with make seed.",
        filename="debugging-notes.md",
    )
    text = (store.path / "debugging-notes.md").read_text()
    assert "owner: platform-team" in text and "metadata:\n  type: project\n" in text
    assert "Reseed with make seed." in text and "[[deploy-checklist]]" in text, "a dropped link goes on a Related: line"


def test_memoryd_dialect_stays_the_default_for_a_new_dir(tmp_path: Path) -> None:
    store = MemoryDir(tmp_path / "memory")
    saved = store.save(name="Deploy day", description="We deploy on Tuesdays", type="project", body="b").memory
    assert saved.filename == "project_deploy-day.md" and "\ntype: project\n" in saved.path.read_text()


def test_hand_written_index_lines_survive_every_update(tmp_path: Path) -> None:
    store = MemoryDir(tmp_path / "memory")
    a = store.save(name="Alpha", description="first", type="user", body="a").memory.filename
    text = store.index_path.read_text()
    store.index_path.write_text(
        "## Pinned\nRemember: ask before force-pushing.\n\n" + text + "\n- [Wiki](https://wiki.example/x) — team wiki\n"
    )
    b = store.save(name="Beta", description="second", type="feedback", body="b").memory.filename
    store.save(name="Alpha", description="first, revised", type="user", body="a2")
    store.delete(b)
    store.rebuild_index()
    lines = store.index_path.read_text().splitlines()
    assert lines[:2] == ["## Pinned", "Remember: ask before force-pushing."]
    assert "- [Wiki](https://wiki.example/x) — team wiki" in lines
    assert [line for line in lines if f"]({a})" in line] == ["- [Alpha](user_alpha.md) — first, revised"]
    assert not any(f"]({b})" in line for line in lines)


def test_dream_merge_points_links_at_the_survivor(tmp_path: Path) -> None:
    store = _cc_dir(tmp_path)
    (store.path / "deploy-steps.md").write_text(
        CC_DEPLOY.replace("deploy-checklist", "deploy-steps")
    )  # a near-duplicate
    (store.path / "oncall.md").write_text(
        "---\nname: oncall\ndescription: who is on call\nmetadata:\n  type: reference\n---\nSee [[deploy-steps]] and "
        "[[deploy-steps|the steps]].\n"
    )
    plan = offline_plan(store, processed_logs=set())
    merges = [a for a in plan.actions if a.op == "delete"]
    assert len(merges) == 1 and merges[0].merged_into is not None
    gone, survivor = merges[0].filename, merges[0].merged_into
    for action in sorted(plan.actions, key=lambda a: a.op == "delete"):  # as DreamService applies them
        if action.op == "delete":
            store.delete(action.filename, source="dream", replaced_by=action.merged_into)
        else:
            store.save(
                name=action.name,
                description=action.description,
                type=action.type,
                body=action.body,
                filename=action.filename,
                source="dream",
            )
    stems = {gone[:-3]: survivor[:-3]}
    texts = "\n".join(p.read_text() for p in store.path.glob("*.md") if p.name != "MEMORY.md")
    assert f"[[{list(stems)[0]}]]" not in texts and f"[[{list(stems)[0]}|" not in texts
    assert f"[[{survivor[:-3]}|the steps]]" in (store.path / "oncall.md").read_text()


def test_binary_and_symlinked_files_are_listed_invalid_never_valid(tmp_path: Path) -> None:
    store = MemoryDir(tmp_path / "memory")
    store.save(name="Real", description="a real one", type="user", body="b")
    (store.path / "user_blob.md").write_bytes(
        b"---\nname: x\ndescription: y\ntype: user\n---\n" + bytes(range(256)) * 4
    )
    (store.path / "notes.md").write_text("just some text, no frontmatter\n")
    invalid = {f.filename: f.error for f in store.invalid_files()}
    assert (
        set(invalid) == {"user_blob.md", "notes.md"}
        and "UTF-8" in invalid["user_blob.md"]
        and "no type" in invalid["notes.md"]
    )
    assert [h.filename for h in store.list()] == ["user_real.md"]


def test_start_recovery_removes_temps_and_reconciles_the_index(tmp_path: Path) -> None:
    store = MemoryDir(tmp_path / "base" / "projects" / "-p" / "memory")
    store.save(name="Kept", description="acknowledged", type="user", body="b")
    # What a kill -9 between the file's rename and the index write leaves behind:
    (store.path / "user_orphan.md").write_text(
        "---\nname: Orphan\ndescription: saved, not indexed\ntype: user\n---\nb\n"
    )
    (store.path / ".tmp-abc123.part").write_text("half a file")
    registry = StoreRegistry(memory_base=tmp_path / "base")
    removed = registry.recover()
    assert removed == {str(store.path): 1} and not list(store.path.rglob(".tmp-*"))
    assert "](user_orphan.md)" in store.index_path.read_text() and "](user_kept.md)" in store.index_path.read_text()


def test_registry_is_a_bounded_lru(tmp_path: Path) -> None:
    registry = StoreRegistry(memory_base=tmp_path / "base", max_dirs=50)
    evicted: list[Path] = []
    registry.on_evict.append(lambda s: evicted.append(s.path))
    first = tmp_path / "cwds" / "0"
    for i in range(5000 // 25):
        cwd = tmp_path / "cwds" / str(i)
        cwd.mkdir(parents=True)
        registry.for_cwd(str(cwd))
        registry.for_cwd(str(first))  # used often: stays
    assert len(registry.known()) == 50 and len(evicted) == 200 - 50
    assert any(s.path.parent.name.endswith("cwds-0") for s in registry.known())
    assert not (tmp_path / "base").exists(), "resolving a cwd creates nothing on disk"
    assert limits.STORE_REGISTRY_MAX_DIRS <= 1024


def test_incremental_index_equals_a_full_rebuild(tmp_path: Path) -> None:
    """Many saves, updates and deletes patch MEMORY.md one line at a time; a full rescan agrees."""
    import random

    rng = random.Random(14)
    store = MemoryDir(tmp_path / "memory")
    store.save(name="seed", description="first", type="user", body="b")
    store.index_path.write_text("# Index\nA note kept by hand.\n\n" + store.index_path.read_text())
    alive: list[str] = []
    for i in range(120):
        op = rng.random()
        if op < 0.2 and alive:
            store.delete(alive.pop(rng.randrange(len(alive))))
        else:
            n = rng.randrange(40)
            saved = store.save(
                name=f"memory {n}",
                description=f"about {n} v{i}",
                type=("user", "feedback", "project", "reference")[n % 4],
                body=f"body {i}",
            )
            if saved.created:
                alive.append(saved.memory.filename)
    incremental = store.index_path.read_text()
    fresh = MemoryDir(store.path)  # a new process: nothing cached
    fresh.rebuild_index()
    assert fresh.index_path.read_text() == incremental
    assert incremental.startswith("# Index\nA note kept by hand.\n\n")
    pointed = {line.split("](", 1)[1].split(")", 1)[0] for line in incremental.splitlines() if line.startswith("- [")}
    assert pointed == {h.filename for h in fresh.list()}


# --- one style per folder (issue 32) -----------------------------------------------------------------


def _turn(live: LiveDaemon, project: Path, said: str) -> dict[str, object]:
    from tests.support.transcripts import new_session
    from tests.test_extract import turn_end

    session = new_session(live.daemon.settings.transcript_roots[0], str(project))
    session.user(said)
    session.assistant("Noted.")
    return turn_end(live, session)


def test_a_fresh_claude_code_folder_gets_claude_codes_dialect_from_extraction(tmp_path: Path) -> None:
    """The issue's case: Claude Code made the folder, memoryd writes first; its file must look like the ones
    Claude Code's agent writes beside it (`metadata: {type: …}`, `<kebab-slug>.md`)."""
    from memoryd.service.daemon import Daemon
    from tests.conftest import make_settings, serve
    from tests.support.clock import SteppingClock

    (Path.home() / ".claude").mkdir()
    project = tmp_path / "orders-svc"
    (project / ".git").mkdir(parents=True)
    (tmp_path / "memoryd").mkdir()
    with serve(Daemon(make_settings(tmp_path / "memoryd"), clock=SteppingClock())) as live:
        job = _turn(
            live,
            project,
            "We decided to drop Python 3.9 support at the end of the quarter because of the new typing features.",
        )
        assert job["status"] == "done" and job["memories_written"] == [
            "drop-python-3-9-support-at-end-of-quarter.md"
        ], job
        memdir = Path(live.client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        assert memdir.is_relative_to(Path.home() / ".claude")
        text = (memdir / "drop-python-3-9-support-at-end-of-quarter.md").read_text()
        assert (
            text.startswith("---\nname: Drop Python 3.9 support at end of quarter\n")
            and "metadata:\n  type: project\n" in text
        )
        assert "\ntype:" not in text and "**Why:** the new typing features." in text


def test_memoryds_own_store_keeps_memoryds_dialect(tmp_path: Path) -> None:
    from memoryd.service.daemon import Daemon
    from tests.conftest import make_settings, serve
    from tests.support.clock import SteppingClock

    project = tmp_path / "orders-svc"
    (project / ".git").mkdir(parents=True)
    (tmp_path / "memoryd").mkdir()
    with serve(
        Daemon(make_settings(tmp_path / "memoryd"), clock=SteppingClock())
    ) as live:  # no ~/.claude: memoryd's own store
        job = _turn(
            live,
            project,
            "We decided to drop Python 3.9 support at the end of the quarter because of the new typing features.",
        )
        assert job["memories_written"] == ["project_drop-python-3-9-support-at-end-of-quarter.md"], job
        memdir = Path(live.client.get("/v1/index", params={"cwd": str(project)}).json()["memory_dir"])
        assert "\ntype: project\n" in (memdir / job["memories_written"][0]).read_text()  # type: ignore[index]


def test_a_folder_in_claude_codes_tree_keeps_the_style_most_of_its_files_use(tmp_path: Path) -> None:
    registry = StoreRegistry(memory_base=tmp_path / "claude", claude_code_tree=tmp_path / "claude")
    mostly_ours = tmp_path / "claude" / "projects" / "-p" / "memory"
    mostly_ours.mkdir(parents=True)
    for i in range(2):
        (mostly_ours / f"user_note-{i}.md").write_text(f"---\nname: Note {i}\ndescription: d{i}\ntype: user\n---\nb\n")
    (mostly_ours / "cc-note.md").write_text("---\nname: cc-note\ndescription: d\nmetadata:\n  type: user\n---\nb\n")
    saved = (
        registry.for_path(mostly_ours)
        .save(name="Deploy day", description="Deploys on Tuesdays", type="project", body="b")
        .memory
    )
    assert saved.filename == "project_deploy-day.md" and "\ntype: project\n" in saved.path.read_text()
    empty = tmp_path / "claude" / "projects" / "-q" / "memory"
    assert (
        registry.for_path(empty)
        .save(name="Deploy day", description="Deploys on Tuesdays", type="project", body="b")
        .memory.filename
        == "deploy-day.md"
    )
    own = StoreRegistry(memory_base=tmp_path / "home", claude_code_tree=tmp_path / "claude").for_path(
        tmp_path / "home" / "projects" / "-q" / "memory"
    )
    assert (
        own.save(name="Deploy day", description="Deploys on Tuesdays", type="project", body="b").memory.filename
        == "project_deploy-day.md"
    )


def test_file_names_are_cut_between_words(tmp_path: Path) -> None:
    from memoryd.store.paths import slugify

    name = (
        "User role: data engineer, mostly Scala and Spark, new to this React frontend and the design system components"
    )
    slug = slugify(name)
    assert len(slug) <= limits.SLUG_MAX_CHARS and name.lower().replace(",", "").replace(":", "").replace(
        " ", "-"
    ).startswith(slug + "-")
    assert slug.endswith("-the-design") or slug.split("-")[-1] in name.lower().split()
