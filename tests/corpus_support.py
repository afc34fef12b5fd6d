"""The corpus as tests: each case is a file or a directory under corpus/<group>/, and each expected
finding is a `# expect: CODE` comment on its line. A case without markers asserts silence.

A group may list where rankcheck does not yet give what its markers predict, in
`corpus/<group>/KNOWN_GAPS.toml` (the real incidents: their markers are predictions written from
the thread, never moved to where the tool reports):

    ["case/name.py"]
    missing = ["name.py:23 RC101"]    # a marked finding not reported
    extra = ["name.py:12 RC106"]      # a finding on no marked line
    why = "what the analysis lacks"

The tests hold the analysis to exactly that list: a gap that closes must leave the list too."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Sequence, Set, Tuple

from rankcheck import _toml
from rankcheck.api import run_check
from rankcheck.rules_meta import all_rules

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "corpus"
EXPECT_RE = re.compile(r"#\s*expect:\s*((?:RC\d{3})(?:\s*,\s*RC\d{3})*)")

Mark = Tuple[str, int, str]  # (relative file, line, code)
OFF_BY_DEFAULT = frozenset(r.code for r in all_rules() if not r.default)
READINESS_CODES = frozenset(r.code for r in all_rules() if r.family == "readiness")


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


# Of the incident group's project cases (a directory each, two per incident), the checks that
# analyse a case many times over (test_focus, test_workspace) take every INCIDENT_PROJECT_SPREAD-th,
# unless RANKCHECK_SLOW_TESTS asks for all: the group grows by a dozen directories with each
# incident set, and those checks cost minutes of the CI's budget per set. The other groups' project
# cases, and the ones a check lists as a known gap (its strict xfail must still run), are always in.
INCIDENT_PROJECT_SPREAD = 3


def project_cases_to_check(all_cases: Sequence[Case], always: Iterable[str] = ()) -> List[Case]:
    projects = [c for c in all_cases if c.path.is_dir()]
    if os.environ.get("RANKCHECK_SLOW_TESTS"):
        return projects
    kept = set(always)
    incidents = [c for c in projects if c.path.parent.name == "incidents"]
    chosen = {c.name for c in incidents[::INCIDENT_PROJECT_SPREAD]} | kept
    return [c for c in projects if c.path.parent.name != "incidents" or c.name in chosen]


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
    """The findings of a case as marks. A code that is off by default (RC108) is turned on for
    the cases that expect it."""
    base = case.base()
    opted = sorted({code for _, _, code in expected_marks(case.files(), base)} & OFF_BY_DEFAULT)
    if opted:
        kwargs.setdefault("extend_select", opted)
    if case.path.is_dir():
        result = run_check([case.path], root=case.path, **kwargs)
    else:
        result = run_check([case.path], root=case.path.parent, context=False, **kwargs)
    marks = set()
    # The readiness rules (RC2xx) are judged in corpus/readiness/ and where a case marks them: the
    # hang cases' set-up code (an `init_process_group` without a timeout) is not what they test.
    expected_codes = {code for _, _, code in expected_marks(case.files(), base)}
    judged = case.name.startswith("readiness/")
    for f in result.findings:
        if f.code in READINESS_CODES and not judged and f.code not in expected_codes:
            continue
        path = Path(f.location.path)
        if not path.is_absolute():
            path = (Path.cwd() / path).resolve()
        marks.add((path.relative_to(base.resolve()).as_posix(), f.location.line, f.code))
    return marks, result.findings


def describe(marks: Iterable[Mark]) -> str:
    return ", ".join(f"{p}:{line} {code}" for p, line, code in sorted(marks)) or "none"


def parse_mark(text: str) -> Mark:
    place, code = text.rsplit(" ", 1)
    path, line = place.rsplit(":", 1)
    return (path, int(line), code)


def known_gaps(case: Case) -> Tuple[Set[Mark], Set[Mark]]:
    """(missing, extra) that `KNOWN_GAPS.toml` of the case's group lists for it."""
    group = CORPUS / case.name.split("/", 1)[0]
    table = _gap_tables().get(group)
    if table is None:
        gaps_file = group / "KNOWN_GAPS.toml"
        table = _toml.loads(gaps_file.read_text(encoding="utf-8")) if gaps_file.is_file() else {}
        _gap_tables()[group] = table
    entry = table.get(case.name.split("/", 1)[1], {})
    return {parse_mark(m) for m in entry.get("missing", [])}, {parse_mark(m) for m in entry.get("extra", [])}


_GAPS: Dict[Path, dict] = {}


def _gap_tables() -> Dict[Path, dict]:
    return _GAPS
