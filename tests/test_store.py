"""The plain-Python store: saves, concurrency, truncation edges, broken files, path resolution."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.base import files, limits
from memoryd.base.errors import InvalidFilename, InvalidFrontmatter, InvalidMemory, MemoryNotFound
from memoryd.store import frontmatter, headers
from memoryd.store import index_publisher as publisher_module
from memoryd.store.frontmatter import head_meta, split_frontmatter
from memoryd.store.index import truncate_index
from memoryd.store.memdir import MemoryDir
from memoryd.store.paths import default_memory_dir, memory_path, resolve_memory_dir, sanitize_path


def _store(tmp_path: Path) -> MemoryDir:
    return MemoryDir(tmp_path / "memory")


def _index_links(store: MemoryDir) -> set[str]:
    text = store.index_path.read_text(encoding="utf-8")
    return {line.split("](", 1)[1].split(")", 1)[0] for line in text.splitlines() if line.startswith("- [")}


def _files(store: MemoryDir) -> set[str]:
    return {p.name for p in store.path.glob("*.md") if p.name != limits.INDEX_FILENAME}


def test_save_writes_frontmatter_and_updates_in_place(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = store.save(name="Deploy: blue/green", description='Uses "blue" then green', type="project", body="step 1")
    assert first.created and first.memory.filename == "project_deploy-blue-green.md"
    text = first.memory.path.read_text()
    assert text.startswith("---\n") and "created:" in text and "modified:" in text
    second = store.save(name="deploy: BLUE/green", description="v2", type="project", body="step 2")
    assert not second.created and second.memory.filename == first.memory.filename
    assert second.memory.created == first.memory.created
    assert _files(store) == {first.memory.filename}
    # Same name, other type: a different memory.
    other = store.save(name="Deploy: blue/green", description="d", type="reference", body="b")
    assert other.created and _files(store) == {first.memory.filename, other.memory.filename}


def test_unicode_colons_quotes_roundtrip(tmp_path: Path) -> None:
    store = _store(tmp_path)
    name, desc = "Café: \"quoted\" — 日本語 'x'", "key: value — with: colons & 'quotes' #hash"
    saved = store.save(name=name, description=desc, type="user", body="ünïcode body: yes\n- item")
    got = store.get(saved.memory.filename)
    assert (got.name, got.description, got.body) == (name, desc, "ünïcode body: yes\n- item")
    cjk = store.save(name="日本語だけ", description="d", type="user", body="b")
    assert cjk.memory.filename.startswith("user_memory-") and store.get(cjk.memory.filename).name == "日本語だけ"


@pytest.mark.parametrize("same_name", [False, True])
def test_forty_concurrent_saves_lose_nothing(tmp_path: Path, same_name: bool) -> None:
    store = _store(tmp_path)
    errors: list[BaseException] = []

    def save(i: int) -> None:
        try:
            store.save(
                name="shared" if same_name else f"memory {i}", description=f"d{i}", type="project", body=f"body {i}"
            )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    files = _files(store)
    assert len(files) == (1 if same_name else 40)
    assert _index_links(store) == files
    assert not list(store.path.rglob(".tmp-*"))
    if same_name:
        assert store.get("project_shared.md").body in {f"body {i}" for i in range(40)}


def test_index_truncation_line_edges() -> None:
    lines200 = "".join(f"- [m{i}](user_m{i}.md) — d\n" for i in range(200))
    served = truncate_index(lines200)
    assert not served.truncated and served.content == lines200 and served.lines == 200
    served = truncate_index(lines200 + "- [m200](user_m200.md) — d\n")
    assert served.truncated and "m199" in served.content and "m200.md" not in served.content
    assert "200 lines" in served.content and "WARNING" in served.content.upper()


def test_index_truncation_byte_cut_on_last_newline() -> None:
    small = "- [a](user_a.md) — short\n"
    big = "- [b](user_b.md) — " + "x" * 30_000 + "\n"
    served = truncate_index(small + big)
    assert served.truncated and "25,000 bytes" in served.content
    assert served.content.startswith(small) and "xxx" not in served.content
    # exactly at the byte limit: untouched
    exact = "y" * (limits.INDEX_MAX_BYTES - 1) + "\n"
    assert not truncate_index(exact).truncated
    assert truncate_index("y" * limits.INDEX_MAX_BYTES + "z\n").truncated
    only = truncate_index(big)  # one 30 KB line and nothing else: cut to nothing + warning
    assert only.truncated and "xxx" not in only.content and only.bytes < 1000


def test_limits_at_edge(tmp_path: Path) -> None:
    store = _store(tmp_path)
    body = "a" * limits.MEMORY_BODY_MAX_BYTES
    store.save(name="big", description="d", type="user", body=body)
    with pytest.raises(InvalidMemory, match="split"):
        store.save(name="bigger", description="d", type="user", body=body + "a")
    with pytest.raises(InvalidMemory, match="unknown memory type"):
        store.save(name="n", description="d", type="secretz", body="b")
    with pytest.raises(InvalidMemory):
        store.save(name="n" * (limits.MEMORY_NAME_MAX_CHARS + 1), description="d", type="user", body="b")
    store.save(name="n" * limits.MEMORY_NAME_MAX_CHARS, description="d", type="user", body="b")


@pytest.mark.parametrize(
    "bad",
    [
        "../x.md",
        "..%2fx.md",
        "/etc/passwd",
        "user_../../x.md",
        "user_a\\..\\b.md",
        "user_a\x00.md",
        "user_x.txt",
        ".md",
        ".hidden.md",
        "MEMORY.md",
        "a/b.md",
        "x" * 253 + ".md",
        "user_\ud800.md",
    ],
)
def test_traversal_refused(tmp_path: Path, bad: str) -> None:
    store = _store(tmp_path)
    with pytest.raises(InvalidFilename):
        memory_path(store.path, bad)
    with pytest.raises(InvalidFilename):
        store.delete(bad)


def test_broken_yaml_listed_refused_and_untouched(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.save(name="good", description="d", type="user", body="b")
    broken = store.path / "user_broken.md"
    raw = b"---\nname: broken\ndescription: [unclosed\ntype: user\n---\nbody\n"
    broken.write_bytes(raw)
    assert [f.filename for f in store.invalid_files()] == ["user_broken.md"]
    assert [h.filename for h in store.list()] == ["user_good.md"]
    with pytest.raises(InvalidFrontmatter):
        store.get("user_broken.md")
    with pytest.raises(InvalidFrontmatter, match="untouched"):
        store.save(name="broken", description="d", type="user", body="b", filename="user_broken.md")
    with pytest.raises(InvalidFrontmatter):
        store.save(name="broken", description="d", type="user", body="b")
    assert broken.read_bytes() == raw
    store.rebuild_index()
    assert _index_links(store) == {"user_good.md"}
    with pytest.raises(MemoryNotFound):
        store.get("user_missing.md")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "HOME": str(cwd),
            "PATH": "/usr/bin:/bin:/usr/local/bin",
        },
    )


def test_worktrees_and_subdirs_share_one_dir(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "f").write_text("x")
    _git("add", "f", cwd=repo)
    _git("commit", "-qm", "init", cwd=repo)
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=repo)
    (repo / "sub" / "deeper").mkdir(parents=True)
    base = tmp_path / "base"
    main_dir = default_memory_dir(base, str(repo))
    assert default_memory_dir(base, str(tmp_path / "wt")) == main_dir
    assert default_memory_dir(base, str(repo / "sub" / "deeper")) == main_dir
    assert main_dir == base / "projects" / sanitize_path(str(repo.resolve())) / "memory"
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert default_memory_dir(base, str(plain)) == base / "projects" / sanitize_path(str(plain.resolve())) / "memory"
    assert (
        resolve_memory_dir(str(plain), env_override=str(tmp_path / "o"), config_dir="", memory_base=base)
        == (tmp_path / "o").resolve()
    )


def test_crash_leftover_temps_removed_on_first_rebuild(tmp_path: Path) -> None:
    from memoryd.base.files import TEMP_DIRNAME, TEMP_PREFIX

    (tmp_path / "memory" / TEMP_DIRNAME).mkdir(parents=True)
    leftover = tmp_path / "memory" / f"{TEMP_PREFIX}user_x.md.part"  # an older memoryd staged beside the files
    staged = tmp_path / "memory" / TEMP_DIRNAME / f"{TEMP_PREFIX}abc.part"
    leftover.write_text("half a file")
    staged.write_text("half a file")
    store = _store(tmp_path)
    store.save(name="n", description="d", type="user", body="b")
    assert not leftover.exists() and not staged.exists() and _index_links(store) == {"user_n.md"}
    assert not list(store.path.rglob(f"{TEMP_PREFIX}*")), "a save leaves no temp file behind"


def test_staging_dir_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """Saves stage in <dir>/.memoryd-tmp/; a link planted there is never written through."""
    from memoryd.base.files import TEMP_DIRNAME

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / TEMP_DIRNAME).symlink_to(outside)
    store = _store(tmp_path)
    with pytest.raises(OSError):
        store.save(name="n", description="d", type="user", body="b")
    assert list(outside.iterdir()) == [] and _files(store) == set()


# --- the header fast path reads what YAML reads -------------------------------------------
_VALUE_CHARS = "aZ09 '\"#:-_.,!?&*[]{}|>%@`~=+<\t\\é\u2028\x07"
_frontmatter_value = st.one_of(
    st.text(alphabet=_VALUE_CHARS, max_size=12),
    st.sampled_from(
        [
            "yes",
            "No",
            "ON",
            "null",
            "~",
            "1.5",
            "2025-01-01",
            "2025-01-01T00:00:00Z",
            "'quoted'",
            "'it''s'",
            '"dq"',
            '"esc\\n"',
            "a: b",
            "a #c",
            "trail:",
            "0x1F",
            ".inf",
            "<<",
            "=",
            "- item",
            "user",
            "Deploy: blue",
        ]
    ),
)
_frontmatter_line = st.one_of(
    st.tuples(
        st.sampled_from(["name", "description", "type", "created", "other", "on", "metadata"]), _frontmatter_value
    ).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(
        [
            "metadata:",
            "  type: user",
            "  type: 'feedback'",
            "   type: user",
            "  x: y: z",
            "",
            "# note",
            "name:",
            "name:x",
            "---x",
            "- a",
            " lead",
        ]
    ),
)


@settings(max_examples=400, deadline=None)
@given(
    lines=st.lists(_frontmatter_line, max_size=8),
    fence=st.sampled_from(["---", "--- ", "---\r"]),
    body=st.sampled_from(["", "\nbody\n", "body\n---\nmore"]),
)
def test_header_fast_path_reads_what_yaml_reads(lines: list[str], fence: str, body: str) -> None:
    """`split_head`/`split_memory` give `head_meta`/`split_frontmatter`'s result (or error) for
    any frontmatter: the regex path only answers when YAML would read the same text."""
    text = "\n".join(["---", *lines, fence]) + "\n" + body

    def outcome(fn: Callable[[], object]) -> object:
        try:
            return fn()
        except InvalidFrontmatter as exc:
            return ("error", exc.message)

    assert outcome(lambda: headers.split_head(text, source="f.md")[0]) == outcome(
        lambda: head_meta(text, source="f.md")
    )
    assert outcome(lambda: headers.split_memory(text, source="f.md")) == outcome(
        lambda: split_frontmatter(text, source="f.md")
    )


def test_header_fast_path_serves_plain_files_without_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save's own files (quoted stamps included) and Claude Code's nested type are read by the
    line scan: YAML is never called for them."""
    store = _store(tmp_path)
    store.save(name="Deploy", description="blue then green", type="project", body="step 1")
    (store.path / "cc-note.md").write_text(
        "---\nname: cc-note\ndescription: from claude\nmetadata:\n  type: feedback\n---\n\nbody\n"
    )
    calls: list[str] = []
    real = frontmatter.split_frontmatter
    monkeypatch.setattr(
        frontmatter, "split_frontmatter", lambda text, source="": calls.append(source) or real(text, source=source)
    )
    got = {h.filename: (h.type, h.dialect) for h in MemoryDir(store.path).all_headers()}
    assert got == {"project_deploy.md": ("project", "memoryd"), "cc-note.md": ("feedback", "claude-code")}
    assert calls == []


def test_big_watched_dir_reads_what_changed_without_a_sweep(tmp_path: Path) -> None:
    """At STORE_WATCHED_TRUST_MIN_FILES files a read no longer stats every file: a new file (the
    listing changed) and a hand edit in place that the watcher names both show; the kept order
    stays newest first."""
    store = _store(tmp_path)
    store.path.mkdir()
    for i in range(limits.STORE_WATCHED_TRUST_MIN_FILES):
        (store.path / f"user_note-{i}.md").write_text(
            f"---\nname: note {i}\ndescription: d {i}\ntype: user\n---\n\nbody\n"
        )
    store.set_watched(True)
    assert len(store.all_headers()) == limits.STORE_WATCHED_TRUST_MIN_FILES
    (store.path / "project_new.md").write_text("---\nname: brand new\ndescription: added by hand\ntype: project\n---\n")
    edited = store.path / "user_note-7.md"
    edited.write_text("---\nname: renamed by hand\ndescription: edited in place\ntype: feedback\n---\n")
    os.utime(edited, ns=(2**62, 2**62))  # far in the future: it must lead the newest-first order
    store.changed_on_disk(edited.name)  # what the watcher reports
    headers = store.all_headers()
    assert len(headers) == limits.STORE_WATCHED_TRUST_MIN_FILES + 1
    assert (headers[0].filename, headers[0].name, headers[0].type) == ("user_note-7.md", "renamed by hand", "feedback")
    assert "project_new.md" in {h.filename for h in headers}
    assert [h.mtime for h in headers] == sorted((h.mtime for h in headers), reverse=True)
    assert [h.filename for h in store.list("feedback")] == ["user_note-7.md"]


def test_publish_never_renames_over_a_target_changed_since_its_text_was_built(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_text("- [Theirs](theirs.md) — before\n")
    staged = files.stage(target, "- [Ours](ours.md) — built from 'before'\n")
    staged.expect = files.key_now(target)
    target.write_text("- [Theirs](theirs.md) — before\n- [Agent](agent.md) — written meanwhile\n")  # an agent's edit
    with pytest.raises(files.TargetMoved):
        files.publish([staged])
    assert "written meanwhile" in target.read_text()  # nothing renamed over it
    staged.expect = files.key_now(target)  # rebuilt from what is there now: published
    files.publish([staged])
    assert "Ours" in target.read_text()


def test_a_save_merges_an_index_edit_made_while_it_was_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent edits MEMORY.md between memoryd's read of it and its rename: the agent's line is kept
    (the save merges again from the edited index) instead of being overwritten blindly."""
    store = _store(tmp_path)
    store.save(name="First", description="first memory", type="user", body="one")
    real_publish, edits = publisher_module.publish, []

    def agent_edits_first(staged: list[files.Staged], **kwargs: object) -> None:
        if not edits and any(f.path == store.index_path for f in staged):
            edits.append(1)
            with store.index_path.open("a") as fh:
                fh.write("- [Agent note](agent-note.md) — the agent wrote this line\n")
        real_publish(staged, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(publisher_module, "publish", agent_edits_first)
    saved = store.save(name="Second", description="second memory", type="user", body="two")
    index = store.index_path.read_text()
    assert edits and "the agent wrote this line" in index
    assert saved.memory.filename in index and "first memory" in index
