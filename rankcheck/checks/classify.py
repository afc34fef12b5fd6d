"""Which rule reports a divergence: one decision, so that each divergence the sequence comparison
finds is reported by exactly one rule, or by none for a stated reason.

A rank that raises (or fails an assert, or exits with an error status) dies; the launchers people
run training under (torchrun, mp.spawn, accelerate, Lightning, deepspeed) see the failed rank and
tear the job down: a crash, loud, not a hang. So such an exit is RC102 only where the rank
survives it: its own code catches it, or a caller up the call chain does (`caught`). The rest is
RC108, off by default, for launches that leave the other ranks waiting (plain srun, a hand-rolled
launcher).

tests/test_registry.py checks that every kind of divergence is claimed this way.
"""

from __future__ import annotations

from typing import Optional

from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import PER_RANK_DATA
from rankcheck.interp.tree import ExitKind
from rankcheck.sequences.compare import Cause, Divergence
from rankcheck.sequences.flatten import Catch

# The rules that report divergences, by what they report.
COLLECTIVE_UNDER_GUARD = "RC101"
EXIT_BEFORE_COLLECTIVE = "RC102"
UNEVEN_LOOP = "RC103"
MISMATCHED_ARMS = "RC106"
DIES_BEFORE_COLLECTIVE = "RC108"
DIVERGENCE_CODES = (COLLECTIVE_UNDER_GUARD, EXIT_BEFORE_COLLECTIVE, UNEVEN_LOOP, MISMATCHED_ARMS, DIES_BEFORE_COLLECTIVE)


def rule_for(div: Divergence, caught_by_caller: Optional[Catch] = None) -> Optional[str]:
    """The code of the rule that reports `div`, or None where no rule does. `caught_by_caller`:
    where a caller up the call chain catches what the divergence's function raises."""
    if div.cause is Cause.GUARD:
        return COLLECTIVE_UNDER_GUARD
    if div.cause is Cause.MISMATCH:
        return MISMATCHED_ARMS if div.other_event is not None else None
    exit_event = div.exit_event
    if exit_event is None:
        return None
    if div.guard.kind == PER_RANK_DATA and exit_event.exit_kind in (ExitKind.CONTINUE, ExitKind.BREAK):
        return UNEVEN_LOOP  # a data-dependent continue/break makes the loop uneven
    if exit_event.dies and caught_by_caller is None:
        return DIES_BEFORE_COLLECTIVE
    return EXIT_BEFORE_COLLECTIVE


def claim(analysis: Analysis, qual: str, div: Divergence) -> Optional[str]:
    """`rule_for` with what the analysis knows of the callers of `qual` (asked only for a fatal
    exit its own code does not catch)."""
    exit_event = div.exit_event
    needs_callers = div.cause is Cause.EXIT and exit_event is not None and exit_event.dies
    return rule_for(div, analysis.caught_by(qual, exit_event.raises) if needs_callers and exit_event is not None else None)


def catch_of(analysis: Analysis, qual: str, div: Divergence) -> Optional[Catch]:
    """Where the fatal exit of an RC102 is caught (its own code first), for the message."""
    exit_event = div.exit_event
    if exit_event is None or not exit_event.fatal:
        return None
    return exit_event.caught or analysis.caught_by(qual, exit_event.raises)
