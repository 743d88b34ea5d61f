"""The feature extractors of relevance: every row of data/{subjects,code,words}.toml and every extractor of
`EXTRACTORS` has a labelled case that yields its feature and one that does not (a new row without cases fails
the coverage tests below)."""

from __future__ import annotations

import pytest

from memoryd.relevance.applies_derive import derive, topics_of
from memoryd.relevance.features import EXTRACTORS, code_features, path_features, prose, prose_polarity, run
from memoryd.relevance.lexicon import load, shared_rows, words
from memoryd.relevance.match import shared
from memoryd.relevance.memory import command_act, edit_act, memory, prompt_act
from memoryd.relevance.reasons import REASONS, prompt_reasons, tool_reasons

# subject -> (a headline naming it, a headline that does not); code rows: (code showing it, code that does not)
SUBJECTS = {
    "dependencies": ("Pick one package manager", "Keep functions short"),
    "db-schema": ("Every schema change needs a migration", "Keep functions short"),
    "sql": ("No raw SQL in handlers", "Keep functions short"),
    "styling": ("Write plain CSS", "Keep functions short"),
    "secrets": ("Never commit secrets", "Keep functions short"),
    "i18n": ("UI strings go through translation", "Keep functions short"),
    "lint": ("Fix lint errors before pushing", "Keep functions short"),
    "permissions": ("Check permissions in every handler", "Keep functions short"),
    "casts": ("No `as any` casts", "Keep functions short"),
    "errors": ("Throw typed error classes", "Keep functions short"),
    "exports": ("No barrel files", "Keep functions short"),
    "deprecation": ("Mark deprecated APIs", "Keep functions short"),
    "testing": ("Every feature needs unit tests", "Keep functions short"),
    "docs": ("Update the changelog", "Keep functions short"),
    "dates": ("Store dates in UTC with a timezone", "Keep functions short"),
    "logging": ("Use the shared logger", "Keep functions short"),
    "async": ("Prefer async handlers", "Keep functions short"),
}
SUBJECT_CODE = {
    "db-schema": ("ALTER TABLE users ADD email text;", "x = 1"),
    "sql": ("SELECT id, name FROM users", "x = 1"),
    "styling": ("color: #3b82f6;", "see issue #3538"),
    "secrets": ("const k = process.env.KEY", "x = 1"),
    "i18n": ("label = t('booking.title')", "x = 1"),
    "casts": ("const u = v as any", "x = 1"),
    "errors": ("throw new Error('x')", "x = 1"),
    "deprecation": ("/** @deprecated use y */", "x = 1"),
    "testing": ("it('works', () => expect(x))", "x = 1"),
    "logging": ("logger.info('x')", "x = 1"),
    "async": ("async def fetch(): await x", "x = 1"),
}
IMPORTS = {  # language -> (code importing `want`, want, code that imports nothing)
    "javascript": ("import dayjs from 'dayjs'\n", "dayjs", "const dayjs = 1\n"),
    "python": ("from requests import get\n", "requests", "requests = None\n"),
    "go": ('import "github.com/pkg/errors"\n', "github.com/pkg/errors", "var errors = 1\n"),
    "rust": ("use serde::Deserialize;\n", "serde", "let serde = 1;\n"),
    "jvm": ("import java.util.List;\n", "java", "List x = null;\n"),
}
ACTS = {  # act -> (a prompt asking it, one that does not, a memory headline about it, one that is not)
    "commit": ("commit this", "fix the commit parser test", "Commit messages are conventional", "Keep functions short"),
    "pr": ("open a PR for it", "read the PR template", "Keep PRs small", "Keep functions short"),
    "push": ("push to main", "add a push notification", "Never force-push", "Add push notifications"),
}


def test_every_subject_and_code_row_has_cases() -> None:
    data = load("subjects")
    assert set(SUBJECTS) == set(data)
    assert set(SUBJECT_CODE) == {name for name, row in data.items() if row.get("code")}
    assert set(IMPORTS) == set(load("code")) - {"calls"}
    assert set(ACTS) == set(load("words")["acts"])


@pytest.mark.parametrize("subject", sorted(SUBJECTS))
def test_subject_words(subject: str) -> None:
    yes, no = SUBJECTS[subject]
    assert ("subject", subject) in run("memory", prose(yes))
    assert ("subject", subject) not in run("memory", prose(no))


@pytest.mark.parametrize("subject", sorted(SUBJECT_CODE))
def test_subject_code(subject: str) -> None:
    yes, no = SUBJECT_CODE[subject]
    assert ("subject", subject) in set(code_features(yes))
    assert ("subject", subject) not in set(code_features(no))


@pytest.mark.parametrize("language", sorted(IMPORTS))
def test_imports(language: str) -> None:
    yes, want, no = IMPORTS[language]
    assert ("import", want) in set(code_features(yes))
    assert not {f for f in code_features(no) if f[0] == "import"}


def test_calls() -> None:
    assert ("call", "moment") in set(code_features("const d = moment(x)"))
    assert ("call", "style") in set(code_features('<div style={{a: 1}} className="x">'))
    assert not {f for f in code_features("const d = x") if f[0] == "call"}


@pytest.mark.parametrize("act", sorted(ACTS))
def test_acts(act: str) -> None:
    asks, not_asks, about, not_about = ACTS[act]
    command = load("words")["acts"][act]["command"]
    assert ("subcommand", command) in run("prompt", prose(asks))
    assert ("subcommand", command) not in run("prompt", prose(not_asks))
    assert ("subcommand", command) in run("memory", prose(about))
    assert ("subcommand", command) not in run("memory", prose(not_about))


def test_word_lists() -> None:
    w = words()
    assert w.rule.search("Never call the API directly") and not w.rule.search("The API is versioned")
    assert ("role", "repository") in set(path_features("src/BookingRepository.ts"))
    assert not {f for f in path_features("src/booking.ts") if f[0] == "role"}
    assert ("segment", "payments") in set(path_features("src/payments/charge.ts"))  # src: a generic folder
    assert ("segment", "src") not in set(path_features("src/payments/charge.ts"))
    assert ("path", "**/*.sql") not in run("memory", prose("Edit *.py files"))  # everyday kind: a language
    assert ("filekind", "css") in run("memory", prose("No `.css` files", "No .css files"))
    assert ("filekind", "css") not in run("memory", prose("No styles", "No styles"))
    assert ("langkind", "py") in run("memory", prose("Write Python", "Write Python"))  # a language: weak
    assert ("filekind", "py") not in run("memory", prose("Write Python", "Write Python"))
    assert ("langkind", "py") not in run("memory", prose("Write Rust", "Write Rust"))
    assert ("word", "payment") in run("memory", prose("Payments are idempotent"))
    assert ("word", "should") not in run("memory", prose("Payments should retry"))  # a plain word
    assert "index" in w.folder_files and "payments" not in w.folder_files


# extractor -> (reader, input yielding `want`, want, input not yielding it)
EXTRACTOR_CASES = {
    "paths": ("memory", "Migrations live in `db/migrations/`", ("path", "db/migrations/"), "Migrations are SQL"),
    "kinds": ("memory", "Never edit `.snap` files", ("filekind", "snap"), "Never edit snapshots by hand"),
    "roles": ("memory", "No business logic in repositories", ("role", "repository"), "No business logic here"),
    "programs": ("memory", "Use `pnpm install`", ("program", "pnpm"), "Use the lockfile"),
    "polarity": ("memory", "Use pnpm, never npm", ("program_forbidden", "npm"), "Use npm and pnpm"),
    "memory_acts": ("memory", "Commit messages are short", ("subcommand", "git commit"), "Messages are short"),
    "prompt_acts": ("prompt", "commit this", ("subcommand", "git commit"), "explain this"),
    "idents": ("memory", "Throw TRPCError, never Error", ("ident", "trpcerror"), "Throw typed errors"),
    "subjects": ("memory", "Every schema change needs a migration", ("subject", "db-schema"), "Keep code short"),
    "words": ("memory", "Bookings are immutable", ("word", "booking"), "It is what it is"),
    "command": ("command", "npx eslint src", ("program", "eslint"), "ls -la"),
    "path": ("edit", "src/payments/charge.ts", ("segment", "payments"), "src/charge.ts"),
    "code": ("edit", "import dayjs from 'dayjs'\n", ("import", "dayjs"), "const x = 1\n"),
}


def test_every_extractor_has_cases() -> None:
    assert set(EXTRACTOR_CASES) == set(EXTRACTORS)


@pytest.mark.parametrize("name", sorted(EXTRACTOR_CASES))
def test_extractor(name: str) -> None:
    _, want_reader, fn = EXTRACTORS[name]
    _reader, yes, want, no = EXTRACTOR_CASES[name]
    reads_prose = EXTRACTORS[name][0] == "prose"
    got_yes = set(fn(prose(yes) if reads_prose else yes))
    got_no = set(fn(prose(no) if reads_prose else no))
    assert want in got_yes, got_yes
    assert want not in got_no, got_no
    assert _reader in want_reader or not reads_prose


# the kinds of old reason (`memoryd.relevance.reasons`): memory, then an act that fires it and one that does not;
# a tool act is (path, command, writes), a prompt act its text
PNPM = ("Package manager", "Use pnpm, never npm", "Run pnpm install.")
MIGRATIONS = ("Migrations are append-only", "Never edit an applied migration under db/migrations/", "Add one.")
CSS = ("Write plain CSS", "No CSS-in-JS; styles live in .css files", "Use CSS modules.")
CASTS = ("No as any casts", "Never write `as any` in TypeScript", "Use unknown and narrow.")
UI = ("UI components", "Import buttons from `@calcom/ui/components/button`", "Never build your own.")
COMMITS = ("Commit messages", "Use conventional commits when you git commit", "feat:, fix:")
REPOSITORIES = ("Data access in repositories", "Every query lives in a Repository class", "BookingRepository.")
TOOL_CASES = {
    "old_path": (MIGRATIONS, ("db/migrations/0001.sql", "", ""), ("src/app.ts", "", "")),
    "old_kind": (CSS, ("web/theme.scss", "", ""), ("web/theme.ts", "", "")),
    "old_command": (PNPM, ("", "npm install left-pad", ""), ("", "ls -la", "")),
    "old_command_path": (MIGRATIONS, ("", "rm db/migrations/0001.sql", ""), ("", "rm src/app.ts", "")),
    "old_cue": (CASTS, ("src/a.ts", "", "const x = y as any;"), ("src/a.ts", "", "const x = y as User;")),
    "old_forbids": (PNPM, ("", "npm ci", ""), ("", "pnpm install", "")),
}
PROMPT_CASES = {
    "old_p_program": (PNPM, "use npm to add react-query", "add react-query to the web app"),
    "old_p_path": (MIGRATIONS, "fix db/migrations/0003.sql", "fix the login page"),
    "old_p_cue": (CASTS, "remove the as any in the booking form", "remove the cast in the booking form"),
    "old_p_package": (UI, "restyle the ui package buttons", "restyle the landing page"),
    "old_p_act": (COMMITS, "commit this", "explain this function"),
    "old_p_role": (REPOSITORIES, "add a method to UserRepository", "add a method to the user model"),
    "old_topic": (PNPM, "bump the dependencies", "rename the login page"),
}


def test_every_kind_of_old_reason_has_cases() -> None:
    assert set(REASONS) == set(TOOL_CASES) | set(PROMPT_CASES)


@pytest.mark.parametrize("kind", sorted(TOOL_CASES))
def test_tool_reason_fires_on_its_case_only(kind: str) -> None:
    mem, yes, no = TOOL_CASES[kind]
    a = derive(*mem, "feedback")
    assert kind in tool_reasons(a, *yes)
    assert kind not in tool_reasons(a, *no)


@pytest.mark.parametrize("kind", sorted(PROMPT_CASES))
def test_prompt_reason_fires_on_its_case_only(kind: str) -> None:
    mem, yes, no = PROMPT_CASES[kind]
    a = derive(*mem, "feedback")
    assert kind in prompt_reasons(a, yes, topics_of(yes))
    assert kind not in prompt_reasons(a, no, topics_of(no))


# words.toml [negations] as the fitted features read it: each forbidding word -> (a clause ruling npm out with it,
# one that does not rule it out)
FORBID = {
    "never": ("Use pnpm, never npm", "Use pnpm, then npm"),
    "not": ("Use pnpm, not npm", "Use pnpm and npm"),
    "no": ("pnpm only, no npm", "pnpm and npm"),
    "don't": ("Don't run npm", "Run npm"),
    "dont": ("dont run npm", "run npm"),
    "do not": ("Do not run npm", "Do run npm"),
    "doesn't": ("The repo doesn't use npm", "The repo uses npm"),
    "avoid": ("Avoid npm", "Prefer npm"),
    "instead of": ("Use pnpm instead of npm", "Use pnpm after npm"),
    "rather than": ("Use pnpm rather than npm", "Use pnpm more than npm"),
    "nor": ("Neither yarn nor npm", "Either yarn or npm"),
    "without": ("Install without npm", "Install with npm"),
    "mustn't": ("You mustn't run npm", "You must run npm"),
    "shouldn't": ("You shouldn't run npm", "You should run npm"),
    "cannot": ("You cannot run npm here", "You can run npm here"),
    "can't": ("You can't run npm here", "You can run npm here"),
}
# each resuming word -> a clause whose ruled-out tail it ends before pnpm (without the word pnpm stays ruled out)
RESUME = {
    "but": "Never npm, but pnpm",
    "use": "Never npm, use pnpm",
    "prefer": "Never npm, prefer pnpm",
    "run": "Never npm, run pnpm",
    "always": "Never npm, always pnpm",
    "only": "Never npm, only pnpm",
    "instead": "Never npm, instead pnpm",
}


# each scope-ending word -> a clause where it keeps `git` out of what is ruled out (without it, git is ruled out)
SCOPE_END = {w: f"Never npm {w} git" for w in load("polarity")["scope_end"]["words"]}


def test_every_polarity_row_has_cases() -> None:
    data = load("polarity")
    assert set(FORBID) == set(shared_rows("negations", "fitted")["words"])
    assert set(RESUME) == set(data["resume"]["words"])
    assert set(SCOPE_END) == set(data["scope_end"]["words"])


@pytest.mark.parametrize("word", sorted(SCOPE_END))
def test_scope_ending_word(word: str) -> None:
    got = set(prose_polarity(prose(SCOPE_END[word])))
    assert ("program_forbidden", "npm") in got and ("program_forbidden", "git") not in got
    assert ("program_forbidden", "git") in set(prose_polarity(prose("Never npm or git")))
    assert ("path_forbidden", "layout.tsx") in set(prose_polarity(prose(f"Never {word} `layout.tsx`")))


@pytest.mark.parametrize("word", sorted(FORBID))
def test_forbidding_word(word: str) -> None:
    yes, no = FORBID[word]
    assert ("program_forbidden", "npm") in set(prose_polarity(prose(yes)))
    assert ("program_forbidden", "npm") not in set(prose_polarity(prose(no)))


@pytest.mark.parametrize("word", sorted(RESUME))
def test_resuming_word(word: str) -> None:
    got = set(prose_polarity(prose(RESUME[word])))
    assert ("program_forbidden", "npm") in got and ("program_forbidden", "pnpm") not in got
    assert ("program_forbidden", "pnpm") in set(prose_polarity(prose("Never npm or pnpm")))


def test_polarity_reads_programs_code_names_and_paths() -> None:
    assert ("program_preferred", "pnpm") in set(prose_polarity(prose("Use pnpm, not npm")))
    assert ("program_preferred", "npm") not in set(prose_polarity(prose("Use pnpm, not npm")))
    assert ("program_forbidden", "brew") in set(prose_polarity(prose("Start it with docker, not brew services")))
    assert ("code_forbidden", "moment") in set(prose_polarity(prose("Never use Moment.js for dates")))
    assert ("code_forbidden", "moment") not in set(prose_polarity(prose("Use Moment.js for dates")))
    assert ("path_forbidden", "src/gen/") in set(prose_polarity(prose("Never edit `src/gen/` by hand")))
    assert not set(prose_polarity(prose("Edit `src/gen/` by hand. Then run the generator")))  # no cue: neither


# the kinds a memory and an act share: (memory text, act, the kind shared, an act sharing it as another kind)
PNPM_RULE = ("Package manager", "Use pnpm, never npm", "")
SHARED_CASES = {
    "program_forbidden": (PNPM_RULE, command_act("npm install left-pad"), ("program_forbidden", "npm")),
    "program_preferred": (PNPM_RULE, command_act("pnpm install"), ("program_preferred", "pnpm")),
    "program": (("Package manager", "Run `pnpm install` first", ""), command_act("pnpm install"), ("program", "pnpm")),
    "mention": (PNPM_RULE, prompt_act("use npm to add react-query"), ("program_forbidden", "npm")),
    "code_forbidden": (
        ("Dates", "date-fns, not moment", ""),
        edit_act("src/a.ts", "import moment from 'moment'\n"),
        ("code_forbidden", "moment"),
    ),
    "place_forbidden": (
        ("Generated", "Never edit `src/gen/` by hand", ""),
        edit_act("src/gen/api.ts", ""),
        ("place_forbidden", "src/gen/**"),
    ),
    "runner_forbidden": (PNPM_RULE, command_act("npx eslint src"), ("runner_forbidden", "npm")),
    "runner": (("Lint", "Lint with `pnpm lint`", ""), command_act("pnpx eslint src"), ("runner", "pnpm")),
    "place": (
        ("Payments", "Payment code lives in `src/payments/`", ""),
        edit_act("src/payments/a.ts", ""),
        ("place", "src/payments/**"),
    ),
    "langkind": (("Types", "Write strict TypeScript", ""), edit_act("src/a.ts", ""), ("langkind", "ts")),
    "filekind": (("Styles", "Never add `.css` files", ""), edit_act("src/a.css", ""), ("filekind", "css")),
}


@pytest.mark.parametrize("case", sorted(SHARED_CASES))
def test_shared_kind(case: str) -> None:
    """Each kind is what the memory and act share, and an act the memory does not name shares nothing."""
    text, act, *want = SHARED_CASES[case]
    mem = memory(*text, "feedback")
    got = shared(mem, act)
    if want:
        assert want[0] in got, got
    assert {k for k, _ in got} <= {want[0][0], "word", "segment", "role", "subcommand", "place", "program"}
    assert not shared(mem, edit_act("docs/x.md", "") if act.channel == "edit" else command_act("ls -la"))


def test_a_manager_running_a_script_uses_it_a_runner_alias_only_runs_through_it() -> None:
    assert ("program", "npm") in command_act("npm run build").features
    assert ("runner", "npm") in command_act("npx eslint src").features
    assert ("program", "npm") not in command_act("npx eslint src").features
