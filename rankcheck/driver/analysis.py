"""The linked program's facts that the rules read: per function, where rank classes diverge.

Built once per run from the summaries; each rule module (rankcheck/checks/) turns the part it owns
into findings. Roots are the functions (and module bodies) that reach a collective and decide
something on the rank in their own code; parameters are bound from what callers pass, so a helper
that branches on a `rank` argument is judged by the ranks its callers give it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rankcheck.catalog import Catalog
from rankcheck.driver.focus import (
    CallerGraph,
    functions_by_file,
    functions_in,
    global_writers,
    update_global_writers,
)
from rankcheck.interp.exceptions import handler_catches
from rankcheck.interp.frame import Result
from rankcheck.interp.interpreter import Interpreter
from rankcheck.interp.memo import SELF_STATE
from rankcheck.interp.rounds import bind_parameters, run_root
from rankcheck.interp.tree import (
    Branch,
    Call,
    GuardRef,
    Loop,
    Tree,
    Try,
    has_rank_decision_at_root,
    own_nodes,
    passes_tested_data,
)
from rankcheck.program.ir import GuardKeyword, ModuleSummary
from rankcheck.program.link import Program
from rankcheck.sequences.compare import Divergence, TooLargeToCompare, divergences
from rankcheck.sequences.flatten import Catch, Event, first_collective
from rankcheck.sequences.staggered import staggered_divergences


@dataclass(frozen=True)
class RankZeroOnly:
    """A function that runs on rank 0 alone and reaches a collective (RC107)."""

    reason: str  # "@rank_zero_only", "Lightning calls prepare_data on one rank"
    event: Event  # the first collective it reaches


@dataclass
class Analysis:
    program: Program
    interpreter: Interpreter
    divergences: dict[str, list[Divergence]] = field(default_factory=dict)
    reaching: set[str] = field(default_factory=set)  # functions whose code issues a collective
    results: dict[str, Result] = field(default_factory=dict)  # interpretation of each reaching one
    rank_zero_only: dict[str, RankZeroOnly] = field(default_factory=dict)  # of the reaching ones
    # Reaching functions whose classes of ranks issue too many events to compare (RC005).
    too_large: set[str] = field(default_factory=set)
    roots: set[str] = field(default_factory=set)  # the functions analysed as roots
    widened: bool = False  # a focused analysis found it needed more roots than it started from
    _callers: dict[str, set[str]] | None = field(default=None, repr=False)
    _catches: dict[tuple[str, tuple[str, ...] | None], Catch | None] = field(default_factory=dict, repr=False)

    MAX_CATCH_DEPTH = 8  # callers followed up from a function for the `try` that catches its raise

    def caught_by(self, qual: str, raises: tuple[str, ...] | None) -> Catch | None:
        """Where an exception of the lineage `raises` (interp.exceptions), raised in `qual` and
        not caught there, is caught up the call chain: the first `except` naming it of a caller
        whose `try` calls it, or calls a function that does, if it goes on (neither re-raises nor
        ends the process). None when no caller catches it: the rank dies. Callers by the static
        call graph; their code as their root runs interpret it."""
        memo_key = (qual, raises)
        if memo_key in self._catches:
            return self._catches[memo_key]
        if self._callers is None:
            callers: dict[str, set[str]] = {}
            for caller, callees in self.program.static_callees().items():
                for callee in callees:
                    callers.setdefault(callee, set()).add(caller)
            self._callers = callers
        found: Catch | None = None
        propagating = {qual}
        frontier = [qual]
        for _ in range(self.MAX_CATCH_DEPTH):
            upward: list[str] = []
            for callee in frontier:
                for caller in sorted(self._callers.get(callee, ())):
                    if caller in propagating:
                        continue
                    catch = _catch_around(run_root(self.interpreter, caller).tree, propagating, raises)
                    if catch is not None:
                        found = catch
                        break
                    propagating.add(caller)
                    upward.append(caller)
                if found is not None:
                    break
            if found is not None or not upward:
                break
            frontier = upward
        self._catches[memo_key] = found
        return found

    def rank_guards_around(self, path: Path, line: int) -> list[GuardRef]:
        """The rank-dependent guards (outermost first) of `path`'s functions whose region holds
        `line`: the `if`, `while` or uneven loop that decides which ranks run that line."""
        target = path.resolve()
        program = self.program
        guards: dict[tuple[int, int], GuardRef] = {}
        for qual in sorted(q for q, fn_path in program.path_of_function.items() if Path(fn_path).resolve() == target):
            for node in own_nodes(self.interpreter.run(qual).tree):
                if isinstance(node, Branch):
                    ref: GuardRef | None = node.guard
                elif isinstance(node, Loop):
                    ref = node.guard or node.uneven
                else:
                    continue
                if ref is None:
                    continue
                where = ref.location
                if Path(where.path).resolve() != target or not where.line <= line <= max(where.end_line, where.line):
                    continue
                guards[(where.line, where.column)] = ref
        return [guards[key] for key in sorted(guards)]


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
    def fresh(cls, summaries: Iterable[ModuleSummary], catalog: Catalog, test_modules: frozenset[str] = frozenset()) -> AnalysisState:
        program = Program(summaries, catalog, test_modules)
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
    test_modules: frozenset[str] = frozenset(),
) -> Analysis:
    """Interpret the program's functions as roots and collect where rank classes diverge.

    `focus` (module names or paths) restricts the work to what can change the findings located in
    those modules; None analyses every function. Why the restriction is exact: a finding sits in
    its root's own code, so only the focused functions' root results are reported. A root's
    result is a function of its code, of what it reaches on demand (callees in call mode with the
    arguments of the call, module variables, class attributes), and of two learned inputs: its
    parameter bindings and the module variables stored through `global` (interp/memo.py's "binding" and
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
        state = AnalysisState.fresh(summaries or (), catalog, test_modules)
    program, interp = state.program, state.interpreter
    interp.begin_analysis(state.changed)
    state.changed = []
    if focus is None:
        every = sorted(program.functions)
        bind_parameters(interp, every)
        return _collect(program, interp, every)
    graph = state.graph
    writers = state.writers
    focused = functions_in(state.by_file, focus)
    roots = graph.with_callers(focused)
    focus_key = frozenset(focus)
    roots |= {qual for qual in state.last_roots.get(focus_key, ()) if qual in program.functions}
    widened = False
    while True:
        ordered = sorted(roots)
        settled = bind_parameters(interp, ordered)
        if not settled:
            for qual in ordered:  # run under the final bindings: what they need
                run_root(interp, qual)
        needed = set(interp.root_runs)
        for key in interp.stores_read:
            needed |= writers.get(key, set())
            if key[0].startswith(SELF_STATE):
                needed.add(key[0][len(SELF_STATE):])  # the method whose earlier calls stored it
        if needed <= roots:
            # The other roots were interpreted for what they feed the focused ones. Their own
            # findings lie outside the focus, but for one kind: a guard on what a caller passes
            # in, inside a focused function, is reported there (RC101 at the guarded call), from
            # the caller's run; so the focused functions' callers that pass data a callee tests
            # are compared too, and the driver keeps what lands in the focused files.
            # So are the callers whose framework call runs a focused hook in a loop of its own
            # (`trainer.fit` calling `validation_step`): RC103 reports it at the hook's line.
            passing = [qual for qual in sorted(graph.with_callers(focused) - set(focused))
                       if _passes_tested_data(result := run_root(interp, qual)) or _drives_a_hook(result)]
            analysis = _collect(program, interp, sorted(focused) + passing)
            analysis.roots = roots
            analysis.widened = widened
            state.last_roots = {focus_key: roots}
            return analysis
        roots |= graph.with_callers(needed - roots)
        widened = True


def _catch_around(tree: Tree, callees: set[str], raises: tuple[str, ...] | None) -> Catch | None:
    """The `except` that catches `raises` of a `try` in this tree's own code whose body calls one
    of `callees`, when it swallows it."""
    for node in own_nodes(tree):
        if not isinstance(node, Try):
            continue
        if not any(isinstance(inner, Call) and inner.callee in callees for inner in own_nodes(node.body)):
            continue
        handler = next((h for h in node.handlers if handler_catches(h.catches, raises)), None)
        if handler is not None and handler.swallows:
            return Catch(handler.head, handler.location)
    return None


def _passes_tested_data(result: Result) -> bool:
    """Whether the run passes per-rank data to a callee that branches on it (where the ranks
    part is in the callee: GuardRef.from_caller)."""
    return result.reaches and passes_tested_data(result.tree)


def _drives_a_hook(result: Result) -> bool:
    """Whether the run's own code holds a framework call's loop over a hook (GuardKeyword.DRIVEN)."""
    return result.reaches and any(isinstance(node, Loop) and node.uneven is not None and node.uneven.keyword is GuardKeyword.DRIVEN
                                  for node in own_nodes(result.tree))


# A context manager class's halves: what `__enter__` does on some ranks, `__exit__` may answer on
# the others (a "first rank goes first" guard), so each is judged with the other around the body
# of every `with` that uses the class (Statements._class_context_manager), not alone.
_CONTEXT_HALVES = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__"})


def _context_half(program: Program, qual: str) -> bool:
    fn = program.functions[qual]
    return fn.class_qualname is not None and fn.name in _CONTEXT_HALVES


def _collect(program: Program, interp: Interpreter, roots: list[str]) -> Analysis:
    analysis = Analysis(program, interp, roots=set(roots))
    for qual in roots:
        result = run_root(interp, qual)
        if not result.reaches:
            continue
        analysis.reaching.add(qual)
        analysis.results[qual] = result
        reason = interp.rank_zero_only(program.functions[qual])
        if reason is not None:
            event = first_collective(result.tree)
            if event is not None:
                analysis.rank_zero_only[qual] = RankZeroOnly(reason, event)
        if _context_half(program, qual):
            continue
        cached = result.divergences
        if cached is not None and interp.trees_unchanged(cached[1]):
            found, too_large = cached[0], cached[2]
        else:
            # A function of the tree alone, the callees' trees included (which the result reads
            # from the memo, CalleeTree): kept with the result, which the next analysis reuses
            # when nothing it read changed (the language server's, after an edit elsewhere), and
            # used while the callees' trees it read are the ones the memo holds.
            tree = result.tree
            interp.tree_reads = {}
            too_large = False
            try:
                try:
                    found = [*divergences(tree), *staggered_divergences(tree)] if has_rank_decision_at_root(tree) else []
                except TooLargeToCompare:
                    found, too_large = [*staggered_divergences(tree)], True
                result.divergences = (found, tuple(interp.tree_reads.values()), too_large)
            finally:
                interp.tree_reads = None
        if found:
            analysis.divergences[qual] = found
        if too_large:
            analysis.too_large.add(qual)
    return analysis
