"""What the parts of the interpreter share.

`Interpreter` (interpreter.py) is assembled from parts, each a class on this base: `Statements`,
`Expressions`, `Calls` and `Frameworks` (the framework model). They call each other through
`self`; this base holds their shared state and tells the type checker what each part provides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Set, Tuple

from rankcheck.ftypes import Location
from rankcheck.interp.frame import Frame, Result
from rankcheck.interp.memo import MemoEngine
from rankcheck.interp.tree import Node, Tree
from rankcheck.interp.values import Taint, Val
from rankcheck.program.ir import (
    CallSite,
    Expr,
    FunctionSummary,
    GuardInfo,
    Span,
    render_expr,
)

if TYPE_CHECKING:
    from rankcheck.catalog import Catalog, ImplicitSpec, TypeSpec
    from rankcheck.interp.frame import Learned
    from rankcheck.interp.tree import Collective, GuardRef
    from rankcheck.program.link import Program, Target


class InterpreterBase(MemoEngine):
    MAX_DEPTH = 32  # call depth followed from a root; deeper chains stop (recursion does too)

    def __init__(self, program: Program) -> None:
        super().__init__(program)
        self.catalog: Catalog = program.catalog
        self._stack: List[str] = []  # the functions being run, outermost first
        self._globals_busy: Set[str] = set()
        self._class_attrs_busy: Set[Tuple[str, str]] = set()
        self._imports_of: Dict[str, Dict[str, str]] = {}
        # Project helpers by whether they only return a test of the job being distributed, with
        # the summary that was decided on.
        self._distributed_helpers: Dict[str, Tuple[Optional[FunctionSummary], Optional[bool]]] = {}
        # Nested functions by the names they read of their enclosing function, with the summary
        # they were found in (program.ir.free_names walks the whole body: once per summary).
        self._free_names: Dict[str, Tuple[FunctionSummary, FrozenSet[str]]] = {}
        # Functions by the variables they bind once to a flag (calls._flags_bound_once), likewise.
        self._flag_bindings: Dict[str, Tuple[FunctionSummary, Dict[str, Tuple[Optional[bool]]]]] = {}

    if TYPE_CHECKING:
        # interpreter.py
        def run(self, qualname: str, bindings: Optional[Dict[str, Val]] = None) -> Result: ...
        def _callee_tree(self, result: Result) -> Tree: ...
        def module_globals(self, module: str) -> Dict[str, Val]: ...
        def class_attr(self, class_qualname: str, attr: str) -> Optional[Val]: ...
        def is_record(self, class_qualname: str) -> bool: ...

        # statements.py
        def _body(self, frame: Frame, body: Tuple, out: List[Node]) -> None: ...
        def _assign(self, frame: Frame, target: Tuple, value: Val, out: List[Node]) -> None: ...
        def _guard(self, frame: Frame, info: GuardInfo, value: Val) -> GuardRef: ...
        def _emit_branch(self, frame: Frame, cond: Val, info: GuardInfo, then_out: List[Node], else_out: List[Node],
                         out: List[Node], test: Optional[Expr] = None) -> None: ...
        def _equalities(self, frame: Frame, test: Expr) -> Tuple[Learned, Learned]: ...
        def _type_narrowing(self, frame: Frame, test: Expr) -> Tuple[Learned, Learned]: ...

        # expressions.py
        def eval(self, frame: Frame, expr: Optional[Expr], out: List[Node]) -> Val: ...
        def _name(self, frame: Frame, name: str) -> Val: ...
        def known_truth(self, frame: Frame, test: Expr) -> Optional[bool]: ...
        def _here(self, frame: Frame) -> Location: ...
        def _compare(self, left: Val, op: str, right: Val, right_const: Any, span: Optional[Span], right_text: str = "") -> Val: ...
        def _and_values(self, vals: List[Val], info: GuardInfo, exprs: Tuple = ()) -> Val: ...
        def _or_values(self, vals: List[Val], info: Optional[GuardInfo] = None, exprs: Tuple = ()) -> Val: ...
        def _members_listed_by(self, frame: Frame, expr: Expr) -> Optional[str]: ...
        def nested_self_value(self, frame: Frame, expr: Expr) -> Optional[Val]: ...
        def _dict_display(self, frame: Frame, expr: Expr, out: List[Node]) -> Val: ...

        # statements.py (what the interpreter's function end needs)
        def _stops(self, frame: Frame) -> List[Node]: ...
        def _names_optional_input(self, frame: Frame, expr: Expr) -> bool: ...
        def _single_process_arm(self, frame: Frame, test: Expr) -> Optional[bool]: ...
        def _sizes_tested(self, frame: Frame, test: Expr) -> FrozenSet[str]: ...

        # calls.py
        def resolve_call(self, frame: Frame, site: CallSite, out: List[Node]) -> Optional[Target]: ...
        def _call(self, frame: Frame, site: CallSite, out: List[Node]) -> Val: ...
        def _bind_args(self, frame: Frame, fn: FunctionSummary, site: CallSite, out: List[Node]) -> Dict[str, Val]: ...
        def _arg(self, site: CallSite, position: Optional[int], keyword: Optional[str]) -> Optional[Expr]: ...
        def _eval_args(self, frame: Frame, site: CallSite, out: List[Node]) -> List[Val]: ...
        def _container_name(self, frame: Frame, expr: Expr) -> Optional[str]: ...
        def _grow(self, frame: Frame, name: str, taints: FrozenSet[Taint], length: FrozenSet[Taint], by_one: bool = False,
                  element_shape: FrozenSet[Taint] = frozenset(), item: Optional[Val] = None, counted: bool = False) -> None: ...
        def _rereadable(self, frame: Frame, expr: Expr) -> bool: ...
        def _iteration_shape(self, value: Val) -> FrozenSet[Taint]: ...
        def _iteration_value(self, items: Val, info: GuardInfo, frame: Frame) -> Val: ...
        def shares_seed(self, value: Val) -> bool: ...
        def seed_broadcast(self, frame: Frame, span: Span, text: str) -> Collective: ...

        # frameworks.py
        def external_spec(self, type_name: Optional[str]) -> Optional[TypeSpec]: ...
        def _implicit_method(self, type_name: str, name: str) -> Optional[Target]: ...
        def _catalogued_method(self, type_name: str, name: str) -> Optional[Target]: ...
        def _callable_value(self, value: Val) -> Optional[Target]: ...
        def _grad_spec(self, value: Val) -> Optional[Target]: ...
        def _synced_by_caller(self, fn: FunctionSummary) -> Optional[Target]: ...
        def _hook_types(self, fn: FunctionSummary) -> Tuple[str, ...]: ...
        def _returned_into(self, fn: FunctionSummary) -> Optional[ImplicitSpec]: ...
        def _is_quiet_context(self, frame: Frame, expr: Expr) -> bool: ...
        def _is_join_context(self, frame: Frame, expr: Expr) -> bool: ...
        def rank_zero_only(self, fn: FunctionSummary) -> Optional[str]: ...
        def _wrapped_override(self, fn: FunctionSummary) -> Optional[ImplicitSpec]: ...
        def names_another_rank(self, *names: str) -> bool: ...
        def rank_by_convention(self, fn: FunctionSummary, param: str, path: str) -> Optional[Val]: ...
        def data_by_convention(self, fn: FunctionSummary, param: str, path: str) -> Optional[Val]: ...
        def iterated_by_name(self, expr: Expr, value: Val) -> Val: ...


# Builtins that make an iterator of their argument (what a `for` does first).
ITERATOR_MAKERS = frozenset({"iter", "builtins.iter"})


def is_self(frame: Frame, expr: Expr) -> bool:
    """`expr` names the receiver of the method being run (its first parameter)."""
    return expr[0] == "name" and bool(frame.fn.class_qualname) and bool(frame.fn.params) and expr[1] == frame.fn.params[0]


def plain_reference(expr: Expr) -> bool:
    """A name or a chain of attributes of one (`owner`, `self.grid.leader_rank`): reading it again
    runs no code and records nothing new."""
    while expr[0] == "attr":
        expr = expr[1]
    return expr[0] == "name"


def group_members(group_expr: Expr, group: Val) -> Optional[str]:
    """What names a process group's members: what built it (`new_group(ranks)`: "ranks"; a group
    getter), else the variable or attribute that holds it (`group=embd_group`)."""
    if group.members is not None:
        return group.members
    return render_expr(group_expr) if plain_reference(group_expr) else None


def group_text(site: CallSite, position: Optional[int], keyword: Optional[str]) -> str:
    """The group argument of a collective call as written, "WORLD" for the default group."""
    if keyword:
        for name, text in site.kwarg_texts:
            if name == keyword:
                return "WORLD" if text == "None" else text
    if position is not None and position < len(site.arg_texts):
        return site.arg_texts[position]
    return "WORLD"


def runs_unevenly(site: CallSite, spec: ImplicitSpec) -> bool:
    """Whether a call that loops inside (`generate`) runs its rounds a number of times of this
    rank's own, as these keywords are given (ImplicitSpec.uneven_when, uneven_unless,
    even_when_none)."""
    if not spec.uneven or not when_holds(site, spec.uneven_when):
        return False
    given = dict(site.kwargs)
    for keyword, value in spec.uneven_unless:
        expr = given.get(keyword)
        if expr is not None and (expr[0] != "const" or expr[1] == value):
            return False
    return not any(given.get(keyword) == ("const", None) for keyword in spec.even_when_none)


def counts_items(site: CallSite, last: str, catalog: Catalog) -> bool:
    """`len(x)`, `x.size(0)`: a measure of how many items, the first dimension (catalog `[shape]
    counts`, and `count_methods` given dimension 0)."""
    if site.callee[0] == "attr":
        return last in catalog.shape_count_methods and site.args == (("const", 0),)
    return last in catalog.shape_counts


def when_holds(site: CallSite, when: Tuple[Tuple[str, object], ...]) -> bool:
    """`self.log(..., sync_dist=True)`: the keyword must be given as that constant."""
    given = dict(site.kwargs)
    for keyword, value in when:
        expr = given.get(keyword)
        if expr is None or expr[0] != "const" or expr[1] != value:
            return False
    return True
