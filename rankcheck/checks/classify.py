"""Which rule reports a divergence: one decision, so that each divergence the sequence comparison
finds is reported by exactly one rule, or by none for a stated reason.

tests/test_registry.py checks that every kind of divergence is claimed this way.
"""

from __future__ import annotations

from typing import Optional

from rankcheck.ftypes import PER_RANK_DATA
from rankcheck.interp.tree import ExitKind
from rankcheck.program.ir import GuardKeyword
from rankcheck.sequences.compare import Cause, Divergence

# The rules that report divergences, by what they report.
COLLECTIVE_UNDER_GUARD = "RC101"
EXIT_BEFORE_COLLECTIVE = "RC102"
UNEVEN_LOOP = "RC103"
MISMATCHED_ARMS = "RC106"
DIVERGENCE_CODES = (COLLECTIVE_UNDER_GUARD, EXIT_BEFORE_COLLECTIVE, UNEVEN_LOOP, MISMATCHED_ARMS)


def rule_for(div: Divergence) -> Optional[str]:
    """The code of the rule that reports `div`, or None where no rule does."""
    if div.cause is Cause.GUARD:
        return COLLECTIVE_UNDER_GUARD
    if div.cause is Cause.MISMATCH:
        return MISMATCHED_ARMS if div.other_event is not None else None
    exit_event = div.exit_event
    if exit_event is None:
        return None
    if div.guard.kind == PER_RANK_DATA:
        if exit_event.exit_kind in (ExitKind.CONTINUE, ExitKind.BREAK):
            # A data-dependent continue/break makes the loop uneven.
            return UNEVEN_LOOP
        if exit_event.exit_kind is ExitKind.EXIT or div.guard.keyword is GuardKeyword.ASSERT:
            # An assert or exit on local data is a check that ends the process, which torchrun
            # turns into a job failure; a test suite is full of them. An explicit `raise` on
            # local data stays a (warning) finding: launchers that do not tear the job down leave
            # the other ranks waiting.
            return None
    return EXIT_BEFORE_COLLECTIVE
