"""Comparing the collective sequences of classes of ranks (sequences.py): what its shortcuts must
not change."""

from __future__ import annotations

import json

import pytest
from corpus_support import CORPUS

from rankcheck.sequences import compare as sequences
from rankcheck.api import run_check
from rankcheck.ftypes import ChainStep, Location
from rankcheck.interp.interpreter import GuardRef, SiteRef

GROUPS = sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _findings(path) -> str:
    result = run_check([path], root=path)
    return json.dumps([f.to_dict() for f in result.findings], sort_keys=True)


@pytest.mark.parametrize("group", GROUPS, ids=[g.name for g in GROUPS])
def test_shared_flattening_of_calls_finds_what_flattening_each_class_finds(group, monkeypatch) -> None:
    """A call's subtree is flattened once for all the classes of ranks that agree on what its
    decisions read (all of them, when it decides nothing): the findings are those of flattening
    it for each class."""
    shared = _findings(group)
    monkeypatch.setattr(sequences._Flattener, "_decision_keys", lambda self, tree: None)
    assert _findings(group) == shared


def _site(line: int) -> SiteRef:
    return SiteRef(Location("m.py", line, 1, line, 10), f"op{line}")


def test_a_uniform_branch_is_unfolded_where_the_difference_is() -> None:
    """One event object can stand twice in a sequence (a loop's second iteration repeats the first,
    a shared call is flattened once). The uniform branch that differs from the other class is the
    one unfolded, not its first occurrence."""
    guard = GuardRef(Location("m.py", 1, 1, 1, 10), "if rank == 0:", "rank == 0", None)

    def coll(line: int, op: str, arm: bool) -> sequences.Event:
        site = _site(line)
        return sequences.Event("c", ("c", op, "WORLD"), site, ((guard, arm),), (ChainStep(site.location, op),), op=op)

    # The ranks that take the guard's one arm run a uniform branch twice (one object); the others
    # run it once and then issue a barrier under the guard's other arm. Lined up, the second
    # occurrence stands against the barrier: the arms mismatch there (RC106).
    arms = ([coll(5, "all_reduce", True)], [coll(7, "broadcast", True)])
    uniform = sequences.Event("U", ("U", (("c", "all_reduce", "WORLD"),), (("c", "broadcast", "WORLD"),)), None, (), children=arms)
    found = list(sequences._diff([uniform, uniform], [uniform, coll(9, "barrier", False)]))
    assert [(d.cause, d.event.op, d.other_event.op) for d in found] == [
        ("mismatch", "all_reduce", "barrier"),
        ("mismatch", "broadcast", "barrier"),
    ]


def _coll(line: int, op: str) -> tuple:
    return ("coll", op, "WORLD", _site(line), None, None)


@pytest.mark.parametrize(
    "decision",
    [
        # `if rank == 0: all_reduce()` in the callee
        ("branch", ("cmp", "rank", "==", 0), GuardRef(Location("m.py", 2, 1, 2, 10), "if rank == 0:", "rank == 0", None), [_coll(3, "all_reduce")], []),
        # a loop that runs only on some ranks (`while step < rank:`) around `all_reduce()`
        ("loop", ("L", 2), ("cmp", "rank", ">", 0), [_coll(3, "all_reduce")], None, True),
    ],
    ids=["branch", "loop"],
)
@pytest.mark.parametrize("nested", [False, True], ids=["in-callee", "in-callee-of-callee"])
def test_a_shared_call_is_flattened_for_each_value_its_decisions_read(decision, nested) -> None:
    """A call flattened once and shared between classes of ranks (class_runs) still gives each
    class what its own rank takes inside the callee: the root guards on another rank kind, so the
    classes that agree on `rank` share the callee's flattening and the others do not."""
    root_guard = GuardRef(Location("m.py", 10, 1, 10, 10), "if local_rank == 1:", "local_rank == 1", None)
    body = [("call", _site(5), "m.inner", [decision])] if nested else [decision]
    call = ("call", _site(11), "m.helper", body)
    tree = [("branch", ("cmp", "local_rank", "==", 1), root_guard, [_coll(12, "barrier")], []), call]
    runs = sequences.class_runs(tree)
    assert runs is not None
    by_class = {(run.assignment["local_rank"], run.assignment["rank"]): sequences._keys(run.events) for run in runs}
    reduce_keys = (("c", "all_reduce", "WORLD"),) if decision[0] == "branch" else (("L", (("c", "all_reduce", "WORLD"),) * 2),)
    for (local_rank, rank), keys in by_class.items():
        barrier = (("c", "barrier", "WORLD"),) if local_rank == 1 else ()
        reduces = rank == 0 if decision[0] == "branch" else rank > 0
        assert keys == barrier + (reduce_keys if reduces else ()), (local_rank, rank)
