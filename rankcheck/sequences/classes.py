"""Classes of ranks: the assignments a function's guards tell apart.

The formulas in a function's tree (its own and its callees') compare rank kinds with constants
and test opaque values; each class of ranks is one assignment of those (rank 0, rank 1, "the
others"; an opaque test true or false). All of them where there are at most MAX_CLASSES; beyond
that, not a prefix of the product (which held the slowest axes, the uniform conditions and the
rank, at their first value, so an exit taken only where a uniform flag is false or a rank is not 0
ran in no class): every combination of the axes along each decision's path (_path_classes).
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

from rankcheck.interp.formulas import Assignment, collect_atoms
from rankcheck.interp.tree import Branch, Exit, Loop, Tree, UniformBranch

MAX_CLASSES = 64
# Where the full product of the axes is larger than MAX_CLASSES: at most this many classes drawn
# from the decisions' paths (see _path_classes).
MAX_PATH_CLASSES = 512

Axis = List[Tuple[Any, Any]]


def _tree_atoms(tree: Tree, kinds: Dict[str, Set[Any]], variables: Set[Any]) -> None:
    for node in tree:
        if isinstance(node, Branch):
            collect_atoms(node.formula, kinds, variables)
        elif isinstance(node, Loop) and node.formula is not None:
            collect_atoms(node.formula, kinds, variables)
        for part in node.children():
            _tree_atoms(part, kinds, variables)


def _asked_again(tree: Tree) -> Set[Any]:
    """The named uniform conditions asked by more than one uniform branch that holds rank
    branches (`if is_dist(): <barriers before>`, the body, `if is_dist(): <barriers after>`): one
    answer at every use, so the classes are enumerated under each answer and those branches are
    taken consistently. A condition asked once needs no axis (each of its arms is compared as it
    is), and adding one per `if args.flag:` would multiply the classes of a long training loop."""
    counts: Dict[Any, int] = {}
    stack = [tree]
    while stack:
        for node in stack.pop():
            if isinstance(node, UniformBranch) and node.shared is not None and _nested_decisions(node):
                found: Set[Any] = set()
                collect_atoms(node.shared, {}, found)
                for var in found:
                    counts[var] = counts.get(var, 0) + 1
            stack.extend(node.children())
    return {var for var, n in counts.items() if n > 1}


def _nested_decisions(node: UniformBranch) -> bool:
    """The uniform branch holds a rank branch: which collectives it issues differs per class."""
    stack = [node.then, node.orelse]
    while stack:
        for child in stack.pop():
            if isinstance(child, Branch):
                return True
            stack.extend(child.children())
    return False


def _axis_keys(kinds: Dict[str, Set[Any]], variables: Set[Any]) -> Set[Any]:
    """The axes (assignment keys) the atoms of a formula read."""
    keys: Set[Any] = set(kinds)
    for var in variables:
        keys.add(var if var[0] == "uvar" else ("var", var))
    return keys


def _formula_keys(node: Any) -> frozenset:
    formula = node.formula if isinstance(node, (Branch, Loop)) else None
    if formula is None:
        return frozenset()
    kinds: Dict[str, Set[Any]] = {}
    variables: Set[Any] = set()
    collect_atoms(formula, kinds, variables)
    return frozenset(_axis_keys(kinds, variables))


def _exit_keys(tree: Tree, memo: Dict[int, Tuple[bool, frozenset]]) -> Tuple[bool, frozenset]:
    """Whether the function's own code in `tree` can exit, and the axes of the decisions on the
    way to its exits: what decides whether the code after it is reached."""
    known = memo.get(id(tree))
    if known is not None:
        return known
    exits, keys = False, frozenset[Any]()
    for node in tree:
        if isinstance(node, Exit):
            exits = True
            continue
        for part in node.own_children():
            sub_exits, sub_keys = _exit_keys(part, memo)
            if sub_exits:
                exits = True
                keys |= sub_keys | _formula_keys(node)
    memo[id(tree)] = (exits, keys)
    return exits, keys


def _path_keys(tree: Tree, enclosing: frozenset, out: Dict[frozenset, None], memo: Dict[int, Tuple[bool, frozenset]]) -> None:
    """For every rank decision (branch, loop) in the tree, the axes its formula reads, with those
    of the decisions enclosing it and of the earlier exits that can keep a class from reaching
    it: what a class must set to reach each of its arms."""
    before = frozenset[Any]()
    for node in tree:
        here = enclosing | before | _formula_keys(node)
        if here:
            out.setdefault(here, None)
        for part in node.children():
            _path_keys(part, here, out, memo)
        for part in node.own_children():
            exits, keys = _exit_keys(part, memo)
            before |= keys | (_formula_keys(node) if exits else frozenset())


def _path_classes(tree: Tree, axes: List[Axis]) -> List[Assignment]:
    """Too many axes for their full product: every combination of the axes along each decision's
    path, the other axes at their first value (uniform conditions true, opaque tests false, rank
    0). Each exit and each guarded collective is then reached by some class, and compared with
    the classes of the same uniform setting that do not reach it."""
    by_key = {axis[0][0]: axis for axis in axes}
    default = {key: axis[0][1] for key, axis in by_key.items()}
    paths: Dict[frozenset, None] = {frozenset(): None}
    _path_keys(tree, frozenset(), paths, {})
    seen: Dict[Tuple, Assignment] = {}
    # Shortest paths first: the decisions nearest the root, then the nested ones.
    for keys in sorted(paths, key=len):
        chosen = [by_key[k] for k in sorted(keys, key=repr) if k in by_key]
        for combo in itertools.product(*chosen):
            assignment = dict(default)
            assignment.update(combo)
            if not _possible(assignment):
                continue
            seen.setdefault(tuple(sorted(assignment.items(), key=repr)), assignment)
            if len(seen) >= MAX_PATH_CLASSES:
                return list(seen.values())
    return list(seen.values())


def assignments(tree: Tree) -> List[Assignment]:
    kinds: Dict[str, Set[Any]] = {}
    variables: Set[Any] = set()
    _tree_atoms(tree, kinds, variables)
    variables |= _asked_again(tree)
    axes: List[Axis] = []
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
    total = 1
    for axis in axes:
        total *= len(axis)
    if total > MAX_CLASSES:
        # A prefix of the product would hold the slowest axes (the uniform conditions, the rank)
        # at their first value: the exits and guards that need another never run.
        return _path_classes(tree, axes)
    out: List[Assignment] = [a for a in (dict(combo) for combo in itertools.product(*axes)) if _possible(a)]
    return out or [{}]


# Global rank 0 is the first process of the first node under every launcher (torchrun, mp.spawn,
# SLURM, MPI): its local rank and node rank are 0 as well.
_ZERO_WITH_GLOBAL_ZERO = ("local_rank", "node_rank")


def _possible(values: Assignment) -> bool:
    """No class is global rank 0 with a local or node rank other than 0 (a "master first" guard
    written twice, once per node and once per job, parts the ranks alike in both)."""
    if values.get("global_rank") != 0:
        return True
    return all(values.get(kind, 0) == 0 for kind in _ZERO_WITH_GLOBAL_ZERO)


def uniform_setting(assignment: Assignment) -> Tuple:
    """The shared uniform variables' values in a class: classes are compared under one setting."""
    return tuple(sorted((k, v) for k, v in assignment.items() if isinstance(k, tuple) and k[0] == "uvar"))
