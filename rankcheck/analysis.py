"""The linked program's facts that the rules read: per function, where rank classes diverge.

Built once per run from the summaries; each rule module (rankcheck/checks/) turns the part it owns
into findings. Roots are the functions (and module bodies) that reach a collective and decide
something on the rank in their own code; parameters are bound from what callers pass, so a helper
that branches on a `rank` argument is judged by the ranks its callers give it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, List, Set

from rankcheck.catalog import Catalog
from rankcheck.interp import Interpreter, Result, Val, join
from rankcheck.ir import ModuleSummary
from rankcheck.link import Program
from rankcheck.sequences import Divergence, divergences, has_rank_decision_at_root

PARAM_BINDING_ROUNDS = 3


@dataclass
class Analysis:
    program: Program
    interpreter: Interpreter
    divergences: Dict[str, List[Divergence]] = field(default_factory=dict)
    reaching: Set[str] = field(default_factory=set)  # functions whose code issues a collective
    results: Dict[str, Result] = field(default_factory=dict)  # interpretation of each reaching one


def _root_binding(value: Val) -> Val:
    """What a parameter keeps when its function is judged on its own (as a root), joined over
    every caller: the rank itself and what rank-sharding did to lengths, and known types. Per-rank
    *data* is left to each call site (the callee is interpreted with the caller's own values
    there); joined over all callers it would taint every utility that one loop passes a batch to."""
    taints = frozenset(t for t in value.taints if t.kind == "rank")
    shape = frozenset(t for t in value.shape if t.kind == "rank")
    if taints == value.taints and shape == value.shape:
        return value
    return replace(value, taints=taints, shape=shape, key=value.key if taints else None)


def _run(interp: Interpreter, qual: str) -> Result:
    """One function's interpretation; code nested too deeply to follow is left out, not a crash."""
    try:
        return interp.run(qual)
    except RecursionError:
        interp.abandon()
        return Result(tree=[], ret=Val())


def _bind_parameters(program: Program, interp: Interpreter, roots: List[str]) -> None:
    """What each project function's parameters can hold, joined over every call site (and what
    functions store into module variables through `global`), learned over a few rounds. After the
    first round only what the changed bindings reach is interpreted again (Interpreter.invalidate)."""
    known_stores: Dict = {}
    for _ in range(PARAM_BINDING_ROUNDS):
        bindings: Dict[str, Dict[str, Val]] = {}
        for qual in roots:
            result = _run(interp, qual)
            for callee, args in result.call_args:
                slot = bindings.setdefault(callee, {})
                for name, value in args.items():
                    value = _root_binding(value)
                    if value.varies or value.shape or value.type or value.elements or value.members:
                        slot[name] = join(slot[name], value) if name in slot else value
        stores = dict(interp.global_stores)
        old = interp.param_bindings
        changed = [q for q in set(bindings) | set(old) if bindings.get(q) != old.get(q)]
        changed_stores = [k for k in set(stores) | set(known_stores) if stores.get(k) != known_stores.get(k)]
        if not changed and not changed_stores:
            return
        known_stores = stores
        interp.param_bindings = bindings
        interp.invalidate(changed, changed_stores)


def analyse(summaries: Iterable[ModuleSummary], catalog: Catalog) -> Analysis:
    program = Program(summaries, catalog)
    interp = Interpreter(program)
    roots = sorted(program.functions)
    _bind_parameters(program, interp, roots)
    analysis = Analysis(program, interp)
    for qual in roots:
        result = _run(interp, qual)
        if not result.reaches:
            continue
        analysis.reaching.add(qual)
        analysis.results[qual] = result
        tree = result.tree
        if not has_rank_decision_at_root(tree):
            continue
        found = list(divergences(tree))
        if found:
            analysis.divergences[qual] = found
    return analysis

