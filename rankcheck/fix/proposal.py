"""What a fix kind proposes, and the conditions every kind shares."""

from __future__ import annotations

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
