#!/usr/bin/env python3
"""Build the public rule-relevance corpus (bench/corpus/data/*.json) from repos.toml.

Usage:
    python3 bench/corpus/build.py                    # every repo in repos.toml
    python3 bench/corpus/build.py owner/name ...     # only these
    python3 bench/corpus/build.py --mirrors DIR      # where the fetched git dirs live
                                                     # (DIR/owner+name/repo; default /work/.mirror)
    python3 bench/corpus/build.py --plan owner/name  # print what the builder would choose
                                                     # (rule files, range, stride) without writing

Everything is derived from the git objects of the pinned commits, so a rebuild from the same
mirrors gives byte-identical files. The method is documented in bench/corpus/README.md; the
constants below are the ones it describes.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

MAX_TASKS = 40  # tasks per repository at most
TARGET_TASKS = 36  # stride = ceil(#commits in range / TARGET_TASKS)
MAX_EDIT_FILES = 8  # edits per task at most
MAX_EDIT_LINES = 30
MAX_EDIT_CHARS = 2000
MAX_BODY_CHARS = 1500
MAX_MEMORIES = 80
MAX_COMMANDS = 40
MAX_TASK_FILES = 60  # list at most this many changed paths per task
NOISE_MAX_FILES = 150
MIN_RANGE_COMMITS = 150  # windows with fewer non-merge commits are widened backwards   # commits touching more files than this are mass changes: skipped

# ----------------------------------------------------------------------------------------
# git


class Git:
    def __init__(self, gitdir: Path):
        self.gitdir = str(gitdir)

    def run(self, *args: str, check: bool = True) -> str:
        p = subprocess.run(["git", "--git-dir", self.gitdir, *args], capture_output=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {p.stderr.decode(errors='replace')[:500]}")
        return p.stdout.decode("utf-8", errors="replace")

    def show_file(self, commit: str, path: str) -> str | None:
        p = subprocess.run(["git", "--git-dir", self.gitdir, "show", f"{commit}:{path}"], capture_output=True)
        if p.returncode != 0:
            return None
        return p.stdout.decode("utf-8", errors="replace")

    def ls_tree(self, commit: str) -> list[str]:
        return [line for line in self.run("ls-tree", "-r", "--name-only", commit).splitlines() if line]


# ----------------------------------------------------------------------------------------
# rule files

AGENT_FILES = {"AGENTS.md", "CLAUDE.md", "GEMINI.md", "AGENT.md"}
EXCLUDED_DIR_PARTS = {
    "node_modules",
    "vendor",
    "third_party",
    "third-party",
    "fixtures",
    "__fixtures__",
    "testdata",
    "test-fixtures",
    "skills",
    ".agents",
    "templates",
    "template",
    "examples",
    "example",
    "samples",
    "e2e-fixtures",
    ".changeset",
    "dist",
    "build",
    "external",
    "deps",
    "submodules",
}


def classify_rule_path(path: str) -> str | None:
    """Return the kind of rule file, or None when `path` is not a rule file."""
    parts = path.split("/")
    name = parts[-1]
    if any(p in EXCLUDED_DIR_PARTS for p in parts[:-1]):
        return None
    if ".cursor" in parts:
        i = parts.index(".cursor")
        if len(parts) > i + 2 and parts[i + 1] == "rules" and (name.endswith(".mdc") or name.endswith(".md")):
            return "cursor"
        return None
    if path.startswith(".github/instructions/") and name.endswith(".instructions.md"):
        return "copilot-instructions"
    if path == ".github/copilot-instructions.md":
        return "copilot-root"
    if path.startswith(".claude/rules/") and name.endswith(".md"):
        return "claude-rules"
    if name in AGENT_FILES and not any(p.startswith(".") for p in parts[:-1]):
        return "agent-root" if len(parts) == 1 else "agent-nested"
    return None


FM_RE = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
# frontmatter whose opening `---` is missing (seen in the wild): key lines, then `---`
FM_OPENLESS_RE = re.compile(
    r"\A((?:(?:applyTo|globs|paths|description|name|alwaysApply)\s*:.*\r?\n"
    r"(?:[ \t]+.*\r?\n)*)+)---[ \t]*(?:\r?\n|\Z)"
)


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    return s


def parse_frontmatter(text: str) -> tuple[dict, str]:
    """Tolerant line-based frontmatter parser (Cursor globs such as `*.ts` are not valid YAML).

    Returns (fields, body). A value is a string, or a list for `key:` followed by `- item` lines
    or a `[a, b]` flow list.
    """
    m = FM_RE.match(text) or FM_OPENLESS_RE.match(text)
    if not m:
        return {}, text
    fields: dict = {}
    key = None
    for line in m.group(1).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = re.match(r"^\s*-\s+(.*)$", line)
        if item and key is not None:
            if not isinstance(fields.get(key), list):
                fields[key] = [] if not fields.get(key) else [fields[key]]
            fields[key].append(_unquote(item.group(1)))
            continue
        kv = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        if kv:
            key = kv.group(1)
            val = kv.group(2).strip()
            if val.startswith("[") and val.endswith("]"):
                fields[key] = [_unquote(v) for v in val[1:-1].split(",") if v.strip()]
            elif val in ("|", ">", "|-", ">-"):
                fields[key] = ""
            else:
                fields[key] = _unquote(val)
        elif key is not None and isinstance(fields.get(key), str) and line.startswith((" ", "\t")):
            fields[key] = (fields[key] + " " + line.strip()).strip()
    return fields, text[m.end() :]


def split_patterns(val) -> list[str]:
    if val is None:
        return []
    vals = val if isinstance(val, list) else [val]
    out: list[str] = []
    for v in vals:
        # commas separate patterns, except inside {a,b} braces
        depth, cur = 0, ""
        for ch in str(v):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                out.append(cur)
                cur = ""
            else:
                cur += ch
        out.append(cur)
    return [_unquote(p.strip()) for p in out if _unquote(p.strip())]


UNIVERSAL_PATTERNS = {"*", "**", "**/*", "/**", "./**", "**/**", "*.*", "**/*.*"}

# ----------------------------------------------------------------------------------------
# glob matching (documented in README: "Glob semantics")


def expand_braces(p: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(p[: m.start()] + alt + p[m.end() :]))
    return out


def glob_to_regex(p: str) -> str:
    i, out = 0, ""
    while i < len(p):
        c = p[i]
        if p.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif p.startswith("/**", i) and i + 3 == len(p):
            out += "(?:/.*)?"
            i += 3
        elif p.startswith("**", i):
            out += ".*"
            i += 2
        elif c == "*":
            out += "[^/]*"
            i += 1
        elif c == "?":
            out += "[^/]"
            i += 1
        elif c == "[":
            j = p.find("]", i + 1)
            if j == -1:
                out += re.escape(c)
                i += 1
            else:
                cls = p[i + 1 : j]
                if cls.startswith("!"):
                    cls = "^" + cls[1:]
                out += "[" + cls.replace("\\", "\\\\") + "]"
                i = j + 1
        else:
            out += re.escape(c)
            i += 1
    return out


def normalize_pattern(p: str, base: str = "") -> str:
    p = p.strip().replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    p = p.lstrip("/")
    if p.endswith("/"):
        p += "**"
    if base and "/" in p:
        p = base.rstrip("/") + "/" + p
    elif base:
        p = base.rstrip("/") + "/**/" + p
    return p


_RX_CACHE: dict[str, re.Pattern] = {}


def glob_match(pattern: str, path: str) -> bool:
    """True when repository-relative `path` matches `pattern` (see README, Glob semantics)."""
    for p in expand_braces(pattern):
        if not p:
            continue
        target = path
        if "/" not in p:
            target = path.rsplit("/", 1)[-1]  # basename pattern: any depth
        rx = _RX_CACHE.get(p)
        if rx is None:
            rx = _RX_CACHE[p] = re.compile(glob_to_regex(p) + r"\Z")
        if rx.match(target):
            return True
        # a literal directory (no wildcard) also covers everything below it
        if not any(ch in p for ch in "*?[") and path.startswith(p.rstrip("/") + "/"):
            return True
    return False


def scope_matches(scope: list[str] | None, files: list[str]) -> bool:
    if not scope:
        return False
    return any(glob_match(p, f) for p in scope for f in files)


# ----------------------------------------------------------------------------------------
# memories


def slug(s: str, n: int = 48) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    return s[:n].strip("-") or "rule"


def first_heading(body: str) -> str | None:
    for line in body.splitlines():
        m = re.match(r"^#{1,3}\s+(.+?)\s*#*\s*$", line)
        if m:
            return re.sub(r"[`*_]", "", m.group(1)).strip()
    return None


def first_sentence(body: str) -> str:
    in_code = False
    for line in body.splitlines():
        s = line.strip()
        if s.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not s or s.startswith(("#", "|", "<!--", "---", ">")):
            continue
        s = re.sub(r"^[-*+]\s+|^\d+\.\s+", "", s)
        s = re.sub(r"[`*_]", "", s)
        m = re.match(r"(.+?[.!?])(\s|$)", s)
        out = m.group(1) if m else s
        return out[:200]
    return ""


def trim_body(body: str) -> str:
    body = body.strip()
    if len(body) <= MAX_BODY_CHARS:
        return body
    cut = body[:MAX_BODY_CHARS]
    nl = cut.rfind("\n")
    if nl > MAX_BODY_CHARS // 2:
        cut = cut[:nl]
    return cut.rstrip() + "\n…"


def humanize(stem: str) -> str:
    stem = re.sub(r"\.(instructions|mdc|md)$", "", stem)
    stem = re.sub(r"\.(instructions|mdc|md)$", "", stem)
    return re.sub(r"[-_]+", " ", stem).strip().capitalize()


def is_pointer_file(body: str) -> bool:
    """A CLAUDE.md/GEMINI.md that only points at AGENTS.md carries no rule of its own."""
    b = body.strip()
    if len(b) < 300 and re.search(r"AGENTS\.md", b):
        return True
    return len(b) < 40


def make_memory(path: str, kind: str, text: str) -> dict | None:
    fm, body = parse_frontmatter(text)
    if not body.strip() or is_pointer_file(body) and kind in ("agent-root", "agent-nested"):
        return None
    stem = path.rsplit("/", 1)[-1]
    scope: list[str] | None = None
    universal = False
    scope_kind = None
    if kind == "cursor":
        base = path.split("/.cursor/")[0] if "/.cursor/" in path else ""
        pats = split_patterns(fm.get("globs"))
        always = str(fm.get("alwaysApply", "")).strip().lower() == "true"
        if pats and not any(p in UNIVERSAL_PATTERNS for p in pats):
            scope = [normalize_pattern(p, base) for p in pats]
            scope_kind = "globs"
        elif base and not pats:
            # a nested .cursor/rules directory applies to files under its directory
            scope = [base + "/**"]
            scope_kind = "directory"
        elif pats or always:
            universal = True
        else:
            scope_kind = "agent-requested"
    elif kind == "copilot-instructions":
        pats = split_patterns(fm.get("applyTo"))
        if pats and not any(p in UNIVERSAL_PATTERNS for p in pats):
            scope = [normalize_pattern(p) for p in pats]
            scope_kind = "applyTo"
        elif pats:
            universal = True
        else:
            scope_kind = "manual"
    elif kind == "claude-rules":
        pats = split_patterns(fm.get("paths") or fm.get("globs"))
        if pats and not any(p in UNIVERSAL_PATTERNS for p in pats):
            scope = [normalize_pattern(p) for p in pats]
            scope_kind = "paths"
        else:
            universal = True
    elif kind == "agent-nested":
        d = path.rsplit("/", 1)[0]
        scope = [d + "/**"]
        scope_kind = "directory"
    else:  # agent-root, copilot-root: loaded for every prompt
        universal = True
    name = (fm.get("name") if isinstance(fm.get("name"), str) else None) or first_heading(body) or humanize(stem)
    if kind == "agent-nested":
        name = f"{path.rsplit('/', 1)[0]}: {name}"
    desc = fm.get("description") if isinstance(fm.get("description"), str) else None
    desc = (desc or first_sentence(body) or name)[:300]
    mtype = "project" if kind in ("agent-root", "agent-nested", "copilot-root") else "feedback"
    return {
        "filename": "",  # filled by caller (unique)
        "name": name[:120],
        "description": desc,
        "type": mtype,
        "body": trim_body(body),
        "universal": universal,
        "source": path,
        "scope": scope,
        "scope_kind": scope_kind,
    }


def collect_memories(git: Git, commit: str, cfg: dict) -> tuple[list[dict], list[dict]]:
    include = cfg.get("rule_paths")
    exclude = [re.compile(x) for x in cfg.get("exclude_rules", [])]
    paths = []
    for p in git.ls_tree(commit):
        kind = classify_rule_path(p)
        if kind is None:
            continue
        if include is not None and p not in include:
            continue
        if any(x.search(p) for x in exclude):
            continue
        paths.append((p, kind))
    # nested agent files: if both AGENTS.md and CLAUDE.md exist in a dir, keep AGENTS.md only
    present = {p for p, _ in paths}
    mems, files = [], []
    for p, kind in paths:
        if kind in ("agent-nested", "agent-root") and not p.endswith("AGENTS.md"):
            d = p.rsplit("/", 1)[0] + "/" if "/" in p else ""
            if d + "AGENTS.md" in present:
                text = git.show_file(commit, p) or ""
                if len(text) < 1500:
                    continue
        text = git.show_file(commit, p)
        if text is None:
            continue
        m = make_memory(p, kind, text)
        if m is None:
            continue
        mems.append(m)
        files.append({"path": p, "commit": commit})
    # prefer scoped memories when capping
    if len(mems) > MAX_MEMORIES:
        keep = sorted(range(len(mems)), key=lambda i: (mems[i]["scope"] is None, i))[:MAX_MEMORIES]
        keep = sorted(keep)
        mems = [mems[i] for i in keep]
        kept_paths = {m["source"] for m in mems}
        files = [f for f in files if f["path"] in kept_paths]
    used = set()
    for m in mems:
        base = f"{m['type']}_{slug(m['source'].rsplit('.', 1)[0].replace('.instructions', '').replace('/', '-') if m['scope_kind'] == 'directory' or m['source'].rsplit('/', 1)[-1] in AGENT_FILES else m['source'].rsplit('/', 1)[-1].split('.')[0])}"
        fn, k = base + ".md", 2
        while fn in used:
            fn = f"{base}-{k}.md"
            k += 1
        used.add(fn)
        m["filename"] = fn
    return mems, files


# ----------------------------------------------------------------------------------------
# tasks

BOT_RE = re.compile(r"(dependabot|renovate|github-actions|\[bot\]|-bot\b|greenkeeper|snyk-bot)", re.I)
VERSION_RE = re.compile(
    r"^(chore\(release\)|chore: release|release[: ]|releasing|bump version|version packages|"
    r"v?\d+\.\d+(\.\d+)?\b|prepare (for )?release|publish|meta\(changelog\)|update changelog)",
    re.I,
)
DEPBUMP_RE = re.compile(r"\b(bump|update|upgrade)\b.*\b(from|to) v?\d|^(build|chore)\(deps", re.I)
SKIP_EDIT_RE = re.compile(
    r"(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|poetry\.lock|"
    r"uv\.lock|Gemfile\.lock|composer\.lock|go\.sum|Pipfile\.lock|packages\.lock\.json)$|"
    r"\.(lock|snap|min\.js|min\.css|map|png|jpe?g|gif|ico|svg|webp|pdf|zip|gz|woff2?|ttf|eot|"
    r"mp4|mp3|wasm|dll|exe|so|dylib|bin|jar|pyc)$|(^|/)(dist|vendor|__snapshots__)/",
    re.I,
)


def is_noise(subject: str, author: str) -> str | None:
    s = subject.strip()
    if len(s.split()) < 4:
        return "short"
    if s.lower().startswith("revert") or s.startswith('Revert "'):
        return "revert"
    if VERSION_RE.match(s) or re.search(r"\bbump(ed)? (the )?version\b", s, re.I):
        return "version"
    if BOT_RE.search(author) and (DEPBUMP_RE.search(s) or re.search(r"\b(deps|dependenc)", s, re.I)):
        return "bot-deps"
    if DEPBUMP_RE.search(s) and re.search(r"\bfrom\b.*\bto\b", s):
        return "deps"
    return None


def first_hunk_added(git: Git, sha: str, path: str) -> str:
    out = git.run("show", "--format=", "--no-color", "--no-ext-diff", sha, "--", path, check=False)
    lines, in_hunk = [], False
    for line in out.splitlines():
        if line.startswith("@@"):
            if in_hunk:
                break
            in_hunk = True
            continue
        if not in_hunk:
            continue
        if line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    lines = lines[:MAX_EDIT_LINES]
    text = "\n".join(lines)
    if len(text) > MAX_EDIT_CHARS:
        text = text[:MAX_EDIT_CHARS]
    return text


def commit_files(git: Git, sha: str) -> list[str]:
    out = git.run("show", "--name-only", "--format=", "--no-renames", sha)
    return [line for line in out.splitlines() if line.strip()]


def resolve_range(git: Git, cfg: dict, rule_files: list[dict], mems: list[dict]) -> str:
    if cfg.get("range"):
        return cfg["range"]
    commit = cfg["commit"]
    # the median date at which the scoped rule files (or, if none, all rule files) were added
    srcs = [m["source"] for m in mems if m["scope"]] or [f["path"] for f in rule_files]
    adds = []
    for p in srcs:
        out = git.run("log", "--diff-filter=A", "--format=%H %ct", commit, "--", p, check=False)
        rows = [line.split() for line in out.splitlines() if line.strip()]
        if rows:
            adds.append((int(rows[-1][1]), rows[-1][0]))
    if not adds:
        return commit
    adds.sort()
    start = adds[(len(adds) - 1) // 2][1]
    rng = f"{start}^..{commit}"
    n = int(git.run("rev-list", "--count", "--no-merges", rng, check=False).strip() or 0)
    if n < MIN_RANGE_COMMITS:
        # too little history since the rules were added: take the last MIN_RANGE_COMMITS
        # non-merge commits up to `commit` instead (globs do not depend on time)
        revs = git.run("rev-list", "--no-merges", f"--max-count={MIN_RANGE_COMMITS}", commit).split()
        rng = f"{revs[-1]}^..{commit}" if len(revs) == MIN_RANGE_COMMITS else commit
    return rng


def build_tasks(git: Git, cfg: dict, mems: list[dict], rule_paths: set[str]) -> tuple[list[dict], dict]:
    rng = cfg["range"]
    revs = rng.split()
    log = git.run("log", "--no-merges", "--format=%H%x09%ct%x09%an%x09%s", *revs)
    commits = [line.split("\t", 3) for line in log.splitlines() if line.strip()]
    n = len(commits)
    stride = cfg.get("stride") or max(1, math.ceil(n / TARGET_TASKS))
    tasks, skipped = [], {}
    scoped = [m for m in mems if m["scope"] and not m["universal"]]
    for start in range(0, n, stride):
        if len(tasks) >= MAX_TASKS:
            break
        for sha, ct, author, subject in commits[start : start + stride]:
            why = is_noise(subject, author)
            files = None
            if why is None:
                files = commit_files(git, sha)
                if not files:
                    why = "empty"
                elif all(f in rule_paths or classify_rule_path(f) for f in files):
                    why = "rule-files-only"
                elif len(files) > NOISE_MAX_FILES:
                    why = "mass-change"
            if why:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            edits = []
            for f in files:
                if len(edits) >= MAX_EDIT_FILES:
                    break
                if SKIP_EDIT_RE.search(f):
                    continue
                txt = first_hunk_added(git, sha, f)
                if txt.strip():
                    edits.append({"path": f, "new_text": txt})
            relevant = [m["filename"] for m in scoped if scope_matches(m["scope"], files)]
            tasks.append(
                {
                    "id": sha,
                    "date": datetime.datetime.fromtimestamp(int(ct), datetime.UTC).strftime("%Y-%m-%d"),
                    "prompt": subject,
                    "files": files[:MAX_TASK_FILES],
                    "n_files": len(files),
                    "edits": edits,
                    "relevant": relevant,
                    "label": "scope",
                }
            )
            break
    return tasks, {"range": rng, "commits_in_range": n, "stride": stride, "skipped": skipped}


# ----------------------------------------------------------------------------------------
# commands

TOOL_RE = re.compile(
    r"^(npm|pnpm|yarn|npx|bun|bunx|node|deno|turbo|nx|cargo|rustup|go|gofmt|golangci-lint|make|just|"
    r"python3?|pytest|uv|uvx|poetry|pip3?|ruff|mypy|pyright|tox|nox|hatch|pre-commit|dotnet|"
    r"msbuild|\./build\.(sh|ps1|cmd)|\./eng/[\w./-]+|\./scripts?/[\w./-]+|\./gradlew|gradle|mvn|"
    r"\./mvnw|bundle|bin/rails|bin/rspec|bin/\w+|rake|rails|rspec|rubocop|composer|php|vendor/bin/\w+|"
    r"\./vendor/bin/\w+|artisan|swift|xcodebuild|cmake|ctest|ninja|meson|bazel|docker|"
    r"docker-compose|pwsh|Start-PSBuild|Start-PSPester|Invoke-\w+|kotlinc|sbt|mix|flutter|dart|"
    r"tsc|eslint|prettier|vitest|jest|playwright|biome|bash|sh|git submodule)\b"
)


def clean_cmd(line: str) -> str | None:
    s = line.strip()
    s = re.sub(r"^(\$|>|PS>|PS [^>]*>)\s+", "", s)
    if not s or s.startswith("#") or "${{" in s or len(s) > 160:
        return None
    s = s.rstrip("\\").strip()
    if s.endswith(("&&", "|", "(", "{")):
        return None
    return s if TOOL_RE.match(s) else None


def package_manager(git: Git, commit: str, files: set[str], pkg: dict) -> str:
    pm = str(pkg.get("packageManager", ""))
    for name in ("pnpm", "yarn", "bun", "npm"):
        if pm.startswith(name):
            return name
    if "pnpm-lock.yaml" in files:
        return "pnpm"
    if "yarn.lock" in files:
        return "yarn"
    if "bun.lockb" in files or "bun.lock" in files:
        return "bun"
    return "npm"


def collect_commands(git: Git, commit: str) -> list[dict]:
    files = git.ls_tree(commit)
    fileset = set(files)
    cats: dict[str, list[dict]] = {}
    seen = set()
    cat = "pkg"

    def add(cmd, src):
        if cmd and cmd not in seen:
            seen.add(cmd)
            cats.setdefault(cat, []).append({"command": cmd, "source": src})

    # package.json scripts: root, then up to 3 workspace packages (shortest paths first)
    pkgs = ["package.json"] if "package.json" in fileset else []
    pkgs += sorted(
        (
            f
            for f in files
            if f.endswith("/package.json")
            and f.count("/") <= 2
            and classify_rule_path(f) is None
            and not any(p in EXCLUDED_DIR_PARTS for p in f.split("/"))
        ),
        key=lambda f: (f.count("/"), f),
    )[:3]
    root_pkg = {}
    for pj in pkgs:
        try:
            pkg = json.loads(git.show_file(commit, pj) or "{}")
        except json.JSONDecodeError:
            continue
        if pj == "package.json":
            root_pkg = pkg
        pm = package_manager(git, commit, fileset, root_pkg or pkg)
        scripts = pkg.get("scripts") or {}
        for name in list(scripts)[: 15 if pj == "package.json" else 5]:
            if name.startswith(("pre", "post")) and name[3:] in scripts:
                continue
            if pj == "package.json":
                cmd = f"{pm} run {name}" if pm != "yarn" else f"yarn {name}"
            else:
                pname = pkg.get("name") or pj.rsplit("/", 1)[0]
                d = pj.rsplit("/", 1)[0]
                cmd = {
                    "pnpm": f"pnpm --filter {pname} run {name}",
                    "yarn": f"yarn workspace {pname} {name}",
                    "bun": f"bun run --cwd {d} {name}",
                    "npm": f"npm run {name} -w {d}",
                }[pm]
            add(cmd, f"{pj}#scripts.{name}")
    # Makefile / justfile targets
    cat = "make"
    for mk in ("Makefile", "makefile", "GNUmakefile"):
        if mk in fileset:
            for line in (git.show_file(commit, mk) or "").splitlines():
                m = re.match(r"^([A-Za-z][\w.-]*)\s*:(?!=)", line)
                if m and not m.group(1).startswith(".") and "%" not in line.split(":")[0]:
                    add(f"make {m.group(1)}", f"{mk}#{m.group(1)}")
    for jf in ("justfile", "Justfile", ".justfile"):
        if jf in fileset:
            for line in (git.show_file(commit, jf) or "").splitlines():
                m = re.match(r"^@?([a-z][\w-]*)(\s+[^:=]*)?:(?!=)", line)
                if m:
                    add(f"just {m.group(1)}", f"{jf}#{m.group(1)}")
    # Cargo workspace members -> cargo test -p
    cat = "cargo"
    if "Cargo.toml" in fileset:
        try:
            cargo = tomllib.loads(git.show_file(commit, "Cargo.toml") or "")
        except Exception:
            cargo = {}
        add("cargo build", "Cargo.toml")
        add("cargo test", "Cargo.toml")
        crates = []
        for f in files:
            if f.endswith("/Cargo.toml") and f.count("/") <= 2 and (cargo.get("workspace")):
                try:
                    c = tomllib.loads(git.show_file(commit, f) or "")
                    if c.get("package", {}).get("name"):
                        crates.append((f.count("/"), f, c["package"]["name"]))
                except Exception:
                    pass
        for _, f, name in sorted(crates)[:5]:
            add(f"cargo test -p {name}", f)
    # build files whose standard entry points are the commands developers type
    cat = "build"
    if "composer.json" in fileset:
        try:
            comp = json.loads(git.show_file(commit, "composer.json") or "{}")
        except json.JSONDecodeError:
            comp = {}
        for name in list(comp.get("scripts") or {})[:12]:
            if not name.startswith(("pre-", "post-")):
                add(f"composer run {name}", f"composer.json#scripts.{name}")
    if "gradlew" in fileset:
        for t in ("build", "test", "check"):
            add(f"./gradlew {t}", "gradlew")
    if "mvnw" in fileset or "pom.xml" in fileset:
        mvn = "./mvnw" if "mvnw" in fileset else "mvn"
        for t in ("verify", "test"):
            add(f"{mvn} {t}", "pom.xml")
    if "go.mod" in fileset:
        for c in ("go build ./...", "go test ./...", "go vet ./..."):
            add(c, "go.mod")
    if any(f.endswith(".sln") or f.endswith(".slnx") for f in files if "/" not in f):
        for c in ("dotnet build", "dotnet test"):
            add(c, next(f for f in files if "/" not in f and f.endswith((".sln", ".slnx"))))
    if "Gemfile" in fileset:
        add("bundle install", "Gemfile")
        if "Rakefile" in fileset:
            add("bundle exec rake", "Rakefile")
    if "pyproject.toml" in fileset:
        runner = "uv run " if "uv.lock" in fileset else ""
        add(f"{runner}pytest", "pyproject.toml")
    if "Package.swift" in fileset:
        add("swift build", "Package.swift")
        add("swift test", "Package.swift")
    if "pubspec.yaml" in fileset or any(f.endswith("/pubspec.yaml") for f in files if f.count("/") <= 2):
        add("flutter test", "pubspec.yaml")
        add("dart analyze", "pubspec.yaml")
    # CI workflow run: lines
    cat = "ci"
    for f in sorted(f for f in files if f.startswith(".github/workflows/") and f.endswith((".yml", ".yaml"))):
        text = git.show_file(commit, f) or ""
        for m in re.finditer(r"^\s*(?:-\s+)?run:\s*(.*)$", text, re.M):
            first = m.group(1).strip()
            block = []
            if first in ("|", ">", "|-", ">-", ""):
                indent = None
                for line in text[m.end() :].splitlines()[1:]:
                    if not line.strip():
                        continue
                    ind = len(line) - len(line.lstrip())
                    if indent is None:
                        indent = ind
                    if ind < indent:
                        break
                    block.append(line)
            else:
                block = [first]
            for line in block:
                add(clean_cmd(line), f)
    # README / CONTRIBUTING / docs code blocks
    cat = "docs"
    docs = [
        f
        for f in (
            "README.md",
            "CONTRIBUTING.md",
            "DEVELOPMENT.md",
            "docs/CONTRIBUTING.md",
            ".github/CONTRIBUTING.md",
            "AGENTS.md",
            "CLAUDE.md",
        )
        if f in fileset
    ]
    for d in docs:
        text = git.show_file(commit, d) or ""
        for block in re.findall(r"```(?:bash|sh|shell|console|zsh|powershell|pwsh|ps1)?\n(.*?)```", text, re.S):
            for line in block.splitlines():
                add(clean_cmd(line), d)
    # round-robin over the sources so that no single one fills the quota
    out: list[dict] = []
    order = [c for c in ("pkg", "make", "cargo", "build", "ci", "docs") if c in cats]
    i = 0
    while len(out) < MAX_COMMANDS and any(cats[c] for c in order):
        c = order[i % len(order)]
        if cats[c]:
            out.append(cats[c].pop(0))
        i += 1
    return out


# ----------------------------------------------------------------------------------------


SPLIT_SALT = "memoryd-corpus:"


def split_for(repo: str) -> str:
    """~20% of repositories are frozen: sha1("memoryd-corpus:" + owner/name) % 5 == 0."""
    return "frozen" if int(hashlib.sha1((SPLIT_SALT + repo).encode()).hexdigest(), 16) % 5 == 0 else "cv"


def mirror_dir(mirrors: Path, repo: str) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def build_repo(cfg: dict, mirrors: Path, plan: bool = False) -> dict:
    repo = cfg["repo"]
    git = Git(mirror_dir(mirrors, repo))
    commit = git.run("rev-parse", cfg["commit"]).strip()
    mems, rule_files = collect_memories(git, commit, cfg)
    cfg = dict(cfg, commit=commit)
    cfg["range"] = resolve_range(git, cfg, rule_files, mems)
    rule_paths = {f["path"] for f in rule_files}
    tasks, info = build_tasks(git, cfg, mems, rule_paths)
    commands = collect_commands(git, commit)
    out = {
        "repo": repo,
        "language": cfg["language"],
        "licence": cfg["licence"],
        "split": split_for(repo),
        "sampling": info,
        "rule_files": rule_files,
        "memories": mems,
        "tasks": tasks,
        "commands": commands,
    }
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repos", nargs="*")
    ap.add_argument("--mirrors", default=os.environ.get("CORPUS_MIRRORS", "/work/.mirror"))
    ap.add_argument("--config", default=str(HERE / "repos.toml"))
    ap.add_argument("--plan", action="store_true")
    args = ap.parse_args(argv)
    conf = tomllib.loads(Path(args.config).read_text())
    entries = conf["repo"]
    if args.repos:
        entries = [e for e in entries if e["repo"] in args.repos]
    DATA.mkdir(parents=True, exist_ok=True)
    rc = 0
    for e in entries:
        try:
            data = build_repo(e, Path(args.mirrors), plan=args.plan)
        except Exception as ex:  # keep going; report
            print(f"{e['repo']}: FAILED {ex}", file=sys.stderr)
            rc = 1
            continue
        ns = sum(1 for m in data["memories"] if m["scope"])
        nr = sum(1 for t in data["tasks"] if t["relevant"])
        print(
            f"{e['repo']:45s} mem={len(data['memories']):3d} scoped={ns:3d} tasks={len(data['tasks']):3d} "
            f"rel={nr:3d} cmds={len(data['commands']):3d} {data['sampling']['range'][:30]} "
            f"n={data['sampling']['commits_in_range']} stride={data['sampling']['stride']}"
        )
        if args.plan:
            for m in data["memories"]:
                print(f"    {'U' if m['universal'] else ' '} {m['source']}  {m['scope']}")
            continue
        path = DATA / (e["repo"].replace("/", "__") + ".json")
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        size = path.stat().st_size
        if size > 400_000:
            print(f"  WARNING {path.name} is {size} bytes", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
