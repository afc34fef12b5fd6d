"""Shared wording of evidence: guards, rank sources, chains (every rule reports the same way)."""

from __future__ import annotations

from typing import Tuple

from rankcheck.ftypes import RANK_IDENTITY, ChainStep, Guard, RankSource
from rankcheck.interp import GuardRef


def guard_truth(guard: GuardRef, arm: bool) -> bool:
    """Whether the guard's written condition holds on the ranks that took `arm`.

    `assert cond` is modelled as `if not cond: raise`, so its arm is the negation."""
    return (not arm) if guard.head.startswith("assert ") else arm


def condition_phrase(guard: GuardRef, arm: bool) -> str:
    if guard.head.startswith("while "):
        return f"`{guard.condition}` holds"
    return f"`{guard.condition}` is {'true' if guard_truth(guard, arm) else 'false'}"


def guard_evidence(guard: GuardRef) -> Guard:
    source = None
    if guard.taint is not None:
        source = RankSource(guard.taint.text, guard.taint.location)
    return Guard(location=guard.location, text=guard.head, condition=guard.condition, kind=RANK_IDENTITY, source=source)


def describe_chain(chain: Tuple[ChainStep, ...]) -> Tuple[str, str]:
    """(what is called at the reported site, the real collective at the end) as `code`."""
    first = chain[0].callee if chain else "a collective"
    last = chain[-1].callee if chain else "a collective"
    return f"`{first}`", f"`{last}`"
