"""The static call graph's two fixpoints: which functions reach a collective (with one shortest
witness chain each), and which call each other back (the recursive cycles the interpreter does
not follow around)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Deque,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Sequence,
    Set,
    Tuple,
)

from rankcheck.catalog import SUBMODULE_FORWARD
from rankcheck.program.ir import CallSite, FunctionSummary

if TYPE_CHECKING:
    from rankcheck.program.link import Program, Target


@dataclass(frozen=True)
class Reach:
    """A function reaches a collective: `depth` calls down, first through `site`."""

    depth: int
    site: CallSite
    target: Target


def shortest_reach(program: Program) -> Dict[str, Reach]:
    """Function -> how it reaches a collective, by the shortest chain of static calls."""
    from rankcheck.program.link import Target

    reach: Dict[str, Reach] = {}
    callers: Dict[str, List[Tuple[FunctionSummary, CallSite, Target]]] = {}
    queue: Deque[str] = deque()
    for fn in program.functions.values():
        for site in fn.calls:
            for method in program.self_call_targets(fn, site):
                # `self.hook()` reaches what a subclass's override of the hook reaches.
                callers.setdefault(method.qualname, []).append((fn, site, Target("function", method.qualname, function=method)))
            target = program.static_target(fn, site)
            if target is None and program.sharded_call(fn, site) is not None:
                # `self.vision_tower(x)` in a model whose parameters are sharded: a gather.
                target = Target("collective", SUBMODULE_FORWARD, collective=program.catalog.sharded_forward)
            if target is None:
                continue
            if target.kind == "collective":
                current = reach.get(fn.qualname)
                if current is None or current.depth > 1:
                    reach[fn.qualname] = Reach(1, site, target)
                    queue.append(fn.qualname)
            elif target.kind in ("function", "class"):
                called = program.function_run(target)
                if called is not None:
                    via = target if target.kind == "function" else Target("function", called.qualname, function=called)
                    callers.setdefault(called.qualname, []).append((fn, site, via))
    # Breadth-first from the functions that call a collective directly: shortest chains first,
    # and recursion or import cycles end because a function is marked once.
    while queue:
        callee = queue.popleft()
        depth = reach[callee].depth
        for caller, site, target in callers.get(callee, ()):
            if caller.qualname not in reach:
                reach[caller.qualname] = Reach(depth + 1, site, target)
                queue.append(caller.qualname)
    return reach


def strongly_connected(functions: Iterable[str], callees: Mapping[str, Sequence[str]]) -> Dict[str, FrozenSet[str]]:
    """Function -> its recursive cycle (shared by all its members), for the functions that can
    reach themselves: Tarjan's strongly connected components, iteratively (call chains can be
    deep)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    cycles: Dict[str, FrozenSet[str]] = {}
    counter = 0
    for start in functions:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            edges = callees.get(node, ())
            if position < len(edges):
                work.append((node, position + 1))
                nxt = edges[position]
                if nxt not in index:
                    if nxt in callees:
                        work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in callees[node]:
                    cycle = frozenset(members)
                    for member in members:
                        cycles[member] = cycle
    return cycles
