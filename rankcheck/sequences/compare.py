"""Do all ranks issue the same collectives? Compare sequences per class of ranks.

A function's collective tree (from `interp`) has rank-dependent branches whose conditions are
formulas over rank comparisons (`global_rank == 0`) and opaque rank-dependent tests. The classes
of ranks those guards distinguish are enumerated (rank 0 vs the rest, ...), the tree is flattened
into the sequence of collectives each class issues, and the sequences are compared. Equal
sequences are safe, whatever the branches look like (both arms alike, the complementary "rank 0
first" barriers). Where they differ, the diff names the events one class has and another lacks, and
each is traced to its cause: a guard around it (RC101) or an exit the other class took (RC102).
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from rankcheck.ftypes import ChainStep
from rankcheck.interp.interpreter import Formula, GuardRef, SiteRef

MAX_CLASSES = 64
MAX_EVENTS = 4000

Assignment = Dict[Any, Any]  # rank kind -> representative value; ("var", key) -> bool


@dataclass
class Event:
    kind: str  # "c" collective, "L" loop, "U" uniform branch, "X" exit (not compared)
    key: Tuple
    site: Optional[SiteRef]  # root-level call (or the exit) this event is reported at
    guards: Tuple[Tuple[GuardRef, bool], ...]  # root-level rank guards on the path, with the arm taken
    chain: Tuple[ChainStep, ...] = ()
    op: str = ""
    children: Tuple[List["Event"], ...] = ()
    exit_kind: str = ""
    members: Optional[str] = None  # the collective's process group, when known ("ranks", a getter)


@dataclass(frozen=True)
class Divergence:
    """One cause of a mismatch between two classes of ranks."""

    cause: str  # "guard" (RC101), "exit" (RC102/RC103), "mismatch" (RC106)
    event: Event  # the collective event one class issues and the other does not
    guard: GuardRef
    arm: bool  # the truth value of the guard on the ranks that issue the event / take the exit
    exit_event: Optional[Event] = None
    other_event: Optional[Event] = None  # mismatch: what the other ranks issue instead


# --------------------------------------------------------------------------------- formulas


def _atoms(formula: Formula, kinds: Dict[str, set], variables: set) -> None:
    tag = formula[0]
    if tag == "cmp":
        _, kind, op, const = formula
        values = kinds.setdefault(kind, set())
        consts = const if isinstance(const, tuple) else (const,)
        for c in consts:
            if isinstance(c, int) and c >= 0:
                values.add(c)
                if op in ("<", "<=", ">", ">="):
                    values.add(c + 1)
                    if c > 0:
                        values.add(c - 1)
    elif tag == "var":
        variables.add(formula[1])
    elif tag == "member":
        variables.add(("member", formula[1]))
    elif tag == "uvar":
        variables.add(("uvar", formula[1]))
    elif tag == "not":
        _atoms(formula[1], kinds, variables)
    elif tag in ("and", "or"):
        for f in formula[1]:
            _atoms(f, kinds, variables)


def evaluate(formula: Formula, assignment: Assignment) -> bool:
    tag = formula[0]
    if tag == "const":
        return bool(formula[1])
    if tag == "cmp":
        _, kind, op, const = formula
        value = assignment.get(kind, 0)
        if op == "==":
            return value == const
        if op == "!=":
            return value != const
        if op == "<":
            return value < const
        if op == "<=":
            return value <= const
        if op == ">":
            return value > const
        if op == ">=":
            return value >= const
        if op == "in":
            return value in const
        if op == "not in":
            return value not in const
        if op == "is":
            return value == const
        if op == "is not":
            return value != const
        return False
    if tag == "var":
        return bool(assignment.get(("var", formula[1]), False))
    if tag == "member":
        return bool(assignment.get(("var", ("member", formula[1])), False))
    if tag == "uvar":
        return bool(assignment.get(("uvar", formula[1]), True))
    if tag == "not":
        return not evaluate(formula[1], assignment)
    if tag == "and":
        return all(evaluate(f, assignment) for f in formula[1])
    if tag == "or":
        return any(evaluate(f, assignment) for f in formula[1])
    return False


def _tree_atoms(tree: List[tuple], kinds: Dict[str, set], variables: set) -> bool:
    """Collects atoms; returns whether the tree has any rank-dependent decision at all."""
    found = False
    for node in tree:
        tag = node[0]
        if tag == "branch":
            found = True
            _atoms(node[1], kinds, variables)
            found |= _tree_atoms(node[3], kinds, variables)
            found |= _tree_atoms(node[4], kinds, variables)
        elif tag == "ubranch":
            found |= _tree_atoms(node[2], kinds, variables)
            found |= _tree_atoms(node[3], kinds, variables)
        elif tag == "loop":
            if node[2] is not None:
                found = True
                _atoms(node[2], kinds, variables)
            found |= _tree_atoms(node[3], kinds, variables)
        elif tag == "call":
            found |= _tree_atoms(node[3], kinds, variables)
        elif tag == "with_cm":
            found |= _tree_atoms(node[3], kinds, variables)
            found |= _tree_atoms(node[4], kinds, variables)
        elif tag == "try":
            for part in (node[1], *node[2], node[3], node[4]):
                found |= _tree_atoms(part, kinds, variables)
    return found


def has_rank_decision_at_root(tree: List[tuple]) -> bool:
    """Whether the function's own code (not a callee) branches or exits on the rank."""
    for node in tree:
        tag = node[0]
        if tag in ("branch",):
            return True
        if tag == "loop" and (node[2] is not None or has_rank_decision_at_root(node[3])):
            return True
        if tag == "ubranch" and (has_rank_decision_at_root(node[2]) or has_rank_decision_at_root(node[3])):
            return True
        if tag == "with_cm" and has_rank_decision_at_root(node[4]):
            return True
        if tag == "try" and any(has_rank_decision_at_root(p) for p in (node[1], *node[2], node[3], node[4])):
            return True
    return False


def assignments(tree: List[tuple]) -> List[Assignment]:
    kinds: Dict[str, set] = {}
    variables: set = set()
    _tree_atoms(tree, kinds, variables)
    axes: List[List[Tuple[Any, Any]]] = []
    # Shared uniform variables first (slowest-varying): every class of ranks is enumerated under
    # each of their settings, and classes are only compared under the same setting.
    for var in sorted((v for v in variables if v[0] == "uvar"), key=repr):
        axes.append([(var, True), (var, False)])
    for kind, values in sorted(kinds.items()):
        values = set(values) | {0}
        values.add(max(values) + 1)  # a rank no constant names ("the others")
        axes.append([(kind, v) for v in sorted(values)])
    for var in sorted((v for v in variables if v[0] != "uvar"), key=repr):
        axes.append([(("var", var), False), (("var", var), True)])
    out: List[Assignment] = []
    for combo in itertools.product(*axes):
        out.append(dict(combo))
        if len(out) >= MAX_CLASSES:
            break
    return out or [{}]


# --------------------------------------------------------------------------------- flattening


class _TooLarge(Exception):
    pass


@dataclass
class _Flattener:
    """Turns a tree into the event sequence of one class of ranks.

    `flatten` returns (events, signal, consumed). `signal` is the exit that ended the list
    (return/continue/break/raise/exit) or None; `consumed` says the continuation `cont` (what
    follows the list in the enclosing code) was already appended. Continuations are passed into
    the arm a rank branch takes, and into both arms of a uniform branch when only one of them
    exits, so that an exit nested anywhere inside cuts exactly what follows it on those ranks.
    """

    assignment: Assignment
    count: int = 0
    _leaves: Dict[int, bool] = field(default_factory=dict)  # loop bodies that can leave (by id)
    # Shared by the flatteners of one tree (see class_runs), which keeps the nodes alive: the
    # assignment keys each subtree's decisions read (by id; None when it holds a node this module
    # does not know), and what a call flattens to, by the call node's id, its context (depth,
    # guards, chain, root site) and the values its subtree's decisions read: the events, the
    # signal, and how many events it counted.
    _decisions: Dict[int, Optional[Tuple]] = field(default_factory=dict)
    _calls: Dict[Tuple, Tuple[List[Event], Optional[str], int]] = field(default_factory=dict)

    def run(self, tree: List[tuple]) -> List[Event]:
        events, _, _ = self.flatten(tree, 0, (), (), None, None, None)
        return events

    def _add(self) -> None:
        self.count += 1
        if self.count > MAX_EVENTS:
            raise _TooLarge

    def _may_leave(self, tree) -> bool:
        """Whether a loop body can end its loop or the function, or hand control elsewhere (an
        exit or a yield anywhere below). Without one, a second iteration only repeats the first."""
        known = self._leaves.get(id(tree))
        if known is None:
            known = self._leaves[id(tree)] = any(
                node[0] in ("exit", "yield")
                or (parts := _subtrees(node)) is None  # a node this check does not know: assume it can
                or any(self._may_leave(part) for part in parts)
                for node in tree
            )
        return known

    def _decision_keys(self, tree) -> Optional[Tuple]:
        """The assignment keys the decisions in a tree read (rank branches, loops that run only on
        some ranks, uniform branches settled by a rank condition's value), in a fixed order; None
        when the tree holds a node this module does not know. A call's subtree flattens alike under
        every assignment that agrees on them."""
        known = self._decisions.get(id(tree), _UNSEEN)
        if known is _UNSEEN:
            known = self._decisions[id(tree)] = self._collect_decision_keys(tree)
        return known  # type: ignore[return-value]

    def _collect_decision_keys(self, tree) -> Optional[Tuple]:
        keys: Dict[Any, None] = {}  # ordered set
        for node in tree:
            tag = node[0]
            formula = node[1] if tag == "branch" else node[2] if tag == "loop" else node[4] if tag == "ubranch" else None
            if formula is not None and not _formula_keys(formula, keys):
                return None
            parts = _subtrees(node)
            if parts is None:
                return None
            for part in parts:
                sub = self._decision_keys(part)
                if sub is None:
                    return None
                keys.update(dict.fromkeys(sub))
        return tuple(keys)

    def _flatten_call(self, node, depth, guards, chain, root_site):
        """A call's subtree, flattened. It is flattened once per context and per value of what its
        decisions read, for all classes of ranks: a root is flattened once per class, and its
        callees are most of its tree, most of them deciding nothing on the rank or on few of the
        atoms that make the classes."""
        _, site, _qual, subtree = node
        keys = self._decision_keys(subtree)
        key = None
        if keys is not None:
            assignment = self.assignment
            key = (id(node), depth, guards, chain, root_site, tuple(assignment.get(k, _UNSEEN) for k in keys))
        known = self._calls.get(key) if key is not None else None
        if known is not None:
            sub, signal, counted = known
            self.count += counted
            if self.count > MAX_EVENTS:
                raise _TooLarge
            return sub, signal
        before = self.count
        step = ChainStep(site.location, f"{site.text}()")
        sub, signal, _ = self.flatten(subtree, depth + 1, guards, chain + (step,), root_site or site, None, None)
        if key is not None:
            self._calls[key] = (sub, signal, self.count - before)
        return sub, signal

    def _continuation(self, tree, index, depth, guards, chain, root_site, on_yield, cont):
        def rest():
            return self.flatten(tree[index + 1 :], depth, guards, chain, root_site, on_yield, cont)

        return rest

    def flatten(self, tree, depth, guards, chain, root_site, on_yield, cont):
        events: List[Event] = []
        for index, node in enumerate(tree):
            tag = node[0]
            signal: Optional[str] = None
            if tag == "coll":
                _, op, group, site, note, members = node
                self._add()
                step = (ChainStep(site.location, site.text, note),) if site is not None else ()
                events.append(Event("c", ("c", op, group), root_site or site, guards, chain + step, op=op, members=members))
            elif tag == "call":
                sub, sub_signal = self._flatten_call(node, depth, guards, chain, root_site)
                events.extend(sub)
                if sub_signal in ("raise", "exit"):
                    signal = sub_signal
            elif tag == "branch":
                _, formula, guard, then_tree, else_tree = node
                arm = evaluate(formula, self.assignment)
                new_guards = guards + ((guard, arm),) if depth == 0 else guards
                rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                sub, signal, consumed = self.flatten(then_tree if arm else else_tree, depth, new_guards, chain, root_site, on_yield, rest)
                events.extend(sub)
                return events, signal, consumed or signal is None
            elif tag == "ubranch" and node[4] is not None and _settled(node[4], self.assignment):
                # The same uniform value a rank-dependent condition named: take its arm.
                arm = evaluate(node[4], self.assignment)
                rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                sub, signal, consumed = self.flatten(node[2] if arm else node[3], depth, guards, chain, root_site, on_yield, rest)
                events.extend(sub)
                return events, signal, consumed or signal is None
            elif tag == "ubranch":
                _, key, then_tree, else_tree, _shared = node
                a, sig_a, _ = self.flatten(then_tree, depth, guards, chain, root_site, on_yield, None)
                b, sig_b, _ = self.flatten(else_tree, depth, guards, chain, root_site, on_yield, None)
                if sig_a is None and sig_b is None:
                    if _keys(a) == _keys(b):
                        events.extend(a)  # either way the same collectives: no need to tell them apart
                    else:
                        self._add()
                        events.append(Event("U", ("U", _keys(a), _keys(b)), None, guards, children=(a, b)))
                elif sig_a == sig_b:
                    self._add()
                    events.append(Event("U", ("U", _keys(a), _keys(b)), None, guards, children=(a, b)))
                    signal = sig_a
                else:
                    # One arm leaves and the other goes on: what follows belongs to the other only.
                    rest = self._continuation(tree, index, depth, guards, chain, root_site, on_yield, cont)
                    a, sig_a, _ = self.flatten(then_tree, depth, guards, chain, root_site, on_yield, rest)
                    b, sig_b, _ = self.flatten(else_tree, depth, guards, chain, root_site, on_yield, rest)
                    self._add()
                    events.append(Event("U", ("U", _keys(a), _keys(b)), None, guards, children=(a, b)))
                    return events, None, True
            elif tag == "loop":
                _, key, formula, body, guard, _uneven = node
                if formula is not None:
                    if not evaluate(formula, self.assignment):
                        continue
                    loop_guards = guards + ((guard, True),) if depth == 0 and guard is not None else guards
                else:
                    loop_guards = guards
                # Two iterations: enough to see an exit that ends the loop on some ranks while
                # the others go round again into the collectives of the next iteration.
                sub, sig, _ = self.flatten(body, depth, loop_guards, chain, root_site, on_yield, None)
                if sig in (None, "continue"):
                    if self._may_leave(body):
                        again, sig, _ = self.flatten(body, depth, loop_guards, chain, root_site, on_yield, None)
                    else:
                        # Nothing below can end the loop: the second iteration is the first again,
                        # event for event. Reused, not re-flattened, or nested loops would double
                        # the work per level; still two, so it compares alike with loops that can.
                        again = sub
                    sub = sub + again
                self._add()
                events.append(Event("L", ("L", _keys(sub)), None, loop_guards, children=(sub,)))
                if sig in ("return", "raise", "exit"):
                    signal = sig
            elif tag == "exit":
                _, kind, site, _text = node
                if depth == 0:
                    events.append(Event("X", ("X",), site, guards, exit_kind=kind))
                signal = kind
            elif tag == "yield":
                if on_yield is not None:
                    sub, _sig = on_yield()
                    events.extend(sub)
            elif tag == "with_cm":
                _, site, _qual, cm_tree, body = node
                step = ChainStep(site.location, f"{site.text}()")
                body_signal: List[Optional[str]] = [None]

                def run_body(body=body, body_signal=body_signal):
                    sub, sig, _ = self.flatten(body, depth, guards, chain, root_site, on_yield, None)
                    body_signal[0] = sig
                    return sub, sig

                sub, _, _ = self.flatten(cm_tree, depth + 1, guards, chain + (step,), root_site or site, run_body, None)
                events.extend(sub)
                signal = body_signal[0]
            elif tag == "try":
                _, body, handlers, orelse, final, _info = node
                sub, sig, _ = self.flatten(body, depth, guards, chain, root_site, on_yield, None)
                events.extend(sub)
                if sig == "raise" and handlers:
                    sub, sig, _ = self.flatten(handlers[0], depth, guards, chain, root_site, on_yield, None)
                    events.extend(sub)
                if sig is None:
                    sub, sig, _ = self.flatten(orelse, depth, guards, chain, root_site, on_yield, None)
                    events.extend(sub)
                sub, fsig, _ = self.flatten(final, depth, guards, chain, root_site, on_yield, None)
                events.extend(sub)
                signal = fsig or sig
            if signal is not None:
                return events, signal, False
        if cont is not None:
            tail, signal, _ = cont()
            events.extend(tail)
            return events, signal, True
        return events, None, False


def _subtrees(node: tuple) -> Optional[Tuple[List[tuple], ...]]:
    """The lists of nodes a tree node holds, called code included; None for a node not known."""
    tag = node[0]
    if tag in ("call", "loop"):
        return (node[3],)
    if tag in ("branch", "with_cm"):
        return (node[3], node[4])
    if tag == "ubranch":
        return (node[2], node[3])
    if tag == "try":
        return (node[1], *node[2], node[3], node[4])
    if tag in ("coll", "exit", "yield"):
        return ()
    return None


_UNSEEN = object()  # a key the assignment does not hold; a subtree not yet looked at


def _formula_keys(formula: Formula, keys: Dict[Any, None]) -> bool:
    """Adds the assignment keys `evaluate` and `_settled` read for this formula; False for a
    formula this function does not know (what it reads is then unknown)."""
    tag = formula[0]
    if tag == "const":
        return True
    if tag == "cmp":
        keys[formula[1]] = None
    elif tag == "var":
        keys[("var", formula[1])] = None
    elif tag == "member":
        keys[("var", ("member", formula[1]))] = None
    elif tag == "uvar":
        keys[("uvar", formula[1])] = None
    elif tag == "not":
        return _formula_keys(formula[1], keys)
    elif tag in ("and", "or"):
        return all(_formula_keys(f, keys) for f in formula[1])
    else:
        return False
    return True


def _settled(formula: Formula, assignment: Assignment) -> bool:
    if formula[0] == "uvar":
        return ("uvar", formula[1]) in assignment
    if formula[0] == "not":
        return _settled(formula[1], assignment)
    return False


def _keys(events: List[Event]) -> Tuple:
    return tuple(e.key for e in events if e.kind != "X")


def own_nodes(tree: List[tuple]) -> Iterator[tuple]:
    """Every node of a function's own code (not inside the functions it calls)."""
    for node in tree:
        yield node
        tag = node[0]
        if tag == "branch":
            yield from own_nodes(node[3])
            yield from own_nodes(node[4])
        elif tag == "ubranch":
            yield from own_nodes(node[2])
            yield from own_nodes(node[3])
        elif tag == "loop":
            yield from own_nodes(node[3])
        elif tag == "with_cm":
            yield from own_nodes(node[4])
        elif tag == "try":
            for part in (node[1], *node[2], node[3], node[4]):
                yield from own_nodes(part)


def first_collective(tree: List[tuple]) -> Optional[Event]:
    """The first collective some class of ranks issues (for a witness chain)."""
    for assignment in assignments(tree):
        try:
            events = _Flattener(assignment).run(tree)
        except _TooLarge:
            return None
        stack = list(events)
        while stack:
            event = stack.pop(0)
            if event.kind == "c":
                return event
            stack[:0] = [e for child in event.children for e in child]
    return None


# --------------------------------------------------------------------------------- comparing


@dataclass
class ClassRun:
    assignment: Assignment
    events: List[Event] = field(default_factory=list)


def class_runs(tree: List[tuple]) -> Optional[List[ClassRun]]:
    runs = []
    decisions: Dict[int, Optional[Tuple]] = {}
    calls: Dict[Tuple, Tuple[List[Event], Optional[str], int]] = {}
    for assignment in assignments(tree):
        try:
            events = _Flattener(assignment, _decisions=decisions, _calls=calls).run(tree)
        except _TooLarge:
            return None
        runs.append(ClassRun(assignment, events))
    return runs


def divergences(tree: List[tuple]) -> Iterator[Divergence]:
    runs = class_runs(tree)
    if not runs:
        return
    scenarios: Dict[Tuple, List[ClassRun]] = {}
    for run in runs:
        setting = tuple(sorted((k, v) for k, v in run.assignment.items() if isinstance(k, tuple) and k[0] == "uvar"))
        scenarios.setdefault(setting, []).append(run)
    for group in scenarios.values():
        yield from _compare_classes(group)


def _compare_classes(runs: List[ClassRun]) -> Iterator[Divergence]:
    distinct: Dict[Tuple, ClassRun] = {}
    for run in runs:
        distinct.setdefault(_keys(run.events), run)
    if len(distinct) < 2:
        return
    reps = list(distinct.values())
    # Every other class against the first: each difference shows up against it, and the number of
    # comparisons stays linear in the number of classes.
    reference = reps[0]
    under = _collectives_by_guard(reference.events)
    for other in reps[1:]:
        under_other = _collectives_by_guard(other.events)
        for div in _diff(reference.events, other.events):
            yield _as_mismatch(div, under, under_other)


GuardArms = Dict[Tuple[Any, bool], Event]


def _collectives_by_guard(events: List[Event]) -> GuardArms:
    """(guard location, arm) -> the first collective issued under it, for one class's run."""
    found: GuardArms = {}
    for event in events:
        for coll in _collectives(event):
            for guard, arm in coll.guards:
                found.setdefault((guard.location, arm), coll)
    return found


def _as_mismatch(div: Divergence, *under: GuardArms) -> Divergence:
    """A collective under one arm of a guard, while the ranks that take the other arm issue
    collectives of their own there: the arms mismatch (RC106), not a lone collective (RC101)."""
    if div.cause != "guard":
        return div
    for arms in under:
        other = arms.get((div.guard.location, not div.arm))
        if other is not None:
            return Divergence("mismatch", div.event, div.guard, div.arm, other_event=other)
    return div


MAX_UNFOLD = 6


def _unfold(events: List[Event], at: int) -> Iterator[List[Event]]:
    """The sequences the uniform branch at `events[at]` stands for: one per arm, spliced in its
    place. (By position: one event object can stand at several places of a sequence, as when a
    loop's second iteration repeats the first.)"""
    for arm in events[at].children:
        yield events[:at] + arm + events[at + 1 :]


def _lone_uniform(events: List[Event], keyed_at: List[int], start: int, stop: int) -> Optional[int]:
    """The position in `events` of the first uniform branch among the compared events
    `start:stop` (`keyed_at` maps compared events to their positions)."""
    for k in range(start, stop):
        if events[keyed_at[k]].kind == "U":
            return keyed_at[k]
    return None


def _diff(a: List[Event], b: List[Event], unfold: int = MAX_UNFOLD) -> Iterator[Divergence]:
    a_at = [i for i, e in enumerate(a) if e.kind != "X"]
    b_at = [i for i, e in enumerate(b) if e.kind != "X"]
    a_keyed = [a[i] for i in a_at]
    b_keyed = [b[i] for i in b_at]
    for op, i1, i2, j1, j2 in _align(a_keyed, b_keyed):
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1 and all(
            x.kind == y.kind and x.kind in ("L", "U") for x, y in zip(a_keyed[i1:i2], b_keyed[j1:j2])
        ):
            # The same loops or uniform branches, differing inside: compare them pairwise.
            for x, y in zip(a_keyed[i1:i2], b_keyed[j1:j2]):
                for child_a, child_b in zip(x.children, y.children):
                    yield from _diff(child_a, child_b, unfold)
            continue
        # A uniform branch that only one class reaches (it sits inside a rank branch): every rank
        # would take the same arm of it, so compare each arm against the other class in turn.
        lone = _lone_uniform(a, a_at, i1, i2)
        if lone is not None and unfold > 0:
            for variant in _unfold(a, lone):
                yield from _diff(variant, b, unfold - 1)
            return
        lone = _lone_uniform(b, b_at, j1, j2)
        if lone is not None and unfold > 0:
            for variant in _unfold(b, lone):
                yield from _diff(a, variant, unfold - 1)
            return
        if op == "replace":
            mismatch = _mismatch(a_keyed[i1:i2], b_keyed[j1:j2])
            if mismatch is not None:
                yield mismatch
                continue
        for event in a_keyed[i1:i2]:
            yield from _explain(event, b, b_keyed[j1] if j1 < len(b_keyed) else None)
        for event in b_keyed[j1:j2]:
            yield from _explain(event, a, a_keyed[i1] if i1 < len(a_keyed) else None)


def _anchor(event: Event) -> Tuple:
    """A collective with the call path down to it: the same statement reached the same way."""
    return (event.key, event.chain) if event.kind == "c" else event.key


def _align(a: List[Event], b: List[Event]) -> List[Tuple[str, int, int, int, int]]:
    """difflib opcodes pairing the events of two classes. First the same collective reached the
    same way pairs with itself; between those anchors, any collective pairs with one of the same
    kind (both arms of a branch may issue one, from different lines). Matching by kind alone can
    pair the collective all ranks reach with the one only some reach before it (`if rank == 0:
    barrier()` then `barrier()`), and leave the unguarded one over, blaming nothing."""
    anchored = difflib.SequenceMatcher(None, [_anchor(e) for e in a], [_anchor(e) for e in b], autojunk=False)
    opcodes: List[Tuple[str, int, int, int, int]] = []
    for op, i1, i2, j1, j2 in anchored.get_opcodes():
        if op == "equal" or i1 == i2 or j1 == j2:
            opcodes.append((op, i1, i2, j1, j2))
            continue
        between = difflib.SequenceMatcher(None, [e.key for e in a[i1:i2]], [e.key for e in b[j1:j2]], autojunk=False)
        for sub, k1, k2, l1, l2 in between.get_opcodes():
            opcodes.append((sub, i1 + k1, i1 + k2, j1 + l1, j1 + l2))
    return opcodes


def _mismatch(a: List[Event], b: List[Event]) -> Optional[Divergence]:
    """Both classes issue collectives here, under the two arms of one guard, but not the same."""
    coll_a = [c for e in a for c in _collectives(e)]
    coll_b = [c for e in b for c in _collectives(e)]
    if not coll_a or not coll_b:
        return None
    for guard_a, arm_a in reversed(coll_a[0].guards):
        for guard_b, arm_b in reversed(coll_b[0].guards):
            if guard_a.location == guard_b.location and arm_a != arm_b:
                return Divergence("mismatch", coll_a[0], guard_a, arm_a, other_event=coll_b[0])
    return None


def _collectives(event: Event) -> Iterator[Event]:
    if event.kind == "c":
        yield event
    for child in event.children:
        for sub in child:
            yield from _collectives(sub)


def _explain(event: Event, other: List[Event], other_next: Optional[Event]) -> Iterator[Divergence]:
    """Why does one class issue `event` and the other (`other`) not?"""
    for coll in _collectives(event):
        if coll.guards:
            guard, arm = coll.guards[-1]
            if coll.members and _selects_members(guard, coll.members):
                continue  # `if rank in ranks: all_reduce(group=new_group(ranks))`: exactly the members
            if _holds_its_group(guard, arm, coll):
                continue  # `if group is not None: all_reduce(t, group=group)`: the members hold it
            if _alike_on_group(coll, coll.guards):
                continue  # `if is_pipeline_last_stage(): all_reduce(loss, group=get_data_parallel_group())`
            exit_event = _exit_before(other, other_next)
            if exit_event is not None and any(g.location == guard.location for g, _ in exit_event.guards):
                # The other ranks took the other arm of this guard and left it early: the exit
                # is why they do not issue this collective, not the arms being different.
                exit_guard, exit_arm = exit_event.guards[-1]
                yield Divergence("exit", coll, exit_guard, exit_arm, exit_event=exit_event)
                continue
            yield Divergence("guard", coll, guard, arm)
            continue
        exit_event = _exit_before(other, other_next)
        if exit_event is not None and exit_event.guards:
            if _alike_on_group(coll, exit_event.guards):
                continue  # the whole group left early, or none of it did
            guard, arm = exit_event.guards[-1]
            yield Divergence("exit", coll, guard, arm, exit_event=exit_event)


def _selects_members(guard: GuardRef, members: str) -> bool:
    return guard.membership == members


def _holds_its_group(guard: GuardRef, arm: bool, coll: Event) -> bool:
    """The collective runs where the variable it passes as its group is not None. Ranks keep the
    process groups they belong to and None for the others (`if rank in ranks: _GROUP = group`),
    so the ranks that get there are the group's members: it is called whole."""
    group = coll.key[2]  # ("c", op, group text)
    if group == "WORLD":
        return False
    condition = guard.condition
    return condition in (f"{group} is not None", group) if guard.holds(arm) else condition == f"{group} is None"


def _alike_on_group(coll: Event, guards: Tuple[Tuple[GuardRef, bool], ...]) -> bool:
    """Every member of the collective's group takes the same arm of each of these guards (they test
    only what the members share, Catalog.uniform_in_group): the group calls it whole or not at all."""
    return bool(coll.members) and all(coll.members in guard.uniform_in for guard, _ in guards)


def _exit_before(events: List[Event], stop: Optional[Event]) -> Optional[Event]:
    """The rank-dependent exit in `events` before `stop` (or at the end) that cut the sequence."""
    found = None
    for e in events:
        if e is stop:
            break
        if e.kind == "X" and e.guards:
            found = e
    return found
