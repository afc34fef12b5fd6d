"""What a fix kind proposes, and the conditions every kind shares."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

from rankcheck.ftypes import Finding

if TYPE_CHECKING:
    from rankcheck.fix.model import SourceModel


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


def proven(model: SourceModel, code: str, finding: Finding) -> bool:
    """The analysis of the fixed text says the finding is gone and nothing new came: the proof a
    rewrite needs when the evidence alone cannot tell (which half of `a and b` is the rank test).

    The file is analysed by itself, before and after (a fraction of a project's analysis): the
    finding must show there before, so that its going away after means something."""
    before = model.alone()
    if before is None or before[_identity(finding)] < 1:
        return False
    after = alone_findings(model.path, code)
    if after is None:
        return False
    before[_identity(finding)] -= 1
    return all(count <= before.get(key, 0) for key, count in after.items())


def alone_findings(path: str, text: str) -> Optional[Counter]:
    from rankcheck.api import check_paths

    try:
        return Counter(_identity(f) for f in check_paths([path], sources={path: text}, context=False, use_cache=False))
    except Exception:
        return None


def _identity(finding: Finding) -> tuple:
    """A finding without its lines (which a rewrite moves)."""
    return (finding.code, finding.guard.condition if finding.guard else "", finding.chain[-1].callee if finding.chain else "")
