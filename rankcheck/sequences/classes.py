"""Classes of ranks: the assignments a function's guards tell apart.

The formulas in a function's tree (its own and its callees') compare rank kinds with constants
and test opaque values; each class of ranks is one assignment of those (rank 0, rank 1, "the
others"; an opaque test true or false), enumerated up to MAX_CLASSES.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

from rankcheck.interp.formulas import Assignment, collect_atoms
from rankcheck.interp.tree import Branch, Loop, Tree

MAX_CLASSES = 64


def _tree_atoms(tree: Tree, kinds: Dict[str, Set[Any]], variables: Set[Any]) -> None:
    for node in tree:
        if isinstance(node, Branch):
            collect_atoms(node.formula, kinds, variables)
        elif isinstance(node, Loop) and node.formula is not None:
            collect_atoms(node.formula, kinds, variables)
        for part in node.children():
            _tree_atoms(part, kinds, variables)


def assignments(tree: Tree) -> List[Assignment]:
    kinds: Dict[str, Set[Any]] = {}
    variables: Set[Any] = set()
    _tree_atoms(tree, kinds, variables)
    axes: List[List[Tuple[Any, Any]]] = []
    # Shared uniform variables first (slowest-varying): every class of ranks is enumerated under
    # each of their settings, and classes are only compared under the same setting.
    for var in sorted((v for v in variables if v[0] == "uvar"), key=repr):
        axes.append([(var, True), (var, False)])
    for kind, values in sorted(kinds.items()):
        # A rank of a distributed job is never negative: -1 is what launchers leave in RANK or
        # LOCAL_RANK when the job is not distributed (`if RANK != -1: model = DDP(model)`), a
        # single process that cannot wait for another.
        values = {v for v in values if not (isinstance(v, (int, float)) and v < 0)} | {0}
        values.add(max(values) + 1)  # a rank no constant names ("the others")
        axes.append([(kind, v) for v in sorted(values)])
    for var in sorted((v for v in variables if v[0] != "uvar"), key=repr):
        axes.append([(("var", var), False), (("var", var), True)])
    out: List[Assignment] = []
    for combo in itertools.product(*axes):
        out.append(dict(combo))
        if len(out) >= MAX_CLASSES:
            break
    return out or [{}]


def uniform_setting(assignment: Assignment) -> Tuple:
    """The shared uniform variables' values in a class: classes are compared under one setting."""
    return tuple(sorted((k, v) for k, v in assignment.items() if isinstance(k, tuple) and k[0] == "uvar"))
