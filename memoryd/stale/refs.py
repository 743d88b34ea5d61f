"""The names a memory makes about its project: paths, files, commands, scripts, flags, functions
and packages, found in its text. Plain text in, `Ref`s out; nothing here reads the project.

Written for precision: a name is only taken when its form says it belongs to the project (a
relative path, a `npm run`/`make` target, a long flag, a `snake_case`/`camelCase()` symbol, a named
package), and a sentence that already says the name is gone ("removed", "no longer", ...) is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PATH, SCRIPT, TARGET, FLAG, SYMBOL, PACKAGE, MODULE = (
    "path",
    "script",
    "make target",
    "flag",
    "function",
    "package",
    "module",
)

# A sentence with one of these already knows the name is gone (or warns against it): not a stale claim.
# (Whole words only: `legacy-cart.ts` is a name, not the word "legacy".)
GONE_WORDS = re.compile(
    r"(?<![\w/.-])(no longer|removed|deleted|dropped|deprecated|replaced|renamed|instead of|used to|was moved"
    r"|were moved|"
    r"moved from|don'?t use|do not use|never use|avoid|gone|obsolete|legacy|formerly|migrated (?:off|away|from))"
    r"(?![\w/.-])",
    re.I,
)
# A "How to apply" part, and a sentence giving an example: the paths there illustrate, they claim nothing.
HOW_TO_APPLY = re.compile(r"\*{0,2}how to apply\b[^\n]*(?:\n(?![ \t]*\n|[ \t]*\*\*)[^\n]*)*", re.I)
EXAMPLE_WORDS = re.compile(r"\b(?:e\.g\.|for example|for instance|such as|something like)", re.I)
# A name a person fills in: `<script>`, `{name}`, `logs/…`, `a|b`, `path/to/x`, `ComponentName.tsx`, `NewPage.tsx`.
PLACEHOLDER_MARKS = re.compile(r"[<>{}|…$%]|\.\.\.|\bpath/to\b|\bxxx\b", re.I)
PLACEHOLDER_STEM = re.compile(
    r"(?:[_-]name|Name|^name)$|^(?:[Nn]ew|[Mm]y|[Yy]our|[Ss]ome|[Ee]xample|[Ss]ample|[Ff]oo)(?:[A-Z_.-]|$)"
)
# A first segment that is a domain (`github.com/pkg/errors`, `payloadcms.com/llms.txt`): a URL or module path.
DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|ai|app|co|so|sh|me|gg|xyz|cloud|in)")
FILE_EXTENSIONS = (
    "py",
    "pyi",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "json",
    "toml",
    "yaml",
    "yml",
    "md",
    "sh",
    "bash",
    "go",
    "rs",
    "rb",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cfg",
    "ini",
    "lock",
    "txt",
    "sql",
    "html",
    "css",
    "scss",
    "vue",
    "svelte",
    "env",
    "mk",
    "proto",
    "graphql",
    "tf",
    "ipynb",
    "csv",
    "xml",
)
# Outside backticks a bare file name counts only with these (`Next.js`, `Node.js` are not files).
BARE_EXTENSIONS = (
    "py",
    "toml",
    "json",
    "yaml",
    "yml",
    "sh",
    "lock",
    "cfg",
    "ini",
    "sql",
    "mk",
    "ts",
    "tsx",
    "go",
    "rs",
)
PACKAGE_MANAGER_BUILTINS = frozenset(
    "install i ci add remove rm uninstall update up upgrade exec dlx x why audit outdated list ls link unlink pack "
    "publish init create "
    "config cache store import prune dedupe rebuild help version login logout whoami view info search fund doctor set "
    "get env workspace "
    "workspaces bin root patch".split()
)
RUNNERS = ("npm", "pnpm", "yarn", "bun")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
EXT_ALT = "|".join(FILE_EXTENSIONS)
PATH_IN_PROSE = re.compile(rf"(?<![\w/.:~@*-])((?:\.{{1,2}}/)?[\w@-][\w.@-]*(?:/[\w.@-]+)+\.(?:{EXT_ALT}))(?![\w/])")
BARE_FILE_IN_PROSE = re.compile(rf"(?<![\w/.:~@*-])([\w-][\w.-]*\.(?:{'|'.join(BARE_EXTENSIONS)}))(?![\w/.])")
PACKAGE_WORDS = re.compile(
    r"(?:\b(?:package|library|dependency|lib|module)\s+`([\w@./-]+)`|`([\w@./-]+)`\s+(?:package|library|dependency))",
    re.I,
)
INSTALL = re.compile(r"^(?:pip3?|uv pip|poetry|npm|pnpm|yarn|bun|cargo)\s+(?:install|add|i)\s+(.+)$")
IMPORT = re.compile(r"^(?:from\s+(\w[\w.]*)\s+import\b|import\s+(?!type\b)(\w[\w.]*)\s*$)")
IDENT = re.compile(r"^(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)(\(\))?$")


@dataclass(frozen=True)
class Ref:
    kind: str
    name: str  # what is checked: the path, script, target, flag, symbol or package
    runner: str = ""  # for scripts: npm, pnpm, yarn, bun, make, just
    implicit: bool = False  # `pnpm vitest` (no `run`): a script, or else a program the package manager runs

    def describe(self) -> str:
        where = f"{self.runner} " if self.kind == SCRIPT else ""
        return f"{self.kind} `{where}{self.name}`"


def is_placeholder(name: str) -> bool:
    """Whether a name is one a person fills in (`<script>`, `{file}`, `src/components/<Name>.tsx`)."""
    if not name.strip() or PLACEHOLDER_MARKS.search(name):
        return True
    stems = [part.split(".")[0] for part in name.strip("/").split("/")]
    return any(PLACEHOLDER_STEM.search(stem) for stem in stems if stem)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+|\n{2,}|\n(?=\s*[-*\d])", text) if s.strip()]


def _looks_like_path(span: str) -> bool:
    if "://" in span or span.startswith(("/", "~", "$", "-", "@")) or " " in span:
        return False  # absolute, home, variables, flags, and `@scope/pkg` or `@/alias` module specifiers
    if "/" in span:
        if DOMAIN.fullmatch(span.split("/")[0]):
            return False
        return bool(re.fullmatch(r"(?:\.{1,2}/)?[\w.@-]+(?:/[\w.@*-]+)*/?", span))
    return bool(re.fullmatch(rf"[\w.-]*\w\.(?:{EXT_ALT})", span)) or span in (
        "Makefile",
        "Dockerfile",
        "justfile",
        "Procfile",
    )


def _project_form(name: str) -> bool:
    """A `snake_case` or `camelCase`/`PascalCase` name: a form a project gives its own functions and classes."""
    snake = "_" in name.strip("_") and len(name) > 3
    return snake or bool(re.search(r"[a-z][A-Z]", name)) or bool(re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", name))


def _is_symbol(span: str) -> str | None:
    """The name a code span names as a function/class, when its form says so. A member (`vi.fn()`,
    `JSON.parse`, `os.path.join`) is its receiver's API, most often a library's: it is the project's
    only when the member or its receiver has a project's form (`PaypalClient.refund`, `cart.add_item`)."""
    m = IDENT.match(span)
    if not m:
        return None
    name, call = m.group(1), m.group(2)
    if "." not in span:
        return name if call or _project_form(name) else None
    receivers = span.removesuffix("()").split(".")[:-1]
    return name if _project_form(name) or any(_project_form(r) for r in receivers) else None


def _command_refs(cmd: str) -> list[Ref]:
    tokens = cmd.split()
    if not tokens:
        return []
    head = tokens[0]
    refs: list[Ref] = []
    if head in RUNNERS and len(tokens) >= 2:
        if tokens[1] == "run" and len(tokens) >= 3:
            refs.append(Ref(SCRIPT, tokens[2], head))
        elif tokens[1] in ("test", "start"):
            refs.append(Ref(SCRIPT, tokens[1], head))
        elif head != "npm" and tokens[1] not in PACKAGE_MANAGER_BUILTINS and not tokens[1].startswith("-"):
            refs.append(Ref(SCRIPT, tokens[1], head, implicit=True))
    elif head in ("make", "just") and len(tokens) >= 2 and not tokens[1].startswith("-") and "=" not in tokens[1]:
        refs.append(Ref(SCRIPT, tokens[1], head))
    elif head in ("python", "python3") and len(tokens) >= 3 and tokens[1] == "-m":
        refs.append(Ref(MODULE, tokens[2].split(".")[0]))
    elif head in ("bash", "sh", "source", ".") and len(tokens) >= 2 and _looks_like_path(tokens[1]):
        refs.append(Ref(PATH, tokens[1].removeprefix("./")))
    elif (head.startswith("./") or "/" in head) and _looks_like_path(head):
        refs.append(Ref(PATH, head.removeprefix("./")))
    install = INSTALL.match(cmd)
    if install:
        specs = [t for t in install.group(1).split() if not t.startswith(("-", ".")) and "/" not in t.lstrip("@")[1:]]
        refs += [Ref(PACKAGE, t if is_placeholder(t) else re.split(r"(?<=.)[=<>~!\[@]", t)[0]) for t in specs]
    return [r for r in refs if not is_placeholder(r.name)]


def _span_refs(span: str) -> list[Ref]:
    span = span.strip()
    if not span:
        return []
    if span.startswith("--") and re.fullmatch(r"--[a-z][\w-]*(?:[ =].*)?", span):
        return [Ref(FLAG, re.split(r"[ =]", span)[0])]
    commands = _command_refs(span)
    if commands or " " in span:
        imported = IMPORT.match(span)
        if imported:
            return [Ref(PACKAGE, (imported.group(1) or imported.group(2)).split(".")[0])]
        return commands
    if _looks_like_path(span):
        return [Ref(PATH, span.removeprefix("./"))]
    symbol = _is_symbol(span)
    return [Ref(SYMBOL, symbol)] if symbol else []


def find_refs(text: str, *, cli_names: frozenset[str] = frozenset()) -> list[Ref]:
    """Every checkable name in a memory's text, once each, in order."""
    found: list[Ref] = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.strip().removeprefix("$ ")
            if line and not line.startswith("#"):
                found += _command_refs(line) + _cli_flags(line, cli_names)
    prose = FENCE.sub(" ", text)
    claims = HOW_TO_APPLY.sub("\n\n", prose)
    examples = [s for zone in HOW_TO_APPLY.findall(prose) for s in _sentences(zone)]
    for sentence, example in [(s, False) for s in _sentences(claims)] + [(s, True) for s in examples]:
        if GONE_WORDS.search(sentence):
            continue
        here = _sentence_refs(sentence, cli_names)
        if example or EXAMPLE_WORDS.search(sentence):
            here = [r for r in here if r.kind != PATH]  # an example path illustrates; it claims nothing
        found += here
    unique: dict[tuple[str, str, str], Ref] = {}
    for ref in found:
        if not is_placeholder(ref.name) and not (ref.kind == PATH and not _looks_like_path(ref.name)):
            unique.setdefault((ref.kind, ref.name, ref.runner), ref)
    return list(unique.values())


def _sentence_refs(sentence: str, cli_names: frozenset[str]) -> list[Ref]:
    found: list[Ref] = []
    packages = {(m.group(1) or m.group(2)) for m in PACKAGE_WORDS.finditer(sentence)}
    found += [Ref(PACKAGE, p) for p in sorted(packages)]
    for span in CODE_SPAN.findall(sentence):
        if span in packages:
            continue
        found += _span_refs(span) + _cli_flags(span, cli_names)
    plain = CODE_SPAN.sub(" ", sentence)
    found += [Ref(PATH, m.removeprefix("./")) for m in PATH_IN_PROSE.findall(plain)]
    found += [Ref(PATH, m) for m in BARE_FILE_IN_PROSE.findall(plain)]
    return found


def _cli_flags(cmd: str, cli_names: frozenset[str]) -> list[Ref]:
    """Long flags given to the project's own command line (its flags are the project's to check)."""
    tokens = cmd.split()
    if not tokens or tokens[0] not in cli_names or cmd.startswith("--"):
        return []
    return [Ref(FLAG, t.split("=")[0]) for t in tokens[1:] if re.fullmatch(r"--[a-z][\w-]*(=.*)?", t)]
