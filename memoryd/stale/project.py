"""What a project has: tracked files (`git ls-files`), the untracked and git-ignored ones on disk,
package manifests (scripts, dependencies, console scripts, make/just targets), the programs installed
in node_modules/.bin, and a grep for names in tracked text. A name is missing only when all say so."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memoryd.stale.refs import FLAG, MODULE, PACKAGE, PATH, SCRIPT, SYMBOL, Ref, is_placeholder

log = logging.getLogger(__name__)
GIT_TIMEOUT_SECONDS = 20.0
MANIFEST_MAX_BYTES = 1024 * 1024
UNTRACKED_MAX = 100_000  # untracked entries read (whole untracked directories count once)
NODE_RUNNERS = ("npm", "pnpm", "yarn", "bun")
# Runners that also run an installed program or a dependency's bin when no script has the name.
BIN_RUNNERS = ("pnpm", "yarn", "bun")
ALWAYS_MODULES = frozenset({"pip"})  # `python -m pip` works in every environment


def _git(root: Path, *args: str, timeout: float = GIT_TIMEOUT_SECONDS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        encoding="utf-8",
        errors="replace",
    )


def repo_key(root: Path) -> str | None:
    """Changes whenever the tracked tree may have: HEAD's commit plus the index's mtime. None: not a git repo."""
    head = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    if head.returncode not in (0, 1) or not (root / ".git").exists():
        return None
    try:
        index_mtime = (root / ".git" / "index").stat().st_mtime_ns
    except OSError:
        index_mtime = 0
    return f"{head.stdout.strip()}:{index_mtime}"


def _norm_package(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def _requirement_name(spec: str) -> str:
    return _norm_package(re.split(r"[\s\[<>=!~;@(]", spec.strip(), maxsplit=1)[0])


@dataclass
class ProjectFacts:
    root: Path
    files: set[str] = field(default_factory=set)
    dirs: set[str] = field(default_factory=set)
    basenames: set[str] = field(default_factory=set)
    scripts: dict[str, set[str]] = field(default_factory=dict)  # runner family ("npm", "make", "just") → names
    packages: set[str] = field(default_factory=set)
    cli_names: set[str] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)  # untracked and ignored paths (whole directories end in "/")
    bins: set[str] = field(default_factory=set)  # programs in node_modules/.bin next to any package.json
    node_modules: bool = False  # any node_modules/.bin found: the installed programs are known

    @classmethod
    def load(cls, root: Path, *, exclude: Path | None = None) -> ProjectFacts:
        facts = cls(root)
        listed = _git(root, "ls-files", "-z")
        if listed.returncode != 0:
            raise RuntimeError(f"git ls-files failed in {root}: {listed.stderr.strip()}")
        skip = None
        if exclude is not None and (exclude == root or root in exclude.parents):
            skip = exclude.relative_to(root).as_posix() + "/"
        for name in filter(None, listed.stdout.split("\0")):
            if skip and name.startswith(skip):
                continue
            facts.files.add(name)
            path = PurePosixPath(name)
            facts.basenames.add(path.name)
            facts.dirs.update(p.as_posix() for p in path.parents if p.as_posix() != ".")
            if len(path.parts) == 1 and path.suffix == ".py":
                facts.modules.add(path.stem)
            elif len(path.parts) >= 2 and path.name in ("__init__.py", "__main__.py"):
                facts.modules.add(path.parts[-2])
            if len(path.parts) >= 2 and path.parts[0] == "src" and path.suffix == ".py":
                facts.modules.add(path.parts[1].removesuffix(".py"))
        facts._untracked(skip)
        for name in sorted(facts.files):
            base = PurePosixPath(name).name
            try:
                if base == "package.json":
                    facts._package_json(root / name)
                    facts._bins(root / name)
                elif base == "pyproject.toml":
                    facts._pyproject(root / name)
                elif re.fullmatch(r"requirements[\w.-]*\.txt", base):
                    facts.packages |= {
                        _requirement_name(line)
                        for line in facts._read(root / name).splitlines()
                        if line.strip() and not line.lstrip().startswith(("#", "-"))
                    }
                elif base in ("Makefile", "makefile", "GNUmakefile") or base.endswith(".mk"):
                    facts.scripts.setdefault("make", set()).update(
                        t for line in facts._read(root / name).splitlines() for t in _make_targets(line)
                    )
                elif base in ("justfile", "Justfile", ".justfile"):
                    facts.scripts.setdefault("just", set()).update(
                        m.group(1)
                        for m in re.finditer(r"^@?([\w-]+)(?:\s[^:\n]*)?:(?!=)", facts._read(root / name), re.M)
                    )
                elif base == "Cargo.toml":
                    data = tomllib.loads(facts._read(root / name))
                    for key in ("dependencies", "dev-dependencies", "build-dependencies"):
                        facts.packages |= {_norm_package(k) for k in data.get(key, {})}
                elif base == "go.mod":
                    facts.packages |= {
                        _norm_package(m.group(1).rsplit("/", 1)[-1])
                        for m in re.finditer(
                            r"^\s*(?:require\s+)?([\w.-]+(?:/[\w.-]+)+)\s+v", facts._read(root / name), re.M
                        )
                    }
            except (OSError, ValueError, tomllib.TOMLDecodeError) as exc:
                log.debug("skipped manifest %s: %s", name, exc.__class__.__name__)
        return facts

    @staticmethod
    def _read(path: Path) -> str:
        with path.open("rb") as fh:
            return fh.read(MANIFEST_MAX_BYTES).decode("utf-8", errors="replace")

    def _package_json(self, path: Path) -> None:
        data = json.loads(self._read(path))
        self.scripts.setdefault("npm", set()).update(data.get("scripts") or {})
        for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
            self.packages |= {_norm_package(k) for k in data.get(key) or {}}
        if isinstance(data.get("bin"), dict):
            self.cli_names |= set(data["bin"])
        elif data.get("bin") and data.get("name"):
            self.cli_names.add(str(data["name"]).rsplit("/", 1)[-1])
        if data.get("name"):
            self.packages.add(_norm_package(str(data["name"])))

    def _untracked(self, skip: str | None) -> None:
        """Untracked and git-ignored files, a whole untracked directory as one entry (`node_modules/`)."""
        listed = _git(self.root, "ls-files", "-z", "--others", "--directory", "--no-empty-directory")
        if listed.returncode != 0:
            log.warning("git ls-files --others failed in %s: %s", self.root, listed.stderr.strip()[:200])
            return
        for name in filter(None, listed.stdout.split("\0")[:UNTRACKED_MAX]):
            if not (skip and name.startswith(skip)):
                self.others.add(name)

    def _bins(self, manifest: Path) -> None:
        for root in (manifest.parent, self.root):
            bins = root / "node_modules" / ".bin"
            if bins.is_dir():
                self.node_modules = True
                self.bins |= {p.name for p in bins.iterdir()}

    def _pyproject(self, path: Path) -> None:
        data = tomllib.loads(self._read(path))
        project = data.get("project", {})
        if project.get("name"):
            self.packages.add(_norm_package(project["name"]))
        self.packages |= {_requirement_name(d) for d in project.get("dependencies", [])}
        for deps in project.get("optional-dependencies", {}).values():
            self.packages |= {_requirement_name(d) for d in deps}
        for deps in data.get("dependency-groups", {}).values():
            self.packages |= {_requirement_name(d) for d in deps if isinstance(d, str)}
        self.cli_names |= set(project.get("scripts", {})) | set(project.get("gui-scripts", {}))
        poetry = data.get("tool", {}).get("poetry", {})
        self.packages |= {_norm_package(k) for k in poetry.get("dependencies", {}) if k != "python"}
        self.cli_names |= set(poetry.get("scripts", {}))

    # ------------------------------------------------------------------ checks
    def has_path(self, name: str) -> bool:
        """Tracked, untracked or ignored, or not demonstrably a path of this project."""
        name = name.strip().removeprefix("./").rstrip("/")
        if "*" in name or is_placeholder(name):
            return True  # a glob names a pattern, a placeholder nothing
        if name in self.files or name in self.dirs or self._other(name) or self.on_disk(name):
            return True
        head = name.split("/")[0]
        if "/" not in name:
            if name.startswith((".", "_")) and any(f.endswith(name) for f in self.files):
                return True  # a suffix: `.server.tsx`, `_service.go`
            return name in self.basenames or name in {d.rsplit("/", 1)[-1] for d in self.dirs}
        if _norm_package(head) in self.packages:
            return True  # a package's subpath (`payload/shared`), not a file
        if "." not in PurePosixPath(name).name and not self._is_dir_name(head):
            return True  # `plugin/no-subpixel-values`, `origin/main`: nothing says it is a path here
        suffix = "/" + name  # named relative to a sub-project: a tracked path ending with it
        return any(f.endswith(suffix) for f in self.files) or any(d.endswith(suffix) for d in self.dirs)

    def _is_dir_name(self, name: str) -> bool:
        return name in self.dirs or any(d.endswith("/" + name) for d in self.dirs)

    def _other(self, name: str) -> bool:
        """Untracked or ignored: the entry itself, inside an untracked directory, or by base name."""
        if name in self.others or name + "/" in self.others:
            return True
        if any(name.startswith(o) for o in self.others if o.endswith("/")):
            return True
        return any(o.rstrip("/") == name or o.rstrip("/").endswith("/" + name) for o in self.others)

    def on_disk(self, name: str) -> bool:
        """Whether the path exists under the project root now (never looks outside it)."""
        try:
            path = (self.root / name).resolve()
        except (OSError, RuntimeError):
            return False
        return path.is_relative_to(self.root.resolve()) and path.exists()

    def ever_tracked(self, names: list[str], timeout: float) -> set[str] | None:
        """Which of these paths some commit of any branch had (as a file, a directory, or relative to a
        sub-project); None when git could not say in time. Exact paths first: a glob walk costs ~4x."""
        deadline = time.monotonic() + timeout
        had: set[str] = set()
        for globbed in (False, True):
            todo = [n for n in names if n not in had]
            if not todo:
                break
            specs = [
                s for n in todo for s in ([f":(glob)**/{n}", f":(glob)**/{n}/**"] if globbed else [f":(literal){n}"])
            ]
            try:
                done = _git(
                    self.root,
                    *("log", "--all", "--format=", "--name-only", "--no-renames", "-z", "--", *specs),
                    timeout=max(0.0, deadline - time.monotonic()),
                )
            except subprocess.TimeoutExpired:
                return None
            if done.returncode != 0:
                return None
            seen = {f"/{f.strip()}/" for f in done.stdout.split("\0") if f.strip()}
            had |= {n for n in todo if any(f"/{n}/" in f for f in seen)}
        return had

    def ignored(self, names: list[str]) -> set[str]:
        """Which of these paths the project's ignore rules cover: build output, caches, local files."""
        if not names:
            return set()
        done = subprocess.run(
            ["git", "-C", str(self.root), "check-ignore", "--no-index", "--stdin", "-z"],
            input="\0".join(names) + "\0",
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
        )
        if done.returncode not in (0, 1):
            return set(names)  # cannot tell: never flag on a failed check
        return set(filter(None, done.stdout.split("\0")))

    def has_script(self, runner: str, name: str) -> bool:
        family = "npm" if runner in NODE_RUNNERS else runner
        return name in self.scripts.get(family, set())

    def runs(self, ref: Ref) -> bool:
        """Whether `pnpm x` / `yarn run x` / `make x` does something here, or nothing says it does not."""
        family = "npm" if ref.runner in NODE_RUNNERS else ref.runner
        if family not in self.scripts or self.has_script(ref.runner, ref.name):
            return True  # no manifest: nothing to check against
        if ref.runner not in BIN_RUNNERS or (ref.runner == "pnpm" and not ref.implicit):
            return False  # `npm run x`, `pnpm run x` and make targets run only what the manifest defines
        # `pnpm vitest`, `yarn astro`: an installed program, a dependency's (installed or not yet), or unknowable.
        return ref.name in self.bins or self.has_package(ref.name) or not self.node_modules

    def has_package(self, name: str) -> bool:
        norm = _norm_package(name.split("/")[-1] if not name.startswith("@") else name)
        return (
            norm in self.packages
            or _norm_package(name) in self.packages
            or norm in {_norm_package(m) for m in self.modules}
        )

    def has_module(self, name: str) -> bool:
        return (
            name in self.modules or name in sys.stdlib_module_names or name in ALWAYS_MODULES or self.has_package(name)
        )

    def grep(self, names: list[str]) -> set[str]:
        """Which of these names (functions, flags) occur as whole words in a tracked text file."""
        if not names:
            return set()
        args = ["grep", "-h", "-I", "-F", "--no-color"]
        for n in names:
            args += ["-e", n]
        found = _git(self.root, *args)
        if found.returncode not in (0, 1):
            log.warning("git grep failed in %s: %s", self.root, found.stderr.strip()[:200])
            return set(names)  # cannot tell: never flag on a failed search
        text = found.stdout
        return {n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)}

    def missing(self, refs: list[Ref], *, history_timeout: float) -> tuple[list[Ref], bool]:
        """The refs the project no longer has, and whether that answer is whole (False: git history
        did not answer in time, so the paths it had to confirm were left out)."""
        gone: list[Ref] = []
        greps = [r.name for r in refs if r.kind in (SYMBOL, FLAG)]
        present = self.grep(greps) if greps else set()
        for ref in refs:
            if ref.kind == PATH:
                ok = self.has_path(ref.name)
            elif ref.kind == SCRIPT:
                ok = self.runs(ref)
            elif ref.kind == PACKAGE:
                ok = not self.packages or self.has_package(ref.name) or ref.name in sys.stdlib_module_names
            elif ref.kind == MODULE:
                ok = self.has_module(ref.name)
            else:
                ok = ref.name in present
            if not ok:
                gone.append(ref)
        paths = [r.name.removeprefix("./") for r in gone if r.kind == PATH]
        ignored = self.ignored(paths)
        paths = [p for p in paths if p not in ignored]
        # A path is gone only if it was there: one the tree never had is another project's, an output, an example.
        had = self.ever_tracked([p.rstrip("/") for p in paths], history_timeout) if paths else set()
        confirmed = {p for p in paths if had is not None and p.rstrip("/") in had}
        kept = [r for r in gone if r.kind != PATH or r.name.removeprefix("./") in confirmed]
        return kept, had is not None


def _make_targets(line: str) -> list[str]:
    m = re.match(r"^([\w./-]+(?:\s+[\w./-]+)*)\s*::?(?!=)", line)
    if not m or line.startswith("\t"):
        return []
    return [t for t in m.group(1).split() if not t.startswith(".")]
