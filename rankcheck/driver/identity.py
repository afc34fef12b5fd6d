"""identity: every file is its own module, and its absolute imports find what Python would find.

`discover.module_name` names a file as Python imports it from its *source root*: the directory
above its outermost package, which for a script is its own directory. Files in different source
roots can share that name: `pretrain/train.py` and `finetune/train.py` are both `train`, and the
`utils.py` beside each is `utils`. Python keeps them apart because a script runs with its own
directory first on `sys.path`, so `import utils` in `pretrain/train.py` is `pretrain/utils.py`.
Here (`assign`):

* A top-level name (the first part of a dotted name) that one source root alone provides keeps
  its plain dotted names: on a project without the problem, module names, qualnames and cache keys
  are what they always were.
* A top-level name that several source roots provide: the files of the project root keep their
  plain names (they are what an import finds from anywhere the project runs from, and what an
  installed project provides); the others are named `<source root>/<dotted name>`, the source root
  relative to the project root (`pretrain/utils`, `src/pkg.mod`). Such a name is valid wherever a
  module name is (`pretrain/utils.all_reduce_metrics` as a qualname: the prefix holds no dot), it
  reads as the path it is, and Python could never give it.
* Each file's absolute imports of such a name find its own source root's module first: the file
  carries `import_map` (top-level name -> internal name) and the summarizer rewrites the first
  part of the dotted names it imports (`frontend.scopes.import_bindings`). Relative imports need
  nothing: they resolve from the file's own name, prefix and all. The map is empty, and the
  summary's cache key unchanged, for every file whose source root provides no shared name.
* Two files of one source root with one name (`x.py` beside the package `x/`, a stub `x.pyi`
  beside `x.py`): the one Python imports keeps the name, the other is `<name>~py` or `<name>~pyi`.

What Python's own rules leave ambiguous, or a file no import can reach, is an RC004 (reported by
`diagnostics`), never silence. About a file (`ModuleNote`, found here from the layout alone): a
name the project root provides shadowed for the files of another source root, two packages of one
name in different source roots, a module hidden by the package of its name beside it. About an
import (found from the summaries' `absolute_imports`, which minimal summaries record too): a name
that several source roots provide and neither the importing file's nor the project root does,
which `sys.path` decides at run time; it is left unresolved, not guessed. Scripts of one name in
sibling folders, each importing its own siblings, are what Python's rules resolve: nothing to say.
An import in a package file of a name a module beside it has is the same, told apart (`two_ways`):
Python finds that module only when the file runs as a script, a module reachable two ways.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from rankcheck.ftypes import WARNING, Finding, Location
from rankcheck.program.ir import ModuleSummary
from rankcheck.rules_meta import get_rule

if TYPE_CHECKING:
    from rankcheck.driver.discover import SourceFile

CODE = "RC004"
# Files that tools run and nothing imports by name: pytest's conftest, pip's setup, a package's
# `__main__`. They get distinct names like any other file, but no note.
NOT_IMPORTED = frozenset({"__main__", "conftest", "setup"})
STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))  # Python 3.10+; before, none are left out
SEPARATOR = "/"  # between the source root and the dotted name of an internal module name
SAME_ROOT_MARK = "~"  # before the suffix that tells apart two files of one name in one directory

ImportMap = Tuple[Tuple[str, str], ...]


@dataclass(frozen=True)
class ModuleNote:
    """Something about a file's module identity worth an RC004 (see the module docstring)."""

    variant: str  # a message variant of RC004 in rules/codes.toml
    name: str  # the plain dotted name the file shares
    other: str  # the display path of the other file
    root: str = ""  # the file's source root, relative to the project root ("." for the root)
    more: int = 0  # how many further files share the name


def plain_name(module: str) -> str:
    """The dotted name Python gives a module (`pretrain/utils` -> `utils`, `x~py` -> `x`)."""
    return module.rsplit(SEPARATOR, 1)[-1].split(SAME_ROOT_MARK, 1)[0]


def last_word(module: str) -> str:
    """The last part of a module's dotted name: what an import of it spells (`src/pkg.mod` -> `mod`)."""
    return plain_name(module).rsplit(".", 1)[-1]


def _tag(directory: Path, root: Path) -> str:
    """A source root as it prefixes internal names: its path below the project root, with no dot
    (a dot would split the name where no module ends)."""
    try:
        parts: Sequence[str] = directory.relative_to(root).parts
    except ValueError:
        parts = Path(os.path.relpath(directory, root)).parts
    return SEPARATOR.join(part.replace(".", "_") for part in parts) or "_"


def _rank_in_directory(source: SourceFile) -> int:
    """Of two files of one name in one directory, the one Python imports first (lower): a package
    before a module (FileFinder looks for the directory first), source before a stub."""
    return (0 if source.is_package else 2) + (1 if source.path.suffix == ".pyi" else 0)


def _top_file(files: Sequence[SourceFile]) -> SourceFile:
    """The file that stands for a top-level name in one source root: the module itself, or the
    package's `__init__` (or, when that was excluded, its shallowest file)."""
    return min(files, key=lambda s: (s.module.count("."), _rank_in_directory(s), str(s.path)))


def assign(files: Sequence[SourceFile], root: Path, roots: Sequence[Path]) -> List[SourceFile]:
    """The files, in the same order, with their internal module names, import maps and notes.
    `roots`: each file's source root (`discover.source_root`)."""
    root = Path(root)
    default_roots = {root}
    if (root / "__init__.py").is_file() or (root / "__init__.pyi").is_file():
        default_roots.add(root.parent)  # the project root is itself a package
    # top-level name -> source root -> its files (indexes into `files`)
    providers: Dict[str, Dict[Path, List[int]]] = {}
    for index, source in enumerate(files):
        top = source.module.split(".", 1)[0]
        providers.setdefault(top, {}).setdefault(roots[index], []).append(index)

    names = [s.module for s in files]
    maps: Dict[Path, List[Tuple[str, str]]] = {}
    notes: Dict[int, List[ModuleNote]] = {}
    for top, by_root in providers.items():
        if len(by_root) > 1:
            for directory, members in by_root.items():
                if directory in default_roots:
                    continue
                tag = _tag(directory, root)
                for index in members:
                    names[index] = f"{tag}{SEPARATOR}{files[index].module}"
                maps.setdefault(directory, []).append((top, f"{tag}{SEPARATOR}{top}"))
            if top not in NOT_IMPORTED:
                _note_shared(top, by_root, files, root, default_roots, notes)
        for members in by_root.values():
            _split_same_directory(members, files, names, notes)

    _make_unique(names, files)
    out: List[SourceFile] = []
    for index, source in enumerate(files):
        import_map = tuple(sorted(maps.get(roots[index], ())))
        if names[index] == source.module and not import_map and index not in notes:
            out.append(source)
        else:
            out.append(replace(source, module=names[index], import_map=import_map, notes=tuple(notes.get(index, ()))))
    return out


def _split_same_directory(members: List[int], files: Sequence[SourceFile], names: List[str], notes: Dict[int, List[ModuleNote]]) -> None:
    """Files of one source root with one dotted name: the one Python imports keeps it."""
    by_name: Dict[str, List[int]] = {}
    for index in members:
        by_name.setdefault(files[index].module, []).append(index)
    for dotted, same in by_name.items():
        if len(same) < 2:
            continue
        same.sort(key=lambda i: (_rank_in_directory(files[i]), str(files[i].path)))
        kept = files[same[0]]
        for index in same[1:]:
            source = files[index]
            suffix = "pyi" if source.path.suffix == ".pyi" else "py"
            names[index] = f"{names[index]}{SAME_ROOT_MARK}{suffix}"
            if kept.is_package and not source.is_package and source.path.suffix != ".pyi":
                notes.setdefault(index, []).append(ModuleNote("hidden", dotted, kept.display))


def _note_shared(
    top: str,
    by_root: Dict[Path, List[int]],
    files: Sequence[SourceFile],
    root: Path,
    default_roots: set,
    notes: Dict[int, List[ModuleNote]],
) -> None:
    """The notes for a top-level name several source roots provide."""
    tops = {directory: _top_file([files[i] for i in members]) for directory, members in by_root.items()}
    index_of = {id(files[i]): i for members in by_root.values() for i in members}
    default = [d for d in tops if d in default_roots]
    if default:
        shadowed = tops[default[0]]
        for directory, source in sorted(tops.items(), key=lambda item: str(item[0])):
            if directory in default_roots:
                continue
            notes.setdefault(index_of[id(source)], []).append(
                ModuleNote("shadows", top, shadowed.display, _relative(directory, root))
            )
        return
    packages = sorted((d for d, s in tops.items() if s.is_package), key=str)
    if len(packages) < 2:
        return  # modules of one name beside the scripts that import them: resolved by directory
    for directory in packages:
        others = [tops[d].display for d in packages if d != directory]
        notes.setdefault(index_of[id(tops[directory])], []).append(
            ModuleNote("duplicate", top, others[0], _relative(directory, root), len(others) - 1)
        )


def _relative(directory: Path, root: Path) -> str:
    try:
        return directory.relative_to(root).as_posix()
    except ValueError:
        return directory.as_posix()


def _make_unique(names: List[str], files: Sequence[SourceFile]) -> None:
    """Names no two files share, whatever the directories were called (`a.b/` and `a_b/` make one
    tag): the later file, in path order, gets a number."""
    seen: Dict[str, int] = {}
    for index in sorted(range(len(names)), key=lambda i: str(files[i].path)):
        name = names[index]
        count = seen.get(name, 0)
        seen[name] = count + 1
        if count:
            candidate = f"{name}{SAME_ROOT_MARK}{count + 1}"
            while candidate in seen:
                count += 1
                candidate = f"{name}{SAME_ROOT_MARK}{count + 1}"
            seen[candidate] = 1
            names[index] = candidate


def diagnostics(files: Sequence[SourceFile], summaries: Sequence[ModuleSummary]) -> List[Finding]:
    """The RC004 findings of the reported files: their notes (line 1, the other file named), and
    each absolute import of a name that several source roots provide when neither the file's own
    source root nor the project root does (`unresolved`: which one runs is up to `sys.path` at run
    time, an edit of it in the code or the environment; the analysis leaves the import unresolved
    rather than guess, and says so at the import)."""
    rule = get_rule(CODE)
    out: List[Finding] = []
    shared: Optional[Dict[str, List[SourceFile]]] = None
    folders: Optional[set] = None
    by_path: Dict[Path, SourceFile] = {}
    for source, summary in zip(files, summaries):
        if not source.report:
            continue
        for note in source.notes:
            more = f" (and {note.more} more)" if note.more else ""
            root = note.root or "."
            if note.variant == "shadows":
                message = rule.render("shadows", name=note.name, other=note.other, root=root)
            elif note.variant == "duplicate":
                message = rule.render("duplicate", name=note.name, other=note.other, more=more, root=root)
            else:
                message = rule.render("hidden", name=note.name, other=note.other)
            out.append(Finding(CODE, message, Location(source.display, 1, 1, 1, 1), WARNING, extra=(("other", note.other),)))
        if not summary.absolute_imports:
            continue
        if shared is None:
            shared = _shared_without_default(files)
            if not shared:
                shared = {}
        if not shared:
            continue
        own = {name for name, _ in source.import_map}
        seen = set()
        for name, line in summary.absolute_imports:
            candidates = shared.get(name)
            if candidates is None or name in own or (name, line) in seen:
                continue
            seen.add((name, line))
            if folders is None:
                folders = _folders_with_files(files)
                by_path = {s.path: s for s in files}
            source_root = _source_root_of(source)
            if source_root / name in folders:
                continue  # a namespace package beside the file: Python finds it (not yet followed)
            listed = ", ".join(c.display for c in candidates[:2]) + (f" and {len(candidates) - 2} more" if len(candidates) > 2 else "")
            extra = (("other", candidates[0].display), ("candidates", ", ".join(c.display for c in candidates)))
            sibling = None if source_root == source.path.parent else _sibling(source.path.parent, name, by_path)
            if sibling is not None:
                # In a package, beside a module of that name: Python 3 finds it only when this
                # file runs as a script (`python pkg/tool.py`), never when it is imported.
                message = rule.render("two_ways", name=name, sibling=sibling.display, count=len(candidates), files=listed)
                extra = (("other", sibling.display),) + extra[1:]
            else:
                message = rule.render("unresolved", name=name, count=len(candidates), files=listed)
            out.append(Finding(CODE, message, Location(source.display, line, 1, line, 1), WARNING, extra=extra))
    return out


def _sibling(directory: Path, name: str, by_path: Dict[Path, SourceFile]) -> Optional[SourceFile]:
    """The module or package `name` in `directory`, as the files discovered say."""
    for candidate in (directory / name / "__init__.py", directory / f"{name}.py", directory / name / "__init__.pyi", directory / f"{name}.pyi"):
        found = by_path.get(candidate)
        if found is not None:
            return found
    return None


def _shared_without_default(files: Sequence[SourceFile]) -> Dict[str, List[SourceFile]]:
    """Top-level names several source roots provide and the project root does not, each with the
    file that stands for it in each source root (names of the standard library left out: an
    import of one finds the library)."""
    by_tag: Dict[str, Dict[str, List[SourceFile]]] = {}
    for source in files:
        module = source.module
        tag = module.rsplit(SEPARATOR, 1)[0] if SEPARATOR in module else ""
        top = plain_name(module).split(".", 1)[0]
        by_tag.setdefault(top, {}).setdefault(tag, []).append(source)
    out: Dict[str, List[SourceFile]] = {}
    for top, groups in by_tag.items():
        if len(groups) < 2 or "" in groups or top in NOT_IMPORTED or top in STDLIB:
            continue
        out[top] = sorted((_top_file(members) for members in groups.values()), key=lambda s: s.display)
    return out


def _source_root_of(source: SourceFile) -> Path:
    directory = source.path.parent
    for _ in range(plain_name(source.module).count(".") + (1 if source.is_package else 0)):
        directory = directory.parent
    return directory


def _folders_with_files(files: Sequence[SourceFile]) -> set:
    """Every directory that holds one of the files, at any depth (a namespace package is a
    directory of modules without `__init__.py`; one with none imports nothing)."""
    out: set = set()
    for source in files:
        directory = source.path.parent
        while directory not in out:
            out.add(directory)
            if directory.parent == directory:
                break
            directory = directory.parent
    return out
