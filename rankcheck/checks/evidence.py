"""Shared wording of evidence: guards, rank sources, chains (every rule reports the same way)."""

from __future__ import annotations

from typing import Optional, Tuple

from rankcheck.ftypes import (
    ASSIGNED_UNDER,
    ERROR,
    PER_RANK_DATA,
    SKIPPED_UNDER,
    WARNING,
    ChainStep,
    Guard,
    Location,
    RankSource,
)
from rankcheck.interp.tree import GuardRef
from rankcheck.interp.values import Taint
from rankcheck.program.ir import GuardKeyword


def condition_phrase(guard: GuardRef, arm: bool) -> str:
    if guard.is_loop:
        return f"`{guard.condition}` holds"
    return f"`{guard.condition}` is {'true' if guard.holds(arm) else 'false'}"


def source_of(taint: Optional[Taint]) -> Optional[RankSource]:
    return RankSource(taint.text, taint.location) if taint is not None else None


def guard_evidence(guard: GuardRef) -> Guard:
    # A framework call's own loop has no source line of its own: the message says what decides it.
    source = None if guard.keyword is GuardKeyword.CALL else source_of(guard.taint)
    return Guard(location=guard.location, text=guard.head, condition=guard.condition, kind=guard.kind, source=source)


def cascade_of(taint: Optional[Taint]) -> Optional[Location]:
    """The rank guard a finding resting on `taint` repeats: where a value was assigned
    differently per rank under that guard (its own finding, when reported, says it all)."""
    return taint.location if taint is not None and taint.control else None


def severity_for(kind: str, default: str = ERROR) -> str:
    """Per-rank data (a local loss, a local batch) may agree on every rank in a given run; the rank
    itself never does. Findings that rest on data are warnings."""
    return WARNING if kind == PER_RANK_DATA else default


def why(taint: Optional[Taint], kind: str, reported_in: str) -> str:
    """Where the rank or the data comes from, said from the file the finding is reported in: a
    source in another module (a helper's `torch.randint()`) is named with its path."""
    what = "per-rank data" if kind == PER_RANK_DATA else "the rank"
    if taint is None:
        return what
    where = f"line {taint.location.line}" if taint.location.path == reported_in else f"{taint.location.path}:{taint.location.line}"
    if taint.control and taint.text.startswith(ASSIGNED_UNDER):
        # The value differs because a branch on the rank assigned it: name that branch.
        return f"{what} through the assignment under {taint.text[len(ASSIGNED_UNDER):]} at {where}"
    if taint.control and taint.text.startswith(SKIPPED_UNDER):
        return f"{what} through the {taint.text} at {where}"
    return f"{what} from `{taint.text}` at {where}"


def describe_chain(chain: Tuple[ChainStep, ...]) -> Tuple[str, str]:
    """(what is called at the reported site, the real collective at the end) as `code`."""
    first = chain[0].callee if chain else "a collective"
    last = chain[-1].callee if chain else "a collective"
    return f"`{first}`", f"`{last}`"


def reaches_through(chain: Tuple[ChainStep, ...]) -> bool:
    """The reported call is not the collective itself: it reaches one further down."""
    return len(chain) > 1
