"""Memory at the moment of action (issue 38): PreToolUse through the real hook endpoint, what a memory
applies to (derived, or written in its frontmatter in both dialects), the injected block, and
`MEMORYD_RECALL=off` for one session (issue 39, 10)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from memoryd.relevance.applies import AppliesTo
from memoryd.relevance.applies_derive import derive
from memoryd.relevance.applies_match import contradicts, meets
from memoryd.relevance.shell import command_key
from memoryd.store.frontmatter import split_frontmatter
from tests.conftest import LiveDaemon
from tests.support.clock import POLL_SECONDS
from tests.support.servers import DaemonProcess, daemon_env
from tests.test_extract import llm_live  # noqa: F401  (the fixture: a daemon whose model is a scripted Messages API)

PNPM = ("Package manager", "Use pnpm, never npm: the lockfile is pnpm-lock.yaml")
MIGRATIONS = ("Migrations are append-only", "Never edit an applied migration in db/migrations/; add a new one")


def save(live: LiveDaemon, cwd: Path, name: str, description: str, body: str = "", **extra: Any) -> str:
    # `forbid: {}`: these memories hold no act, so what is tested is tool-time recall (the guard that holds
    # acts, issue 50, is tests/test_guard_daemon.py)
    extra = {"forbid": {}, **extra}
    r = live.client.post(
        "/v1/memories",
        json={"cwd": str(cwd), "name": name, "description": description, "type": "feedback", "body": body, **extra},
    )
    assert r.status_code in (200, 201), r.text
    return str(r.json()["filename"])


def hook(live: LiveDaemon, payload: dict[str, Any], env: str | None = None) -> dict[str, Any]:
    headers = {"X-Claude-Code-Env": env} if env is not None else {}
    r = live.client.post("/v1/hooks/claude-code", json=payload, headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json())


def tool(live: LiveDaemon, cwd: Path, session: str, name: str, env: str | None = None, **tool_input: Any) -> str:
    answer = hook(
        live,
        {
            "hook_event_name": "PreToolUse",
            "session_id": session,
            "cwd": str(cwd),
            "tool_name": name,
            "tool_input": tool_input,
            "tool_use_id": "toolu_01",
        },
        env,
    )
    assert set(answer) <= {"hookSpecificOutput"}
    out = answer.get("hookSpecificOutput", {})
    assert "permissionDecision" not in out and "decision" not in answer  # context only, never a decision
    return str(out.get("additionalContext", ""))


def test_derived_applies_to_names_paths_commands_and_what_it_forbids() -> None:
    pnpm = derive(PNPM[0], PNPM[1], "")
    assert "npm" in pnpm.commands and "pnpm" not in pnpm.commands and pnpm.forbids == {"npm"}
    assert contradicts(pnpm, "npm install lodash") == "npm" and not contradicts(pnpm, "pnpm add lodash")
    assert meets(pnpm, "Bash", command="cd web && npm i lodash") and not meets(pnpm, "Bash", command="pnpm add x")
    migrations = derive(MIGRATIONS[0], MIGRATIONS[1], "")
    assert migrations.paths == ("db/migrations/**",)
    assert meets(migrations, "Edit", path="db/migrations/0003_users.sql")
    assert not meets(migrations, "Edit", path="src/db.ts")
    assert command_key("npx prisma migrate dev") == command_key("yarn prisma migrate") == ("prisma", "migrate")


def test_derived_places_read_placeholders_lone_folders_and_file_kinds() -> None:
    """Paths a rule names with placeholders, a folder named alone, and a language the rule is about."""
    changelog = derive("Changelog fragments", "User-visible changes get changelog/{PR}.{type}.md fragments", "")
    assert meets(changelog, "Write", path="changelog/1234.fixed.md")
    integ = derive("Integration tests", "Tests in `tests_integ/` call real providers; never mock them", "")
    assert meets(integ, "Edit", path="tests_integ/models/test_model_openai.py")
    assert not meets(integ, "Edit", path="tests/unit/test_model.py")
    listed = derive("Feature areas", "Never mix areas", "Areas: models/, tools/, hooks/")  # a passing list: no place
    assert not meets(listed, "Edit", path="src/models/a.py")
    naming = derive("Test names", "Never name tests otherwise: test_{feature}.py", "")  # a name, not a place
    assert not meets(naming, "Edit", path="other/test_x.py")
    css = derive("No !important in CSS", "Never use !important; fix the selector's specificity instead", "")
    assert meets(css, "Edit", path="packages/ui/Button/index.scss") and not meets(css, "Edit", path="ui/Button.tsx")
    plain = derive("Stylesheets", "New styles are plain .css, never SCSS", "")
    assert meets(plain, "Edit", path="web/app.css")
    folders = derive("One folder per component", "Each component gets its own folder with index.tsx and index.css", "")
    assert not meets(folders, "Edit", path="src/Button/index.tsx")  # a file every folder may hold: an example
    prisma = derive("Prisma: select, not include", "Never use include in Prisma queries; list fields with select", "")
    assert not meets(prisma, "Edit", path="packages/prisma/schema.prisma")  # a tool's name is not a language


def test_derived_places_float_creation_rules_wait_for_new_files_and_project_titles_name_folders() -> None:
    """A relative path a rule names also matches under a package folder; a rule for adding a new thing
    meets the file being created, not every later edit; a project memory's title can name its folder."""
    inline = derive("Lint rule tests are inline", "Tests live in the rule file (`src/rules/**/*.rs`)", "")
    assert meets(inline, "Edit", path="crates/oxc_linter/src/rules/react/no_danger.rs")
    assert meets(inline, "Edit", path="src/rules/eqeqeq.rs") and not meets(inline, "Edit", path="src/lib.rs")
    anchored = AppliesTo(paths=("/config/base.json",), explicit=True)  # a person anchors a glob with "/"
    assert meets(anchored, "Edit", path="config/base.json") and not meets(anchored, "Edit", path="pkg/config/base.json")
    checklist = derive("Checklist for adding a new AI service", "Follow existing services in `src/app/services/`", "")
    assert meets(checklist, "Write", path="src/app/services/novita/llm.py")
    assert not meets(checklist, "Edit", path="src/app/services/openai/llm.py")
    integ = derive("Integration tests in tests_integ/ hit real providers", "End-to-end tests", "", "project")
    assert meets(integ, "Edit", path="tests_integ/models/test_openai.py")
    layout = derive("service.py / views.py layout", "Logic in service.py, models in views.py", "", "project")
    assert not meets(layout, "Edit", path="pkg/agent/service.py")  # a layout the title describes, not a place
    # a project memory's places: those of a rule it states, or the folder its title is about (`states_rule`)
    payments = derive("Card charges live in src/payments/", "They go through Stripe", "", "project")
    assert meets(payments, "Edit", path="src/payments/charge.ts") and not meets(payments, "Edit", path="src/ui/a.ts")
    ruled = derive("Payments", "Charges in src/payments/ must be idempotent", "", "project")
    assert meets(ruled, "Edit", path="src/payments/charge.ts")
    described = derive("Payments", "Card charges live in src/payments/ and go through Stripe", "", "project")
    assert not meets(described, "Edit", path="src/payments/charge.ts")  # a passing mention describes, not rules
    # issue 49 item 3: a specific place its headline writes as code (two literal segments) is a place it is about
    named = derive("Payments", "Card charges live in `src/payments/` and go through Stripe", "", "project")
    assert meets(named, "Edit", path="src/payments/charge.ts") and not meets(named, "Edit", path="src/ui/a.ts")
    generic = derive("Layout", "Code lives in `src/` and `lib/`", "", "project")
    assert generic.paths == ()  # one segment, a folder every project has: no place
    pointer = derive("Grafana", "Dashboards for src/payments/ must be at grafana.internal/d/pay", "", "reference")
    assert not meets(pointer, "Edit", path="src/payments/charge.ts")  # a reference says where to look, not a place
    pairs = derive("Lint and test", "Run lint/format and keep mysql/postgres in sync; never if/else chains", "")
    assert pairs.paths == ()  # two words with a slash in prose are alternatives, not paths
    assert derive("CI tests", "Passing tests go in `tests/ci`, never elsewhere", "").paths == ("tests/ci",)
    tree = derive("Keep the AGENTS.md directory tree current", "After adding directories, update the tree", "")
    assert meets(tree, "Edit", path="AGENTS.md") and not meets(tree, "Edit", path="docs/guide.md")
    folders = derive("One folder per component", "Its own folder; no shared stylesheet for several components", "")
    assert not meets(folders, "Edit", path="ui/Nav/index.scss")  # the language only in passing: not about it


def test_subject_words_read_in_one_pass_match_as_a_plain_alternation_would() -> None:
    """The trie-shaped pattern (issue 42: derive's subject reading 7x faster) finds what a list of words finds."""
    import re

    from memoryd.relevance.applies_derive import TOPIC_OF_WORD, topic_weights, trie_pattern

    words = ["lint", "lint errors", "lock file", "lockfile", "colour", "color", "css", ".env", "as any"]
    fast = re.compile(r"(?<![\w.-])" + trie_pattern(words) + r"(?![\w-])", re.I)
    plain = re.compile(
        r"(?<![\w.-])(?:" + "|".join(re.escape(w) for w in sorted(words, key=len)[::-1]) + r")(?![\w-])", re.I
    )
    text = (
        "Fix lint errors, the lockfile and CSS colours; never `as any`; read .env.local, not lint-staged or colors.css"
    )
    assert fast.findall(text) == plain.findall(text) == ["lint errors", "lockfile", "CSS", "as any", ".env"]
    assert TOPIC_OF_WORD["deprecated"] == "deprecation"
    assert topic_weights("Use Tailwind classes, never inline styles; colour #3b82f6") == (("styling", 4),)


def test_derive_reads_a_bounded_head_of_the_body() -> None:
    """A hand-written 900 KB body held the GIL for 0.5 s per derive (the memory page stalled /v1/health)."""
    from memoryd.base.limits import APPLIES_DERIVE_MAX_CHARS

    rule = "Never edit `db/migrations/` by hand."
    assert derive("Migrations", "Append-only", rule).paths == ("db/migrations/**",)
    assert derive("Migrations", "Append-only", "x" * APPLIES_DERIVE_MAX_CHARS + "\n" + rule).paths == ()


def test_equal_derivations_share_one_object() -> None:
    """At 20,000 memories each AppliesTo is ~400 bytes; many derive the same as another (issue 42)."""
    first = derive("Standups", "Standups are at 10:00, with a lint and a migration review", "")
    again = derive("Standups", "Standups are at 10:00, with a lint and a migration review", "")
    other = derive("Retros", "Retros are on Fridays, with a lint and a migration review", "")
    assert first is again and first.weights is other.weights and first.topics is other.topics


def test_pushing_means_git_only_when_it_goes_somewhere() -> None:
    """ "Type-check before pushing" is about `git push`; "push frames downstream" is code, not a command."""
    assert "git push" in derive("Type-check before pushing", "Run the type check first", "").commands
    assert "git push" in derive("Never force-push shared branches", "Rewrite only your own", "").commands
    frames = derive("Call frame.complete() when swallowing frames", "A processor that does not push frames on", "")
    assert "git push" not in frames.commands
    assert "git push" not in derive("Report errors with push_error", "push errors upstream, non-fatal", "").commands


def test_deprecation_and_exports_are_subjects_a_prompt_shares_with_a_rule() -> None:
    from memoryd.relevance.applies_derive import topics_of
    from memoryd.relevance.applies_match import prompt_meets

    deprecations = derive("Deprecation convention", "Mark deprecated APIs with a `.. deprecated::` directive", "")
    prompt = "Deprecate dict-based settings in STT, TTS, and LLM"
    assert prompt_meets(deprecations, prompt, topics_of(prompt)) == "subject: deprecation"
    barrels = derive("No `export *` barrels", "Never use `export * from`; list explicit named exports", "")
    prompt = "feat: export parseParams and related sanitizers"
    assert prompt_meets(barrels, prompt, topics_of(prompt)) == "subject: exports"


def test_pre_tool_use_brings_the_rule_the_act_meets(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and sessions
    pnpm = save(live, project, *PNPM)
    migrations = save(live, project, *MIGRATIONS)
    save(live, project, "Release notes", "Every release gets a CHANGELOG entry written by hand")
    session = uuid.uuid4().hex
    assert tool(live, project, session, "Bash", command="pnpm add lodash") == ""  # the rule is kept: nothing to add
    first = tool(live, project, session, "Bash", command="npm install lodash")
    assert pnpm in first and migrations not in first
    assert "name: Package manager" in first and "description: Use pnpm, never npm" in first
    assert "applies to this command" in first and "this Bash" not in first
    again = tool(live, project, session, "Bash", command="npm install left-pad")  # contradicted: repeated once
    assert pnpm in again
    assert tool(live, project, session, "Bash", command="npm ci") == ""  # ... and only once
    edit = tool(live, project, session, "Edit", file_path=str(project / "db/migrations/0001_init.sql"), new_string="x")
    assert migrations in edit and pnpm not in edit
    assert "applies to this edit of db/migrations/0001_init.sql" in edit
    assert tool(live, project, session, "Edit", file_path=str(project / "db/migrations/0002.sql")) == ""  # once
    assert tool(live, project, session, "Read", file_path=str(project / "db/migrations/0001_init.sql")) == ""
    log = live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()
    sources = {e["source"] for e in log["entries"]}
    assert "hook:PreToolUse:Bash" in sources and "hook:PreToolUse:Edit" in sources


def test_a_tool_call_gets_at_most_two(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and sessions
    for n in range(4):
        save(live, project, f"Infra rule {n}", f"Rule {n} for everything under infra/terraform/")
    got = tool(live, project, uuid.uuid4().hex, "Edit", file_path=str(project / "infra/terraform/main.tf"))
    assert got.count("<system-reminder>") == 2


def test_a_place_or_code_comes_before_a_whole_language(module_live: LiveDaemon, project: Path) -> None:
    """Of the memories an edit meets, those met only by the file's language (a headline naming it) give way to one
    met at its place, even when their words match the edit better (corpus CV: a `**/*.ps1` rule lost its slot to
    two "PowerShell ..." headlines)."""
    live = module_live  # its own project and sessions
    for n in ("Style", "Naming"):
        save(live, project, f"PowerShell {n} Guidelines", f"Build tests, release tools: {n.lower()} of Build.Tests")
    placed = save(live, project, "Headers", "Every file under `tools/release/` opens with a header")
    got = tool(live, project, uuid.uuid4().hex, "Edit", file_path=str(project / "tools/release/Build.Tests.ps1"))
    assert placed in got and got.count("<system-reminder>") == 2


def test_applies_to_written_kept_validated_and_used(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project, sessions and login
    fn = save(
        live,
        project,
        "Terraform state",
        "Plan before apply, always with the shared backend",
        applies_to={"paths": ["infra/**"], "commands": ["terraform apply"], "tools": ["Edit", "Bash"]},
    )
    meta, _ = split_frontmatter((live.daemon.stores.for_cwd(str(project)).path / fn).read_text())
    assert meta["applies_to"] == {"paths": ["infra/**"], "commands": ["terraform apply"], "tools": ["Edit", "Bash"]}
    save(live, project, "Terraform state", "Plan before apply, with the shared backend")  # a rewrite keeps it
    got = live.client.get(f"/v1/memories/{fn}", params={"cwd": str(project)}).json()
    assert got["applies_to"]["paths"] == ["infra/**"] and got["description"].startswith("Plan before apply, with")
    session = uuid.uuid4().hex
    assert fn in tool(live, project, session, "Bash", command="cd infra && terraform apply -auto-approve")
    assert tool(live, project, uuid.uuid4().hex, "Read", file_path=str(project / "infra/main.tf")) == ""  # not its tool
    bad = live.client.post(
        "/v1/memories",
        json={
            "cwd": str(project),
            "name": "x",
            "description": "y",
            "type": "feedback",
            "body": "",
            "applies_to": {"paths": ["../outside/**"]},
        },
    )
    assert bad.status_code == 422 and "applies_to" in bad.text and "relative to the project" in bad.text
    wrong_tool = {"cwd": str(project), "name": "x", "description": "y", "type": "feedback", "body": ""}
    r = live.client.post("/v1/memories", json={**wrong_tool, "applies_to": {"tools": ["Shell"]}})
    assert r.status_code == 422 and "tools" in r.text
    assert "x" not in {
        m["name"] for m in live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"]
    }


def test_applies_to_in_claude_codes_dialect_lives_under_metadata(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project, sessions and login
    store = live.daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    (store.path / "api-style.md").write_text(
        "---\nname: api-style\ndescription: REST handlers return problem+json errors\n"
        "metadata:\n  type: feedback\n---\nBody.\n"
    )
    fn = save(
        live,
        project,
        "api-style",
        "REST handlers return problem+json errors",
        "Body.",
        applies_to={"paths": ["src/api/**"]},
    )
    assert fn == "api-style.md"
    meta, body = split_frontmatter((store.path / fn).read_text())
    assert meta["metadata"] == {"type": "feedback", "applies_to": {"paths": ["src/api/**"]}}
    assert "applies_to" not in meta and meta["name"] == "api-style" and body.strip() == "Body."
    assert fn in tool(live, project, uuid.uuid4().hex, "Write", file_path=str(project / "src/api/users.ts"), content="")


@pytest.mark.parametrize(
    "scope",
    [
        'globs: "src/db/**, migrations/*.sql"',  # Cursor's .mdc
        'applyTo: "src/db/**,migrations/*.sql"',  # Copilot's .instructions.md
        "paths:\n  - src/db/**\n  - migrations/*.sql",  # Claude Code's .claude/rules
    ],
)
def test_another_agents_rule_file_applies_where_its_scope_says(
    module_live: LiveDaemon, project: Path, scope: str
) -> None:
    """A memory file copied from another agent's rules keeps its maintainers' scope: its `globs:`, `applyTo:` or
    `paths:` is what it applies to (issue 49: the scope a rule's prose does not state), unless it holds `applies_to`."""
    live = module_live  # its own project and sessions
    store = live.daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    name = f"db-rule-{abs(hash(scope))}.md"
    (store.path / name).write_text(
        f"---\nname: DB access\ndescription: Use the query builder\ntype: feedback\n{scope}\n---\nBody.\n"
    )
    got = live.client.get(f"/v1/memories/{name}", params={"cwd": str(project)})
    assert got.status_code == 200, got.text
    assert got.json()["applies_to"] == {"paths": ["src/db/**", "migrations/*.sql"]}
    session = uuid.uuid4().hex
    assert name not in tool(live, project, session, "Edit", file_path=str(project / "src/ui/button.ts"))
    assert name in tool(live, project, session, "Edit", file_path=str(project / "src/db/orders.ts"))
    written = store.path / f"written-{name}"
    written.write_text(
        f"---\nname: DB 2\ndescription: x\ntype: feedback\n{scope}\napplies_to:\n  paths: [docs/**]\n---\nBody.\n"
    )
    assert live.client.get(f"/v1/memories/written-{name}", params={"cwd": str(project)}).json()["applies_to"] == {
        "paths": ["docs/**"]
    }


def test_a_rule_files_scope_memoryd_cannot_use_is_derived_instead_never_fatal(
    module_live: LiveDaemon, project: Path
) -> None:
    """A copied rule file whose scope escapes the project (`../`, a leading `/`) is derived from its text, as a hand
    edit gone wrong is: a save over it answers with what it reaches, and its page loads."""
    live = module_live  # its own project and sessions
    store = live.daemon.stores.for_cwd(str(project))
    store.path.mkdir(parents=True, exist_ok=True)
    (store.path / "feedback_escaping-scope.md").write_text(
        '---\nname: Escaping scope\ndescription: x\ntype: feedback\nglobs: "../other/**, /etc/**"\n---\nBody.\n'
    )
    saved = live.client.post(
        "/v1/memories",
        json={"cwd": str(project), "name": "Escaping scope", "type": "feedback", "description": "Never edit db/"},
    )
    assert saved.status_code == 200, saved.text
    assert "db/" in saved.json()["reaches"]
    assert (store.path / "feedback_escaping-scope.md").read_text().count("../other/**") == 1  # the file's key is kept
    page = live.client.get("/v1/memories/feedback_escaping-scope.md", params={"cwd": str(project)})
    assert page.status_code == 200, page.text


def test_recall_off_for_one_session(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project and sessions
    save(live, project, *PNPM)
    off = "CLAUDE_CODE_DISABLE_AUTO_MEMORY=0;MEMORYD_RECALL=off"
    base = {"cwd": str(project), "session_id": uuid.uuid4().hex}
    assert hook(live, {**base, "hook_event_name": "SessionStart", "source": "startup"}, off) == {}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "which package manager should I use?"}
    assert hook(live, prompt, off) == {}
    assert tool(live, project, base["session_id"], "Bash", off, command="npm install lodash") == ""
    other = uuid.uuid4().hex  # another session keeps its memories
    assert "Package manager" in tool(live, project, other, "Bash", "MEMORYD_RECALL=on", command="npm install lodash")


@pytest.mark.e2e
def test_readme_first_memory_arrives_with_its_name_and_description(
    daemon_process: DaemonProcess, home: Path, project: Path
) -> None:
    """#39 item 1: the README's own first memory, saved with no body, is recalled as a non-empty block."""
    daemon_process.start()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memoryd", *args],
            env=daemon_env(home),
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    saved = cli("save", "-t", "feedback", "-n", "Package manager", "-d", "Use pnpm, never npm: …")
    assert saved.returncode == 0, saved.stderr
    out = cli("recall", "--inject", "which package manager should I use?")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("<system-reminder>\n<!-- memoryd -->\n")
    assert "name: Package manager" in out.stdout and "description: Use pnpm, never npm: …" in out.stdout


def test_the_memory_page_shows_what_it_applies_to(module_live: LiveDaemon, project: Path) -> None:
    live = module_live  # its own project, sessions and login
    from memoryd.api.web.views import project_id
    from tests.test_ui import login

    fn = save(live, project, "Terraform", "Plan first", applies_to={"paths": ["infra/**"], "commands": ["terraform"]})
    plain = save(live, project, "Standups", "Standups are at 10:00")
    browser, _ = login(live)
    p = project_id(live.daemon.stores.for_cwd(str(project)).path)
    page = browser.get(f"/ui/p/{p}/m/{fn}").text
    assert "Applies to" in page and "<code>infra/**</code>" in page and "<code>terraform</code>" in page
    assert "Nothing written in the file" in browser.get(f"/ui/p/{p}/m/{plain}").text
    pnpm = save(live, project, *PNPM)  # nothing written: the page shows what recall derives
    derived = browser.get(f"/ui/p/{p}/m/{pnpm}").text
    assert "Commands (derived)" in derived and "<code>npm</code>" in derived and "Forbids (derived)" in derived
    assert "(derived)" not in browser.get(f"/ui/p/{p}/m/{plain}").text


def test_the_sql_example_end_to_end_through_the_hooks(live: LiveDaemon, project: Path) -> None:
    """Issue 38: the no-ORM rule learned offline from a turn is recalled for the SQL task's prompt."""
    import time

    from tests.support.clock import step_over_settle
    from tests.support.transcripts import new_session

    root = live.daemon.settings.transcript_roots[0]
    s1 = new_session(root, str(project))
    s2 = new_session(root, str(project))  # both transcripts exist first: the project's memory dir is settled
    base = {"session_id": s1.session_id, "transcript_path": str(s1.path), "cwd": str(project)}
    said = "Please remember: in this repo we never use ORMs, all SQL is hand-written in the queries/ folder"
    s1.user(said)
    s1.assistant("Noted: no ORMs, SQL lives in queries/.")
    assert hook(live, {**base, "hook_event_name": "Stop", "stop_hook_active": False}) == {}
    step_over_settle(live.daemon)
    deadline = time.monotonic() + 30
    store = live.daemon.stores.for_cwd(str(project))
    # listed as soon as it is saved; on disk once its group commit publishes it (the prompt's gate reads the dir)
    while not (
        live.client.get("/v1/memories", params={"cwd": str(project)}).json()["memories"] and store.has_memories()
    ):
        assert time.monotonic() < deadline, "extraction did not write the memory"
        time.sleep(POLL_SECONDS)
    prompt = "Add an endpoint that lists orders per customer, with the SQL for it"
    answer = hook(
        live,
        {
            "hook_event_name": "UserPromptSubmit",
            "session_id": s2.session_id,
            "transcript_path": str(s2.path),
            "cwd": str(project),
            "prompt": prompt,
        },
    )
    recalled = answer.get("hookSpecificOutput", {}).get("additionalContext", "")
    why = live.client.get("/v1/recall/log", params={"cwd": str(project)}).json()["entries"]
    assert "queries/" in recalled and "ORM" in recalled and "description: " in recalled, [
        (e["reason"], e["method"], e["injected"], e["left_out"]) for e in why
    ]


def test_the_models_extraction_writes_applies_to(llm_live: LiveDaemon, messages_api: Any, project: Path) -> None:
    """With a model, extraction asks for applies_to and writes it (a malformed one is dropped, the memory kept)."""
    import json

    from tests.support.messages_api import Reply
    from tests.support.transcripts import new_session
    from tests.test_extract import turn_end

    writer = new_session(llm_live.daemon.settings.transcript_roots[0], str(project))
    writer.user("never edit an applied migration, add a new one under db/migrations/")
    answer = [
        {
            "name": "Migrations are append-only",
            "type": "feedback",
            "description": "Never edit an applied migration; add a new one",
            "body": "**Why:** prod ran it.\n**How to apply:** new file in db/migrations/.",
            "applies_to": {"paths": ["db/migrations/**"], "tools": ["Edit", "Write"]},
        },
        {
            "name": "Deploy day",
            "type": "project",
            "description": "Deploys happen on Tuesdays",
            "body": "",
            "applies_to": {"paths": ["/etc/passwd"]},
        },
    ]
    messages_api.push(Reply(text=json.dumps(answer)))
    job = turn_end(llm_live, writer)
    assert job["status"] == "done" and len(job["memories_written"]) == 2
    assert "applies_to" in messages_api.requests[-1]["system"]
    store = llm_live.daemon.stores.for_cwd(str(project))
    got = {fn: store.get(fn).applies_to for fn in job["memories_written"]}
    assert sorted(got.values(), key=len) == [{}, {"paths": ["db/migrations/**"], "tools": ["Edit", "Write"]}]


def test_a_prompt_about_another_stack_gets_nothing(live: LiveDaemon, project: Path) -> None:
    """A prompt naming a product no memory mentions ("a TypeORM migration" asked of a Prisma project) may be about
    another stack: a shared generic word is no match (issue 38's foreign silence), a strong one still is."""
    schema = save(live, project, "Prisma schema changes", "Every Prisma schema change needs a migration")

    def prompt(text: str) -> str:
        payload = {"hook_event_name": "UserPromptSubmit", "session_id": uuid.uuid4().hex, "cwd": str(project)}
        out = hook(live, payload | {"prompt": text}).get("hookSpecificOutput", {})
        return str(out.get("additionalContext", ""))

    assert schema in prompt("write the schema migration for the new workspace field")
    assert prompt("write the TypeORM schema migration for the new workspace field") == ""
    # an unknown name weakens the weak evidence only (issue 49): three of the prompt's words still speak
    assert schema in prompt("finish the Prisma schema migration that Alice started")
    status = live.client.get("/v1/status").json()["recall"]
    assert status["prompts_ranked"] >= 1 and 0 <= status["model_wanted"] <= status["prompts_ranked"]


def test_a_shared_subject_alone_needs_a_memory_about_it(module_live: LiveDaemon, project: Path) -> None:
    """With nothing else to go on, a subject a prompt shares brings the memory about it (its name or
    description), not one whose body mentions it in passing."""
    live = module_live  # its own project and sessions

    def prompt(text: str) -> str:
        payload = {"hook_event_name": "UserPromptSubmit", "session_id": uuid.uuid4().hex, "cwd": str(project)}
        return str(hook(live, payload | {"prompt": text}).get("hookSpecificOutput", {}).get("additionalContext", ""))

    save(live, project, "Small PRs", "Keep PRs under 500 changed lines", "Split translations into a PR of their own.")
    assert prompt("add a 'Copy link' label under the share button") == ""
    i18n = save(
        live, project, "UI strings need translations", "Every new UI string gets a key in locales/en/common.json"
    )
    assert i18n in prompt("add a 'Copy link' label under the share button")


def test_product_names_are_not_code_names_or_clause_starts() -> None:
    """What reads as another stack's product: TypeORM, NestJS, GraphQL; not a class of the project's own code
    (DeepgramSTTService) nor the first word after a commit subject's colon."""
    from memoryd.relevance.applies_derive import named_tech

    assert named_tech("generate a TypeORM migration, then regenerate the GraphQL types") == ["TypeORM", "GraphQL"]
    assert named_tech("Remove deprecated url param from DeepgramSTTService") == []
    assert named_tech("feat(linter): Promote the rule to correctness") == []


def test_a_prompt_naming_a_package_in_words_meets_the_rule_about_its_scoped_name() -> None:
    from memoryd.relevance.applies_derive import topics_of
    from memoryd.relevance.applies_match import prompt_meets

    barrels = derive("No barrel imports", "Import from @acme/ui/components/button, never from the @acme/ui barrel", "")
    prompt = "use the Button from our ui package in the new settings toggle"
    assert prompt_meets(barrels, prompt, topics_of(prompt)) == "prompt names the ui package"
    assert not prompt_meets(barrels, "bump the api package", topics_of("bump the api package"))


def test_a_prompt_naming_code_of_a_layer_meets_the_rule_about_that_layer() -> None:
    """BookingRepository is a repository: the rule "No business logic in repositories" is about it. At tool time
    a layer's files are edited all day, and rules naming a layer in passing would ride along: prompts only."""
    from memoryd.relevance.applies_derive import roles_of, topics_of
    from memoryd.relevance.applies_match import prompt_meets

    repos = derive("No business logic in repositories", "Repositories only read and write data", "")
    prompt = "compute the seat price discount in BookingRepository while reading the booking"
    assert prompt_meets(repos, prompt, topics_of(prompt)) == "prompt names BookingRepository, a repository"
    assert (
        prompt_meets(repos, "fix user_repository caching", frozenset()) == "prompt names user_repository, a repository"
    )
    assert not prompt_meets(repos, "call BookingService from the handler", frozenset())
    assert not meets(repos, "Edit", path="packages/features/bookings/repositories/BookingRepository.ts")
    assert roles_of("src/hooks/useMemos.ts") == {"hook"} and roles_of("a/booking.repository.ts") == {"repository"}
    assert not derive("Repositories", "Repositories are listed in repos.yaml", "", "reference").roles  # states no rule


def test_triggers_find_every_memory_an_act_or_a_prompt_meets() -> None:
    """The lookup that spares a walk over every memory (issue 42) misses none that the walk finds: checked on
    real rules (bench/coding, bench/moments) against their tasks' prompts, edits and commands."""
    import json

    from memoryd.relevance.applies_derive import topics_of
    from memoryd.relevance.applies_match import prompt_meets
    from memoryd.relevance.applies_triggers import Triggers

    root = Path(__file__).resolve().parents[1] / "bench"
    stores = []
    for f in sorted((root / "coding" / "data").glob("*.json")):
        repo = json.loads(f.read_text(encoding="utf-8"))
        acts = [(t["prompt"], t["files"], []) for t in repo["tasks"]]
        stores.append(([(m["filename"], m) for m in repo["memories"]], acts))
    calcom = json.loads((root / "moments" / "calcom.json").read_text(encoding="utf-8"))
    events = [e for s in calcom["sessions"] for e in s["events"]]
    acts = [(e.get("prompt", ""), [e["path"]] if e.get("path") else [], [e.get("command", "")]) for e in events]
    stores.append(([(m["key"], m) for m in calcom["memories"]], acts))
    checked = 0
    for memories, acts in stores:
        applies = {fn: derive(m["name"], m["description"], m["body"], m["type"]) for fn, m in memories}
        triggers = Triggers.of(applies)
        for prompt, paths, commands in acts:
            topics = topics_of(prompt)
            met = {fn: why for fn, a in applies.items() if (why := prompt_meets(a, prompt, topics))}
            named = {fn for fn, why in met.items() if not why.startswith("subject")}
            assert named <= triggers.named_in(prompt), prompt
            code_rules = {fn for fn in met if fn not in named and applies[fn].rule}
            code_rules = {fn for fn in code_rules if applies[fn].paths or applies[fn].commands or applies[fn].cues}
            assert code_rules <= triggers.code_rules_about(topics), prompt
            checked += len(met)
            for tool, path, command in [("Edit", p, "") for p in paths] + [("Bash", "", c) for c in commands if c]:
                walked = {fn for fn, a in applies.items() if meets(a, tool, path, command) or contradicts(a, command)}
                assert walked <= triggers.for_tool(path, command, ""), (path, command)
                checked += len(walked)
    assert checked > 100  # the acts met many memories: the check is not vacuous


def test_warm_derives_what_every_memory_applies_to(live: LiveDaemon, project: Path) -> None:
    """At start-up, off the request path: the first prompt or tool call does not derive a whole store (issue 42)."""
    pnpm = save(live, project, *PNPM)
    recall = live.daemon.recall
    store = recall.stores.for_cwd(str(project))
    recall.applies._by_dir.clear()
    recall.warm()
    assert "npm" in recall.applies._by_dir[str(store.path)].applies[pnpm].forbids


def test_a_new_view_reads_again_only_the_memory_that_changed(live: LiveDaemon, project: Path) -> None:
    """What each memory applies to is kept by the mtime it was read at (issue 42: without a tuple per memory):
    after a hand edit of one file, the next view derives that file again and keeps every other's as it was."""
    pnpm, migrations = save(live, project, *PNPM), save(live, project, *MIGRATIONS)
    recall = live.daemon.recall
    store = recall.stores.for_cwd(str(project))
    before = recall.applies.view(store, recall.indexes.refresh(store, wait=True)).applies
    assert "npm" in before[pnpm].forbids
    path = store.path / pnpm
    path.write_text(path.read_text().replace("never npm", "never yarn"))
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    after = recall.applies.view(store, recall.indexes.refresh(store, wait=True)).applies
    assert after[migrations] is before[migrations]
    assert "yarn" in after[pnpm].forbids and "npm" not in after[pnpm].forbids


def test_issue_49s_misses_at_tool_time_meet_through_the_hook(module_live: LiveDaemon, project: Path) -> None:
    """The acts issue 49 names (labelled cases of their classes, not a held-out benchmark): a manager's runner, a
    call of a ruled-out library, a cue with an ellipsis; and its noise stays quiet (`go test`, `git status`, a
    LaTeX question: an unknown name and a shared word are no match for the migrations rule)."""
    live = module_live  # its own project and sessions
    pnpm = save(live, project, *PNPM)
    dates = save(live, project, "Dates", "date-fns, not moment; don't add new moment imports")
    styles = save(live, project, "Styles", "Use the theme: never `style={{...}}` or raw hex values")
    migrations = save(live, project, *MIGRATIONS)
    env = save(live, project, "Local env", "Never commit .env.local")
    session = uuid.uuid4().hex
    assert pnpm in tool(live, project, session, "Bash", command="npx eslint src")
    edit = tool(live, project, session, "Edit", file_path=str(project / "src/a.ts"), new_string="moment(d).fromNow()")
    assert dates in edit and styles not in edit
    jsx = "<div style={{ background: '#3b82f6' }} />"
    assert styles in tool(live, project, session, "Edit", file_path=str(project / "src/b.tsx"), new_string=jsx)
    quiet = uuid.uuid4().hex
    assert tool(live, project, quiet, "Bash", command="git status") == ""
    assert tool(live, project, quiet, "Bash", command="go test ./internal/...") == ""
    payload = {"hook_event_name": "UserPromptSubmit", "session_id": quiet, "cwd": str(project)}
    said = hook(live, payload | {"prompt": "why does my LaTeX table overflow the page margin?"})
    assert migrations not in str(said) and env not in str(said)


def test_a_prompt_meets_the_memories_of_the_files_the_session_works_on(module_live: LiveDaemon, project: Path) -> None:
    """A prompt in the middle of work on a file is about that file, as an edit of it would be (issue 49: `/v1/recall`
    with the task's files as context fell to recall 0.226 on the coding test split): its memories met at their place
    come with the prompt; one met only by the file's language does not (a whole language is too wide for a read)."""
    live = module_live  # its own project and sessions
    payments = save(live, project, "Charges", "Every charge under src/payments/ goes through the Stripe client")
    save(live, project, "TypeScript Guidelines", "Prefer narrow unions over enums")

    def recall(context: list[str]) -> list[str]:
        body = {"cwd": str(project), "query": "finish this and tidy it up", "session_id": uuid.uuid4().hex}
        r = live.client.post("/v1/recall", json=body | {"context": context})
        assert r.status_code == 200, r.text
        return [m["filename"] for m in r.json()["memories"]]

    assert recall([]) == []
    assert recall([str(project / "src/payments/charge.ts")]) == [payments]  # absolute, inside the project
    assert recall(["src/payments/refund.ts", "README.md"]) == [payments]
    assert recall(["src/ui/button.ts"]) == []  # only the language
