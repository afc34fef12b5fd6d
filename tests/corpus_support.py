"""The corpus as tests: each case is a file or a directory under corpus/<group>/, and each expected
finding is a `# expect: CODE` comment on its line. A case without markers asserts silence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Sequence, Set, Tuple

from rankcheck.api import run_check

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"
EXPECT_RE = re.compile(r"#\s*expect:\s*((?:RC\d{3})(?:\s*,\s*RC\d{3})*)")

Mark = Tuple[str, int, str]  # (relative file, line, code)


@dataclass(frozen=True)
class Case:
    path: Path  # a .py file or a directory

    @property
    def name(self) -> str:
        return self.path.relative_to(CORPUS).as_posix()

    def files(self) -> List[Path]:
        if self.path.is_file():
            return [self.path]
        return sorted(p for p in self.path.rglob("*.py") if "__pycache__" not in p.parts)

    def base(self) -> Path:
        return self.path if self.path.is_dir() else self.path.parent


def cases(groups: Sequence[str] = ()) -> List[Case]:
    out = []
    # A group or case whose name starts with "_" is work in progress, not yet a test.
    for group in sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("_")):
        if groups and group.name not in groups:
            continue
        for entry in sorted(group.iterdir()):
            if entry.name.startswith((".", "_")) and entry.name != "__init__.py":
                continue
            if entry.is_dir() or entry.suffix == ".py":
                out.append(Case(entry))
    return out


def expected_marks(files: Iterable[Path], base: Path) -> Set[Mark]:
    marks: Set[Mark] = set()
    for f in files:
        for number, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            match = EXPECT_RE.search(line)
            if match:
                for code in re.split(r"\s*,\s*", match.group(1)):
                    marks.add((f.relative_to(base).as_posix(), number, code))
    return marks


def actual_marks(case: Case, **kwargs) -> Tuple[Set[Mark], list]:
    base = case.base()
    if case.path.is_dir():
        result = run_check([case.path], root=case.path, **kwargs)
    else:
        result = run_check([case.path], root=case.path.parent, context=False, **kwargs)
    marks = set()
    for f in result.findings:
        path = Path(f.location.path)
        if not path.is_absolute():
            path = (Path.cwd() / path).resolve()
        marks.add((path.relative_to(base.resolve()).as_posix(), f.location.line, f.code))
    return marks, result.findings


def describe(marks: Iterable[Mark]) -> str:
    return ", ".join(f"{p}:{line} {code}" for p, line, code in sorted(marks)) or "none"
