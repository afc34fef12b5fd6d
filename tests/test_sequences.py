"""Comparing the collective sequences of classes of ranks (sequences.py): what its shortcuts must
not change."""

from __future__ import annotations

import json

import pytest
from corpus_support import CORPUS

from rankcheck import sequences
from rankcheck.api import run_check
from rankcheck.ftypes import ChainStep, Location
from rankcheck.interp import GuardRef, SiteRef

GROUPS = sorted(p for p in CORPUS.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _findings(path) -> str:
    result = run_check([path], root=path)
    return json.dumps([f.to_dict() for f in result.findings], sort_keys=True)


@pytest.mark.parametrize("group", GROUPS, ids=[g.name for g in GROUPS])
def test_shared_flattening_of_calls_finds_what_flattening_each_class_finds(group, monkeypatch) -> None:
    """A call whose subtree no class of ranks can change is flattened once for all classes: the
    findings are those of flattening it for each class."""
    shared = _findings(group)
    monkeypatch.setattr(sequences._Flattener, "_is_fixed", lambda self, tree: False)
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
