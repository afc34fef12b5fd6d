"""One run of a function: the state while its body is interpreted (`Frame`), and what the run
gives (`Result`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from rankcheck.interp.tree import Node, SiteRef
from rankcheck.interp.values import UNIFORM, Taint, Val
from rankcheck.program.ir import FunctionSummary, Span


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
    # Derived from the above once, for as long as the result is reused (driver.analysis): what
    # this run, as a root, adds to its callees' bindings, and where its rank classes diverge
    # (with the callee trees it was computed from: `Interpreter.trees_unchanged`).
    binding_contribution: Optional[list] = field(default=None, compare=False, repr=False)
    divergences: Optional[Tuple[list, tuple]] = field(default=None, compare=False, repr=False)


class Terminated(Exception):
    """The run cannot go on past this point (unwinds to the function's end)."""


@dataclass
class Frame:
    fn: FunctionSummary
    path: str
    env: Dict[str, Val]
    dead: bool = False
    ret: Val = UNIFORM
    returned: bool = False
    self_stores: Dict[str, Val] = field(default_factory=dict)
    call_args: List[Tuple[str, Dict[str, Val]]] = field(default_factory=list)
    span: Optional[Span] = None  # the statement being interpreted, for evidence
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


# What an arm of a branch knows: (frame key, value before the branch, value in the arm).
Learned = Tuple[Tuple[str, Val, Val], ...]
