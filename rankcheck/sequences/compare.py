"""The comparison: do all classes of ranks issue the same collectives?

A function's collective tree (`rankcheck.interp.tree`) is flattened into the sequence of events
each class of ranks issues (`flatten`), and the sequences are compared. Equal sequences are
safe, whatever the branches look like (both arms alike, the complementary "rank 0 first"
barriers). Where they differ, the diff names the events one class has and another lacks, and
each is traced to its cause (`Cause`): a guard around it, an exit the other class took, or the
other arm of the guard issuing collectives of its own.
"""

from __future__ import annotations

import difflib
import enum
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from rankcheck.interp.tree import GuardRef, Tree
from rankcheck.sequences.classes import uniform_setting
from rankcheck.sequences.flatten import (
    ClassRun,
    Event,
    EventKind,
    GuardArm,
    class_runs,
    collective_events,
)


class Cause(enum.Enum):
    GUARD = "guard"  # the collective sits under a rank guard the other ranks do not take
    EXIT = "exit"  # the other ranks left (return/continue/break/raise/exit) before it
    MISMATCH = "mismatch"  # the other arm of the guard issues other collectives at that point


@dataclass(frozen=True)
class Divergence:
    """One cause of a mismatch between two classes of ranks."""

    cause: Cause
    event: Event  # the collective event one class issues and the other does not
    guard: GuardRef
    arm: bool  # the truth value of the guard on the ranks that issue the event / take the exit
    exit_event: Optional[Event] = None
    other_event: Optional[Event] = None  # mismatch: what the other ranks issue instead
    # Mismatch of two loops of one body: how many rounds each class runs (event's, other's).
    rounds: Optional[Tuple[int, int]] = None
    # The two classes of ranks whose comparison found it (for the reports that draw them).
    runs: Tuple[ClassRun, ...] = field(default=(), compare=False, repr=False)


class TooLargeToCompare(Exception):
    """A class of ranks issues more events than MAX_EVENTS: the function is not compared."""


def divergences(tree: Tree) -> Iterator[Divergence]:
    """Where the classes of ranks of a function's tree issue different collectives, and why.
    Raises TooLargeToCompare where that cannot be told within the event cap."""
    runs = class_runs(tree)
    if runs is None:
        raise TooLargeToCompare
    if not runs:
        return
    scenarios: Dict[Tuple, List[ClassRun]] = {}
    for run in runs:
        scenarios.setdefault(uniform_setting(run.assignment), []).append(run)
    for group in scenarios.values():
        yield from _compare_classes(group)


def _compare_classes(runs: List[ClassRun]) -> Iterator[Divergence]:
    distinct: Dict[Tuple, ClassRun] = {}
    for run in runs:
        # By where each collective is issued, not only by what it is: two classes issuing one
        # all_reduce each, from different guarded lines, are two differences from the first.
        distinct.setdefault(_placed_keys(run.events), run)
    if len(distinct) < 2:
        return
    # Every other class against the first: each difference shows up against it, and the number of
    # comparisons stays linear in the number of classes. The first is one that lives to the end
    # where there is one: against a class that died (a failed assert), every collective is missed
    # for that death, and the differences among the living would not show.
    reps = sorted(distinct.values(), key=lambda run: any(event.dies for event in run.events))
    reference = reps[0]
    for other in reps[1:]:
        for div in _diff(reference.events, other.events, arms=(reference.arms, other.arms), peers=runs):
            yield replace(div, runs=(reference, other))


def _placed_keys(events: List[Event]) -> Tuple:
    return tuple(
        (e.key, e.site.location if e.site is not None else None, e.chain if e.kind is EventKind.COLLECTIVE else ())
        for e in events
        if e.kind is not EventKind.EXIT
    )


GuardArms = Dict[Tuple[Any, bool], Event]


def _collectives_by_guard(events: List[Event]) -> GuardArms:
    """(guard location, arm) -> the first collective issued under it, for one class's run."""
    found: GuardArms = {}
    for event in events:
        for coll in collective_events(event):
            for guard, arm in coll.guards:
                found.setdefault((guard.location, arm), coll)
    return found


def _as_mismatch(div: Divergence, *under: GuardArms) -> Divergence:
    """A collective under one arm of a guard, while the ranks that take the other arm issue
    collectives of their own there: the arms mismatch (RC106), not a lone collective (RC101)."""
    if div.cause is not Cause.GUARD:
        return div
    for arms in under:
        other = arms.get((div.guard.location, not div.arm))
        if other is not None:
            return Divergence(Cause.MISMATCH, div.event, div.guard, div.arm, other_event=other)
    return div


MAX_UNFOLD = 6


def _unfold(events: List[Event], at: int, other: List[Event]) -> Iterator[List[Event]]:
    """The sequences the uniform branch at `events[at]` stands for: one per arm, spliced in its
    place. (By position: one event object can stand at several places of a sequence, as when a
    loop's second iteration repeats the first.) Where the other class reaches the same branch
    too, an arm in which the process dies (an uncaught raise: `if len(found) < expected: raise
    ClickException(...)` between the "rank 0 first" barriers) stands for no sequence: every rank
    takes it and ends with an error, which the launcher reports. (Reached by some ranks only,
    under a rank branch, it is a death on those ranks: RC108's.)"""
    here = events[at].branch
    everywhere = here is not None and _reaches_branch(other, here)
    for arm in events[at].children:
        if everywhere and any(event.dies for event in arm):
            continue
        yield events[:at] + arm + events[at + 1 :]


def _reaches_branch(events: List[Event], branch: Tuple) -> bool:
    """Whether the sequence reaches the uniform branch at `branch`, at any depth (the branches
    after one whose arm leaves are folded into its other arm)."""
    stack = list(events)
    while stack:
        event = stack.pop()
        if event.kind is EventKind.UNIFORM_BRANCH and event.branch == branch:
            return True
        for child in event.children:
            stack.extend(child)
    return False


def _lone_uniform(events: List[Event], keyed_at: List[int], start: int, stop: int) -> Optional[int]:
    """The position in `events` of the first uniform branch among the compared events
    `start:stop` (`keyed_at` maps compared events to their positions)."""
    for k in range(start, stop):
        if events[keyed_at[k]].kind is EventKind.UNIFORM_BRANCH:
            return keyed_at[k]
    return None


def _diff(a: List[Event], b: List[Event], unfold: int = MAX_UNFOLD, under: Optional[Tuple[GuardArms, GuardArms]] = None,
          arms: Tuple[Dict[Any, bool], Dict[Any, bool]] = ({}, {}), peers: Sequence[ClassRun] = ()) -> Iterator[Divergence]:
    """The divergences between two classes' sequences. `under`: the collectives each issues under
    each guard arm (for RC106), taken from the sequences compared: a uniform branch unfolded to
    one arm no longer issues what its other arm does. `arms`: the arm each class takes at the
    function's rank branches (ClassRun.arms); `peers`: every class of the function."""
    if under is None:
        under = (_collectives_by_guard(a), _collectives_by_guard(b))
    a_at = [i for i, e in enumerate(a) if e.kind is not EventKind.EXIT]
    b_at = [i for i, e in enumerate(b) if e.kind is not EventKind.EXIT]
    a_keyed = [a[i] for i in a_at]
    b_keyed = [b[i] for i in b_at]
    for op, i1, i2, j1, j2 in _align(a_keyed, b_keyed):
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1 and all(
            x.kind is y.kind and x.kind in (EventKind.LOOP, EventKind.UNIFORM_BRANCH) for x, y in zip(a_keyed[i1:i2], b_keyed[j1:j2])
        ):
            # The same loops or uniform branches, differing inside: compare them pairwise.
            for x, y in zip(a_keyed[i1:i2], b_keyed[j1:j2]):
                counted = _rounds_apart(x, y)
                if counted is not None:
                    yield counted
                    continue
                for child_a, child_b in zip(x.children, y.children):
                    yield from _diff(child_a, child_b, unfold, under, arms, peers)
            continue
        # A uniform branch that only one class reaches (it sits inside a rank branch): every rank
        # would take the same arm of it, so compare each arm against the other class in turn.
        lone = _lone_uniform(a, a_at, i1, i2)
        if lone is not None and unfold > 0:
            for variant in _unfold(a, lone, b):
                yield from _diff(variant, b, unfold - 1, arms=arms, peers=peers)
            return
        lone = _lone_uniform(b, b_at, j1, j2)
        if lone is not None and unfold > 0:
            for variant in _unfold(b, lone, a):
                yield from _diff(a, variant, unfold - 1, arms=arms, peers=peers)
            return
        if op == "replace":
            mismatch = _mismatch(a_keyed[i1:i2], b_keyed[j1:j2])
            if mismatch is not None:
                yield mismatch
                continue
        for event in a_keyed[i1:i2]:
            for div in _explain(event, b, b_keyed[j1] if j1 < len(b_keyed) else None, arms[1], peers):
                yield _as_mismatch(div, *under)
        for event in b_keyed[j1:j2]:
            for div in _explain(event, a, a_keyed[i1] if i1 < len(a_keyed) else None, arms[0], peers):
                yield _as_mismatch(div, *under)


def _anchor(event: Event) -> Tuple:
    """A collective with the call path down to it: the same statement reached the same way."""
    return (event.key, event.chain) if event.kind is EventKind.COLLECTIVE else event.key


def _align(a: List[Event], b: List[Event]) -> List[Tuple[str, int, int, int, int]]:
    """difflib opcodes pairing the events of two classes. First the same collective reached the
    same way pairs with itself; between those anchors, any collective pairs with one of the same
    kind (both arms of a branch may issue one, from different lines). Matching by kind alone can
    pair the collective all ranks reach with the one only some reach before it (`if rank == 0:
    barrier()` then `barrier()`), and leave the unguarded one over, blaming nothing."""
    anchored = difflib.SequenceMatcher(None, [_anchor(e) for e in a], [_anchor(e) for e in b], autojunk=False)
    opcodes: List[Tuple[str, int, int, int, int]] = []
    for op, i1, i2, j1, j2 in anchored.get_opcodes():
        if op == "equal" or i1 == i2 or j1 == j2:
            opcodes.append((op, i1, i2, j1, j2))
            continue
        between = difflib.SequenceMatcher(None, [e.key for e in a[i1:i2]], [e.key for e in b[j1:j2]], autojunk=False)
        for sub, k1, k2, l1, l2 in between.get_opcodes():
            opcodes.append((sub, i1 + k1, i1 + k2, j1 + l1, j1 + l2))
    return opcodes


def _rounds_apart(a: Event, b: Event) -> Optional[Divergence]:
    """Two loops that issue the same collectives each round, run a different number of times by
    the two arms of a rank branch (9 rounds on one side, 10 on the other): the extra rounds'
    collectives never pair up."""
    if a.kind is not EventKind.LOOP or a.key[1] != b.key[1] or a.key[2] is None or b.key[2] is None or a.key[2] == b.key[2]:
        return None
    found = _mismatch([a], [b])
    return replace(found, rounds=(a.key[2], b.key[2])) if found is not None else None


def _mismatch(a: List[Event], b: List[Event]) -> Optional[Divergence]:
    """Both classes issue collectives here, under the two arms of one guard, but not the same."""
    coll_a = [c for e in a for c in collective_events(e)]
    coll_b = [c for e in b for c in collective_events(e)]
    if not coll_a or not coll_b:
        return None
    for guard_a, arm_a in reversed(coll_a[0].guards):
        for guard_b, arm_b in reversed(coll_b[0].guards):
            if guard_a.location == guard_b.location and arm_a != arm_b:
                return Divergence(Cause.MISMATCH, coll_a[0], guard_a, arm_a, other_event=coll_b[0])
    return None


def _explain(event: Event, other: List[Event], other_next: Optional[Event], other_arms: Dict[Any, bool],
             peers: Sequence[ClassRun] = ()) -> Iterator[Divergence]:
    """Why does one class issue `event` and the other (`other`, taking `other_arms`) not?"""
    for coll in collective_events(event):
        if coll.guards:
            guard, arm = coll.guards[-1]
            if coll.members and _selects_members(guard, coll.members):
                continue  # `if rank in ranks: all_reduce(group=new_group(ranks))`: exactly the members
            if _holds_its_group(guard, arm, coll):
                continue  # `if group is not None: all_reduce(t, group=group)`: the members hold it
            if _alike_on_group(coll, coll.guards):
                continue  # `if is_pipeline_last_stage(): all_reduce(loss, group=get_data_parallel_group())`
            if _parted_by_a_shared_guard(coll, other_arms, peers):
                continue  # `if tp_rank == 0: if first_stage: broadcast(...) else: broadcast(...)` over the pipeline group
            if coll.only_under and guard.holds(arm) and coll.only_under <= guard.all_enter_under:
                continue  # `if is_main or deepspeed: save_state()`: every rank, where it communicates
            exit_event = _exit_before(other, other_next)
            if exit_event is not None and (exit_event.dies or any(g.location == guard.location for g, _ in exit_event.guards)):
                # The other ranks took the other arm of this guard and left it early, or died before
                # it: the exit is why they do not issue this collective, not the arms being different.
                if _alike_on_group(coll, exit_event.guards):
                    continue  # the whole group left early, or none of it did
                exit_guard, exit_arm = exit_event.guards[-1]
                yield Divergence(Cause.EXIT, coll, exit_guard, exit_arm, exit_event=exit_event)
                continue
            yield Divergence(Cause.GUARD, coll, guard, arm)
            continue
        # The exit that cut the other sequence before the collective it pairs with next; or, where
        # that pairing is by kind only (the ranks that leave barrier first, the others barrier
        # after this collective), the exit it ends with.
        exit_event = _exit_before(other, other_next) or _ending_exit(other)
        if exit_event is not None and exit_event.guards:
            if _alike_on_group(coll, exit_event.guards):
                continue  # the whole group left early, or none of it did
            guard, arm = exit_event.guards[-1]
            yield Divergence(Cause.EXIT, coll, guard, arm, exit_event=exit_event)


def _selects_members(guard: GuardRef, members: str) -> bool:
    return guard.membership == members


def _holds_its_group(guard: GuardRef, arm: bool, coll: Event) -> bool:
    """The collective runs where the variable it passes as its group is not None. Ranks keep the
    process groups they belong to and None for the others (`if rank in ranks: _GROUP = group`),
    so the ranks that get there are the group's members: it is called whole."""
    group = coll.group
    if group == "WORLD":
        return False
    condition = guard.condition
    return condition in (f"{group} is not None", group) if guard.holds(arm) else condition == f"{group} is None"


def _alike_on_group(coll: Event, guards: Tuple[GuardArm, ...]) -> bool:
    """Every member of the collective's group takes the same arm of each of these guards (they test
    only what the members share, Catalog.uniform_in_group): the group calls it whole or not at all."""
    return bool(coll.members) and all(coll.members in guard.uniform_in for guard, _ in guards)


def _parted_by_a_shared_guard(coll: Event, other_arms: Dict[Any, bool], peers: Sequence[ClassRun]) -> bool:
    """The other class parts from this one at a guard every member of the collective's group takes
    alike: the outermost of the collective's guards that the other class takes the other arm of
    tests only what the group's members share (`if tp_rank == 0:` around a broadcast over the
    pipeline group, whose members share the tensor-parallel rank). Each of the group's instances
    then lies wholly in one side of that guard, and the other class's ranks never meet this
    collective. So long as every class on this side issues it too (both arms of `if
    is_pipeline_first_stage():` inside broadcast over that group): what differs inside is then
    the comparison of those classes, which the collective passes."""
    if not coll.members:
        return False
    for guard, arm in coll.guards:
        taken = other_arms.get(guard.location)
        if taken is None:
            return False  # the other class never got there: it parted earlier, for other reasons
        if taken == arm:
            continue
        if coll.members not in guard.uniform_in:
            return False
        side = [peer for peer in peers if peer.arms.get(guard.location) == arm]
        return bool(side) and all(any(c.key == coll.key for e in peer.events for c in collective_events(e)) for peer in side)
    return False


def _ending_exit(events: List[Event]) -> Optional[Event]:
    """The rank-dependent exit `events` end with (those ranks left there), if they do."""
    last = events[-1] if events else None
    return last if last is not None and last.kind is EventKind.EXIT and last.guards else None


def _exit_before(events: List[Event], stop: Optional[Event]) -> Optional[Event]:
    """The rank-dependent exit in `events` before `stop` (or at the end) that cut the sequence."""
    found = None
    for e in events:
        if e is stop:
            break
        if e.kind is EventKind.EXIT and e.guards:
            found = e
    return found
