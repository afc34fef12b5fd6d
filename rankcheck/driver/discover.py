"""discover: which files to read, which to report on, the project root, and module names.

The call graph needs the whole project, so every Python file below the root is read for context,
while findings are reported only for the paths the user named (what pre-commit passes is what
changed, but a collective can sit in a module that did not).
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from rankcheck.driver import identity
from rankcheck.driver.identity import ModuleNote

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".rankcheck_cache",
    "node_modules",
    "site-packages",
    "build",
    "dist",
    "_build",
    "buck-out",
    "__pypackages__",
)
PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    display: str  # relative to the working directory when below it
    module: str  # its module name, unique in the run (`identity`: a shared dotted name gets its path)
    is_package: bool
    report: bool  # findings in this file are reported
    # What the file's absolute imports find in its own source root under an internal name
    # (top-level name -> module name); empty unless another source root shares the name.
    import_map: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[ModuleNote, ...] = ()  # what is ambiguous about its module (RC004)


def safe_resolve(path: Path) -> Path:
    """`path.resolve()`, or the absolute path as written when it cannot be resolved: a symlink
    loop raises RuntimeError before Python 3.13, a directory on the way that cannot be searched
    raises PermissionError. What is wrong with the path is reported where it is read."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def is_dir(path: Path) -> bool:
    """Path.is_dir() that says False, not PermissionError, below a directory it cannot search."""
    try:
        return path.is_dir()
    except OSError:
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


# Where no pyproject.toml says where a project starts, what else marks its top directory: its
# other packaging files, or the repository it is checked out in.
ROOT_FILES = ("setup.py", "setup.cfg")
ROOT_DIRECTORIES = (".git", ".hg")


def find_root(paths: Sequence[Path]) -> Path:
    """The nearest directory with a pyproject.toml above the first path; without one, the nearest
    with a setup.py or setup.cfg or that is a .git or .hg repository's top (a tree of scripts with
    no pyproject.toml: checking one folder of it, `rankcheck applications/`, still reads the modules
    beside it that it imports); else the paths' parent."""
    start = safe_resolve(paths[0]) if paths else safe_resolve(Path.cwd())
    probe = start if is_dir(start) else start.parent
    for directory in (probe, *probe.parents):
        if is_file(directory / "pyproject.toml"):
            return directory
    for directory in (probe, *probe.parents):
        if any(is_file(directory / name) for name in ROOT_FILES) or any(is_dir(directory / name) for name in ROOT_DIRECTORIES):
            return directory
    if len(paths) == 1:
        return probe
    resolved = [safe_resolve(p) for p in paths]
    return Path(os.path.commonpath([str(p if is_dir(p) else p.parent) for p in resolved]))


def display_path(path: Path, cwd: Optional[Path] = None) -> str:
    cwd = cwd or Path.cwd()
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


class _Ignore:
    """Exclude globs from the configuration and the root's .gitignore (its common subset)."""

    def __init__(self, root: Path, patterns: Iterable[str], use_gitignore: bool = True) -> None:
        self.root = root
        self.rules: List[Tuple[re.Pattern, bool, bool]] = []  # (regex, negated, dir_only)
        for pattern in patterns:
            self._add(pattern)
        if use_gitignore:
            try:
                lines = (root / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                lines = []
            for line in lines:
                line = line.strip()
                if line and not line.startswith("#"):
                    self._add(line)

    def _add(self, pattern: str) -> None:
        negated = pattern.startswith("!")
        if negated:
            pattern = pattern[1:]
        dir_only = pattern.endswith("/")
        pattern = pattern.rstrip("/")
        anchored = "/" in pattern
        pattern = pattern.lstrip("/")
        regex = _glob_to_regex(pattern)
        if not anchored:
            regex = r"(?:.*/)?" + regex
        try:
            compiled = re.compile(regex + r"\Z")
        except re.error:
            return  # not a pattern git would match either (`[z-a]`): configuration validates its own
        self.rules.append((compiled, negated, dir_only))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        try:
            rel = path.relative_to(self.root).as_posix()
        except ValueError:
            rel = path.as_posix().lstrip("/")
        result = False
        for regex, negated, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.match(rel):
                result = not negated
        return result


def _glob_to_regex(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(r".*")
            i += 2
            continue
        if c == "*":
            out.append(r"[^/]*")
        elif c == "?":
            out.append(r"[^/]")
        elif c == "[":
            j = pattern.find("]", i)
            if j == -1:
                out.append(re.escape(c))
            else:
                out.append(pattern[i : j + 1])
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def module_name(path: Path, root: Path, packages: Optional[Dict[Path, Tuple[str, ...]]] = None) -> Tuple[str, bool]:
    """Dotted module name: the file's package chain (directories with __init__.py) up to root.
    `packages` remembers each directory's chain across the files of one discovery. Files of one
    discovery that share the name are told apart by `identity.assign`."""
    is_package = path.name in ("__init__.py", "__init__.pyi")
    parts = list(_package_chain(path.parent, root, {} if packages is None else packages))
    if not is_package:
        parts.append(path.stem)
    if not parts:
        parts = [path.parent.name or "__main__"]
    return ".".join(parts), is_package


def source_root(path: Path, root: Path, packages: Optional[Dict[Path, Tuple[str, ...]]] = None) -> Path:
    """The directory the file's dotted name is relative to: the one above its outermost package,
    a script's own directory (what Python puts on sys.path to import it by that name)."""
    directory = path.parent
    for _ in _package_chain(path.parent, root, {} if packages is None else packages):
        directory = directory.parent
    return directory


def _package_chain(directory: Path, root: Path, packages: Dict[Path, Tuple[str, ...]]) -> Tuple[str, ...]:
    """The package names from the outermost package down to `directory` ((): not a package).
    Iterative: a tree thousands of packages deep must not exhaust the recursion limit."""
    pending: List[Path] = []
    chain: Tuple[str, ...] = ()
    current = directory
    while True:
        known = packages.get(current)
        if known is not None:
            chain = known
            break
        if not (is_file(current / "__init__.py") or is_file(current / "__init__.pyi")):
            packages[current] = ()
            break
        pending.append(current)
        if current == root or current.parent == current:
            break
        current = current.parent
    for package in reversed(pending):
        chain = chain + (package.name,)
        packages[package] = chain
    return chain


def _walk(
    directory: Path,
    ignore: _Ignore,
    excluded_names: Sequence[str],
    unreadable: list[tuple[Path, str]] | None = None,
    visited: list[Path] | None = None,
) -> Iterator[Path]:
    """Python files below `directory`, in name order, depth first. Iterative: a tree thousands of
    levels deep must not exhaust the interpreter's recursion limit. Symlinked directories are not
    followed (no loops); those that cannot be listed are passed over and added to `unreadable`
    with the reason."""
    stack = [directory]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            if unreadable is not None and current != directory:
                unreadable.append((current, exc.strerror or str(exc)))
            continue
        if visited is not None:
            visited.append(current)
        subdirs = []
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                continue
            if is_dir:
                if entry.name not in excluded_names and not ignore.ignored(path, True):
                    subdirs.append(path)
            elif is_file and entry.name.endswith(PYTHON_SUFFIXES):
                if not ignore.ignored(path, False):
                    yield path
        stack.extend(reversed(subdirs))


def discover(
    paths: Sequence[Path],
    root: Path,
    exclude: Sequence[str] = (),
    extend_exclude: Sequence[str] = (),
    force_exclude: bool = False,
    context: bool = True,
    unreadable: list[tuple[str, str]] | None = None,
    visited: list[Path] | None = None,
) -> List[SourceFile]:
    """Files to read: the whole root (for context) plus the named paths (to report on).
    `unreadable` receives (display path, reason) for each directory below a named path that
    could not be listed: the files in it were never seen. `visited` receives every directory
    listed (a change to any of them, seen in its mtime, can change the result)."""
    root = safe_resolve(root)
    patterns = list(exclude) + list(extend_exclude)
    ignore = _Ignore(root, patterns)
    excluded_names = DEFAULT_EXCLUDES
    report: dict = {}
    skipped: list[tuple[Path, str]] = []
    for given in paths:
        p = safe_resolve(given)
        if is_dir(p):
            for f in _walk(p, ignore, excluded_names, skipped, visited):
                report[f] = True
        elif exists(p) or given.suffix in PYTHON_SUFFIXES:
            if force_exclude and ignore.ignored(p, False):
                continue
            report[p] = True
    files: dict = dict(report)
    if context:
        for f in _walk(root, ignore, excluded_names, None, visited):
            files.setdefault(f, False)
    cwd = Path.cwd()
    if unreadable is not None:
        unreadable.extend((display_path(d, cwd), reason) for d, reason in dict(skipped).items())
    out = []
    roots = []
    packages: Dict[Path, Tuple[str, ...]] = {}
    for f, is_reported in files.items():
        module, is_package = module_name(f, root, packages)
        out.append(SourceFile(path=f, display=display_path(f, cwd), module=module, is_package=is_package, report=is_reported))
        roots.append(source_root(f, root, packages))
    out = identity.assign(out, root, roots)
    out.sort(key=lambda s: (not s.report, s.display))  # reported files first
    return out


TEST_DIRECTORIES = frozenset({"tests", "test", "testing"})
TEST_FRAMEWORKS = ("pytest", "unittest")
# Parts of them that production code imports too: sglang's and vLLM's `in_the_same_node_as` patch
# multiprocessing's resource tracker with `unittest.mock.patch` while probing shared memory.
TEST_FRAMEWORK_TOOLS = ("unittest.mock",)


def in_test_directory(relative: str) -> bool:
    """A directory named tests/test/testing on the way."""
    return any(p in TEST_DIRECTORIES for p in relative.replace("\\", "/").split("/")[:-1])


def named_as_test_module(relative: str) -> bool:
    """A file named test_*.py, *_test.py or conftest.py."""
    stem = relative.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"


def defines_tests(function_names: Iterable[str]) -> bool:
    """Whether a module holds what pytest collects: a `test*` function or method (a `Test*` class
    counts through its test methods; one without, `TestReporter` with an `__init__`, pytest skips)."""
    return any(name.startswith("test") for name in function_names)


def imports_a_test_framework(imports: Iterable[Tuple[str, str]]) -> bool:
    """A module whose top level imports pytest or unittest is test code wherever it lives (not
    for `unittest.mock` alone: a tool that production code uses too)."""
    return any(target.split(".", 1)[0] in TEST_FRAMEWORKS and not _is_tool_import(target) for _, target in imports)


def _is_tool_import(target: str) -> bool:
    return any(target == tool or target.startswith(tool + ".") for tool in TEST_FRAMEWORK_TOOLS)


def matches_any(display: str, patterns: Iterable[str]) -> bool:
    posix = display.replace(os.sep, "/")
    return any(fnmatch.fnmatch(posix, p) or fnmatch.fnmatch(posix, f"*/{p}") or fnmatch.fnmatch(Path(posix).name, p) for p in patterns)


def invalid_glob(pattern: str) -> Optional[str]:
    """Why an exclude pattern cannot be used, or None."""
    try:
        re.compile(_glob_to_regex(pattern.lstrip("!").rstrip("/").lstrip("/")))
    except re.error as exc:
        return str(exc)
    return None
