"""One run of a function: the state while its body is interpreted (`Frame`), and what the run
gives (`Result`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from rankcheck.interp.tree import ExitKind, Node, SiteRef
from rankcheck.interp.values import UNIFORM, Taint, Val, join, without_control
from rankcheck.program.ir import CallSite, FunctionSummary, Span


@dataclass(frozen=True)
class ArgHazard:
    """A collective argument every rank must pass alike that differs between ranks (RC104)."""

    site: SiteRef
    op: str
    argument: str  # "shape" for a tensor's shape, else the keyword (`op`, `src`, `dst`, ...)
    text: str  # the argument as written
    taint: Optional[Taint]  # where the difference comes from


@dataclass
class Result:
    tree: List[Node]
    ret: Val
    self_stores: Dict[str, Val] = field(default_factory=dict)
    call_args: List[Tuple[str, Dict[str, Val]]] = field(default_factory=list)
    reaches: bool = False  # the tree issues a collective on some path
    arg_hazards: List[ArgHazard] = field(default_factory=list)
    # Issuing no collective, the function may still raise on some ranks only: the branch that does
    # (its own, or a callee's), for a caller's `try` to follow to its handler (tree.RaisingCall).
    raising: Optional[List[Node]] = None
    # What the run changed in the objects its callers passed: attributes stored by path
    # (`params.mype`), and containers that took items (`out[0] = rank`, `out.append(x)`) by the
    # parameter's name, with what they took. The caller's own variables change the same way.
    param_stores: Dict[str, Val] = field(default_factory=dict)
    # Run for one call (not as a root): what it stored on its receiver, the branch it was set in
    # kept (`if metric > self._best: self._bad_epochs = 0`), for the caller's object to hold.
    receiver_stores: Dict[str, Val] = field(default_factory=dict)
    # The fields of the object it returns as this run left them (`out = TaskOutput(); ...
    # out.sample_metrics[key].append(v); return out`), for the variable the caller assigns it to.
    ret_fields: Dict[str, Val] = field(default_factory=dict)
    # The parameters whose objects it made alike on every rank in place (`def _broadcast(item):
    # dist.broadcast(item, src)`), by the time it returns: the caller's variables are agreed too.
    agreed: FrozenSet[str] = frozenset()
    # Every path raises or ends the process (`def fail(cause) -> NoReturn: raise Error() from
    # cause`): how, and what it raises (None: not known). A call of it ends its caller's path so.
    never_returns: Optional[Tuple[ExitKind, Optional[Tuple[str, ...]]]] = None
    # Derived from the above once, for as long as the result is reused (driver.analysis): what
    # this run, as a root, adds to its callees' bindings, and where its rank classes diverge
    # (with the callee trees it was computed from: `Interpreter.trees_unchanged`).
    binding_contribution: Optional[list] = field(default=None, compare=False, repr=False)
    # (divergences, callee trees read, whether the comparison was too large to make)
    divergences: Optional[Tuple[list, tuple, bool]] = field(default=None, compare=False, repr=False)


class Terminated(Exception):
    """The run cannot go on past this point (unwinds to the function's end)."""


@dataclass
class Frame:
    fn: FunctionSummary
    path: str
    env: Dict[str, Val]
    dead: bool = False
    # The path runs only where the job has no other process (the arm of `if not
    # dist.is_initialized():`, or what follows a distributed arm that returned).
    alone: bool = False
    # The per-rank data the caller passed in (empty for a root): a guard on it parts the caller's
    # ranks (GuardRef.from_caller).
    passed_data: FrozenSet[Taint] = frozenset()
    # Analysed as a root: each parameter holds what any caller passes (Interpreter.run).
    as_root: bool = True
    # The calls (by id of their node) of a function a parameter holds, the caller's callback
    # (`run_on_main(func)` calling `func()`): a branch around one parts the caller's ranks.
    passed_calls: Set[int] = field(default_factory=set)
    ret: Val = UNIFORM
    ret_fields: Dict[str, Val] = field(default_factory=dict)  # Result.ret_fields
    returned: bool = False
    returned_alone: bool = False  # every return so far was on a path without other processes
    self_stores: Dict[str, Val] = field(default_factory=dict)
    # Attributes of `self` assigned under an explicit test of the rank (`if rank == 0:
    # self.already_saved = True`), with that test's taint: set on some ranks only.
    stored_under_rank_tests: Dict[str, FrozenSet[Taint]] = field(default_factory=dict)
    # The explicit rank tests an arm of which returned (`if state.rank != 0: return`): what the
    # function does after them, it does on the other ranks only.
    returned_under_rank_tests: FrozenSet[Taint] = frozenset()
    # An arm of a test of per-rank data returned (`if not torch.isfinite(loss): return None`):
    # where the function gives None on some paths and a value on others, which one a rank gets
    # is decided by such a test (Interpreter.run).
    returned_under_data_test: bool = False
    # Inside this many arms of explicit rank tests (`if rank == 0:`): what runs here runs on some
    # ranks only (a file written here is written by those ranks, interp.files).
    rank_arms: int = 0
    call_args: List[Tuple[str, Dict[str, Val]]] = field(default_factory=list)
    span: Optional[Span] = None  # the statement being interpreted, for evidence
    # The record (Interpreter.is_record) the statement's constructor call built: the call, the
    # class, and what its `__init__` stored on it, for the name it is assigned to.
    # (Or a project function's call, with no class: the fields of the object it returned.)
    built: Optional[Tuple[CallSite, Optional[str], Dict[str, Val]]] = None
    quiet: int = 0  # inside `with model.no_sync():` gradient collectives are off
    join: int = 0  # inside `with Join([...])` / `model.join()` uneven inputs are handled
    arg_hazards: List[ArgHazard] = field(default_factory=list)
    writes: List[str] = field(default_factory=list)  # names assigned so far, in order
    declared_global: Set[str] = field(default_factory=set)  # `global X` in this function
    grown: Set[str] = field(default_factory=set)  # containers grown by one item at a time (`append`)
    # What the rounds of the loops being interpreted depend on, innermost last: how many times a
    # `yield` in them runs (a generator's count).
    rounds: List[Taint] = field(default_factory=list)
    in_try: int = 0  # inside the body of this many `try` statements of the function
    raising: Optional[List[Node]] = None  # a callee's Result.raising, seen outside any `try`
    # The raises and process exits that ended a path, with what each raises (None: not known).
    fatal_exits: List[Tuple[ExitKind, Optional[Tuple[str, ...]]]] = field(default_factory=list)
    # Variables whose objects' attributes are held under their paths (`params.mype`).
    field_roots: Set[str] = field(default_factory=set)
    rebound: Set[str] = field(default_factory=set)  # parameters assigned a new object
    param_stores: Dict[str, Val] = field(default_factory=dict)  # Result.param_stores
    # Names that hold an int constant on every path here (`i, j = 1, 10`): what a loop's count
    # is computed from (Statements._trips). Forgotten once a branch or a loop assigns them.
    numbers: Dict[str, int] = field(default_factory=dict)
    # `objs = [stop if rank == 0 else None]`: the variables a list display was built from, item by
    # item; and after `broadcast_object_list(objs, 0)`, what that left equal to what rank 0 sent:
    # variable -> (the list, the item, the source rank). Statements._adopted reads both.
    packed: Dict[str, Tuple[Optional[str], ...]] = field(default_factory=dict)
    sent: Dict[str, Tuple[str, int, int]] = field(default_factory=dict)
    # `view = state`: names bound to one object, each -> the others. A store through one of them
    # (`view["slot"] = rank`, `view.leader = rank`) is seen through all (Frame.same_object).
    aliases: Dict[str, Set[str]] = field(default_factory=dict)
    # `trainer.should_stop = True` (TypeSpec.stops): the flag's path -> where it was set and what
    # the framework's loop does next on the processes that did not set it (Statements._stops).
    stops: Dict[str, Tuple[SiteRef, str]] = field(default_factory=dict)
    # The classes the `except` clauses being interpreted name, innermost last (None: a bare
    # `except:`): what a bare `raise` in one raises again.
    handling: List[Optional[Tuple[str, ...]]] = field(default_factory=list)

    def alias(self, name: str, other: str) -> None:
        """`name = other`: both now name one object (and whatever `other` already shared)."""
        group = {other} | self.aliases.get(other, set())
        for member in group:
            self.aliases.setdefault(member, set()).add(name)
        self.aliases[name] = group

    def same_object(self, name: str) -> Set[str]:
        """The other names bound to the object `name` is bound to."""
        return self.aliases.get(name, set())

    def store_self(self, attr: str, value: Val) -> None:
        """`self.<attr>` (or `self.state.model`) holds `value` now: what the other methods read back
        (Result.self_stores) is the value's own dependence, not the branch it was set in (object
        state set per configuration would otherwise taint every method)."""
        stored = without_control(value)
        old = self.self_stores.get(attr)
        self.self_stores[attr] = stored if old is None else join(old, stored)
        if self.returned_under_rank_tests:
            self.stored_under_rank_tests[attr] = self.stored_under_rank_tests.get(attr, frozenset()) | self.returned_under_rank_tests
        else:
            # Stored again (`self.already_saved = strategy.broadcast(self.already_saved)`): what
            # an earlier rank test left is overwritten; a rank test around this store marks it
            # again once its branch is merged (Statements).
            self.stored_under_rank_tests.pop(attr, None)

    def store_field(self, path: str, value: Val) -> None:
        """`params.mype = dist.get_rank()`: the attribute of an object held in a variable reads
        back as what was stored, under its path, until the variable is bound again. Stored into
        a parameter's object, it is the caller's object that changed (Result.param_stores)."""
        root = path.split(".", 1)[0]
        rest = path[len(root):]
        for name in (root, *sorted(self.same_object(root))):
            stored = name + rest
            self.env[stored] = value
            self.writes.append(stored)
            self.field_roots.add(name)
            if self.holds_callers_object(name):
                # Past a rank test that returned on the other ranks, the caller's object holds
                # this on these ranks only (`if state.rank != 0: return` ... `state.best = m`).
                given = replace(value, taints=value.taints | self.returned_under_rank_tests, rank=None, pred=None) if self.returned_under_rank_tests - value.taints else value
                old = self.param_stores.get(stored)
                self.param_stores[stored] = given if old is None else join(old, given)

    def fields_of(self, name: str) -> Dict[str, Val]:
        """What calls stored on the object `name` holds (`tracker.best`, Calls._take_receiver_stores),
        as a method of it reads them on `self` (Expressions._attr reads `self.<attr>` from its
        frame first): bindings for a run of that method."""
        return {"self." + attr: value for attr, value in self.fields_held(name).items()}

    def fields_held(self, name: str) -> Dict[str, Val]:
        """The fields stored on the object `name` holds, by attribute (`sample_metrics`)."""
        if name not in self.field_roots:
            return {}
        prefix = name + "."
        return {key[len(prefix):]: value for key, value in self.env.items() if key.startswith(prefix) and "." not in key[len(prefix):]}

    def rebind(self, name: str) -> None:
        """`name` is assigned: the attributes stored through it were another object's."""
        self.numbers.pop(name, None)
        self.packed.pop(name, None)
        for other in self.aliases.pop(name, ()):
            self.aliases.get(other, set()).discard(name)
        self.sent.pop(name, None)
        if self.sent:
            # A list bound again no longer holds what was sent in it.
            for held in [k for k, (buffer, _, _) in self.sent.items() if buffer == name]:
                del self.sent[held]
        if name in self.field_roots:
            prefix = name + "."
            for key in [k for k in self.env if k.startswith(prefix)]:
                del self.env[key]
            self.field_roots.discard(name)
        if name in self.fn.params:
            self.rebound.add(name)

    def holds_callers_object(self, name: str) -> bool:
        """`name` is a parameter still holding what the caller passed (not a method's receiver)."""
        return name in self.fn.caller_params() and name not in self.rebound


# What an arm of a branch knows: (frame key, value before the branch, value in the arm).
Learned = Tuple[Tuple[str, Val, Val], ...]
