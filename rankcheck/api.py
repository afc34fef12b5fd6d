"""The library API: `check_paths(...) -> list[Finding]`, shared by the CLI, the language server,
the pre-commit entry and the tests.

paths -> discover -> summarize (per module) -> link + interp (whole program) -> checks -> findings
(`rankcheck.driver.run` is the run itself).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional, Sequence

from rankcheck.checks.evidence import guard_evidence
from rankcheck.driver.run import CheckResult, PathLike, run_check
from rankcheck.ftypes import Finding, Guard

__all__ = ["CheckResult", "check_paths", "enclosing_rank_guards", "run_check"]


def check_paths(paths: Sequence[PathLike], **kwargs) -> List[Finding]:
    """Analyse the project around `paths` and return the findings in `paths` (see run_check)."""
    return run_check(paths, **kwargs).findings


def enclosing_rank_guards(path: PathLike, line: int, *, root: Optional[PathLike] = None) -> List[Guard]:
    """The rank-dependent guards (outermost first) whose region contains `path:line`: the `if`,
    `while` or uneven loop that decides which ranks run that line. For `rankcheck fr`, to say why a
    collective that the flight recorder saw diverge sits where it does when no finding names it."""
    target = Path(path).resolve()
    result = run_check([target], root=root)  # focused on that file: its functions hold its guards
    if result.analysis is None:
        return []
    return [guard_evidence(ref) for ref in result.analysis.rank_guards_around(target, line)]
