"""The collective tree: what one run of a function issues, in program order, under the branches,
loops, exits and context managers that decide whether it runs (only the parts that matter are
kept: a tree without a collective anywhere below is empty).

Every node says which lists of nodes it holds with `children()` (the called code included) and
`own_children()` (the function's own code only: not a callee's tree, not a context manager's
body of code); every walker is written on those two.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from rankcheck.ftypes import RANK_IDENTITY, Location
from rankcheck.interp.exceptions import caught_only_from_code
from rankcheck.program.ir import GuardKeyword, Span

if TYPE_CHECKING:
    from rankcheck.interp.formulas import Formula
    from rankcheck.interp.values import Taint

Tree = Sequence["Node"]  # a list, or a callee's tree read through the memo (memo.CalleeTree)


def loc(path: str, span: Span) -> Location:
    return Location(path, span.line, span.column, span.end_line, span.end_column)


class ExitKind(enum.Enum):
    RETURN = "return"
    CONTINUE = "continue"
    BREAK = "break"
    RAISE = "raise"
    EXIT = "exit"  # sys.exit(), os._exit(), ...: the process ends


@dataclass(frozen=True)
class SiteRef:
    """A call or statement in user code, for evidence."""

    location: Location
    text: str  # callee text for calls, statement text for exits


@dataclass(frozen=True)
class GuardRef:
    location: Location
    head: str
    condition: str
    taint: Optional[Taint]
    kind: str = RANK_IDENTITY  # or PER_RANK_DATA: what makes the condition differ across ranks
    membership: Optional[str] = None  # the guard tests membership of this process group
    # Process groups (their getters) on whose members the guard's condition is alike: it tests
    # only rank kinds every member of the group shares (Catalog.uniform_in_group).
    uniform_in: FrozenSet[str] = frozenset()
    keyword: GuardKeyword = GuardKeyword.IF  # the statement the condition belongs to
    # In a called function, the condition tests per-rank data its caller passed in (a batch): the
    # caller is where the ranks part (a function judged on its own keeps none of its callers' data).
    from_caller: bool = False
    # In a called function, the branch decides whether a function its caller passed in runs
    # (`run_on_main(self.save)`: `if is_main(): func()`): the ranks part at that caller's call.
    runs_callers_callable: bool = False
    # The sharded backends under which every rank takes the guard's true arm: an `or` of the
    # rank test and a test of the backend (`is_main_process or distributed_type == DEEPSPEED`).
    all_enter_under: FrozenSet[str] = frozenset()

    def holds(self, arm: bool) -> bool:
        """Whether the written condition is true on the ranks that took `arm`. `assert cond` is
        modelled as `if not cond: raise`, so its arm is the negation."""
        return (not arm) if self.keyword is GuardKeyword.ASSERT else arm

    @property
    def is_loop(self) -> bool:
        return self.keyword in (GuardKeyword.WHILE, GuardKeyword.FOR)


class Node:
    """A node of the collective tree."""

    __slots__ = ()

    def children(self) -> Tuple[Tree, ...]:
        """The lists of nodes this node holds, called code included."""
        return ()

    def own_children(self) -> Tuple[Tree, ...]:
        """The lists of nodes of the function's own code this node holds."""
        return self.children()


# Collective.only_under of a call that communicates whatever backend the job runs.
UNDER_ANY: FrozenSet[str] = frozenset()


@dataclass
class Collective(Node):
    """A collective call."""

    __slots__ = ("op", "group", "site", "note", "members", "fails_together", "only_under")
    op: str  # canonical op name, e.g. "all_reduce"
    group: str  # the group argument as written, "WORLD" for the default group
    site: SiteRef
    note: str  # the catalog's reason, for a framework API
    members: Optional[str]  # what names the group's members, when known
    fails_together: bool  # a failure in it is raised on every rank (CollectiveSpec)
    # The sharded backends the program may run under where alone it communicates
    # (ImplicitSpec.only_under); empty: under every configuration.
    only_under: FrozenSet[str]


@dataclass
class Call(Node):
    """A call of project code that reaches a collective."""

    __slots__ = ("site", "callee", "subtree")
    site: SiteRef
    callee: str  # qualname
    subtree: Tree  # the callee's tree for this call

    def children(self) -> Tuple[Tree, ...]:
        return (self.subtree,)

    def own_children(self) -> Tuple[Tree, ...]:
        return ()


@dataclass
class RaisingCall(Node):
    """A call of project code that issues no collective but raises on some ranks only (a check
    on per-rank data, `if not valid.any(): raise`): kept so the raise is followed to the `except`
    that catches it, whose code then runs on those ranks alone. Not a collective (tree_reaches)."""

    __slots__ = ("site", "callee", "subtree")
    site: SiteRef
    callee: str  # qualname
    subtree: Tree

    def children(self) -> Tuple[Tree, ...]:
        return (self.subtree,)

    def own_children(self) -> Tuple[Tree, ...]:
        return ()


@dataclass
class Branch(Node):
    """A branch some ranks take and others do not."""

    __slots__ = ("formula", "guard", "then", "orelse")
    formula: Formula
    guard: GuardRef
    then: Tree
    orelse: Tree

    def children(self) -> Tuple[Tree, ...]:
        return (self.then, self.orelse)


@dataclass
class UniformBranch(Node):
    """A branch every rank takes alike."""

    __slots__ = ("key", "then", "orelse", "shared")
    key: Tuple  # where it is: (path, line, column)
    then: Tree
    orelse: Tree
    shared: Optional[Formula]  # its condition as a uniform variable (`uvar`), or None

    def children(self) -> Tuple[Tree, ...]:
        return (self.then, self.orelse)


@dataclass
class Loop(Node):
    """A `for` or `while` loop."""

    __slots__ = ("key", "formula", "body", "guard", "uneven", "trips")
    key: Tuple  # where it is: (path, line, column)
    formula: Optional[Formula]  # `while rank == 0:`: the ranks that loop at all
    body: Tree
    guard: Optional[GuardRef]  # with `formula`: its condition
    uneven: Optional[GuardRef]  # the loop's number of rounds can differ per rank: why
    # How many rounds it runs, where its bounds are constants (`for _ in range(9)`, `i = 1` then
    # `while i < 10: ...; i += 1`): two loops of one body with other counts do not pair up.
    trips: Optional[int]

    def children(self) -> Tuple[Tree, ...]:
        return (self.body,)


@dataclass
class Exit(Node):
    """return / continue / break / raise / a process exit."""

    __slots__ = ("kind", "site", "text", "fatal", "raises")
    kind: ExitKind
    site: SiteRef
    text: str
    # The process ends with an error unless something catches it: a raise (an assert that fails
    # is one), or an exit with a non-zero status. Launchers that see a failed rank tear the job
    # down, so uncaught it is a crash, not a hang.
    fatal: bool
    # What it raises, as the names of the exception's class lineage (interp.exceptions): what an
    # `except` must name to catch it; None when not known (`raise err`), () when nothing can.
    raises: Optional[Tuple[str, ...]]


@dataclass
class Yield(Node):
    """A context manager's hand-over point to the body of its `with`."""

    __slots__ = ()


YIELD = Yield()


@dataclass
class WithContext(Node):
    """`with project_cm(...):`, a generator context manager that reaches a collective."""

    __slots__ = ("site", "callee", "manager", "body")
    site: SiteRef
    callee: str  # the context manager's qualname
    manager: Tree  # the context manager's tree; its Yield runs `body`
    body: Tree

    def children(self) -> Tuple[Tree, ...]:
        return (self.manager, self.body)

    def own_children(self) -> Tuple[Tree, ...]:
        return (self.body,)


@dataclass
class Handler:
    """One `except` clause of a Try."""

    __slots__ = ("head", "location", "swallows", "body", "catches")
    head: str  # "except ValueError:"
    location: Location
    swallows: bool  # it neither re-raises nor ends the process: the rank goes on
    body: Tree
    catches: Optional[Tuple[str, ...]]  # the exception classes it names; None: a bare `except:`


@dataclass
class Try(Node):
    __slots__ = ("body", "handlers", "orelse", "final", "collectives_first")
    body: Tree
    handlers: Tuple[Handler, ...]
    orelse: Tree
    final: Tree
    # Up to its last collective the body is nothing but collective calls (`try: dist.barrier()`):
    # what it raises comes from a collective itself or from code after the last one, so a rank
    # that raises has skipped none of them.
    collectives_first: bool

    def children(self) -> Tuple[Tree, ...]:
        return (self.body, *(h.body for h in self.handlers), self.orelse, self.final)


# ------------------------------------------------------------------ walks


def tree_reaches(tree: Tree) -> bool:
    """Whether the tree issues a collective on some path."""
    for node in tree:
        if isinstance(node, (Collective, Call, WithContext)):
            return True
        if any(tree_reaches(part) for part in node.children()):
            return True
    return False


def raising_branch(tree: Tree) -> Optional[List[Node]]:
    """The first branch of the function's own code some ranks take and others do not that
    raises (not inside a `try`), as a tree of its own: what a caller's handler follows."""

    def raises(part: Tree) -> bool:
        return any(
            (isinstance(node, Exit) and node.kind is ExitKind.RAISE) or any(raises(child) for child in node.own_children())
            for node in part
            if not isinstance(node, Try)
        )

    for node in tree:
        if isinstance(node, Branch) and (raises(node.then) or raises(node.orelse)):
            return [node]
        if isinstance(node, Try) and any(raises(h.body) and not caught_only_from_code(h.catches) for h in node.handlers):
            # `except StopIteration: raise DataloaderExhaustedError()`: the runtime raised it on
            # the ranks whose loader ran out, and those ranks raise on.
            return [node]
        if isinstance(node, (Loop, UniformBranch)):
            for child in node.own_children():
                found = raising_branch(child)
                if found is not None:
                    return found
    return None


def own_nodes(tree: Tree) -> Iterator[Node]:
    """Every node of a function's own code (not inside the functions it calls)."""
    for node in tree:
        yield node
        for part in node.own_children():
            yield from own_nodes(part)


def has_rank_decision_at_root(tree: Tree) -> bool:
    """Whether the function's own code (not a callee) branches or loops on the rank, catches
    what a callee raises on some ranks only, enters a block some ranks enter first, or passes
    per-rank data to a callee that branches on it."""
    return any(
        isinstance(node, Branch)
        or (isinstance(node, Loop) and node.formula is not None)
        # an `except` that catches what a callee raises on some ranks only
        or (isinstance(node, Try) and any(isinstance(inner, RaisingCall) for inner in own_nodes(node.body)))
        # a context manager that lets some ranks into the block first (sequences.staggered)
        or (isinstance(node, WithContext) and any(isinstance(inner, Branch) for inner in own_nodes(node.manager)))
        # a callee that runs a function this function passed it on some ranks only
        or (isinstance(node, Call) and runs_passed_callable(node.subtree))
        for node in own_nodes(tree)
    ) or passes_tested_data(tree)


def passes_tested_data(tree: Tree) -> bool:
    """Whether the function's own code passes per-rank data to a callee that branches on it
    (GuardRef.from_caller: the ranks part in the callee)."""
    return any(isinstance(node, Call) and tests_passed_data(node.subtree) for node in own_nodes(tree))


def runs_passed_callable(tree: Tree) -> bool:
    """Whether a callee's own code runs a function its caller passed in under a rank branch
    (GuardRef.runs_callers_callable)."""
    return any(isinstance(node, Branch) and node.guard.runs_callers_callable for node in own_nodes(tree))


def tests_passed_data(tree: Tree) -> bool:
    """Whether a callee's tree (or its callees', with the data passed on) branches on per-rank
    data its caller passed in (GuardRef.from_caller)."""
    for node in own_nodes(tree):
        if isinstance(node, Branch) and node.guard.from_caller:
            return True
        if isinstance(node, Call) and tests_passed_data(node.subtree):
            return True
    return False
