"""Rank dependence and collective trees: an abstract interpretation of one function's IR.

Values carry where they came from (`Taint`), and whether they *are* the rank (`rank`, a rank kind)
or a test of it (`pred`, a small boolean formula over rank comparisons). Interpreting a function
with its parameters bound yields:
  * a `tree` of the collectives it issues, in program order, under the branches, loops, exits and
    context managers that decide whether they run (only the parts that matter are kept);
  * its return value, the values it stores on `self`, and the arguments it passes to project
    functions (for parameter binding across the call graph).
Collectives that reduce or broadcast make their in-place arguments uniform again: that is what
keeps a branch on an all-reduced flag silent.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from rankcheck.ftypes import PER_RANK_DATA, RANK_IDENTITY, Location
from rankcheck.program.ir import CallSite, Expr, FunctionSummary, GuardInfo, Span
from rankcheck.program.link import Program, Target

MODULE_FUNCTION = "<module>"
# Evidence text of a value that differs per rank because a rank-dependent branch assigned it.
ASSIGNED_UNDER = "assigned under "

# Formula: ("cmp", kind, op, const) | ("var", key) | ("not", f) | ("and", fs) | ("or", fs) | ("const", bool)
Formula = Tuple[Any, ...]
TRUE: Formula = ("const", True)
FALSE: Formula = ("const", False)


@dataclass(frozen=True)
class Taint:
    kind: str  # "rank" (rank identity) or "data" (per-rank data)
    text: str  # e.g. "dist.get_rank()"
    location: Location


@dataclass(frozen=True)
class Val:
    taints: FrozenSet[Taint] = frozenset()
    rank: Optional[str] = None  # the value is the rank of this kind ("global_rank", ...)
    pred: Optional[Formula] = None  # the value is this test of the rank
    ref: Optional[str] = None  # the value is this global (function, class, module)
    type: Optional[str] = None  # the value is an instance of this (project or catalog) type
    key: Optional[Tuple] = None  # identity of an opaque rank-dependent value
    elements: Optional[Tuple[str, ...]] = None  # a tuple of typed values (`deepspeed.initialize`)
    # What the value's shape or length depends on (`files[rank::ws]`, `torch.zeros(len(local))`):
    # a loop over it is uneven, a collective on it mismatches.
    shape: FrozenSet["Taint"] = frozenset()
    members: Optional[str] = None  # a process group created from these ranks / by this function
    # The length is fixed by how the value was built (`torch.zeros(n)`, a comprehension), so
    # `shape` says all there is; otherwise `len()` of per-rank data is per-rank data too.
    sized: bool = False

    @property
    def rank_dependent(self) -> bool:
        return any(t.kind == "rank" for t in self.taints)

    @property
    def varies(self) -> bool:
        """Can differ between ranks: the rank itself, or per-rank data (local batch, loss, ...)."""
        return bool(self.taints)

    @property
    def kind(self) -> str:
        return RANK_IDENTITY if self.rank_dependent else PER_RANK_DATA


UNIFORM = Val()
SIZED = Val(sized=True)  # the same on every rank, with a length fixed when it was built


def join(a: Val, b: Val) -> Val:
    if a is b or a == b:
        return a
    return Val(
        taints=a.taints | b.taints,
        rank=a.rank if a.rank == b.rank else None,
        pred=a.pred if a.pred == b.pred else None,
        ref=a.ref if a.ref == b.ref else None,
        type=a.type if a.type == b.type else None,
        key=a.key if a.key == b.key else None,
        elements=a.elements if a.elements == b.elements else None,
        shape=a.shape | b.shape,
        members=a.members if a.members == b.members else None,
        sized=a.sized and b.sized,
    )


def taints_only(v: Val, key: Optional[Tuple] = None) -> Val:
    """A value derived from `v`: it varies wherever `v` or its shape varies."""
    taints = v.taints | v.shape
    return Val(taints=taints, key=key) if taints else UNIFORM


def negate(f: Formula) -> Formula:
    if f[0] == "const":
        return ("const", not f[1])
    if f[0] == "not":
        return f[1]
    return ("not", f)


def formula_of(v: Val, fallback_key: Tuple) -> Formula:
    """The rank test a rank-dependent value stands for when used as a condition."""
    if v.pred is not None:
        return v.pred
    if v.rank is not None:
        return ("cmp", v.rank, "!=", 0)
    return ("var", v.key or fallback_key)


# ---------------------------------------------------------------------------------------------
# the trees

# Nodes (tuples):
#   ("coll", op, group, ChainStep-ish site, note)        a collective call
#   ("call", site, callee_qualname, subtree)            a project call that reaches collectives
#                                                       (subtree: the callee's, a CalleeTree)
#   ("branch", formula, guard, then, else)              rank-dependent branch
#   ("ubranch", site_key, then, else, shared)           branch every rank takes alike (shared: its
#                                                       condition as a uniform variable, or None)
#   ("loop", site_key, formula_or_None, body, guard)    for/while (formula: rank-dependent while)
#   ("exit", kind, site, text)                          return/continue/break/raise/exit
#   ("yield",)                                          a context manager's hand-over point
#   ("with_cm", site, callee_qualname, cm_tree, body)   `with project_cm(...):` (cm_tree: a CalleeTree)
#   ("try", body, handlers, orelse, final)


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

    def holds(self, arm: bool) -> bool:
        """Whether the written condition is true on the ranks that took `arm`. `assert cond` is
        modelled as `if not cond: raise`, so its arm is the negation."""
        return (not arm) if self.head.startswith("assert ") else arm


@dataclass
class Result:
    tree: List[tuple]
    ret: Val
    self_stores: Dict[str, Val] = field(default_factory=dict)
    call_args: List[Tuple[str, Dict[str, Val]]] = field(default_factory=list)
    reaches: bool = False  # the tree issues a collective on some path
    arg_hazards: List[tuple] = field(default_factory=list)
    # Derived from the above once, for as long as the result is reused (analysis.py): what this
    # run, as a root, adds to its callees' bindings, and where its rank classes diverge (with
    # the callee trees it was computed from: `Interpreter.trees_unchanged`).
    binding_contribution: Optional[list] = field(default=None, compare=False, repr=False)
    divergences: Optional[Tuple[list, tuple]] = field(default=None, compare=False, repr=False)


class CalleeTree:
    """A called function's tree as a caller's "call" or "with_cm" node holds it: the tree of the
    version of the callee's fact that is valid when it is read. A caller's fact rests only on what
    it reads of its callees' results (`_interface`), not on their trees; so when an edit changes
    a callee's tree but not what it returns (it moved the callee's lines), its callers' facts stay
    valid and still show the callee's current tree. A list to whoever walks it."""

    __slots__ = ("_interp", "_fact")

    def __init__(self, interp: "Interpreter", fact: "_Fact") -> None:
        self._interp = interp
        self._fact = fact

    def fact(self) -> "_Fact":
        interp = self._interp
        fact = self._fact
        if not interp._checked.get(fact.id):
            current = interp._find(fact.node)
            if current is not None:
                fact = self._fact = current
        reads = interp.tree_reads
        if reads is not None:
            reads[id(self)] = (self, fact)
        return fact

    @property
    def tree(self) -> List[tuple]:
        return self.fact().value.tree

    def __iter__(self):
        return iter(self.tree)

    def __len__(self) -> int:
        return len(self.tree)

    def __getitem__(self, index):
        return self.tree[index]

    def __bool__(self) -> bool:
        return bool(self.tree)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CalleeTree):
            other = other.tree
        return isinstance(other, list) and self.tree == other

    __hash__ = None  # type: ignore[assignment]  # as a list

    def __repr__(self) -> str:
        return repr(self.tree)

    def __reduce__(self):
        return (list, (self.tree,))  # pickled (a Result sent elsewhere) as the tree it stands for


def _interface(fact: "_Fact") -> Tuple:
    """What the facts that use `fact` read of it: a run's return value, whether it reaches a
    collective, what it stores on `self` (its tree only through CalleeTree; its call arguments
    and hazards are read by the analysis from the root runs themselves), and what reusing it
    stores and needs; any other fact's whole value."""
    value = fact.value
    if isinstance(value, Result):
        return (value.ret, value.reaches, value.self_stores, fact.stores, fact.needs)
    return (value, fact.stores, fact.needs)


def tree_reaches(tree: List[tuple]) -> bool:
    for node in tree:
        tag = node[0]
        if tag in ("coll", "call"):
            return True
        if tag == "with_cm":
            return True
        if tag in ("branch",) and (tree_reaches(node[3]) or tree_reaches(node[4])):
            return True
        if tag == "ubranch" and (tree_reaches(node[2]) or tree_reaches(node[3])):
            return True
        if tag == "loop" and tree_reaches(node[3]):
            return True
        if tag == "try" and any(tree_reaches(part) for part in (node[1], *node[2], node[3], node[4])):
            return True
    return False


class _Terminated(Exception):
    pass


@dataclass
class _Frame:
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
    arg_hazards: List[tuple] = field(default_factory=list)  # RC104: (site, op, what, text, taint)
    writes: List[str] = field(default_factory=list)  # names assigned so far, in order
    declared_global: set = field(default_factory=set)  # `global X` in this function


def _loc(path: str, span: Span) -> Location:
    return Location(path, span.line, span.column, span.end_line, span.end_column)


def render(expr: Expr) -> str:
    """Short source-like text of an IR expression, for evidence."""
    tag = expr[0]
    if tag == "name":
        return expr[1]
    if tag == "attr":
        return f"{render(expr[1])}.{expr[2]}"
    if tag == "const":
        return repr(expr[1])
    if tag == "environ":
        return f'os.environ["{expr[1]}"]'
    if tag == "subscript":
        return f"{render(expr[1])}[...]"
    return "..."


def _is_self(frame: "_Frame", expr: Expr) -> bool:
    """`expr` names the receiver of the method being run (its first parameter)."""
    return expr[0] == "name" and bool(frame.fn.class_qualname) and bool(frame.fn.params) and expr[1] == frame.fn.params[0]


def _plain_reference(expr: Expr) -> bool:
    """A name or a chain of attributes of one (`owner`, `self.grid.leader_rank`): reading it again
    runs no code and records nothing new."""
    while expr[0] == "attr":
        expr = expr[1]
    return expr[0] == "name"


def _group_members(group_expr: Expr, group: Val) -> Optional[str]:
    """What names a process group's members: what built it (`new_group(ranks)`: "ranks"; a group
    getter), else the variable or attribute that holds it (`group=embd_group`)."""
    if group.members is not None:
        return group.members
    return render(group_expr) if _plain_reference(group_expr) else None


# What an arm of a branch knows: (frame key, value before the branch, value in the arm).
_Learned = Tuple[Tuple[str, "Val", "Val"], ...]


def binding_signature(bindings: Dict[str, Val]) -> Tuple:
    return tuple(
        sorted(
            (k, v.rank, v.pred, v.key, v.type, v.members, bool(v.taints), bool(v.shape))
            for k, v in bindings.items()
            if v.varies or v.shape or v.type or v.members
        )
    )


_NO_NEEDS: FrozenSet[Tuple[str, Any]] = frozenset()


class _Fact:
    """One memoised fact (a run's result, a module's top-level values, a class attribute) and what
    its computation read: `inputs`, values taken from outside the memo (a function's code, its
    parameter bindings, a module variable stored through `global`, a class summary, a recursion
    stub) as they were read; `deps`, the other facts it used, by interface. What reusing it
    implies, for itself and every fact it used: `stores`, the module variables their code stored
    through `global`; `needs`, the learned inputs they asked for (("root", function) runs,
    ("gstore", key) reads), which a focused analysis widens its roots with. `interface`: the
    version of what the facts that use it read (see `_interface`); a new version that reads the
    same as an older one keeps the older one's, so what used the older one stays valid."""

    __slots__ = ("id", "node", "value", "inputs", "deps", "stores", "needs", "touched", "interface", "cut")

    def __init__(self, ident: int, node: Tuple, value: Any, recording: "_Recording", touched: int) -> None:
        self.id = ident
        self.node = node
        self.value = value
        self.inputs = tuple(recording.inputs.items())
        self.deps = tuple(recording.deps)
        self.stores = recording.stores
        self.needs = recording.needs
        self.touched = touched
        self.interface = ident
        # It, or a fact it used, was cut short where the call stack met a function again: what it
        # holds depends on where it was computed from, so it is never taken for an older version
        # (its callers' trees, read through CalleeTree, could otherwise lead back to themselves).
        self.cut = recording.cut


class _Recording:
    """What the fact being computed reads, as it reads it."""

    __slots__ = ("inputs", "deps", "stores", "needs", "cut")

    def __init__(self) -> None:
        self.inputs: Dict[Tuple, Any] = {}
        self.deps: List[Tuple[Tuple, int]] = []
        self.stores: Dict[Tuple[str, str], Val] = {}
        self.needs: FrozenSet[Tuple[str, Any]] = _NO_NEEDS
        self.cut = False  # see _Fact.cut

    def used(self, node: Tuple, fact: _Fact) -> None:
        self.deps.append((node, fact.interface))
        if fact.cut:
            self.cut = True
        if fact.stores:
            for key, value in fact.stores.items():
                old = self.stores.get(key)
                self.stores[key] = value if old is None else join(old, value)
        if node[0] == "memo" and node[1][1] == "root":
            self.need(("root", node[1][0]))
        if fact.needs and not fact.needs <= self.needs:
            self.needs = fact.needs if not self.needs else self.needs | fact.needs

    def need(self, item: Tuple[str, Any]) -> None:
        if item not in self.needs:
            self.needs = self.needs | {item}


class Interpreter:
    """Interprets functions on demand, memoised by (function, binding signature).

    The memo is verified rather than invalidated (as build systems and Salsa do): a fact is reused
    when every input it read still has the value it read and every fact it used still reads as it
    did (its `interface`). A verdict, once reached, stands until an input it rests on changes:
    those changes are announced (`new_round`, `begin_analysis`) and withdraw the verdicts of the
    facts that read them, and of the facts built on those. So one interpreter serves the rounds of
    parameter binding (a root's fact for round 1's bindings and the one for round 2's are both
    kept, as versions of one key) and, in the language server, one analysis after another: after
    an edit of a function body only what read that body is interpreted again, and what was built
    on it only when what it reads of it changed (early cutoff: callers read their callees' trees
    through CalleeTree, not from the fact they used). Each analysis starts from no learned
    bindings and no stores, as a fresh one does, and reuses what it would compute anyway."""

    MAX_DEPTH = 32  # call depth followed from a root; deeper chains stop (recursion does too)
    MAX_VERSIONS = 8  # versions kept per fact key (a root has one per round of bindings)

    def __init__(self, program: Program) -> None:
        self.program = program
        self.catalog = program.catalog
        self._facts: Dict[Tuple, List[_Fact]] = {}
        self._readers: Dict[Tuple, List[_Fact]] = {}  # input or fact node -> facts that read it
        self._witnesses: set = set()  # ("witness", function) inputs read
        # Function -> the fact its last run as a root gave: asked again while that fact's verdict
        # stands, the answer is its value (every round of parameter binding asks every root).
        self._last_root: Dict[str, _Fact] = {}
        self._checked: Dict[int, bool] = {}  # fact id -> verdict, until an input it rests on changes
        self._stack: List[str] = []
        self._globals_busy: set = set()
        self._class_attrs_busy: set = set()
        self.param_bindings: Dict[str, Dict[str, Val]] = {}
        # Module variables assigned inside functions through `global`: (module, name) -> value,
        # joined over every fact computed or reused in this analysis (learned over rounds). Runs
        # read them as they stood when the round began (`stores_seen`): what a run sees does not
        # depend on which runs came before it in the round, so a fact is the same whatever order
        # an analysis, or the next one, reaches it in.
        self.global_stores: Dict[Tuple[str, str], Val] = {}
        self.stores_seen: Dict[Tuple[str, str], Val] = {}
        self._recording: List[_Recording] = []
        self._next_id = 0
        self.generation = 0  # analyses run with this interpreter (for prune)
        self._pruned_at_id = 0
        self._kept_at_prune = 0
        self._imports_of: Dict[str, Dict[str, str]] = {}
        # The learned inputs the analysis needed (analysis.analyse widens a focused run with what
        # feeds them): functions run as roots, and module variables read that `global` may set.
        self.root_runs: set = set()
        self.stores_read: set = set()
        self.last_fact: Optional[_Fact] = None  # the fact whose value the last run() gave
        # While not None: the callee trees read (CalleeTree.fact), id(tree) -> (tree, fact read)
        self.tree_reads: Optional[Dict[int, Tuple["CalleeTree", _Fact]]] = None

    # ----------------------------------------------------------------- the memo
    def begin_analysis(self, changed: Iterable[Tuple] = ()) -> None:
        """Start an analysis: no learned bindings or stores yet. `changed` names the inputs that
        differ from the previous analysis's program (("code", function), ("class", class),
        ("witness", function)); the learned inputs of the previous analysis count as changed."""
        self.generation += 1
        nodes = [("binding", q) for q in self.param_bindings] + [("gstore", k) for k in self.stores_seen]
        self.param_bindings = {}
        self.global_stores = {}
        self.stores_seen = {}
        self.root_runs = set()
        self.stores_read = set()
        self._withdraw(nodes + list(changed))

    def new_round(self, bindings: Iterable[str]) -> None:
        """Another round of parameter binding: these bindings changed, and the module variable
        stores of the last round become what runs read. What read a changed one is verified again
        when next used."""
        seen = self.stores_seen
        changed = [k for k in set(seen) | set(self.global_stores) if seen.get(k) != self.global_stores.get(k)]
        self.stores_seen = dict(self.global_stores)
        self._withdraw([("binding", q) for q in bindings] + [("gstore", k) for k in changed])

    def stores_changed(self) -> bool:
        """Whether the runs since the round began stored what runs did not read yet."""
        return self.global_stores != self.stores_seen

    def witness_nodes(self) -> List[Tuple]:
        """The recursion stubs facts rest on (they quote call sites, which move with edits)."""
        return list(self._witnesses)

    def _withdraw(self, nodes: List[Tuple]) -> None:
        checked = self._checked
        readers = self._readers
        seen = set()
        while nodes:
            node = nodes.pop()
            for fact in readers.get(node, ()):
                if checked.pop(fact.id, None) is not None and fact.node not in seen:
                    seen.add(fact.node)
                    nodes.append(fact.node)

    def prune(self, keep: int = 2, growth: float = 1.5) -> int:
        """Forget the facts that are not known valid and that no analysis among the last `keep`
        used, once the memo has grown by `growth` since the last pruning; returns how many were
        dropped."""
        count = self._next_id - self._pruned_at_id + self._kept_at_prune
        if count < growth * max(self._kept_at_prune, 1000):
            return 0
        oldest = self.generation - keep + 1
        dropped = 0
        kept_any = False
        for node in list(self._facts):
            versions = [f for f in self._facts[node] if f.touched >= oldest or self._checked.get(f.id)]
            dropped += len(self._facts[node]) - len(versions)
            if versions:
                self._facts[node] = versions
                kept_any = True
            else:
                del self._facts[node]
        self._pruned_at_id = self._next_id
        self._kept_at_prune = self.fact_count()
        if dropped:
            live = {id(f) for versions in self._facts.values() for f in versions}
            self._last_root = {q: f for q, f in self._last_root.items() if id(f) in live}
            for node in list(self._readers):
                facts = [f for f in self._readers[node] if id(f) in live]
                if facts:
                    self._readers[node] = facts
                else:
                    del self._readers[node]
            self._checked = {k: v for k, v in self._checked.items() if v} if kept_any else {}
        return dropped

    def fact_count(self) -> int:
        return sum(len(v) for v in self._facts.values())

    def _input(self, node: Tuple, value: Any) -> None:
        if node[0] == "gstore":
            self.stores_read.add(node[1])
        if self._recording:
            recording = self._recording[-1]
            recording.inputs.setdefault(node, value)
            if node[0] == "gstore":
                recording.need(node)

    def _current(self, node: Tuple) -> Any:
        kind, key = node
        if kind == "code":
            return self.program.functions.get(key)
        if kind == "binding":
            return self.param_bindings.get(key)
        if kind == "gstore":
            return self.stores_seen.get(key)
        if kind == "class":
            return self.program.classes.get(key)
        if kind == "witness":
            return self._reentry_stub(key)
        if kind == "cycle":
            return self.program.recursive_cycle(key)
        raise KeyError(kind)

    def _find(self, node: Tuple) -> Optional[_Fact]:
        versions = self._facts.get(node)
        if versions:
            for fact in reversed(versions):
                if self._valid(fact):
                    return fact
        return None

    def _lookup(self, node: Tuple) -> Optional[_Fact]:
        """The version of a fact that is valid now, reused as if computed now, or None."""
        fact = self._find(node)
        if fact is None:
            return None
        if fact.touched != self.generation:
            # First use in this analysis: what it and the facts it used stored and needed is
            # stored and needed again (both only grow during an analysis: once is enough).
            fact.touched = self.generation
            if fact.stores:
                for key, value in fact.stores.items():
                    old = self.global_stores.get(key)
                    self.global_stores[key] = value if old is None else join(old, value)
            if fact.needs:
                for kind, key in fact.needs:
                    (self.root_runs if kind == "root" else self.stores_read).add(key)
        if self._recording:
            self._recording[-1].used(node, fact)
        return fact

    def _valid(self, fact: _Fact) -> bool:
        verdict = self._checked.get(fact.id)
        if verdict is not None:
            return verdict
        self._checked[fact.id] = False  # while checking: a cycle does not vouch for itself
        for input_node, value in fact.inputs:
            current = self._current(input_node)
            if current is not value and current != value:
                return False
        for dep_node, dep_interface in fact.deps:
            dep = self._find(dep_node)
            if dep is None or dep.interface != dep_interface:
                return False
        self._checked[fact.id] = True
        return True

    def _begin(self) -> None:
        self._recording.append(_Recording())

    def _end(self, node: Tuple, value: Any, keep: bool = True) -> None:
        recording = self._recording.pop()
        if not keep:
            return
        self._next_id += 1
        fact = _Fact(self._next_id, node, value, recording, self.generation)
        versions = self._facts.setdefault(node, [])
        # Early cutoff: a version that reads as an older one did (an edit moved the lines of a
        # function whose callers see the same return value) leaves what used the older one valid.
        # Callers read a callee's tree only through CalleeTree, which follows the valid version.
        if versions and not fact.cut:
            interface = _interface(fact)
            for older in reversed(versions):
                if _interface(older) == interface:
                    fact.interface = older.interface
                    break
        versions.append(fact)
        if len(versions) > self.MAX_VERSIONS:
            del versions[0]
        readers = self._readers
        for input_node, _ in fact.inputs:
            readers.setdefault(input_node, []).append(fact)
        for dep_node, _ in fact.deps:
            readers.setdefault(dep_node, []).append(fact)
        # A new version replaces the one in use: what used the key is verified again.
        self._withdraw([node])
        self._checked[fact.id] = True
        if self._recording:
            self._recording[-1].used(node, fact)

    def _store_global(self, key: Tuple[str, str], value: Val) -> None:
        old = self.global_stores.get(key)
        self.global_stores[key] = value if old is None else join(old, value)
        if self._recording:
            stores = self._recording[-1].stores
            mine = stores.get(key)
            stores[key] = value if mine is None else join(mine, value)

    def abandon(self) -> None:
        """After a RecursionError unwound a run: the call stack bookkeeping starts afresh."""
        self._stack.clear()
        self._globals_busy.clear()
        self._class_attrs_busy.clear()
        self._recording.clear()

    # ----------------------------------------------------------------- entry points
    def run(self, qualname: str, bindings: Optional[Dict[str, Val]] = None) -> Result:
        """Interpret a function. Without `bindings` it is analysed as a root: each parameter holds
        what any caller passes it (`param_bindings`). With them (a call site), parameters hold
        exactly what this call passes, so one rank-dependent caller does not taint the others."""
        as_root = bindings is None
        if as_root:
            self.root_runs.add(qualname)
            last = self._last_root.get(qualname)
            # Valid, and already used in this analysis (what reusing it stores and needs is
            # recorded), outside any fact's computation (nothing to record as used): the lookup
            # would give it or a version with the same inputs, hence the same value.
            if last is not None and last.touched == self.generation and not self._recording and self._checked.get(last.id):
                self.last_fact = last
                return last.value
        elif self._stack and qualname in self.program.recursive_cycle(self._stack[-1]):
            # A call within a recursive cycle of the static call graph is never followed (nor
            # answered from the memo), whoever runs the caller: what a function gives does not
            # depend on the order functions are first reached. (The caller's fact read its cycle.)
            return self._reentry(qualname)
        bindings = bindings or {}
        node = ("memo", (qualname, "root" if as_root else binding_signature(bindings)))
        fact = self._lookup(node)
        if fact is not None:
            if as_root:
                self._last_root[qualname] = fact
            self.last_fact = fact
            return fact.value
        fn = self.program.functions[qualname]
        if qualname in self._stack or len(self._stack) >= self.MAX_DEPTH:
            # Recursion through calls only values resolve (or a chain too deep to follow): cut
            # where the call stack meets the function again.
            if self._recording:
                self._recording[-1].cut = True  # what it gives depends on this stack (_Fact.cut)
            return self._reentry(qualname)
        self._stack.append(qualname)
        self._begin()
        self._input(("code", qualname), fn)
        self._input(("cycle", qualname), self.program.recursive_cycle(qualname))  # its calls not followed
        if as_root:
            self._input(("binding", qualname), self.param_bindings.get(qualname))
        result: Optional[Result] = None
        try:
            result = self._interpret(fn, bindings, as_root)
        finally:
            self._stack.pop()
            self._end(node, result, keep=result is not None)
        self.last_fact = self._facts[node][-1] if result is not None else None
        if as_root and result is not None:
            self._last_root[qualname] = self.last_fact
        return result

    def _callee_tree(self, result: Result):
        """What a call node holds of the callee's run just made: its tree, read through the memo
        (CalleeTree) when a fact holds it, as is (a recursion stub) otherwise."""
        fact = self.last_fact
        if fact is not None and fact.value is result:
            return CalleeTree(self, fact)
        return result.tree

    def trees_unchanged(self, reads: Iterable[Tuple["CalleeTree", _Fact]]) -> bool:
        """Whether each callee tree still reads from the fact it read from (`tree_reads`)."""
        return all(tree.fact() is fact for tree, fact in reads)

    def _reentry(self, qualname: str) -> Result:
        """A recursive call, not interpreted again. Where the call was reached, though, the
        function runs once more and so do its collectives: the first one on its way stands for
        them, or a call made only on some ranks would look free."""
        stub = self._reentry_stub(qualname)
        self.last_fact = None
        self._witnesses.add(("witness", qualname))
        self._input(("witness", qualname), stub)
        return Result(tree=stub, ret=UNIFORM, reaches=bool(stub))

    def _reentry_stub(self, qualname: str) -> List[tuple]:
        chain = self.program.witness(qualname)
        if not chain:
            return []
        fn, site, target = chain[-1]
        if target.kind != "collective" or target.collective is None:
            return []
        here = _loc(self.program.path_of_function[fn.qualname], site.span)
        spec = target.collective
        return [("coll", spec.op, _group_text(site, spec.group_position, spec.group_keyword), SiteRef(here, site.text), spec.note, None)]

    def module_globals(self, module: str) -> Dict[str, Val]:
        node = ("globals", module)
        fact = self._lookup(node)
        if fact is not None:
            return fact.value
        if module in self._globals_busy:
            return {}
        qual = f"{module}.{MODULE_FUNCTION}"
        if qual not in self.program.functions:
            return {}
        self._globals_busy.add(module)
        self._begin()
        env: Optional[Dict[str, Val]] = None
        try:
            fn = self.program.functions[qual]
            self._input(("code", qual), fn)
            frame = _Frame(fn, self.program.path_of_function[qual], {})
            self._stack.append(qual)
            try:
                self._body(frame, fn.body, [])
            except _Terminated:
                pass
            finally:
                self._stack.pop()
            env = frame.env
        finally:
            self._globals_busy.discard(module)
            self._end(node, env, keep=env is not None)
        return env

    def class_attr(self, class_qualname: str, attr: str) -> Optional[Val]:
        key = (class_qualname, attr)
        node = ("cattr", key)
        fact = self._lookup(node)
        if fact is not None:
            return fact.value
        if key in self._class_attrs_busy:
            return None
        self._class_attrs_busy.add(key)
        self._begin()
        value: Optional[Val] = None
        try:
            for cls in self.program.class_chain(class_qualname):
                self._input(("class", cls.qualname), cls)
                for stored_attr, methods in cls.self_stores:
                    if stored_attr != attr:
                        continue
                    for method in methods:
                        if method in self._stack:
                            continue
                        got = self.run(method).self_stores.get(attr)
                        if got is not None:
                            value = got if value is None else join(value, got)
        finally:
            self._class_attrs_busy.discard(key)
            # Not found is not kept: a storing method skipped here (it was running) may store it.
            self._end(node, value, keep=value is not None)
        return value

    # ----------------------------------------------------------------- functions
    def _interpret(self, fn: FunctionSummary, bindings: Dict[str, Val], as_root: bool = True) -> Result:
        path = self.program.path_of_function[fn.qualname]
        env: Dict[str, Val] = {}
        if fn.name == MODULE_FUNCTION:
            env = {}
        hook_types = self._hook_types(fn)
        for index, param in enumerate(fn.params):
            if index == 0 and fn.class_qualname and not fn.is_staticmethod:
                env[param] = Val(type=fn.class_qualname)
                continue
            default = self.param_bindings.get(fn.qualname, {}).get(param, UNIFORM) if as_root else UNIFORM
            value = bindings.get(param, default)
            if value.varies and value.rank is None and value.pred is None:
                # One identity for the parameter, so `if not p:` and `if p:` are complementary.
                value = replace(value, key=("param", fn.qualname, param))
            if value.type is None and 0 <= index - 1 < len(hook_types) and hook_types[index - 1]:
                value = replace(value, type=hook_types[index - 1])  # what the framework passes
            env[param] = value
        frame = _Frame(fn, path, env)
        tree: List[tuple] = []
        try:
            self._body(frame, fn.body, tree)
        except _Terminated:
            pass
        return Result(tree=tree, ret=frame.ret, self_stores=frame.self_stores, call_args=frame.call_args, reaches=tree_reaches(tree), arg_hazards=frame.arg_hazards)

    # ----------------------------------------------------------------- statements
    def _body(self, frame: _Frame, body, out: List[tuple]) -> None:
        for stmt in body:
            if frame.dead:
                return
            self._stmt(frame, stmt, out)

    def _stmt(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        kind = stmt[0]
        if kind == "expr":
            frame.span = stmt[2]
            self.eval(frame, stmt[1], out)
        elif kind == "assign":
            frame.span = stmt[3]
            value = self.eval(frame, stmt[2], out)
            for target in stmt[1]:
                self._assign(frame, target, value, out)
        elif kind == "augassign":
            frame.span = stmt[3]
            value = self.eval(frame, stmt[2], out)
            old = self._read_target(frame, stmt[1])
            self._assign(frame, stmt[1], taints_only(join(old, value), key=("aug", stmt[3])), out)
        elif kind == "if":
            self._if(frame, stmt, out)
        elif kind == "while":
            self._while(frame, stmt, out)
        elif kind == "for":
            self._for(frame, stmt, out)
        elif kind == "exit":
            self._exit(frame, stmt, out)
        elif kind == "with":
            self._with(frame, stmt, out)
        elif kind == "try":
            self._try(frame, stmt, out)
        elif kind == "match":
            self._match(frame, stmt, out)
        elif kind == "def":
            frame.env[stmt[1]] = Val(ref=stmt[2])
        elif kind == "global":
            frame.declared_global.update(stmt[1])

    def _read_target(self, frame: _Frame, target: tuple) -> Val:
        if target[0] == "name":
            return frame.env.get(target[1], UNIFORM)
        if target[0] == "selfattr":
            return frame.env.get("self." + target[1], UNIFORM)
        return UNIFORM

    def _assign(self, frame: _Frame, target: tuple, value: Val, out: List[tuple]) -> None:
        tag = target[0]
        if tag == "name":
            if value.rank_dependent and value.rank is None and value.pred is None and value.key is None:
                value = replace(value, key=("name", target[1], frame.span))
            frame.env[target[1]] = value
            frame.writes.append(target[1])
            if target[1] in frame.declared_global:
                # `global _GROUP; _GROUP = dist.new_group(...)`: what every reader of the module
                # variable sees (Megatron's parallel_state keeps its groups this way).
                self._store_global((frame.fn.module, target[1]), value)
        elif tag == "selfattr":
            frame.env["self." + target[1]] = value
            frame.writes.append("self." + target[1])
            # What other methods read back: the value's own dependence, not the branch it was set
            # in (object state set per configuration would otherwise taint every method).
            stored = _without_control(value)
            old = frame.self_stores.get(target[1])
            frame.self_stores[target[1]] = stored if old is None else join(old, stored)
        elif tag == "unpack":
            part = taints_only(value, key=("unpack", frame.span))
            for index, sub in enumerate(target[1]):
                element = value.elements[index] if value.elements and index < len(value.elements) else None
                self._assign(frame, sub, replace(part, type=element) if element else part, out)
        elif tag == "other":
            self.eval(frame, target[1], out)
            store = target[1]
            if store[0] == "subscript" and store[1][0] == "name" and store[1][1] in frame.env:
                # `d[key] = v`: the container now holds v, and how many keys it has depends on key.
                index: FrozenSet[Taint] = frozenset()
                for part in store[2]:
                    index |= self.eval(frame, part, []).taints
                container = frame.env[store[1][1]]
                # A tensor built with its size (`torch.zeros(n)`) keeps it; a dict grows by keys.
                grows = not store[3] and not container.sized
                self._grow(frame, store[1][1], value.taints | value.shape, index if grows else frozenset())

    def _merge(
        self,
        frame: _Frame,
        envs: List[Tuple[Dict[str, Val], bool]],
        control: Optional[Taint] = None,
        written: Optional[set] = None,
    ) -> None:
        live = [env for env, dead in envs if not dead]
        if not live:
            frame.dead = True
            return
        merged = dict(live[0])
        for env in live[1:]:
            for name, b in env.items():
                a = merged.get(name)
                if a is not b:  # most names are untouched by either arm: the same object
                    merged[name] = b if a is None else join(a, b)
        if control is not None and written:
            # Assigned under a condition (or in a loop) that varies between ranks: the value now
            # varies too (`if rank == 0: start = load()`; `total += len(batch)` over a shard).
            for name in written:
                if name in merged:
                    value = merged[name]
                    # A container whose length already varies (it grew in the loop) grows by a
                    # number of items that now depends on the condition too.
                    shape = value.shape | {control} if value.shape else value.shape
                    merged[name] = replace(value, taints=value.taints | {control}, shape=shape, key=("phi", name, frame.span), rank=None, pred=None)
        frame.env = merged

    def _branch_arms(
        self, frame: _Frame, then_body, else_body, cond: Val, info: GuardInfo, learned: Tuple[_Learned, _Learned] = ((), ())
    ) -> Tuple[List[tuple], List[tuple]]:
        then_learned, else_learned = learned
        for key, current, _ in (*then_learned, *else_learned):
            # Held in the frame before the arms, so that the arms' values join after them.
            frame.env.setdefault(key, current)
        base = dict(frame.env)
        first_write = len(frame.writes)
        then_out: List[tuple] = []
        for key, _, value in then_learned:
            frame.env[key] = value
        self._body(frame, then_body, then_out)
        then_state = (frame.env, frame.dead)
        then_written = set(frame.writes[first_write:])
        frame.env, frame.dead = dict(base), False
        for key, _, value in else_learned:
            frame.env[key] = value
        else_out: List[tuple] = []
        else_first_write = len(frame.writes)
        self._body(frame, else_body, else_out)
        else_state = (frame.env, frame.dead)
        frame.dead = False
        if not then_state[1] and not else_state[1]:
            # Past a branch both arms leave alive, what one arm knew no longer holds: the variable
            # is what it was, unless the arm assigned it (an `assert`, or an arm that exits, leaves
            # the other arm's knowledge to the code after it).
            else_written = set(frame.writes[else_first_write:])
            for learned_in_arm, env, written in ((then_learned, then_state[0], then_written), (else_learned, else_state[0], else_written)):
                for key, current, _ in learned_in_arm:
                    if key not in written:
                        env[key] = current
        # Values assigned differently under an explicit rank test (`if rank == 0: start = load()`)
        # differ per rank afterwards. A condition that is rank-dependent only through a chain of
        # derived values, or on per-rank data, is too weak a reason to taint what it assigns:
        # configuration decided that way (`if self.distributed_type == ...`) would taint everything.
        explicit = cond.rank is not None or (cond.pred is not None and _names_the_rank(cond.pred))
        control = _control_taint(cond.taints, info, frame.path) if explicit else None
        self._merge(frame, [then_state, else_state], control=control, written=set(frame.writes[first_write:]))
        return then_out, else_out

    def _guard(self, frame: _Frame, info: GuardInfo, value: Val) -> GuardRef:
        wanted = "rank" if value.rank_dependent else None
        candidates = [t for t in value.taints if wanted is None or t.kind == wanted]
        taint = min(candidates, key=lambda t: (t.location.line, t.location.column, t.text), default=None)
        membership = value.pred[1] if value.pred is not None and value.pred[0] == "member" else None
        uniform_in: FrozenSet[str] = frozenset()
        shared = self.catalog.uniform_in_group
        if shared:
            kinds = _tested_kinds(formula_of(value, ("guard",)))
            if kinds:
                uniform_in = frozenset(group for group, alike in shared.items() if kinds <= alike)
        return GuardRef(_loc(frame.path, info.span), info.head, info.condition, taint, value.kind, membership, uniform_in)

    def _emit_branch(
        self, frame: _Frame, cond: Val, info: GuardInfo, then_out, else_out, out: List[tuple], test: Optional[Expr] = None
    ) -> None:
        if not then_out and not else_out:
            return  # nothing either way: no rank can differ here
        if cond.varies:
            formula = formula_of(cond, ("guard", frame.path, info.span.line, info.span.column))
            out.append(("branch", formula, self._guard(frame, info, cond), then_out, else_out))
        else:
            shared = uniform_variable(test) if test is not None else None
            out.append(("ubranch", (frame.path, info.span.line, info.span.column), then_out, else_out, shared))

    def _if(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, test, then_body, else_body, info = stmt
        frame.span = info.span
        cond = self.eval(frame, test, out)
        const = _constant_truth(cond, test)
        if const is True:
            self._body(frame, then_body, out)
            return
        if const is False:
            self._body(frame, else_body, out)
            return
        learned = self._equalities(frame, test) if cond.varies else ((), ())
        then_out, else_out = self._branch_arms(frame, then_body, else_body, cond, info, learned)
        self._emit_branch(frame, cond, info, then_out, else_out, out, test)

    def _equalities(self, frame: _Frame, test: Expr) -> Tuple[_Learned, _Learned]:
        """What each arm of `if test:` knows of a rank-dependent variable that the test equates
        with a value alike on every rank (`assert self.rank == self.leader_rank`, `if rank !=
        owner: return`): there, it holds that value. (A constant is left to the guard's formula,
        which tells the classes of ranks apart.) Only local variables and `self` attributes, read
        again from the frame, and a value read from a name or an attribute."""
        positive = True
        while test[0] == "not":
            test, positive = test[1], not positive
        if test[0] != "cmp" or len(test[1]) != 1 or test[1][0] not in ("==", "is", "!=", "is not"):
            return (), ()
        if test[1][0] in ("!=", "is not"):
            positive = not positive
        left, right = test[2]
        learned: List[Tuple[str, Val, Val]] = []
        for target, other in ((left, right), (right, left)):
            key = self._variable_key(frame, target)
            if key is None or not _plain_reference(other):
                continue
            current = self.eval(frame, target, [])
            if not current.varies or current.shape:
                continue
            value = self.eval(frame, other, [])
            if value.varies or value.shape:
                continue
            learned.append((key, current, value))
        return (tuple(learned), ()) if positive else ((), tuple(learned))

    def _members_listed_by(self, frame: _Frame, expr: Expr) -> Optional[str]:
        """`dist.get_process_group_ranks(group)` (Catalog.group_ranks_calls) lists the members of
        `group`: what names them (`_group_members`), for `rank in ...` to test membership of it."""
        if expr[0] != "call":
            return None
        site = frame.fn.calls[expr[1]]
        if site.callee[0] != "qual" or self.program.resolve(site.callee[1]).qualname not in self.catalog.group_ranks_calls:
            return None
        group_expr = self._arg(site, 0, "group")
        if group_expr is None or not _plain_reference(group_expr):
            return None
        return _group_members(group_expr, self.eval(frame, group_expr, []))

    @staticmethod
    def _variable_key(frame: _Frame, expr: Expr) -> Optional[str]:
        """The frame's key for a local variable or a `self` attribute, else None."""
        if expr[0] == "name" and expr[1] in frame.env:
            return expr[1]
        if expr[0] == "attr" and _is_self(frame, expr[1]):
            return "self." + expr[2]
        return None

    def _loop_body(self, frame: _Frame, body, orelse, rounds: Optional[Taint] = None) -> List[tuple]:
        """`rounds`: what the number of rounds depends on; what the body changes depends on it too
        (`total += len(batch)` over a per-rank shard)."""
        base = dict(frame.env)
        first_write = len(frame.writes)
        body_out: List[tuple] = []
        self._body(frame, body, body_out)
        state = (frame.env, False)
        frame.env, frame.dead = base, False
        self._merge(frame, [state, (dict(base), False)], control=rounds, written=set(frame.writes[first_write:]))
        if orelse:
            self._body(frame, orelse, body_out)
        return body_out

    def _while(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, test, body, orelse, info = stmt
        frame.span = info.span
        cond_out: List[tuple] = []
        cond = self.eval(frame, test, cond_out)
        rounds = _control_taint(cond.taints, info, frame.path)
        body_out = cond_out + self._loop_body(frame, body, orelse, rounds)
        if not body_out:
            return
        formula = None
        guard = None
        uneven = None
        if cond.rank is not None or cond.pred is not None:
            # `while rank == 0:` / `while not is_main():`: some ranks loop, the others do not.
            formula = formula_of(cond, ("guard", frame.path, info.span.line, info.span.column))
            guard = self._guard(frame, info, cond)
        elif cond.varies and not frame.join:
            uneven = self._guard(frame, info, cond)  # how many rounds depends on the rank's own values
        out.append(("loop", (frame.path, info.span.line, info.span.column), formula, body_out, guard, uneven))

    def _for(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, target, iterable, body, orelse, info = stmt
        frame.span = info.span
        items = self.eval(frame, iterable, out)
        length = items.shape | self._iteration_shape(items)
        uneven = self._guard(frame, info, Val(taints=length)) if length and not frame.join else None
        element = self._iteration_value(items, info, frame)
        if self._is_counter(frame, iterable) and target[0] == "unpack" and len(target[1]) == 2:
            # `for i, batch in enumerate(loader)`: the index is the same on every rank for as long
            # as the loop runs; only the batch is this rank's own.
            self._assign(frame, target[1][0], Val(taints=length, key=("iter", frame.path, info.span.line)) if length else UNIFORM, out)
            self._assign(frame, target[1][1], element, out)
        else:
            self._assign(frame, target, element, out)
        body_out = self._loop_body(frame, body, orelse, _control_taint(length, info, frame.path))
        if body_out:
            out.append(("loop", (frame.path, info.span.line, info.span.column), None, body_out, None, uneven))

    def _is_counter(self, frame: _Frame, iterable: Expr) -> bool:
        if iterable[0] != "call":
            return False
        callee = frame.fn.calls[iterable[1]].callee
        return callee[0] == "qual" and callee[1] in self.catalog.iteration_counters

    def _exit(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, kind, value, span, text = stmt
        frame.span = span
        if value is not None:
            v = self.eval(frame, value, out)
            if kind == "return":
                frame.ret = v if not frame.returned else join(frame.ret, v)
                frame.returned = True
        elif kind == "return":
            frame.ret = UNIFORM if not frame.returned else join(frame.ret, UNIFORM)
            frame.returned = True
        out.append(("exit", kind, SiteRef(_loc(frame.path, span), text), text))
        frame.dead = True

    def _with(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, items, body, span = stmt
        frame.span = span
        managers: List[Tuple[SiteRef, str, List[tuple]]] = []
        quiet = 0
        joins = 0
        for expr, target in items:
            if self._is_quiet_context(frame, expr):
                quiet += 1
            if self._is_join_context(frame, expr):
                joins += 1
            cm = self._context_manager(frame, expr, out)
            if cm is not None:
                managers.append(cm)
                value = UNIFORM
            else:
                value = self.eval(frame, expr, out)
            if target is not None:
                self._assign(frame, target, value, out)
        body_out: List[tuple] = []
        frame.quiet += quiet
        frame.join += joins
        try:
            self._body(frame, body, body_out)
        finally:
            frame.quiet -= quiet
            frame.join -= joins
        for site, qual, cm_tree in reversed(managers):
            body_out = [("with_cm", site, qual, cm_tree, body_out)]
        out.extend(body_out)

    def _is_quiet_context(self, frame: _Frame, expr: Expr) -> bool:
        """`with model.no_sync():` on a type whose catalog entry lists it as quiet."""
        if expr[0] != "call":
            return False
        callee = frame.fn.calls[expr[1]].callee
        if callee[0] != "attr":
            return False
        spec = self.external_spec(self.eval(frame, callee[1], []).type)
        return spec is not None and callee[2] in spec.quiet

    def _is_join_context(self, frame: _Frame, expr: Expr) -> bool:
        """`with Join([model]):` / `with model.join():`: uneven inputs are handled inside."""
        if expr[0] != "call":
            return False
        callee = frame.fn.calls[expr[1]].callee
        if callee[0] == "qual":
            return self.program.resolve(callee[1]).qualname in self.catalog.uneven_ok_contexts
        if callee[0] == "attr":
            spec = self.external_spec(self.eval(frame, callee[1], []).type)
            return spec is not None and callee[2] in spec.uneven_ok
        return False

    def _context_manager(self, frame: _Frame, expr: Expr, out: List[tuple]):
        """`with project_cm(...)`: a generator context manager that reaches a collective."""
        if expr[0] != "call":
            return None
        site = frame.fn.calls[expr[1]]
        target = self.resolve_call(frame, site, out)
        if target is None or target.kind != "function" or not target.function.is_generator:
            return None
        bindings = self._bind_args(frame, target.function, site, out)
        frame.call_args.append((target.qualname, bindings))
        result = self.run(target.qualname, bindings)
        if not result.reaches:
            return None
        return (SiteRef(_loc(frame.path, site.span), site.text), target.qualname, self._callee_tree(result))

    def _try(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, body, handlers, orelse, final, span = stmt
        base = dict(frame.env)
        body_out: List[tuple] = []
        self._body(frame, body, body_out)
        states = [(frame.env, frame.dead)]
        handler_outs = []
        handler_info = []
        for type_text, name, hbody, hspan in handlers:
            frame.env, frame.dead = dict(base), False
            if name:
                frame.env[name] = UNIFORM
            h_out: List[tuple] = []
            self._body(frame, hbody, h_out)
            handler_outs.append(h_out)
            # A handler that neither re-raises nor ends the process lets this rank go on alone.
            leaves = any(node[0] == "exit" and node[1] in ("raise", "exit") for node in h_out)
            head = f"except {type_text}:" if type_text else "except:"
            handler_info.append((head, _loc(frame.path, hspan), not leaves))
            states.append((frame.env, frame.dead))
        frame.dead = False
        self._merge(frame, states)
        if frame.dead:
            frame.dead = False  # a `try` whose every path exits: keep interpreting conservatively
        orelse_out: List[tuple] = []
        self._body(frame, orelse, orelse_out)
        final_out: List[tuple] = []
        self._body(frame, final, final_out)
        if body_out or any(handler_outs) or orelse_out or final_out:
            out.append(("try", body_out, handler_outs, orelse_out, final_out, tuple(handler_info)))

    def _match(self, frame: _Frame, stmt: tuple, out: List[tuple]) -> None:
        _, subject_expr, cases = stmt
        subject = self.eval(frame, subject_expr, out)
        # Build the chain of cases from the last one up: case_i ? body_i : (rest)
        base = dict(frame.env)
        states = []
        chain: List[tuple] = []
        for pattern, guard_expr, body, info in reversed(cases):
            frame.env, frame.dead = dict(base), False
            body_out: List[tuple] = []
            guard_val = self.eval(frame, guard_expr, body_out) if guard_expr is not None else None
            self._body(frame, body, body_out)
            states.append((frame.env, frame.dead))
            cond = self._pattern_value(subject, pattern, info)
            if guard_val is not None:
                # An irrefutable pattern with a guard is decided by the guard alone.
                cond = guard_val if cond is None else self._and_values([cond, guard_val], info)
            if cond is None:  # wildcard
                chain = body_out
                continue
            rest = chain
            chain = []
            self._emit_branch(frame, cond, info, body_out, rest, chain)
        frame.dead = False
        self._merge(frame, states + [(base, False)])
        out.extend(chain)

    def _pattern_value(self, subject: Val, pattern: tuple, info: GuardInfo) -> Optional[Val]:
        tag = pattern[0]
        if tag == "wild":
            return None
        if tag == "value" and pattern[1][0] == "const":
            return self._compare(subject, "==", Val(), pattern[1][1], info.span)
        if tag == "or":
            vals = [self._pattern_value(subject, p, info) for p in pattern[1]]
            if any(v is None for v in vals):
                return None
            return self._or_values(vals)
        return Val(taints=subject.taints, key=("pattern", info.span)) if subject.taints else UNIFORM

    # ----------------------------------------------------------------- expressions
    def eval(self, frame: _Frame, expr: Optional[Expr], out: List[tuple]) -> Val:
        if expr is None:
            return UNIFORM
        tag = expr[0]
        if tag == "const":
            return UNIFORM
        if tag == "name":
            return self._name(frame, expr[1])
        if tag == "attr":
            return self._attr(frame, expr, out)
        if tag == "call":
            return self._call(frame, frame.fn.calls[expr[1]], out)
        if tag == "environ":
            kind = self.catalog.rank_environ.get(expr[1])
            if kind is None:
                return UNIFORM
            return Val(taints=frozenset([Taint("rank", f'os.environ["{expr[1]}"]', self._here(frame))]), rank=kind)
        if tag == "cmp":
            return self._cmp(frame, expr, out)
        if tag == "not":
            v = self.eval(frame, expr[1], out)
            if not v.varies:
                return taints_only(v)
            return Val(taints=v.taints, pred=negate(formula_of(v, ("not", frame.span, render(expr[1])))))
        if tag == "bool":
            return self._bool(frame, expr, out)
        if tag == "ifexp":
            _, test, body, orelse, info = expr
            cond = self.eval(frame, test, out)
            then_out: List[tuple] = []
            else_out: List[tuple] = []
            a = self.eval(frame, body, then_out)
            b = self.eval(frame, orelse, else_out)
            self._emit_branch(frame, cond, info, then_out, else_out, out)
            value = join(a, b)
            if cond.taints and body != orelse:
                # which value you get depends on the condition (rank 0 reads the file, others 0)
                value = Val(taints=value.taints | cond.taints, key=("ifexp", frame.span))
            return value
        if tag == "subscript":
            base = self.eval(frame, expr[1], out)
            index_taints: FrozenSet[Taint] = frozenset()
            for index in expr[2]:
                part = self.eval(frame, index, out)
                index_taints = index_taints | part.taints | part.shape
            taints = base.taints | index_taints
            # `files[rank::ws]`, `preds[mask]`, `chunks[rank]`: which and how many elements depends
            # on the index. A slice keeps the base's varying length; one element does not have it.
            has_slice = len(expr) > 3 and expr[3]
            if has_slice and self._bounded_slice(frame, expr[4], out):
                shape = index_taints  # `mine[:steps]` with `steps` agreed on by every rank
            elif has_slice or _is_mask(expr[2]):
                shape = base.shape | index_taints
            else:
                shape = index_taints
            if not taints and not shape:
                return UNIFORM
            return Val(taints=taints | base.shape, shape=shape, key=("subscript", frame.span, render(expr)))
        if tag == "comp":
            return self._comprehension(frame, expr, out)
        if tag == "walrus":
            v = self.eval(frame, expr[2], out)
            if expr[1]:
                self._assign(frame, ("name", expr[1]), v, out)
            return v
        if tag == "yield":
            value = self.eval(frame, expr[1], out)
            # What a generator yields is what iterating it gives (a sampler's `__iter__`).
            frame.ret = value if not frame.returned else join(frame.ret, value)
            frame.returned = True
            out.append(("yield",))
            return UNIFORM
        if tag == "op":
            taints: FrozenSet[Taint] = frozenset()
            shape: FrozenSet[Taint] = frozenset()
            for part in expr[1]:
                value = self.eval(frame, part, out)
                taints = taints | value.taints
                shape = shape | value.shape
            if not taints and not shape:
                return UNIFORM
            return Val(taints=taints, shape=shape, key=("op", frame.span, render(expr)))
        return UNIFORM

    def _bounded_slice(self, frame: _Frame, slices: Tuple, out: List[tuple]) -> bool:
        """`x[:n]` (no start or step) with a stop every rank shares: at most n items everywhere.
        The usual idiom agrees on n with `all_reduce(..., MIN)` first, so the length is even."""
        if len(slices) != 1:
            return False
        lower, upper, step = slices[0]
        if upper is None or lower is not None or step is not None:
            return False
        return not self.eval(frame, upper, []).varies

    def _comprehension(self, frame: _Frame, expr: Expr, out: List[tuple]) -> Val:
        saved = dict(frame.env)  # comprehension variables do not leak (Python 3)
        taints: FrozenSet[Taint] = frozenset()
        shape: FrozenSet[Taint] = frozenset()
        for target, iterable, conditions in expr[1]:
            items = self.eval(frame, iterable, out)
            shape |= items.shape | self._iteration_shape(items)
            taints |= items.taints
            self._assign(frame, target, taints_only(items, key=("comp", frame.span)), out)
            for condition in conditions:
                cond = self.eval(frame, condition, out)
                shape |= cond.taints | cond.shape  # a filter decides how many items are kept
                taints |= cond.taints
        for element in expr[2]:
            value = self.eval(frame, element, out)
            taints |= value.taints
        frame.env = saved
        if not taints and not shape:
            return UNIFORM
        return Val(taints=taints | shape, shape=shape, key=("comp", frame.span, render(expr)), sized=True)

    def _here(self, frame: _Frame) -> Location:
        span = frame.span or frame.fn.span
        return _loc(frame.path, span)

    def _name(self, frame: _Frame, name: str) -> Val:
        if name in frame.env:
            return frame.env[name]
        module = frame.fn.module
        imports = self._imports_of.get(module)
        if imports is None:
            imports = self._imports_of[module] = dict(self.program.modules[module].imports) if module in self.program.modules else {}
        bound = imports.get(name)
        if bound is not None:
            return self._global_ref(bound)
        stored = self.stores_seen.get((module, name))
        self._input(("gstore", (module, name)), stored)
        if frame.fn.name != MODULE_FUNCTION:
            globals_ = self.module_globals(module)
            if name in globals_:
                if stored is None:
                    return globals_[name]
                # `_GROUP = None` at import, set by an init function: the placeholder says nothing.
                return stored if globals_[name] in (UNIFORM, SIZED) else join(globals_[name], stored)
        return stored if stored is not None else UNIFORM

    def _global_ref(self, qualname: str) -> Val:
        """A dotted global read as a value: a project module variable, or a reference."""
        module, _, name = qualname.rpartition(".")
        if module in self.program.modules and qualname not in self.program.functions and qualname not in self.program.classes:
            globals_ = self.module_globals(module)
            if name in globals_:
                return globals_[name]
        return Val(ref=qualname)

    def _attr(self, frame: _Frame, expr: Expr, out: List[tuple]) -> Val:
        _, base_expr, attr = expr
        if _is_self(frame, base_expr):
            stored = frame.env.get("self." + attr)
            if stored is not None:
                return stored
            value = self.class_attr(frame.fn.class_qualname, attr)
            if value is not None:
                return value
            spec = self.external_spec(frame.fn.class_qualname)
            if spec is not None and attr in spec.attributes:
                return Val(type=spec.attributes[attr] or None)
        base = self.eval(frame, base_expr, out)
        if attr in self.catalog.rank_attributes:
            text = f"{render(base_expr)}.{attr}"
            return Val(taints=frozenset([Taint("rank", text, self._here(frame))]), rank=self.catalog.rank_attributes[attr])
        if attr in self.catalog.predicate_attributes:
            text = f"{render(base_expr)}.{attr}"
            kind, op, const = self.catalog.predicate_attributes[attr]
            return Val(taints=frozenset([Taint("rank", text, self._here(frame))]), pred=("cmp", kind, op, const))
        if attr in self.catalog.uniform_attributes:
            return UNIFORM  # `device.type`, `x.dtype`: alike on every rank even where the index is not
        if base.ref is not None:
            return self._global_ref(f"{base.ref}.{attr}")
        if base.type is not None:
            value = self.class_attr(base.type, attr) if base.type in self.program.classes else None
            if value is not None:
                return value
            spec = self.external_spec(base.type)
            if spec is not None and attr in spec.attributes:
                return Val(taints=base.taints, type=spec.attributes[attr] or None)
        if not (base.taints or base.shape):
            return UNIFORM
        return taints_only(base, key=("attr", frame.span, f"{render(base_expr)}.{attr}"))

    def _compare(self, left: Val, op: str, right: Val, right_const: Any, span: Optional[Span], right_text: str = "") -> Val:
        taints = left.taints | right.taints
        if not (left.rank_dependent or right.rank_dependent):
            return Val(taints=taints, key=("cmp", span, op)) if taints else UNIFORM
        if left.rank is not None and _is_rank_constant(right_const) and not right.taints:
            pred = ("cmp", left.rank, op, _freeze(right_const))
            if _same_on_every_rank(pred):
                # `local_rank != -1` ("launched distributed"): true on every rank alike.
                return UNIFORM
            return Val(taints=taints, pred=pred)
        if left.rank is not None and op in ("in", "not in") and right_text and not right.taints:
            member = ("member", right_text)
            return Val(taints=taints, pred=member if op == "in" else negate(member))
        if left.pred is not None and isinstance(right_const, bool) and op in ("==", "is", "!=", "is not"):
            positive = (op in ("==", "is")) == right_const
            return Val(taints=taints, pred=left.pred if positive else negate(left.pred))
        return Val(taints=taints, key=("cmp", span, op, left.key, right.key))

    def _cmp(self, frame: _Frame, expr: Expr, out: List[tuple]) -> Val:
        _, ops, operands = expr
        values = [self.eval(frame, o, out) for o in operands]
        if len(ops) == 1:
            left, right = values
            left_e, right_e = operands
            if right_e[0] == "const" or not right.taints:
                text = render(right_e) if right_e[0] in ("name", "attr") else self._members_listed_by(frame, right_e) or ""
                result = self._compare(left, ops[0], right, right_e[1] if right_e[0] == "const" else None, frame.span, text)
                if result.pred is not None or not left.rank_dependent or right_e[0] == "const":
                    return result
            if left_e[0] == "const":
                flipped = _FLIP.get(ops[0])
                if flipped is not None:
                    return self._compare(right, flipped, left, left_e[1], frame.span)
        taints: FrozenSet[Taint] = frozenset()
        for v in values:
            taints |= v.taints
        return Val(taints=taints, key=("cmp", frame.span, ops)) if taints else UNIFORM

    def _and_values(self, vals: List[Val], info: GuardInfo, exprs: Sequence[Expr] = ()) -> Val:
        return self._combine("and", vals, info, exprs)

    def _or_values(self, vals: List[Val], info: Optional[GuardInfo] = None, exprs: Sequence[Expr] = ()) -> Val:
        return self._combine("or", vals, info, exprs)

    def _combine(self, op: str, vals: List[Val], info: Optional[GuardInfo], exprs: Sequence[Expr]) -> Val:
        """`a and b` / `a or b` where some operand varies between ranks. A uniform operand that
        names a value (`in_order`, `not args.push`) becomes a variable shared by every rank, so
        `if not in_order and is_main:` ... `elif in_order:` stay consistent; any other uniform
        operand is taken as true (and) or false (or): the varying part decides who enters."""
        if not any(v.varies for v in vals):
            return UNIFORM
        formulas = []
        for index, v in enumerate(vals):
            if v.varies:
                formulas.append(formula_of(v, (op, info.span if info else None, index)))
            elif index < len(exprs):
                shared = uniform_variable(exprs[index])
                if shared is not None:
                    formulas.append(shared)
        taints = frozenset().union(*(v.taints for v in vals))
        return Val(taints=taints, pred=formulas[0] if len(formulas) == 1 else (op, tuple(formulas)))

    def _bool(self, frame: _Frame, expr: Expr, out: List[tuple]) -> Val:
        _, op, operands, info = expr
        values: List[Val] = []
        for index, operand in enumerate(operands):
            sub: List[tuple] = []
            v = self.eval(frame, operand, sub)
            if index == 0 or not sub:
                out.extend(sub)
            else:
                # The operand runs only when what came before was truthy (and) / falsy (or).
                before = self._combine(op, values, info, operands[:index])
                if before.varies:
                    cond = before if op == "and" else Val(taints=before.taints, pred=negate(formula_of(before, ("bool", info.span))))
                    self._emit_branch(frame, cond, info, sub, [], out)
                else:
                    self._emit_branch(frame, before, info, sub, [], out)
            values.append(v)
        return self._combine(op, values, info, operands)

    # ----------------------------------------------------------------- calls
    def resolve_call(self, frame: _Frame, site: CallSite, out: List[tuple]) -> Optional[Target]:
        kind = site.callee[0]
        program = self.program
        if kind == "qual":
            return program.resolve(site.callee[1])
        if kind in ("self", "super"):
            cls = frame.fn.class_qualname
            if cls is None:
                return None
            name = site.callee[1]
            method = program.find_method(cls, name, skip_self=(kind == "super"))
            if method is not None:
                return Target("function", method.qualname, function=method)
            implicit = self._implicit_method(cls, name)
            if implicit is not None:
                return implicit
            # `self.model(x)`: calling an attribute that holds a wrapped model
            stored = self.class_attr(cls, name) if kind == "self" else None
            if stored is not None:
                return self._callable_value(stored)
            return None
        if kind in ("local", "global"):
            return self._callable_value(self._name(frame, site.callee[1]))
        if kind == "attr":
            base = self.eval(frame, site.callee[1], out)
            name = site.callee[2]
            if base.type is not None:
                if base.type in program.classes:
                    method = program.find_method(base.type, name)
                    if method is not None:
                        return Target("function", method.qualname, function=method)
                implicit = self._implicit_method(base.type, name)
                if implicit is not None:
                    return implicit
            if name == "backward" and not frame.quiet:
                grad = self._grad_spec(base)
                if grad is not None:
                    return grad
            if base.ref is not None:
                return program.resolve(f"{base.ref}.{name}")
            if name in self.catalog.predicate_methods:
                return Target("predicate_call", name, detail=self.catalog.predicate_methods[name])
            return Target("external", "", detail=base)
        return None

    # ----------------------------------------------------------------- framework types
    def external_spec(self, type_name: Optional[str]):
        """The catalog spec of a type, or of the first framework base of a project class."""
        if type_name is None:
            return None
        if type_name not in self.program.classes:
            return self.catalog.type_spec(type_name)
        for cls in self.program.class_chain(type_name):
            for base in cls.bases:
                target = self.program.resolve(base)
                if target.kind == "external":
                    spec = self.catalog.type_spec(target.qualname)
                    if spec is not None:
                        return spec
        return None

    def _implicit_method(self, type_name: str, name: str) -> Optional[Target]:
        spec = self.external_spec(type_name)
        if spec is None or name not in spec.methods:
            return None
        return Target("implicit", f"{spec.qualname}.{name}", detail=("method", spec.methods[name]))

    def _callable_value(self, value: Val) -> Optional[Target]:
        if value.ref is not None:
            return self.program.resolve(value.ref)
        spec = self.external_spec(value.type)
        if spec is not None and spec.call is not None:
            return Target("implicit", spec.qualname, detail=("call", spec.call))
        return None

    def _grad_spec(self, value: Val) -> Optional[Target]:
        """`loss.backward()` where loss was computed by a wrapped model: its gradient collective."""
        for taint in sorted(value.taints, key=lambda t: (t.location.line, t.location.column)):
            if taint.kind != "grad":
                continue
            spec = self.catalog.type_spec(taint.text)
            if spec is not None and spec.grad is not None:
                return Target("implicit", f"{spec.qualname} backward", detail=("grad", spec.grad))
        return None

    def _typed(self, returns: Tuple[str, ...], taints: FrozenSet[Taint] = frozenset()) -> Val:
        if len(returns) == 1:
            return Val(taints=taints, type=returns[0] or None)
        return Val(taints=taints, elements=tuple(returns))

    def _bind_args(self, frame: _Frame, fn: FunctionSummary, site: CallSite, out: List[tuple]) -> Dict[str, Val]:
        params = fn.caller_params()
        bindings: Dict[str, Val] = {}
        for param, arg in zip(params, site.args):
            bindings[param] = self.eval(frame, arg, out)
        for name, arg in site.kwargs:
            if name in params:
                bindings[name] = self.eval(frame, arg, out)
            else:
                self.eval(frame, arg, out)
        for arg in site.args[len(params):]:
            self.eval(frame, arg, out)
        return bindings

    def _eval_args(self, frame: _Frame, site: CallSite, out: List[tuple]) -> List[Val]:
        vals = [self.eval(frame, a, out) for a in site.args]
        vals.extend(self.eval(frame, a, out) for _, a in site.kwargs)
        return vals

    def _arg(self, site: CallSite, position: Optional[int], keyword: Optional[str]) -> Optional[Expr]:
        if keyword:
            for name, expr in site.kwargs:
                if name == keyword:
                    return expr
        if position is not None and position < len(site.args):
            return site.args[position]
        return None

    def _collective(self, frame: _Frame, site: CallSite, spec, here: Location, out: List[tuple]) -> Val:
        values = {id(e): v for e, v in zip([*site.args, *(e for _, e in site.kwargs)], self._eval_args(frame, site, out))}
        group = _group_text(site, spec.group_position, spec.group_keyword)
        group_expr = self._arg(site, spec.group_position, spec.group_keyword)
        members = _group_members(group_expr, values[id(group_expr)]) if group_expr is not None and id(group_expr) in values else None
        site_ref = SiteRef(here, site.text)
        out.append(("coll", spec.op, group, site_ref, spec.note, members))
        # RC104: what every rank must pass alike.
        for position in spec.tensors:
            expr = self._arg(site, position, None)
            if expr is not None and id(expr) in values and values[id(expr)].shape:
                frame.arg_hazards.append((site_ref, spec.op, "shape", site.arg_texts[position], _first(values[id(expr)].shape)))
        for keyword, position in spec.agreed:
            expr = self._arg(site, position, keyword)
            if expr is not None and id(expr) in values and values[id(expr)].varies:
                text = dict(site.kwarg_texts).get(keyword) or (site.arg_texts[position] if position < len(site.arg_texts) else keyword)
                frame.arg_hazards.append((site_ref, spec.op, keyword, text, _first(values[id(expr)].taints)))
        for position in spec.uniformizes:
            if position < len(site.args):
                self._uniformize(frame, site.args[position])
        if spec.op == "new_group":
            ranks = self._arg(site, 0, "ranks")
            if ranks is None:
                return Val(members="WORLD")
            # Named by its ranks' variable (`if rank in ranks:` tests membership of it), else by
            # where it is built: two lists written out are not one group because both render "...".
            return Val(members=render(ranks) if _plain_reference(ranks) else f"{render(ranks)} at {here.path}:{here.line}:{here.column}")
        return UNIFORM

    def _call(self, frame: _Frame, site: CallSite, out: List[tuple]) -> Val:
        target = self.resolve_call(frame, site, out)
        kind = target.kind if target is not None else "unknown"
        if kind in ("function", "class", "external", "unknown"):
            # The common kinds: where the call is, is needed only if it leads to a collective.
            return self._project_call(frame, site, target, kind, out)
        here = _loc(frame.path, site.span)
        if kind == "collective":
            return self._collective(frame, site, target.collective, here, out)
        if kind == "rank_call":
            self._eval_args(frame, site, out)
            return Val(taints=frozenset([Taint("rank", f"{site.text}()", here)]), rank=target.detail)
        if kind == "predicate_call":
            self._eval_args(frame, site, out)
            k, op, const = target.detail
            return Val(taints=frozenset([Taint("rank", f"{site.text}()", here)]), pred=("cmp", k, op, const))
        if kind == "exit":
            self._eval_args(frame, site, out)
            out.append(("exit", "exit", SiteRef(here, f"{site.text}()"), f"{site.text}()"))
            frame.dead = True
            return UNIFORM
        if kind == "implicit":
            how, spec = target.detail
            vals = self._eval_args(frame, site, out)
            if spec.op and _when_holds(site, spec.when):
                out.append(("coll", spec.op, "WORLD", SiteRef(here, f"{site.text}()"), spec.note, None))
            if how == "call":
                # A wrapped model's output is this rank's own: per-rank data, and it carries the
                # gradient collective into `.backward()`.
                taints: FrozenSet[Taint] = frozenset({Taint("grad", target.qualname, here)})
                shape: FrozenSet[Taint] = frozenset()
                for v in vals:
                    taints |= v.taints
                    shape |= v.shape
                return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column))
            if spec.returns and spec.per_argument:
                # `model = accelerator.prepare(model)`: one result per argument, in order.
                if len(site.args) == 1:
                    return self._typed(spec.returns[:1])
                return self._typed(tuple(spec.returns[i] if i < len(spec.returns) else "" for i in range(len(site.args))))
            if spec.returns:
                return self._typed(spec.returns)
            return UNIFORM  # what a collective hands back is the same on every rank
        return self._project_call(frame, site, target, kind, out)

    def _project_call(self, frame: _Frame, site: CallSite, target: Optional[Target], kind: str, out: List[tuple]) -> Val:
        """A call of project code, or of something the catalog does not know."""
        if kind == "function":
            fn = target.function
            wrapped = self._wrapped_override(fn)
            if wrapped is not None and _when_holds(site, wrapped.when):
                # torchmetrics wraps a subclass's own compute() in its syncing: still a collective
                out.append(("coll", wrapped.op, "WORLD", SiteRef(_loc(frame.path, site.span), f"{site.text}()"), wrapped.note, None))
            bindings = self._bind_args(frame, fn, site, out)
            frame.call_args.append((fn.qualname, bindings))
            result = self.run(fn.qualname, bindings)
            if result.reaches and not self.is_rank_zero_only(fn):
                out.append(("call", SiteRef(_loc(frame.path, site.span), site.text), fn.qualname, self._callee_tree(result)))
            ret = result.ret
            if ret.varies and ret.rank is None and ret.pred is None:
                ret = replace(ret, key=("ret", fn.qualname))
            return ret
        if kind == "class":
            init = self.program.find_method(target.qualname, "__init__")
            if init is not None:
                bindings = self._bind_args(frame, init, site, out)
                frame.call_args.append((init.qualname, bindings))
                result = self.run(init.qualname, bindings)
                if result.reaches:
                    out.append(("call", SiteRef(_loc(frame.path, site.span), site.text), init.qualname, self._callee_tree(result)))
            else:
                self._eval_args(frame, site, out)
            return Val(type=target.qualname)
        return self._external_call(frame, site, target, out)

    def _external_call(self, frame: _Frame, site: CallSite, target: Optional[Target], out: List[tuple]) -> Val:
        """A call rankcheck has no body for: its result depends on its arguments (and object)."""
        catalog = self.catalog
        all_vals = self._eval_args(frame, site, out)
        name = target.qualname if target is not None else ""
        base = target.detail if target is not None and isinstance(target.detail, Val) else None
        last = (site.callee[2] if site.callee[0] == "attr" else name.rsplit(".", 1)[-1]) if (name or site.callee[0] == "attr") else ""
        # Where a value lives is not what it is: `model.to(device)`, `torch.zeros(n, device=dev)`
        # with a per-rank device leave the contents and the shape alike on every rank.
        if site.callee[0] == "attr" and last in catalog.placement_methods:
            vals: List[Val] = []
        elif name in catalog.iteration_wrappers or last == "tqdm":
            vals = all_vals[: len(site.args)]  # `tqdm(loader, disable=not is_main)`: the options are not the items
        else:
            positional = all_vals[: len(site.args)]
            keywords = [v for (kw, _), v in zip(site.kwargs, all_vals[len(site.args) :]) if kw not in catalog.placement_keywords]
            vals = positional + keywords
        if name in ("int", "builtins.int") and len(vals) == 1 and vals[0].rank is not None:
            return vals[0]
        if name in catalog.uniform_calls:
            return UNIFORM  # `isinstance(batch, dict)`: types do not differ between ranks
        taints: FrozenSet[Taint] = frozenset()
        shapes: FrozenSet[Taint] = frozenset()
        measures = last in catalog.shape_measures
        for v in vals:
            # `len(x)` depends on how many items x has, not on what they are (when that is known).
            taints |= v.shape if measures and v.sized else v.taints | v.shape
            shapes |= v.shape | self._iteration_shape(v)
        if base is not None:
            taints |= base.shape if measures and base.sized else base.taints | base.shape
        if name in catalog.data_calls:
            taints |= {Taint("data", f"{site.text}()", _loc(frame.path, site.span))}
        callee = site.callee
        if callee[0] == "attr" and callee[1][0] == "name" and last in catalog.container_mutators:
            # `flagged.extend(ids[mask])` / `counter.update(words)`: how many items it holds
            # depends on what was added.
            added: FrozenSet[Taint] = frozenset()
            for v in vals:
                added |= v.taints | v.shape
            self._grow(frame, callee[1][1], added, added)
        # What the result's shape (or length) depends on.
        sized = name in catalog.shape_factories or name in catalog.shape_from_values
        if name in catalog.shape_factories:
            shape = frozenset(t for v in vals for t in (v.taints | v.shape))
        elif name in catalog.shape_from_values:
            shape = shapes
        elif last in catalog.shape_sharders:
            shape = frozenset(t for v in vals for t in (v.taints | v.shape)) | (base.taints | base.shape if base else frozenset())
        elif last in catalog.shape_reducers:
            shape = frozenset()
        elif base is not None:
            shape = base.shape | (frozenset(t for v in vals for t in v.taints) if last in catalog.shape_reshapers else frozenset())
        else:
            shape = shapes
        if name:
            typed = self._external_constructor(frame, name, site)
            if typed is not None:
                # An object built from its arguments: how many items it has follows their lengths,
                # not their values (a DataLoader over `torch.randn(64, 4)` has a fixed length).
                return replace(typed, taints=typed.taints | taints, shape=typed.shape | shapes, sized=True)
        if name in catalog.iteration_wrappers or last in ("tqdm",):
            typed_arg = next((v for v in vals if v.type), None)
            if typed_arg is not None:
                return Val(taints=taints, shape=shape, type=typed_arg.type, key=("call", frame.path, site.span.line, site.span.column))
        if name in catalog.group_membership.values() or name in catalog.uniform_in_group:
            return Val(members=name)
        if name in catalog.group_membership:
            return Val(taints=frozenset([Taint("rank", f"{site.text}()", _loc(frame.path, site.span))]), pred=("member", catalog.group_membership[name]))
        if not taints and not shape:
            return SIZED if sized else UNIFORM
        return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column), sized=sized)

    def _grow(self, frame: _Frame, name: str, taints: FrozenSet[Taint], length: FrozenSet[Taint]) -> None:
        """A container changed in place (`lst.append(x)`, `d[k] = v`, `counter.update(words)`)."""
        if not taints and not length:
            return
        old = frame.env.get(name, UNIFORM)
        frame.env[name] = replace(old, taints=old.taints | taints, shape=old.shape | length, key=old.key or ("grow", name, frame.span), rank=None, pred=None)
        frame.writes.append(name)

    def _iteration_shape(self, value: Val) -> FrozenSet[Taint]:
        """How many items iterating `value` gives may differ per rank: a project sampler or
        dataset class whose `__iter__`/`__len__` depends on the rank."""
        if value.type is None or value.type not in self.program.classes:
            return frozenset()
        found: FrozenSet[Taint] = frozenset()
        for name in ("__iter__", "__len__"):
            method = self.program.find_method(value.type, name)
            if method is not None and method.qualname not in self._stack:
                ret = self.run(method.qualname).ret
                found |= ret.taints | ret.shape
        return frozenset(t for t in found if t.kind == "rank") or found

    def _iteration_value(self, items: Val, info: GuardInfo, frame: "_Frame") -> Val:
        """The loop variable of `for x in items`."""
        taints = items.taints | items.shape | self._iteration_shape(items)
        spec = self.external_spec(items.type)
        if spec is not None and spec.iterates == "data":
            taints |= {Taint("data", info.condition, _loc(frame.path, info.span))}
        return Val(taints=taints, key=("iter", frame.path, info.span.line)) if taints else UNIFORM

    def _external_constructor(self, frame: _Frame, name: str, site: CallSite) -> Optional[Val]:
        """`DDP(model)`, `Accelerator()`, `deepspeed.initialize(...)`, `fully_shard(model)`."""
        fn_spec = self.catalog.functions.get(name)
        if fn_spec is not None:
            if fn_spec.types_argument is not None and fn_spec.types_argument < len(site.args):
                arg = site.args[fn_spec.types_argument]
                if arg[0] == "name" and fn_spec.returns:
                    frame.env[arg[1]] = replace(frame.env.get(arg[1], UNIFORM), type=fn_spec.returns[0])
            return self._typed(fn_spec.returns) if fn_spec.returns else None
        if name in self.catalog.types or (name.rsplit(".", 1)[-1][:1].isupper() and self.catalog.type_spec(name)):
            return Val(type=name)
        return None

    def is_rank_zero_only(self, fn: FunctionSummary) -> bool:
        names = self.catalog.rank_zero_only
        if names and any(d.rsplit(".", 1)[-1] in names for d in fn.decorators):
            return True
        spec = self.external_spec(fn.class_qualname) if fn.class_qualname else None
        return spec is not None and fn.name in spec.rank_zero_methods  # Lightning's prepare_data

    def rank_zero_reason(self, fn: FunctionSummary) -> str:
        names = self.catalog.rank_zero_only
        for decorator in fn.decorators:
            if decorator.rsplit(".", 1)[-1] in names:
                return f"@{decorator.rsplit('.', 1)[-1]}"
        spec = self.external_spec(fn.class_qualname) if fn.class_qualname else None
        return f"{spec.framework} calls {fn.name} on one rank" if spec is not None else ""

    def _wrapped_override(self, fn: FunctionSummary):
        if not fn.class_qualname:
            return None
        spec = self.external_spec(fn.class_qualname)
        if spec is None or fn.name not in spec.wraps or fn.name not in spec.methods:
            return None
        implicit = spec.methods[fn.name]
        return implicit if implicit.op else None

    def _hook_types(self, fn: FunctionSummary) -> Tuple[str, ...]:
        if not fn.class_qualname:
            return ()
        spec = self.external_spec(fn.class_qualname)
        if spec is None:
            return ()
        for pattern, types in spec.hooks:
            if fnmatch.fnmatchcase(fn.name, pattern):
                return types
        return ()

    def _uniformize(self, frame: _Frame, arg: Expr) -> None:
        if arg[0] == "name":
            frame.env[arg[1]] = UNIFORM
        elif arg[0] == "attr" and arg[1][0] == "name" and frame.fn.params and arg[1][1] == frame.fn.params[0]:
            frame.env["self." + arg[2]] = UNIFORM
        elif arg[0] == "subscript":
            self._uniformize(frame, arg[1])


_FLIP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def _same_on_every_rank(pred: Formula) -> bool:
    _, _, op, const = pred
    results = set()
    for rank in (0, 1, 2, 3, 7, 1000):
        if op in ("==", "is"):
            results.add(rank == const)
        elif op in ("!=", "is not"):
            results.add(rank != const)
        elif op == "<":
            results.add(rank < const)
        elif op == "<=":
            results.add(rank <= const)
        elif op == ">":
            results.add(rank > const)
        elif op == ">=":
            results.add(rank >= const)
        elif op == "in":
            results.add(rank in const)
        elif op == "not in":
            results.add(rank not in const)
        else:
            return False
    return len(results) == 1


def _is_rank_constant(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, tuple) and value != () and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, (list, tuple)) else value


def _constant_truth(cond: Val, test: Expr) -> Optional[bool]:
    if test[0] == "const":
        return bool(test[1])
    return None


def uniform_variable(expr: Expr) -> Optional[Formula]:
    """A condition every rank evaluates alike, named so that its uses can be kept consistent:
    `in_order`, `args.push_to_hub`, `not in_order`. None for anything less simple."""
    if expr[0] == "not":
        inner = uniform_variable(expr[1])
        return negate(inner) if inner is not None else None
    if expr[0] in ("name", "attr"):
        text = render(expr)
        return ("uvar", text) if "..." not in text else None
    return None


def _tested_kinds(formula: Formula) -> Optional[FrozenSet[str]]:
    """The rank kinds a condition's formula compares, when it tests nothing else (no opaque or
    per-rank-data variable, no group membership), else None."""
    tag = formula[0]
    if tag == "cmp":
        return frozenset([formula[1]])
    if tag == "const":
        return frozenset()
    if tag == "not":
        return _tested_kinds(formula[1])
    if tag in ("and", "or"):
        kinds: FrozenSet[str] = frozenset()
        for part in formula[1]:
            found = _tested_kinds(part)
            if found is None:
                return None
            kinds |= found
        return kinds
    return None


def _names_the_rank(formula: Formula) -> bool:
    """Whether a condition is a test of the rank itself (`rank == 0`, `rank in ranks`), not only
    a value that depends on it somewhere along the way."""
    tag = formula[0]
    if tag in ("cmp", "member"):
        return True
    if tag == "not":
        return _names_the_rank(formula[1])
    if tag in ("and", "or"):
        return any(_names_the_rank(f) for f in formula[1])
    return False


def _without_control(value: Val) -> Val:
    taints = frozenset(t for t in value.taints if not t.text.startswith(ASSIGNED_UNDER))
    shape = frozenset(t for t in value.shape if not t.text.startswith(ASSIGNED_UNDER))
    if taints == value.taints and shape == value.shape:
        return value
    return replace(value, taints=taints, shape=shape)


def _control_taint(taints: FrozenSet[Taint], info: GuardInfo, path: str) -> Optional[Taint]:
    """The taint of values assigned under a condition (or loop) that varies between ranks."""
    if not taints:
        return None
    kind = "rank" if any(t.kind == "rank" for t in taints) else "data"
    return Taint(kind, f"{ASSIGNED_UNDER}`{info.head}`", _loc(path, info.span))


def _is_mask(indices: Tuple[Expr, ...]) -> bool:
    """`preds[preds > 0.5]`: a boolean mask keeps a data-dependent number of elements."""
    return any(index[0] in ("cmp", "not", "bool") for index in indices)


def _first(taints: FrozenSet[Taint]) -> Optional[Taint]:
    return min(taints, key=lambda t: (t.kind != "rank", t.location.line, t.location.column, t.text), default=None)


def _when_holds(site: CallSite, when: Tuple[Tuple[str, object], ...]) -> bool:
    """`self.log(..., sync_dist=True)`: the keyword must be given as that constant."""
    given = dict(site.kwargs)
    for keyword, value in when:
        expr = given.get(keyword)
        if expr is None or expr[0] != "const" or expr[1] != value:
            return False
    return True


def _group_text(site: CallSite, position: Optional[int], keyword: Optional[str]) -> str:
    if keyword:
        for name, text in site.kwarg_texts:
            if name == keyword:
                return "WORLD" if text == "None" else text
    if position is not None and position < len(site.arg_texts):
        return site.arg_texts[position]
    return "WORLD"
