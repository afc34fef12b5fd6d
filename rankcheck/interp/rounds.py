"""The binding rounds: what each function's parameters can hold, learned from its callers.

A root run records the arguments of every project call it makes (`Result.call_args`); joined
over all of them, they are what the callee's parameters hold when it is judged as a root
(`Interpreter.param_bindings`). That changes what the callers' callees give, so it is learned in
rounds, each re-interpreting only what its new bindings (or module variables stored through
`global`) reach: the memo verifies each fact's inputs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Tuple

from rankcheck.interp.frame import Result
from rankcheck.interp.interpreter import Interpreter
from rankcheck.interp.values import TaintKind, Val, join

PARAM_BINDING_ROUNDS = 3


def _root_binding(value: Val, iterates_data: bool = False) -> Val:
    """What a parameter keeps when its function is judged on its own (as a root), joined over
    every caller: the rank itself and what rank-sharding did to lengths, known types, how many
    batches a loader yields (`iterates_data`), and whether an optional input is there
    (Taint.presence). Other per-rank *data* is left to each call site (the callee is interpreted
    with the caller's own values there); joined over all callers it would taint every utility that
    one loop passes a batch to."""
    taints = frozenset(t for t in value.taints if t.kind is TaintKind.RANK or t.presence)
    # How many batches a loader yields is the loader's own (one over this rank's shards): a helper
    # looping over the loader it is given loops that many rounds, whichever caller gave it.
    shape = frozenset(t for t in value.shape if t.kind is TaintKind.RANK or iterates_data)
    if taints == value.taints and shape == value.shape:
        return value
    return replace(value, taints=taints, shape=shape, key=value.key if taints else None)


def run_root(interp: Interpreter, qual: str) -> Result:
    """One function's interpretation; code nested too deeply to follow is left out, not a crash."""
    try:
        return interp.run(qual)
    except RecursionError:
        interp.abandon()
        return Result(tree=[], ret=Val())


def bind_parameters(interp: Interpreter, roots: List[str]) -> bool:
    """What each project function's parameters can hold, joined over every call site (and what
    functions store into module variables through `global`), learned over a few rounds. A round
    re-interprets only what its new bindings or stores reach: the interpreter verifies each fact's
    inputs and keeps one version per round (Interpreter). Returns whether the rounds settled:
    then the last round ran every root with the bindings and stores they end with. Called again
    with more roots (a focused analysis widening), it goes on from what was learned."""
    for _ in range(PARAM_BINDING_ROUNDS):
        bindings: Dict[str, Dict[str, Val]] = {}
        tests = interp.program.test_modules
        functions = interp.program.functions
        for qual in roots:
            from_tests = bool(tests) and functions[qual].module in tests
            for callee, name, value in _binding_contribution(interp, run_root(interp, qual)):
                if from_tests and callee in functions and functions[callee].module not in tests:
                    continue  # a test's arguments (`even_batches=False`, a chosen rank) are its own
                slot = bindings.setdefault(callee, {})
                slot[name] = join(slot[name], value) if name in slot else value
        old = interp.param_bindings
        changed = [q for q in set(bindings) | set(old) if bindings.get(q) != old.get(q)]
        if not changed and not interp.stores_changed():
            return True
        interp.param_bindings = bindings
        interp.new_round(changed)
    return False


def _binding_contribution(interp: Interpreter, result: Result) -> List[Tuple[str, str, Val]]:
    """What a root run adds to its callees' parameter bindings: (callee, parameter, value). A
    parameter bound to a value alike on every rank is recorded too: a caller passes it, so it is
    not an entry point's (`Interpreter.rank_by_convention`)."""
    contribution = result.binding_contribution
    if contribution is None:
        contribution = [(callee, name, _root_binding(value, interp.iterates_data(value))) for callee, args in result.call_args for name, value in args.items()]
        result.binding_contribution = contribution
    return contribution
