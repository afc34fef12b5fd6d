"""Hoist: a call that reaches a collective, under a rank guard whose other work only reports its
result (a print, a log line, a writer), runs on every rank before the guard; the reporting stays.

    if rank == 0:                        metrics = compute(t)
        metrics = compute(t)      ->     if rank == 0:
        log.info(metrics)                    log.info(metrics)

Same program on the ranks that took the guard (the call was the first thing they did), and every
rank now enters the collective. Offered only when the call's arguments are pure, its result and
anything it may change in place (its arguments' names) are not read after the guard, and what
stays in the guard is reporting alone (SINK_CALLS), which reaches no collective."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from rankcheck.fix.guard_move import describe, find_move, moved_code
from rankcheck.fix.knowledge import SINK_CALLS, matches
from rankcheck.fix.model import SourceModel, call_argument_names, dotted
from rankcheck.fix.proposal import Proposal, guard_is_lone
from rankcheck.ftypes import SAFE, Finding

CODES = ("RC101",)


def propose(model: SourceModel, finding: Finding, neighbours: Sequence[Finding]) -> Optional[Proposal]:
    if finding.code not in CODES or not finding.chain or finding.chain[0].note:
        return None  # a framework API (its note says why it communicates) is framework.py's
    move = find_move(model, finding)
    if move is None or not move.first or move.rest_compound or not move.rest:
        return None
    if not all(_reports(part) for part in move.rest):
        return None
    if not guard_is_lone(finding, neighbours):
        return None
    made = moved_code(model, move, call_argument_names(move.call), finding, neighbours)
    if made is None:
        return None
    move, code = made
    return Proposal(code, describe(model, move, "rank", "the reporting"), SAFE)


def _reports(statement: cst.BaseSmallStatement) -> bool:
    if not isinstance(statement, cst.Expr) or not isinstance(statement.value, cst.Call):
        return False
    called = dotted(statement.value.func)
    return called is not None and matches(called, SINK_CALLS)
