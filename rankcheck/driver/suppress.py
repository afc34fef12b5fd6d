"""Inline suppressions: `# noqa: RC101` (what ruff and flake8 users type) and
`# rankcheck: ignore[RC101]` (codes optional: none means every code).

A suppression covers a finding when it sits on any line of the finding's span. Unused ones are
reported as RC003 when asked (`--warn-unused-ignores`)."""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Set, Tuple

from rankcheck.ftypes import WARNING, Finding, Location
from rankcheck.program.ir import Suppression
from rankcheck.rules_meta import get_rule


def _covers(s: Suppression, code: str) -> bool:
    return not s.codes or code in s.codes


def apply_suppressions(
    findings: Sequence[Finding],
    suppressions: Dict[str, Tuple[Suppression, ...]],
    report_unused: bool,
) -> List[Finding]:
    """Drop suppressed findings; add RC003 for suppressions that matched nothing."""
    kept: List[Finding] = []
    used: Set[Tuple[str, int, int]] = set()
    by_line: Dict[Tuple[str, int], List[Suppression]] = {}
    for path, items in suppressions.items():
        for s in items:
            by_line.setdefault((path, s.line), []).append(s)
    for f in findings:
        loc = f.location
        last = max(loc.end_line, loc.line)
        hit = None
        for line in range(loc.line, last + 1):
            for s in by_line.get((loc.path, line), ()):
                if _covers(s, f.code) and f.code not in ("RC001", "RC002"):
                    hit = s
                    break
            if hit:
                break
        if hit is None:
            kept.append(f)
        else:
            used.add((loc.path, hit.line, hit.column))
    if report_unused:
        for path, items in suppressions.items():
            for s in items:
                if (path, s.line, s.column) in used:
                    continue
                rc_codes = tuple(c for c in s.codes if c.startswith("RC"))
                if s.form == "noqa" and not rc_codes:
                    continue  # a blanket noqa, or one for other tools' codes: not ours to judge
                listed = f" `{', '.join(rc_codes)}`" if rc_codes else ""
                kept.append(
                    Finding(
                        code="RC003",
                        message=get_rule("RC003").render("unused", codes=listed),
                        location=Location(path, s.line, s.column, s.line, s.column),
                        severity=WARNING,
                    )
                )
    return kept


def filter_codes(findings: Iterable[Finding], enabled: frozenset, per_file: Dict[str, frozenset]) -> List[Finding]:
    out = []
    for f in findings:
        if f.code not in enabled:
            continue
        if f.code in per_file.get(f.location.path, frozenset()):
            continue
        out.append(f)
    return out


# Findings whose cause is a value that a reported rank guard assigned differently per rank: fixing
# the guard's finding fixes them too, so they would only repeat it (mypy drops such cascades too).
ROOT_CODES = ("RC101", "RC102", "RC106")


def drop_cascades(findings: Sequence[Finding]) -> List[Finding]:
    guards = {(f.guard.location.path, f.guard.location.line) for f in findings if f.code in ROOT_CODES and f.guard}
    return [f for f in findings if f.cascade_of is None or (f.cascade_of.path, f.cascade_of.line) not in guards]
