"""What a fix kind proposes, and the conditions every kind shares."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from rankcheck.ftypes import Finding


@dataclass(frozen=True)
class Proposal:
    code: str  # the whole module's text after the fix
    message: str
    applicability: str  # ftypes.SAFE or ftypes.UNSAFE


def guard_is_lone(finding: Finding, neighbours: Sequence[Finding]) -> bool:
    """No other finding rests on the same guard: moving this call out leaves no other collective
    only some ranks reach there, so the hang is gone (not just one of its causes)."""
    if finding.guard is None:
        return False
    return not any(
        other is not finding and other.guard is not None and other.guard.location == finding.guard.location and other.location != finding.location
        for other in neighbours
    )


def proven(path: str, code: str, finding: Finding, neighbours: Sequence[Finding]) -> bool:
    """The analysis of the fixed text says the finding is gone and nothing new came: the proof a
    rewrite needs when the evidence alone cannot tell (which half of `a and b` is the rank test)."""
    from rankcheck.api import check_paths

    try:
        after = check_paths([path], sources={path: code})
    except Exception:
        return False
    before = Counter(_identity(f) for f in neighbours)
    before[_identity(finding)] -= 1
    now = Counter(_identity(f) for f in after if f.location.path == path or os.path.samefile(f.location.path, path))
    return all(count <= before.get(key, 0) for key, count in now.items())


def _identity(finding: Finding) -> tuple:
    """A finding without its lines (which a rewrite moves)."""
    return (finding.code, finding.guard.condition if finding.guard else "", finding.chain[-1].callee if finding.chain else "")
