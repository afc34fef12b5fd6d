"""The linked program's facts that the rules read: per function, where rank classes diverge.

Built once per run from the summaries; each rule module (rankcheck/checks/) turns the part it owns
into findings. Roots are the functions (and module bodies) that reach a collective and decide
something on the rank in their own code; parameters are bound from what callers pass, so a helper
that branches on a `rank` argument is judged by the ranks its callers give it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace

from rankcheck.catalog import Catalog
from rankcheck.driver.focus import (
    CallerGraph,
    functions_by_file,
    functions_in,
    global_writers,
    update_global_writers,
)
from rankcheck.interp.interpreter import Interpreter, Result, Val, join
from rankcheck.program.ir import ModuleSummary
from rankcheck.program.link import Program
from rankcheck.sequences.compare import Divergence, divergences, has_rank_decision_at_root

PARAM_BINDING_ROUNDS = 3


@dataclass
class Analysis:
    program: Program
    interpreter: Interpreter
    divergences: dict[str, list[Divergence]] = field(default_factory=dict)
    reaching: set[str] = field(default_factory=set)  # functions whose code issues a collective
    results: dict[str, Result] = field(default_factory=dict)  # interpretation of each reaching one
    roots: set[str] = field(default_factory=set)  # the functions analysed as roots
    widened: bool = False  # a focused analysis found it needed more roots than it started from


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


def _bind_parameters(program: Program, interp: Interpreter, roots: list[str]) -> bool:
    """What each project function's parameters can hold, joined over every call site (and what
    functions store into module variables through `global`), learned over a few rounds. A round
    re-interprets only what its new bindings or stores reach: the interpreter verifies each fact's
    inputs and keeps one version per round (Interpreter). Returns whether the rounds settled:
    then the last round ran every root with the bindings and stores they end with. Called again
    with more roots (a focused analysis widening), it goes on from what was learned."""
    for _ in range(PARAM_BINDING_ROUNDS):
        bindings: dict[str, dict[str, Val]] = {}
        for qual in roots:
            for callee, name, value in _binding_contribution(_run(interp, qual)):
                slot = bindings.setdefault(callee, {})
                slot[name] = join(slot[name], value) if name in slot else value
        old = interp.param_bindings
        changed = [q for q in set(bindings) | set(old) if bindings.get(q) != old.get(q)]
        if not changed and not interp.stores_changed():
            return True
        interp.param_bindings = bindings
        interp.new_round(changed)
    return False


def _binding_contribution(result: Result) -> list:
    """What a root run adds to its callees' parameter bindings: (callee, parameter, value)."""
    contribution = result.binding_contribution
    if contribution is None:
        contribution = []
        for callee, args in result.call_args:
            for name, value in args.items():
                value = _root_binding(value)
                if value.varies or value.shape or value.type or value.elements or value.members:
                    contribution.append((callee, name, value))
        result.binding_contribution = contribution
    return contribution


@dataclass
class AnalysisState:
    """What one analysis leaves for the next (the language server's between edits): the linked
    program, the interpreter and its memo, and the focus indexes built from the program.
    `Workspace` (workspace.py) updates the program in place after an edit, so these stay valid."""

    program: Program
    interpreter: Interpreter
    _graph: CallerGraph | None = None
    _writers: dict | None = None
    _by_file: dict | None = None
    changed: list = field(default_factory=list)  # interpreter inputs changed since the last analysis
    # The roots a focused analysis ended with, by focus: the next one over the same focus starts
    # from them (more roots than needed find the same, see analyse), not from the focus alone.
    last_roots: dict = field(default_factory=dict)

    @classmethod
    def fresh(cls, summaries: Iterable[ModuleSummary], catalog: Catalog) -> "AnalysisState":
        program = Program(summaries, catalog)
        return cls(program, Interpreter(program))

    @property
    def graph(self) -> CallerGraph:
        if self._graph is None:
            self._graph = CallerGraph(self.program)
        return self._graph

    @property
    def writers(self) -> dict:
        if self._writers is None:
            self._writers = global_writers(self.program)
        return self._writers

    @property
    def by_file(self) -> dict:
        # Edits keep every function's name, module and file (Program.replace_modules): it holds.
        if self._by_file is None:
            self._by_file = functions_by_file(self.program)
        return self._by_file

    def replace_functions(self, old: list, new: list) -> None:
        """After the program replaced these functions (same names and signatures, new bodies)."""
        if self._graph is not None:
            self._graph.replace_functions(old, new)
        if self._writers is not None:
            update_global_writers(self._writers, old, new)
        self.changed.extend(("code", fn.qualname) for fn in new)
        self.changed.extend(("class", cls) for cls in {fn.class_qualname for fn in new if fn.class_qualname})
        self.changed.extend(self.interpreter.witness_nodes())  # the call sites in the stubs moved
        self.changed.extend(("cycle", q) for q in self.program.cycle_changes())


def analyse(
    summaries: Iterable[ModuleSummary] | None,
    catalog: Catalog,
    focus: Collection[str] | None = None,
    state: AnalysisState | None = None,
) -> Analysis:
    """Interpret the program's functions as roots and collect where rank classes diverge.

    `focus` (module names or paths) restricts the work to what can change the findings located in
    those modules; None analyses every function. Why the restriction is exact: a finding sits in
    its root's own code, so only the focused functions' root results are reported. A root's
    result is a function of its code, of what it reaches on demand (callees in call mode with the
    arguments of the call, module variables, class attributes), and of two learned inputs: its
    parameter bindings and the module variables stored through `global` (interp.py's "binding" and
    "gstore" inputs). Bindings are joined from the `call_args` of the callers' root runs, so the
    callers of every kept function that takes arguments are kept, transitively
    (focus.CallerGraph over-approximates who may call whom): each kept run then sees the bindings
    it has in a whole-program run. The on-demand part can reach two more learned inputs: a class
    attribute runs its storing methods as roots, and a module variable reads what its `global`
    writers stored (from their runs anywhere). The interpreter notes both; those methods
    and writers and their callers join the roots, and the binding rounds go on until nothing new
    is needed. Every learned input a kept result read is then computed from the same runs as in a
    whole-program run; the functions left out feed none of them. (As for a whole-program run, the
    result is exact when the binding rounds converge; a recursion cut short can land elsewhere.)

    `state` carries the program and the interpreter's memo from an earlier analysis (the same
    program, possibly with edited function bodies): only what the edits reach is interpreted again.
    """
    if state is None:
        state = AnalysisState.fresh(summaries or (), catalog)
    program, interp = state.program, state.interpreter
    interp.begin_analysis(state.changed)
    state.changed = []
    if focus is None:
        roots = sorted(program.functions)
        _bind_parameters(program, interp, roots)
        return _collect(program, interp, roots)
    graph = state.graph
    writers = state.writers
    focused = functions_in(state.by_file, focus)
    roots = graph.with_callers(focused)
    focus_key = frozenset(focus)
    roots |= {qual for qual in state.last_roots.get(focus_key, ()) if qual in program.functions}
    widened = False
    while True:
        ordered = sorted(roots)
        settled = _bind_parameters(program, interp, ordered)
        if not settled:
            for qual in ordered:  # run under the final bindings: what they need
                _run(interp, qual)
        needed = set(interp.root_runs)
        for key in interp.stores_read:
            needed |= writers.get(key, set())
        if needed <= roots:
            # The other roots were interpreted for what they feed the focused ones; their own
            # findings lie outside the focus.
            analysis = _collect(program, interp, sorted(focused))
            analysis.roots = roots
            analysis.widened = widened
            state.last_roots = {focus_key: roots}
            return analysis
        roots |= graph.with_callers(needed - roots)
        widened = True


def _collect(program: Program, interp: Interpreter, roots: list[str]) -> Analysis:
    analysis = Analysis(program, interp, roots=set(roots))
    for qual in roots:
        result = _run(interp, qual)
        if not result.reaches:
            continue
        analysis.reaching.add(qual)
        analysis.results[qual] = result
        cached = result.divergences
        if cached is not None and interp.trees_unchanged(cached[1]):
            found = cached[0]
        else:
            # A function of the tree alone, the callees' trees included (which the result reads
            # from the memo, CalleeTree): kept with the result, which the next analysis reuses
            # when nothing it read changed (the language server's, after an edit elsewhere), and
            # used while the callees' trees it read are the ones the memo holds.
            tree = result.tree
            interp.tree_reads = {}
            try:
                found = list(divergences(tree)) if has_rank_decision_at_root(tree) else []
                result.divergences = (found, tuple(interp.tree_reads.values()))
            finally:
                interp.tree_reads = None
        if found:
            analysis.divergences[qual] = found
    return analysis
