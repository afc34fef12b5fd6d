"""Staggered blocks: a `with` whose context manager lets some ranks into its body before the others.

`with accelerator.main_process_first():`, `with torch_distributed_zero_first(rank):` and the
context managers written like them run their body on every rank, but not at the same point of
each rank's sequence: the ranks that go first run it while the others wait in a barrier, which
the first ones meet only after the body. A collective in the body therefore pairs, on the first
ranks, with the barrier the others are waiting in: they never meet (RC106). The manager alone is
safe (its two barriers are complementary), and so is a body without collectives (the usual
"rank 0 downloads, the others read the cache" pattern), which is why this is judged per block,
from the function that holds the `with`, and not inside the manager.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator, List, Optional, Tuple

from rankcheck.interp.formulas import evaluate
from rankcheck.interp.tree import Branch, GuardRef, Tree, WithContext, own_nodes
from rankcheck.program.ir import GuardKeyword
from rankcheck.sequences.compare import Cause, Divergence
from rankcheck.sequences.flatten import ClassRun, Event, EventKind, class_runs, collective_events


def staggers(node: WithContext) -> bool:
    """The manager decides something by the rank in its own code (where its barriers are)."""
    return any(isinstance(part, Branch) for part in own_nodes(node.manager))


def staggered_divergences(tree: Tree) -> Iterator[Divergence]:
    """Each staggered block of the function's own code whose body issues a collective."""
    for node in own_nodes(tree):
        if isinstance(node, WithContext) and staggers(node):
            found = _staggered(node)
            if found is not None:
                yield found


def _staggered(node: WithContext) -> Optional[Divergence]:
    runs = class_runs([node])
    if not runs:
        return None
    branches = [part for part in own_nodes(node.manager) if isinstance(part, Branch)]
    for first in runs:
        for other in runs:
            if first is other:
                continue
            pair = _first_body_against_manager(node, first.events, other.events)
            if pair is not None:
                mine, theirs = pair
                # Named by the test the first ranks pass (`if local_rank == 0:` releasing the
                # others), where the manager has one.
                branch = next((b for b in branches if evaluate(b.formula, first.assignment)), branches[0])
                return Divergence(
                    Cause.MISMATCH, mine, _guard(node, branch.guard), evaluate(branch.formula, first.assignment),
                    other_event=theirs, runs=(first, other),
                )
    return None


def _first_body_against_manager(node: WithContext, first: List[Event], other: List[Event]) -> Optional[Tuple[Event, Event]]:
    """The first position where `first` issues a collective of the body while `other` is in one
    of the manager's: the body's collective on the ranks that went first, and the barrier it meets."""
    mine = [e for event in first for e in collective_events(event)]
    theirs = [e for event in other for e in collective_events(event)]
    for a, b in zip(mine, theirs):
        if a.key == b.key:
            continue  # a barrier in the body meets the others' barrier: out of turn, but they pair
        if not _in_manager(node, a) and _in_manager(node, b):
            return a, b
        return None
    return None


def _in_manager(node: WithContext, event: Event) -> bool:
    """Issued by the context manager's own code (entered at the `with`), not by the body."""
    return event.kind is EventKind.COLLECTIVE and bool(event.chain) and event.chain[0].location == node.site.location


def _guard(node: WithContext, inner: GuardRef) -> GuardRef:
    """The block as the finding's guard: at the `with`, with the manager's rank test and its source."""
    return replace(inner, location=node.site.location, head=f"with {node.site.text}(...):", keyword=GuardKeyword.WITH,
                   membership=None, uniform_in=frozenset())


__all__ = ["ClassRun", "staggered_divergences", "staggers"]
