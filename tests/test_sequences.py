"""Comparing the collective sequences of classes of ranks (rankcheck.sequences): what its shortcuts
must not change."""

from __future__ import annotations

import json

import pytest
from corpus_support import CORPUS

from rankcheck.api import run_check
from rankcheck.ftypes import ChainStep, Location
from rankcheck.interp.tree import UNDER_ANY, Branch, Call, Collective, GuardRef, Loop, Node, SiteRef
from rankcheck.sequences import compare
from rankcheck.sequences.compare import Cause
from rankcheck.sequences.flatten import Event, EventKind, Flattener, class_runs, event_keys

GROUPS = sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _findings(path) -> str:
    result = run_check([path], root=path)
    return json.dumps([f.to_dict() for f in result.findings], sort_keys=True)


@pytest.mark.parametrize("group", GROUPS, ids=[g.name for g in GROUPS])
@pytest.mark.slow
def test_shared_flattening_of_calls_finds_what_flattening_each_class_finds(group, monkeypatch) -> None:
    """A call's subtree is flattened once for all the classes of ranks that agree on what its
    decisions read (all of them, when it decides nothing): the findings are those of flattening
    it for each class."""
    shared = _findings(group)
    monkeypatch.setattr(Flattener, "_decision_keys", lambda self, tree: None)
    assert _findings(group) == shared


def _site(line: int) -> SiteRef:
    return SiteRef(Location("m.py", line, 1, line, 10), f"op{line}")


def test_a_uniform_branch_is_unfolded_where_the_difference_is() -> None:
    """One event object can stand twice in a sequence (a loop's second iteration repeats the first,
    a shared call is flattened once). The uniform branch that differs from the other class is the
    one unfolded, not its first occurrence."""
    guard = GuardRef(Location("m.py", 1, 1, 1, 10), "if rank == 0:", "rank == 0", None)

    def coll(line: int, op: str, arm: bool) -> Event:
        site = _site(line)
        return Event(EventKind.COLLECTIVE, ("c", op, "WORLD"), site, ((guard, arm),), (ChainStep(site.location, op),), op=op, group="WORLD")

    # The ranks that take the guard's one arm run a uniform branch twice (one object); the others
    # run it once and then issue a barrier under the guard's other arm. Lined up, the second
    # occurrence stands against the barrier: the arms mismatch there (RC106).
    arms = ([coll(5, "all_reduce", True)], [coll(7, "broadcast", True)])
    uniform = Event(EventKind.UNIFORM_BRANCH, ("U", (("c", "all_reduce", "WORLD"),), (("c", "broadcast", "WORLD"),)), None, (), children=arms)
    found = list(compare._diff([uniform, uniform], [uniform, coll(9, "barrier", False)]))
    assert [(d.cause, d.event.op, d.other_event.op) for d in found] == [
        (Cause.MISMATCH, "all_reduce", "barrier"),
        (Cause.MISMATCH, "broadcast", "barrier"),
    ]


def _coll(line: int, op: str) -> Collective:
    return Collective(op, "WORLD", _site(line), "", None, False, UNDER_ANY)


@pytest.mark.parametrize(
    "decision",
    [
        # `if rank == 0: all_reduce()` in the callee
        Branch(("cmp", "rank", "==", 0), GuardRef(Location("m.py", 2, 1, 2, 10), "if rank == 0:", "rank == 0", None), [_coll(3, "all_reduce")], []),
        # a loop that runs only on some ranks (`while step < rank:`) around `all_reduce()`
        Loop(("m.py", 2, 1), ("cmp", "rank", ">", 0), [_coll(3, "all_reduce")], None, None, None),
    ],
    ids=["branch", "loop"],
)
@pytest.mark.parametrize("nested", [False, True], ids=["in-callee", "in-callee-of-callee"])
def test_a_shared_call_is_flattened_for_each_value_its_decisions_read(decision: Node, nested: bool) -> None:
    """A call flattened once and shared between classes of ranks (class_runs) still gives each
    class what its own rank takes inside the callee: the root guards on another rank kind, so the
    classes that agree on `rank` share the callee's flattening and the others do not."""
    root_guard = GuardRef(Location("m.py", 10, 1, 10, 10), "if local_rank == 1:", "local_rank == 1", None)
    body: list = [Call(_site(5), "m.inner", [decision])] if nested else [decision]
    call = Call(_site(11), "m.helper", body)
    tree = [Branch(("cmp", "local_rank", "==", 1), root_guard, [_coll(12, "barrier")], []), call]
    runs = class_runs(tree)
    assert runs is not None
    by_class = {(run.assignment["local_rank"], run.assignment["rank"]): event_keys(run.events) for run in runs}
    reduce_keys = (("c", "all_reduce", "WORLD"),) if isinstance(decision, Branch) else (("L", (("c", "all_reduce", "WORLD"),) * 2, None),)
    for (local_rank, rank), keys in by_class.items():
        barrier = (("c", "barrier", "WORLD"),) if local_rank == 1 else ()
        reduces = rank == 0 if isinstance(decision, Branch) else rank > 0
        assert keys == barrier + (reduce_keys if reduces else ()), (local_rank, rank)
