"""Flattening: a collective tree as the sequence of events one class of ranks issues.

Events are collectives, loops (their body's events, twice), uniform branches (both arms' events,
for the comparison to unfold when only one class reaches them) and exits (not compared; they say
where a class's sequence was cut).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from rankcheck.ftypes import PER_RANK_DATA, ChainStep, Location
from rankcheck.interp.exceptions import handler_catches
from rankcheck.interp.formulas import (
    Assignment,
    Formula,
    assignment_keys,
    evaluate,
    settled,
)
from rankcheck.interp.tree import (
    Branch,
    Call,
    Collective,
    Exit,
    ExitKind,
    GuardRef,
    Handler,
    Loop,
    RaisingCall,
    SiteRef,
    Tree,
    Try,
    UniformBranch,
    WithContext,
    Yield,
)
from rankcheck.interp.values import Taint, TaintKind
from rankcheck.program.ir import GuardKeyword
from rankcheck.sequences.classes import assignments

MAX_EVENTS = 4000


class EventKind(enum.Enum):
    COLLECTIVE = "c"
    LOOP = "L"
    UNIFORM_BRANCH = "U"
    EXIT = "X"  # not compared


GuardArm = Tuple[GuardRef, bool]  # a rank guard and the arm a class takes


@dataclass(frozen=True)
class Catch:
    """Where a fatal exit is caught: an `except` clause, or a `finally` that communicates."""

    head: str  # "except OSError:", "finally:"
    location: Location


@dataclass
class Event:
    kind: EventKind
    key: Tuple  # what is compared: the op and group of a collective, the keys of a loop's events
    site: Optional[SiteRef]  # root-level call (or the exit) this event is reported at
    guards: Tuple[GuardArm, ...]  # root-level rank guards on the path, with the arm taken
    chain: Tuple[ChainStep, ...] = ()
    op: str = ""
    children: Tuple[List[Event], ...] = ()
    exit_kind: Optional[ExitKind] = None
    group: str = ""  # a collective's group argument as written ("WORLD" for the default group)
    members: Optional[str] = None  # the collective's process group, when known ("ranks", a getter)
    fatal: bool = False  # an exit that ends the process with an error, unless caught (Exit.fatal)
    # A fatal exit the function's own code catches: the `except` that swallows it, or a `finally`
    # that issues collectives on the way out (the rank goes on, or communicates before it dies).
    caught: Optional[Catch] = None
    raises: Optional[Tuple[str, ...]] = None  # a fatal exit's exception lineage (Exit.raises)
    branch: Optional[Tuple] = None  # a uniform branch's place in the code (UniformBranch.key)
    # A collective's sharded backends, where it communicates only under them (Collective.only_under).
    only_under: FrozenSet[str] = frozenset()

    @property
    def dies(self) -> bool:
        """An exit that ends the process with an error its own function does not catch."""
        return self.kind is EventKind.EXIT and self.fatal and self.caught is None


Signal = Optional[ExitKind]  # the exit that ended a list of nodes, if any
Flattened = Tuple[List[Event], Signal, bool]  # events, signal, whether the continuation was consumed
Continuation = Optional[Callable[[], Flattened]]
# A call's subtree flattened: events, signal, events counted, what it raised and where (Flattener._raised_at).
CallFlattened = Tuple[List[Event], Signal, int, Optional[Tuple[str, ...]], Optional[SiteRef]]


class TooLarge(Exception):
    """More than MAX_EVENTS events: the comparison is given up for this tree."""


_UNSEEN = object()  # a key the assignment does not hold; a subtree not yet looked at


def event_keys(events: List[Event]) -> Tuple:
    return tuple(e.key for e in events if e.kind is not EventKind.EXIT)


@dataclass
class Flattener:
    """Turns a tree into the event sequence of one class of ranks.

    `flatten` returns (events, signal, consumed). `signal` is the exit that ended the list
    (return/continue/break/raise/exit) or None; `consumed` says the continuation `cont` (what
    follows the list in the enclosing code) was already appended. Continuations are passed into
    the arm a rank branch takes, and into both arms of a uniform branch when only one of them
    exits, so that an exit nested anywhere inside cuts exactly what follows it on those ranks.
    """

    assignment: Assignment
    count: int = 0
    # Whether an exit nested in a uniform branch's arm under branches of its own takes what
    # follows into each arm (_holds_exit). Exact, and dearer: a long function with many such
    # arms can exceed MAX_EVENTS, and is then flattened without (class_runs).
    nested_exits: bool = True
    _leaves: Dict[int, bool] = field(default_factory=dict)  # loop bodies that can leave (by id)
    _own_exits: Dict[int, bool] = field(default_factory=dict)  # arms that hold an exit of their own (by id)
    # How many guards held where each call being flattened was made: the guards past that many
    # are the callee's own.
    _guards_at_call: List[int] = field(default_factory=list)
    # Shared by the flatteners of one tree (see class_runs), which keeps the nodes alive: the
    # assignment keys each subtree's decisions read (by id; None when it holds a formula the
    # formulas module does not know), and what a call flattens to, by the call node's id, its
    # context (depth, guards, chain, root site) and the values its subtree's decisions read: the
    # events, the signal, and how many events it counted.
    _decisions: Dict[int, Optional[Tuple]] = field(default_factory=dict)
    _calls: Dict[Tuple, CallFlattened] = field(default_factory=dict)
    # What the exit that ended the last list raised (Exit.raises): the `try` it ends in asks which
    # of its handlers catches it. Flattening stops at that exit, so the last exit seen is it.
    _raised: Optional[Tuple[str, ...]] = None
    # Where the raise being propagated was, when it was in a called function (its guard is not in
    # the caller's guards): the `except` that catches it then runs on the ranks that raised.
    _raised_at: Optional[SiteRef] = None
    # The next round of each loop being flattened, innermost last (None where there is none to
    # follow: a loop whose body cannot leave, or the second round itself). A `continue` in one arm
    # of a uniform branch goes on with it, as the other arm goes on with the rest of the body.
    _rounds: List[Optional[Callable[[], Flattened]]] = field(default_factory=list)
    # The arm this class takes at each of the function's own rank branches it reaches (by the
    # guard's place): where two classes part, for the comparison (ClassRun.arms).
    arms: Dict[Any, bool] = field(default_factory=dict)

    def run(self, tree: Tree) -> List[Event]:
        events, _, _ = self.flatten(tree, 0, (), (), None, None, None)
        return events

    def _add(self) -> None:
        self.count += 1
        if self.count > MAX_EVENTS:
            raise TooLarge

    def _after_continue(self, signal: Signal) -> List[Event]:
        """What a `continue` leads to: the next round of its loop, where there is one to follow."""
        if signal is not ExitKind.CONTINUE or not self._rounds or self._rounds[-1] is None:
            return []
        events, _, _ = self._rounds[-1]()
        return events

    def _may_leave(self, tree: Tree) -> bool:
        """Whether a loop body can end its loop or the function, or hand control elsewhere (an
        exit or a yield anywhere below). Without one, a second iteration only repeats the first."""
        known = self._leaves.get(id(tree))
        if known is None:
            known = self._leaves[id(tree)] = any(
                isinstance(node, (Exit, Yield)) or any(self._may_leave(part) for part in node.children()) for node in tree
            )
        return known

    def _holds_exit(self, tree: Tree, in_loop: bool = False) -> bool:
        """Whether this function's own code in `tree` (not its callees') can leave the enclosing
        code: an exit or a yield under any of its branches, a `break`/`continue` only outside a
        loop of its own. An arm that holds one under a branch of its own flattens as going on
        while some ranks leave: what follows must be taken into each arm (the continuation)."""
        if not in_loop:
            known = self._own_exits.get(id(tree))
            if known is not None:
                return known
        found = False
        for node in tree:
            if isinstance(node, Exit):
                found = not (in_loop and node.kind in (ExitKind.BREAK, ExitKind.CONTINUE))
            elif isinstance(node, Yield):
                found = True
            else:
                found = any(self._holds_exit(part, in_loop or isinstance(node, Loop)) for part in node.own_children())
            if found:
                break
        if not in_loop:
            self._own_exits[id(tree)] = found
        return found

    def _decision_keys(self, tree: Tree) -> Optional[Tuple]:
        """The assignment keys the decisions in a tree read (rank branches, loops that run only on
        some ranks, uniform branches settled by a rank condition's value), in a fixed order; None
        when what a formula reads is unknown. A call's subtree flattens alike under every
        assignment that agrees on them."""
        known = self._decisions.get(id(tree), _UNSEEN)
        if known is _UNSEEN:
            known = self._decisions[id(tree)] = self._collect_decision_keys(tree)
        return known  # type: ignore[return-value]

    def _collect_decision_keys(self, tree: Tree) -> Optional[Tuple]:
        keys: Dict[Any, None] = {}  # ordered set
        for node in tree:
            formula: Optional[Formula]
            if isinstance(node, Branch):
                formula = node.formula
            elif isinstance(node, Loop):
                formula = node.formula
            elif isinstance(node, UniformBranch):
                formula = node.shared
            else:
                formula = None
            if formula is not None and not assignment_keys(formula, keys):
                return None
            for part in node.children():
                sub = self._decision_keys(part)
                if sub is None:
                    return None
                keys.update(dict.fromkeys(sub))
        return tuple(keys)

    def _flatten_call(self, node: Union[Call, RaisingCall], depth: int, guards: Tuple[GuardArm, ...], chain: Tuple[ChainStep, ...],
                      root_site: Optional[SiteRef]) -> Tuple[List[Event], Signal]:
        """A call's subtree, flattened. It is flattened once per context and per value of what its
        decisions read, for all classes of ranks: a root is flattened once per class, and its
        callees are most of its tree, most of them deciding nothing on the rank or on few of the
        atoms that make the classes."""
        site, subtree = node.site, node.subtree
        keys = self._decision_keys(subtree)
        key = None
        if keys is not None:
            assignment = self.assignment
            key = (id(node), depth, guards, chain, root_site, tuple(assignment.get(k, _UNSEEN) for k in keys))
        known = self._calls.get(key) if key is not None else None
        if known is not None:
            sub, signal, counted, raised, raised_at = known
            self.count += counted
            if self.count > MAX_EVENTS:
                raise TooLarge
            if signal is not None:
                self._raised, self._raised_at = raised, raised_at
            return sub, signal
        before = self.count
        step = ChainStep(site.location, f"{site.text}()")
        self._guards_at_call.append(len(guards))
        try:
            sub, signal, _ = self.flatten(subtree, depth + 1, guards, chain + (step,), root_site or site, None, None)
        finally:
            self._guards_at_call.pop()
        if key is not None:
            self._calls[key] = (sub, signal, self.count - before, self._raised, self._raised_at)
        return sub, signal

    def _continuation(self, tree: Tree, index: int, depth: int, guards: Tuple[GuardArm, ...], chain: Tuple[ChainStep, ...],
                      root_site: Optional[SiteRef], on_yield: Optional[Callable[[], Tuple[List[Event], Signal]]],
                      cont: Continuation) -> Callable[[], Flattened]:
        def rest() -> Flattened:
            return self.flatten(tree[index + 1 :], depth, guards, chain, root_site, on_yield, cont)

        return rest

    def _next_round(self, body: Tree, depth: int, guards: Tuple[GuardArm, ...], chain: Tuple[ChainStep, ...],
                    root_site: Optional[SiteRef], on_yield: Optional[Callable[[], Tuple[List[Event], Signal]]]) -> Callable[[], Flattened]:
        def again() -> Flattened:
            self._rounds.append(None)
            try:
                events, signal, _ = self.flatten(body, depth, guards, chain, root_site, on_yield, None)
            finally:
                self._rounds.pop()
            return events, signal, False

        return again

    def flatten(self, tree: Tree, depth: int, guards: Tuple[GuardArm, ...], chain: Tuple[ChainStep, ...],
                root_site: Optional[SiteRef], on_yield: Optional[Callable[[], Tuple[List[Event], Signal]]],
                cont: Continuation) -> Flattened:
        events: List[Event] = []
        for index, node in enumerate(tree):
            signal: Signal = None
            if isinstance(node, Collective):
                site = node.site
                self._add()
                step = (ChainStep(site.location, site.text, node.note),) if site is not None else ()
                events.append(Event(EventKind.COLLECTIVE, ("c", node.op, node.group), root_site or site, guards, chain + step,
                                    op=node.op, group=node.group, members=node.members, only_under=node.only_under))
            elif isinstance(node, (Call, RaisingCall)):
                sub, sub_signal = self._flatten_call(node, depth, guards, chain, root_site)
                events.extend(sub)
                if sub_signal in (ExitKind.RAISE, ExitKind.EXIT):
                    signal = sub_signal
            elif isinstance(node, Branch):
                arm = evaluate(node.formula, self.assignment)
                if depth == 0:
                    self.arms.setdefault(node.guard.location, arm)
                # A rank test inside a called function is judged where that function is a root; a
                # test there of per-rank data this caller passed in parts the ranks only here (a
                # root keeps none of its callers' data: interp.rounds).
                # A callee's branch parts the root's ranks when it tests the data the root passed
                # down, or decides whether a function the root passed it runs.
                parts = depth == 0 or node.guard.from_caller or (depth == 1 and node.guard.runs_callers_callable)
                new_guards = guards + ((node.guard, arm),) if parts else guards
                rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                sub, signal, consumed = self.flatten(node.then if arm else node.orelse, depth, new_guards, chain, root_site, on_yield, rest)
                events.extend(sub)
                return events, signal, consumed or signal is None
            elif isinstance(node, UniformBranch) and node.shared is not None and settled(node.shared, self.assignment):
                # The same uniform value a rank-dependent condition named: take its arm.
                arm = evaluate(node.shared, self.assignment)
                rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                sub, signal, consumed = self.flatten(node.then if arm else node.orelse, depth, guards, chain, root_site, on_yield, rest)
                events.extend(sub)
                return events, signal, consumed or signal is None
            elif isinstance(node, UniformBranch):
                a, sig_a, _ = self.flatten(node.then, depth, guards, chain, root_site, on_yield, None)
                b, sig_b, _ = self.flatten(node.orelse, depth, guards, chain, root_site, on_yield, None)
                nested_exit = self.nested_exits and sig_a is None and sig_b is None and (self._holds_exit(node.then) or self._holds_exit(node.orelse))
                if sig_a is None and sig_b is None and not nested_exit:
                    if event_keys(a) == event_keys(b):
                        events.extend(a)  # either way the same collectives: no need to tell them apart
                    else:
                        self._add()
                        events.append(Event(EventKind.UNIFORM_BRANCH, ("U", event_keys(a), event_keys(b)), None, guards, children=(a, b), branch=node.key))
                elif sig_a == sig_b and not nested_exit:
                    self._add()
                    events.append(Event(EventKind.UNIFORM_BRANCH, ("U", event_keys(a), event_keys(b)), None, guards, children=(a, b), branch=node.key))
                    signal = sig_a
                else:
                    # One arm leaves and the other goes on: what follows belongs to the other only.
                    rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                    a, sig_a, _ = self.flatten(node.then, depth, guards, chain, root_site, on_yield, rest)
                    b, sig_b, _ = self.flatten(node.orelse, depth, guards, chain, root_site, on_yield, rest)
                    a, b = a + self._after_continue(sig_a), b + self._after_continue(sig_b)
                    self._add()
                    events.append(Event(EventKind.UNIFORM_BRANCH, ("U", event_keys(a), event_keys(b)), None, guards, children=(a, b), branch=node.key))
                    return events, None, True
            elif isinstance(node, Loop):
                if node.formula is not None:
                    if not evaluate(node.formula, self.assignment):
                        continue
                    loop_guards = guards + ((node.guard, True),) if depth == 0 and node.guard is not None else guards
                else:
                    loop_guards = guards
                # Two iterations: enough to see an exit that ends the loop on some ranks while
                # the others go round again into the collectives of the next iteration. Where the
                # body can leave, the second round is what follows the first: an exit under a
                # uniform branch (`if args.eval: ... if local_loss < target: return`) cuts it for
                # the ranks that take it, and the others go round again.
                next_round = self._next_round(node.body, depth, loop_guards, chain, root_site, on_yield) if self._may_leave(node.body) else None
                self._rounds.append(next_round)
                try:
                    sub, sig, consumed = self.flatten(node.body, depth, loop_guards, chain, root_site, on_yield, next_round)
                finally:
                    self._rounds.pop()
                if not consumed and sig in (None, ExitKind.CONTINUE):
                    if self._may_leave(node.body):
                        again, sig, _ = self.flatten(node.body, depth, loop_guards, chain, root_site, on_yield, None)
                    else:
                        # Nothing below can end the loop: the second iteration is the first again,
                        # event for event. Reused, not re-flattened, or nested loops would double
                        # the work per level; still two, so it compares alike with loops that can.
                        again = sub
                    sub = sub + again
                self._add()
                events.append(Event(EventKind.LOOP, ("L", event_keys(sub), node.trips), None, loop_guards, children=(sub,)))
                if sig in (ExitKind.RETURN, ExitKind.RAISE, ExitKind.EXIT):
                    signal = sig
                    left = _last_exit(sub) if depth == 0 else None
                    if left is not None:
                        # These ranks left the function from inside the loop: what the others
                        # issue after it is skipped by that exit, which the comparison looks
                        # for among the events its sequence ends with.
                        events.append(left)
            elif isinstance(node, Exit):
                # A callee's exit is the caller's business only where it parts the caller's ranks:
                # under a test of per-rank data the caller passed in (GuardRef.from_caller).
                own_guard = bool(self._guards_at_call) and len(guards) > self._guards_at_call[-1]
                if depth == 0 or (own_guard and guards[-1][0].from_caller and node.kind is not ExitKind.RAISE):
                    # (A callee's exit keeps the calls down to it: what it skips is what follows there.)
                    events.append(
                        Event(EventKind.EXIT, ("X",), node.site, guards, chain=chain, exit_kind=node.kind, fatal=node.fatal, raises=node.raises)
                    )
                signal = node.kind
                self._raised = node.raises
                self._raised_at = node.site if depth > 0 else None
            elif isinstance(node, Yield):
                if on_yield is not None:
                    sub, _sig = on_yield()
                    events.extend(sub)
            elif isinstance(node, WithContext):
                step_in = ChainStep(node.site.location, f"{node.site.text}()")
                body_signal: List[Signal] = [None]

                def run_body(body: Tree = node.body, body_signal: List[Signal] = body_signal) -> Tuple[List[Event], Signal]:
                    sub, sig, _ = self.flatten(body, depth, guards, chain, root_site, on_yield, None)
                    body_signal[0] = sig
                    return sub, sig

                self._guards_at_call.append(len(guards))
                try:
                    sub, _, _ = self.flatten(node.manager, depth + 1, guards, chain + (step_in,), root_site or node.site, run_body, None)
                finally:
                    self._guards_at_call.pop()
                events.extend(sub)
                signal = body_signal[0]
            elif isinstance(node, Try):
                body, sig, _ = self.flatten(node.body, depth, guards, chain, root_site, on_yield, None)
                events.extend(body)
                raised = sig is ExitKind.RAISE or sig is ExitKind.EXIT  # sys.exit() raises SystemExit
                if raised:
                    # The first handler that names what was raised runs; with none, it propagates.
                    raises, raised_at = self._raised, self._raised_at
                    handler = next((h for h in node.handlers if handler_catches(h.catches, raises)), None)
                    if handler is not None:
                        handler_guards = guards
                        if raised_at is not None and depth == 0:
                            # Raised in a called function on these ranks: the handler is where
                            # they part from the others (what it skips, where it leaves).
                            raiser = Taint(TaintKind.DATA, raised_at.text, raised_at.location)
                            caught = GuardRef(handler.location, handler.head, raised_at.text, raiser, kind=PER_RANK_DATA, keyword=GuardKeyword.EXCEPT)
                            handler_guards = guards + ((caught, True),)
                        sub, sig, _ = self.flatten(handler.body, depth, handler_guards, chain, root_site, on_yield, None)
                        events.extend(sub)
                if sig is None:
                    sub, sig, _ = self.flatten(node.orelse, depth, guards, chain, root_site, on_yield, None)
                    events.extend(sub)
                final, fsig, _ = self.flatten(node.final, depth, guards, chain, root_site, on_yield, None)
                events.extend(final)
                if raised:
                    issued = [c for e in final for c in collective_events(e) if c.site is not None]
                    last_resort = Catch("finally:", issued[0].site.location) if issued else None  # type: ignore[union-attr]
                    _mark_caught(body, node.handlers, last_resort)
                signal = fsig or sig
            if signal is not None:
                return events, signal, False
        if cont is not None:
            tail, signal, _ = cont()
            events.extend(tail)
            return events, signal, True
        return events, None, False


def _last_exit(events: List[Event]) -> Optional[Event]:
    """The last exit among `events`, at any depth of loops and uniform branches."""
    for event in reversed(events):
        if event.kind is EventKind.EXIT:
            return event
        for child in reversed(event.children):
            found = _last_exit(child)
            if found is not None:
                return found
    return None


def _mark_caught(events: List[Event], handlers: Sequence[Handler], last_resort: Optional[Catch]) -> None:
    """The fatal exits among `events` (at any depth of loops and uniform branches) that one of the
    `try`'s handlers catches and swallows are caught there; a `finally` that communicates on the
    way out (`last_resort`) catches the rest."""
    stack = list(events)
    while stack:
        event = stack.pop()
        if event.dies:
            handler = next((h for h in handlers if handler_catches(h.catches, event.raises)), None)
            if handler is not None and handler.swallows:
                event.caught = Catch(handler.head, handler.location)
            elif last_resort is not None:
                event.caught = last_resort
        for child in event.children:
            stack.extend(child)


def first_collective(tree: Tree, passing: FrozenSet[str] = frozenset()) -> Optional[Event]:
    """The first collective some class of ranks issues (for a witness chain), of an op not in
    `passing`."""
    for assignment in assignments(tree):
        try:
            events = _flattened_either_way(assignment, tree)
        except TooLarge:
            return None
        stack = list(events)
        while stack:
            event = stack.pop(0)
            if event.kind is EventKind.COLLECTIVE and event.op not in passing:
                return event
            stack[:0] = [e for child in event.children for e in child]
    return None


def _flattened_either_way(assignment: Assignment, tree: Tree) -> List[Event]:
    """One class's events, with nested exits followed where that stays within MAX_EVENTS."""
    try:
        return Flattener(assignment).run(tree)
    except TooLarge:
        return Flattener(assignment, nested_exits=False).run(tree)


@dataclass
class ClassRun:
    assignment: Assignment
    events: List[Event] = field(default_factory=list)
    # The arm the class takes at each rank branch of the function it reaches (by the guard's place).
    arms: Dict[Any, bool] = field(default_factory=dict)


def class_runs(tree: Tree) -> Optional[List[ClassRun]]:
    """Each class of ranks with the events it issues; None when a class issues too many, even
    with exits nested in uniform branches flattened the cheaper way (Flattener.nested_exits)."""
    for nested_exits in (True, False):
        runs = []
        decisions: Dict[int, Optional[Tuple]] = {}
        calls: Dict[Tuple, CallFlattened] = {}
        try:
            for assignment in assignments(tree):
                flattener = Flattener(assignment, nested_exits=nested_exits, _decisions=decisions, _calls=calls)
                events = flattener.run(tree)
                runs.append(ClassRun(assignment, events, flattener.arms))
        except TooLarge:
            continue
        return runs
    return None


def collective_events(event: Event) -> List[Event]:
    """The collectives an event stands for (itself, or those inside a loop or uniform branch)."""
    out: List[Event] = []
    stack = [event]
    while stack:
        current = stack.pop()
        if current.kind is EventKind.COLLECTIVE:
            out.append(current)
        for child in reversed(current.children):
            stack.extend(reversed(child))
    return out
