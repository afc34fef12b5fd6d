"""The memo engine: facts kept between the rounds of an analysis and between analyses.

Rank-agnostic: it stores what a computation gave and what it read, and says whether that still
holds. The interpreter (`rankcheck.interp.interpreter`) computes the facts; this module verifies
and reuses them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Optional,
    Set,
    Tuple,
)

from rankcheck.interp.frame import Result
from rankcheck.interp.tree import Node
from rankcheck.interp.values import TaintKind, Val, join

if TYPE_CHECKING:
    from rankcheck.program.link import Program


# The learned stores (`global_stores`) also hold what each method leaves in its object's
# attributes, under (SELF_STATE + the method's qualname, attribute): what a method reads of an
# attribute it stores itself is what its earlier calls left there (Interpreter.class_attr).
SELF_STATE = "<self> "


def binding_signature(bindings: Dict[str, Val], edited: Optional[Dict[str, int]] = None) -> Tuple:
    """What a call's run depends on of its arguments. Taints count as there or not, whatever
    their source; but a source in a file edited since the memo began (`edited`: path -> how many
    times) counts with that file's version: the run's values carry the source's place into the
    evidence and into GuardRef.from_caller, and a run kept from before an edit moved its line would
    show the old place (the language server's workspace; a command-line run edits nothing)."""
    moved: Tuple = ()
    if edited:
        moved = tuple(sorted({(t.location.path, edited[t.location.path]) for v in bindings.values()
                              for t in v.taints | v.shape if t.location.path in edited}))
    return moved + tuple(
        sorted(
            (k, v.rank, v.pred, v.key, v.type, v.members, bool(v.taints), bool(v.shape), bool(v.element_shape), v.sized, v.const, v.element, v.built_with,
             v.ref, v.refs, v.batch, v.world_multiple, bool(v.dtype_choice), _keyed_signature(v), v.defined)
            for k, v in bindings.items()
            # A function passed in (a callback) is what the callee's call of it runs.
            if v.varies or v.shape or v.element_shape or v.type or v.members or v.const is not None or v.element is not None or v.ref or v.refs
            or v.world_multiple or v.unkeyed is not None or v.defined
        )
    )


def _keyed_signature(v: Val) -> Optional[Tuple]:
    """What a run reads of a mapping's partial view (Val.keyed): which keys were stored, and
    whether each of them, and the rest, varies."""
    if v.unkeyed is None:
        return None
    return tuple((name, bool(held.taints), bool(held.shape), held.const) for name, held in v.keyed) + (bool(v.unkeyed.taints), bool(v.unkeyed.shape))


_NO_NEEDS: FrozenSet[Tuple[str, Any]] = frozenset()


class Fact:
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

    def __init__(self, ident: int, node: Tuple, value: Any, recording: _Recording, touched: int) -> None:
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
        self.cut = False  # see Fact.cut

    def used(self, node: Tuple, fact: Fact) -> None:
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

    def absorb(self, other: _Recording) -> None:
        """What a computation that is not kept read, as this one's own reads."""
        for node, value in other.inputs.items():
            self.inputs.setdefault(node, value)
        self.deps.extend(other.deps)
        for key, value in other.stores.items():
            old = self.stores.get(key)
            self.stores[key] = value if old is None else join(old, value)
        if other.needs and not other.needs <= self.needs:
            self.needs = other.needs if not self.needs else self.needs | other.needs
        self.cut = self.cut or other.cut

    def need(self, item: Tuple[str, Any]) -> None:
        if item not in self.needs:
            self.needs = self.needs | {item}


class CalleeTree(Sequence):
    """A called function's tree as a caller's Call or WithContext node holds it: the tree of the
    version of the callee's fact that is valid when it is read. A caller's fact rests only on what
    it reads of its callees' results (`_interface`), not on their trees; so when an edit changes
    a callee's tree but not what it returns (it moved the callee's lines), its callers' facts stay
    valid and still show the callee's current tree. A list to whoever walks it."""

    __slots__ = ("_interp", "_fact")

    def __init__(self, interp: MemoEngine, fact: Fact) -> None:
        self._interp = interp
        self._fact = fact

    def fact(self) -> Fact:
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
    def tree(self) -> List[Node]:
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


def _interface(fact: Fact) -> Tuple:
    """What the facts that use `fact` read of it: a run's return value, whether it reaches a
    collective, what it stores on `self` and into the objects it was passed, which parameters it
    made agreed, what it raises, what the object it returns holds, and the argument hazards of per-rank data its caller passed
    (Calls._project_call takes those into the caller's run; its tree only through CalleeTree, its
    call arguments and other hazards the analysis reads from the root runs themselves), and what
    reusing it stores and needs; any other fact's whole value."""
    value = fact.value
    if isinstance(value, Result):
        passed_on = tuple(h for h in value.arg_hazards if h.taint is not None and h.taint.kind is TaintKind.DATA)
        return (value.ret, value.reaches, value.self_stores, value.param_stores, value.agreed, value.raising, passed_on,
                value.ret_fields, fact.stores, fact.needs)
    return (value, fact.stores, fact.needs)


class MemoEngine:
    """Facts memoised by key: a function's run by (function, binding signature), a module's
    top-level values, a class attribute.

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

    MAX_VERSIONS = 8  # versions kept per fact key (a root has one per round of bindings)

    def __init__(self, program: Program) -> None:
        self.program = program
        self._facts: Dict[Tuple, List[Fact]] = {}
        self._readers: Dict[Tuple, List[Fact]] = {}  # input or fact node -> facts that read it
        self._witnesses: Set[Tuple] = set()  # ("witness", function) inputs read
        # Function -> the fact its last run as a root gave: asked again while that fact's verdict
        # stands, the answer is its value (every round of parameter binding asks every root).
        self._last_root: Dict[str, Fact] = {}
        self._checked: Dict[int, bool] = {}  # fact id -> verdict, until an input it rests on changes
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
        self.generation = 0  # analyses run with this memo (for prune)
        self.edited: Dict[str, int] = {}  # path -> how many analyses found its functions edited
        self._pruned_at_id = 0
        self._kept_at_prune = 0
        # The learned inputs the analysis needed (driver.analysis widens a focused run with what
        # feeds them): functions run as roots, and module variables read that `global` may set.
        self.root_runs: Set[str] = set()
        self.stores_read: Set[Tuple[str, str]] = set()
        self.last_fact: Optional[Fact] = None  # the fact whose value the last run() gave
        # While not None: the callee trees read (CalleeTree.fact), id(tree) -> (tree, fact read)
        self.tree_reads: Optional[Dict[int, Tuple[CalleeTree, Fact]]] = None

    def _reentry_stub(self, qualname: str) -> List[Node]:
        """What a recursive call of `qualname` stands for (the interpreter's)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- the memo
    def begin_analysis(self, changed: Iterable[Tuple] = ()) -> None:
        """Start an analysis: no learned bindings or stores yet. `changed` names the inputs that
        differ from the previous analysis's program (("code", function), ("class", class),
        ("witness", function)); the learned inputs of the previous analysis count as changed."""
        edits = list(changed)
        self.generation += 1
        functions = {node[1] for node in edits if node[0] == "code"}
        for path in {self.program.path_of_function[qual] for qual in functions if qual in self.program.path_of_function}:
            self.edited[path] = self.edited.get(path, 0) + 1
        nodes = [("binding", q) for q in self.param_bindings] + [("gstore", k) for k in self.stores_seen]
        if edits:
            # How often a class is built is the whole project's: any edit may change it.
            nodes.extend(node for node in self._readers if node[0] == "sites")
        self.param_bindings = {}
        self.global_stores = {}
        self.stores_seen = {}
        self.root_runs = set()
        self.stores_read = set()
        self._withdraw(nodes + edits)

    def new_round(self, bindings: Iterable[str]) -> None:
        """Another round of parameter binding: these bindings changed, and the module variable
        stores of the last round become what runs read. What read a changed one is verified again
        when next used."""
        seen = self.stores_seen
        changed = [k for k in set(seen) | set(self.global_stores) if seen.get(k) != self.global_stores.get(k)]
        self.stores_seen = dict(self.global_stores)
        self._withdraw([("binding", q) for q in bindings] + [("gstore", k) for k in changed])

    def stores_changed(self) -> bool:
        """Whether the runs since the round began stored what runs did not read yet (a store
        nothing reads changes no run)."""
        seen, stores = self.stores_seen, self.global_stores
        return any(stores.get(key) != seen.get(key) for key in self.stores_read)

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
        if kind == "sites":
            return self.program.construction_sites(key)
        if kind == "witness":
            return self._reentry_stub(key)
        if kind == "cycle":
            return self.program.recursive_cycle(key)
        raise KeyError(kind)

    def _find(self, node: Tuple) -> Optional[Fact]:
        versions = self._facts.get(node)
        if versions:
            for fact in reversed(versions):
                if self._valid(fact):
                    return fact
        return None

    def _lookup(self, node: Tuple) -> Optional[Fact]:
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

    def _valid(self, fact: Fact) -> bool:
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
            if self._recording:
                # Not kept, but what it read still decides what the enclosing fact computes.
                self._recording[-1].absorb(recording)
            return
        self._next_id += 1
        fact = Fact(self._next_id, node, value, recording, self.generation)
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
        """After a RecursionError unwound a run: no fact is being computed any more."""
        self._recording.clear()
