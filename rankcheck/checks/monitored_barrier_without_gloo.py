"""RC202 monitored-barrier-without-gloo: `monitored_barrier` on a group whose backend is not gloo.
torch implements it for gloo alone and raises `ValueError` for any other backend: NCCL, a mixed
"cpu:gloo,cuda:nccl", and the "undefined" of a default group created without a backend. The
barrier meant to name the ranks that did not arrive fails on every rank instead; an NCCL job needs
a gloo side group for it.

The group's backend is read where the program shows it: the group argument assigned from a
`new_group(backend=...)` in the same function, module or class (`self.group`), or, for the default
group, the backend of the `init_process_group` calls on the entry paths that reach the barrier. A
barrier under a test of the backend, or on a group or backend rankcheck cannot read, is not
reported. Knowledge: rules/readiness.toml."""

from __future__ import annotations

from typing import Iterator, List, Optional, Tuple

from rankcheck.checks.readiness import (
    MAX_DEPTH,
    UNKNOWN,
    CallGraph,
    Values,
    argument,
    argument_text,
    call_text,
    callee_name,
    guards_around,
    known,
    load_knowledge,
    location,
    place,
)
from rankcheck.driver.analysis import Analysis
from rankcheck.ftypes import Finding
from rankcheck.program.ir import ASSIGN, EXIT, CallSite, Expr, FunctionSummary, statements
from rankcheck.rules_meta import get_rule

CODE = "RC202"

# (backend, where the group was created) of each creation the barrier's group can come from
Origins = List[Tuple[object, str]]


class _Backends:
    def __init__(self, analysis: Analysis) -> None:
        self.program = analysis.program
        self.knowledge = load_knowledge()
        self.values = Values(self.program, self.knowledge)
        self.graph = CallGraph(self.program)

    def of_creation(self, fn: FunctionSummary, index: int, default_group_of: FunctionSummary, depth: int = 0) -> Origins:
        """The backends a group-creating call site gives its group."""
        site = fn.calls[index]
        creator = self.knowledge.group_creators.get(callee_name(self.program, fn, site) or "")
        if creator is None:
            return self._returned(fn, site, default_group_of, depth)
        if creator.creates == "configuration":
            return [(UNKNOWN, "")]
        given = argument(site, creator.backend) if creator.backend is not None else None
        where = f"`{site.text}` at {place(self.program, fn, site)}"
        if given is None and creator.default_backend == "inherit":
            # the entry paths through the group's creation, or else the barrier's
            inherited = self.of_default_group(fn)
            if any(value is UNKNOWN for value, _ in inherited) and fn is not default_group_of:
                inherited = self.of_default_group(default_group_of)
            return [(value, f"{where}, which inherits it from {origin}") for value, origin in inherited]
        if given is None:
            return [(creator.default_backend or UNKNOWN, where)]
        return [(value, where) for value in self.values.of(fn, given)]

    def _returned(self, fn: FunctionSummary, site: CallSite, default_group_of: FunctionSummary, depth: int) -> Origins:
        """The groups a project function returns (`def make_side_group(): return new_group(...)`)."""
        callee = self.graph.site_callee(fn, site)
        if callee is None or depth >= MAX_DEPTH:
            return [(UNKNOWN, "")]
        origins: Origins = []
        for stmt in statements(callee.body):
            if stmt[0] != EXIT.tag or EXIT.get(stmt, "kind") != "return":
                continue
            value = EXIT.get(stmt, "value")
            if value is None or value[0] != "call":
                return [(UNKNOWN, "")]
            origins.extend(self.of_creation(callee, value[1], default_group_of, depth + 1))
        return origins or [(UNKNOWN, "")]

    def of_default_group(self, fn: FunctionSummary) -> Origins:
        """The backends the default group is created with on the entry paths reaching `fn`."""
        origins: Origins = []
        for qual in sorted(self.graph.reached(self.graph.entries(fn.qualname))):
            caller = self.program.functions.get(qual)
            if caller is None:
                continue
            for site in caller.calls:
                creator = self.knowledge.group_creators.get(callee_name(self.program, caller, site) or "")
                if creator is not None and creator.creates == "default":
                    origins.extend(self.of_creation(caller, site.index, fn))
        return origins or [(UNKNOWN, "")]

    def of_group(self, fn: FunctionSummary, group: Optional[Expr]) -> Origins:
        if group is None or group == ("const", None):
            return self.of_default_group(fn)
        stores = self._stores(fn, group)
        if not stores:
            return [(UNKNOWN, "")]
        origins: Origins = []
        for owner, value in stores:
            if value[0] != "call":
                return [(UNKNOWN, "")]
            origins.extend(self.of_creation(owner, value[1], fn))
        return origins

    def _stores(self, fn: FunctionSummary, group: Expr) -> List[Tuple[FunctionSummary, Expr]]:
        """What a group expression was assigned: a local or module name, or `self.<attr>` in any
        method of the class."""
        if group[0] == "name":
            for scope in (fn, self.values.module_function(fn)):
                if scope is not None and group[1] in self.values.assignments(scope):
                    return [(scope, value) for value in self.values.assignments(scope)[group[1]]]
            return []
        if group[0] == "attr" and group[1] == ("name", "self") and fn.class_qualname:
            stores = []
            for cls in self.program.class_chain(fn.class_qualname):
                for attr, methods in cls.self_stores:
                    if attr != group[2]:
                        continue
                    for method_qual in methods:
                        method = self.program.functions.get(method_qual)
                        if method is None:
                            continue
                        for stmt in statements(method.body):
                            if stmt[0] == ASSIGN.tag and ("selfattr", attr) in ASSIGN.get(stmt, "targets"):
                                stores.append((method, ASSIGN.get(stmt, "value")))
            return stores
        return []


def check(analysis: Analysis) -> Iterator[Finding]:
    rule = get_rule(CODE)
    knowledge = load_knowledge()
    program = analysis.program
    backends: Optional[_Backends] = None
    for fn in program.functions.values():
        for site in fn.calls:
            group_argument = knowledge.gloo_only.get(callee_name(program, fn, site) or "")
            if group_argument is None:
                continue
            if any(word in condition for condition in guards_around(fn, site.index) for word in knowledge.backend_tests):
                continue  # `if dist.get_backend() == "gloo": dist.monitored_barrier()`
            backends = backends or _Backends(analysis)
            group = argument(site, group_argument)
            origins = backends.of_group(fn, group)
            if any(value is UNKNOWN for value, _ in origins):
                continue
            wrong = [(value, where) for value, where in origins if value != knowledge.gloo]
            if not wrong:
                continue
            value, where = wrong[0]
            others = known(v for v, _ in wrong[1:] if v != value)
            yield Finding(
                code=CODE,
                message=rule.render(
                    "backend",
                    call=call_text(site),
                    group="the default group" if group is None or group == ("const", None) else f"`{argument_text(site, group_argument)}`",
                    backend=f"{value!r}" + (f" (or {', '.join(map(repr, others))})" if others else ""),
                    created=f"created by {where}",
                ),
                location=location(program, fn, site),
                severity=rule.severity,
            )
