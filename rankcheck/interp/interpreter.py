"""The abstract interpreter: rank dependence and collective trees, one function run at a time.

Values carry where they came from (`values.Taint`), and whether they *are* the rank (`rank`, a
rank kind) or a test of it (`pred`, a formula). Interpreting a function with its parameters bound
gives a `Result`:
  * a tree of the collectives it issues (`tree`), in program order, under the branches, loops,
    exits and context managers that decide whether they run;
  * its return value, the values it stores on `self`, and the arguments it passes to project
    functions (for parameter binding across the call graph: `rounds`).
Collectives that reduce or broadcast make their in-place arguments uniform again: that is what
keeps a branch on an all-reduced flag silent.

The parts: statements.py, expressions.py, calls.py and frameworks.py (the framework model), on
the memo engine of memo.py, which keeps each run's result and verifies it before reuse.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Iterable, List, Optional, Tuple, cast

from rankcheck.catalog import HOOK_DATA
from rankcheck.ftypes import SourceStep
from rankcheck.interp.base import group_text
from rankcheck.interp.calls import Calls
from rankcheck.interp.expressions import Expressions
from rankcheck.interp.frame import Frame, Result
from rankcheck.interp.frameworks import Frameworks
from rankcheck.interp.memo import SELF_STATE, CalleeTree, Fact, binding_signature
from rankcheck.interp.statements import Statements
from rankcheck.interp.tree import UNDER_ANY, Collective, ExitKind, Node, SiteRef, Tree, loc, raising_branch, tree_reaches
from rankcheck.interp.values import UNIFORM, Taint, TaintKind, Val, is_agreed, join, value_through
from rankcheck.program.ir import ITEM_STORE, MODULE_FUNCTION, FunctionSummary, statements

# A dataclass built at this many call sites (outside tests) is a record whose fields are per
# instance (Interpreter.is_record); at fewer, one object set up where it is built.
RECORD_CONSTRUCTION_SITES = 3


class Interpreter(Statements, Expressions, Calls, Frameworks):
    """Interprets functions on demand, memoised by (function, binding signature) (memo.py)."""

    def abandon(self) -> None:
        """After a RecursionError unwound a run: the call stack bookkeeping starts afresh."""
        super().abandon()
        self._stack.clear()
        self._globals_busy.clear()
        self._class_attrs_busy.clear()

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
        node = ("memo", (qualname, "root" if as_root else binding_signature(bindings, self.edited)))
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
            if fn.class_qualname is not None:
                for attr, stored in result.self_stores.items():
                    if any(t.control for t in stored.taints):
                        # Set on some ranks only (_with_rank_branches): what the method's next
                        # call reads of it (class_attr), learned over the rounds.
                        self._store_global((SELF_STATE + qualname, attr), stored)
        finally:
            self._stack.pop()
            self._end(node, result, keep=result is not None)
        self.last_fact = self._facts[node][-1] if result is not None else None
        if as_root and result is not None:
            self._last_root[qualname] = self.last_fact
        return result

    def _named_defaults(self, fn: FunctionSummary) -> Dict[str, Val]:
        """The parameters whose default names a project function (`test_type=is_torch_tensor`):
        that function, which a call that leaves them out runs where it calls them."""
        found: Dict[str, Val] = {}
        for param, dotted in fn.named_defaults:
            target = self.program.resolve(dotted)
            if target.kind == "function" and target.function is not None:
                found[param] = Val(ref=target.function.qualname)
        return found

    def _callee_tree(self, result: Result) -> Tree:
        """What a call node holds of the callee's run just made: its tree, read through the memo
        (CalleeTree) when a fact holds it, as is (a recursion stub) otherwise."""
        fact = self.last_fact
        if fact is not None and fact.value is result:
            return CalleeTree(self, fact)
        return result.tree

    def trees_unchanged(self, reads: Iterable[Tuple[CalleeTree, Fact]]) -> bool:
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

    def _reentry_stub(self, qualname: str) -> List[Node]:
        chain = self.program.witness(qualname)
        if not chain:
            return []
        fn, site, target = chain[-1]
        if target.kind != "collective" or target.collective is None:
            return []
        here = loc(self.program.path_of_function[fn.qualname], site.span)
        spec = target.collective
        return [Collective(spec.op, group_text(site, spec.group_position, spec.group_keyword), SiteRef(here, site.text), spec.note, None, spec.fails_together, UNDER_ANY)]

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
            frame = Frame(fn, self.program.path_of_function[qual], {})
            self._stack.append(qual)
            try:
                self._body(frame, fn.body, [])
            finally:
                self._stack.pop()
            env = frame.env
        finally:
            self._globals_busy.discard(module)
            self._end(node, env, keep=env is not None)
        return env if env is not None else {}

    def is_record(self, class_qualname: str) -> bool:
        """Whether the class is a record: a dataclass of values built at many call sites
        (RECORD_CONSTRUCTION_SITES), whose fields are each instance's, so what one caller passes
        stays with the object it built. (A component, `Trainer(rank=rank)`, or a dataclass set
        up at a site or two, holds what its callers pass on its one object.)"""
        self._input(("class", class_qualname), self.program.classes.get(class_qualname))
        if not self.program.declares_fields(class_qualname):
            return False
        sites = self.program.construction_sites(class_qualname)
        self._input(("sites", class_qualname), sites)
        return sites >= RECORD_CONSTRUCTION_SITES

    def class_attr(self, class_qualname: str, attr: str) -> Optional[Val]:
        key = (class_qualname, attr)
        node = ("cattr", key)
        fact = self._lookup(node)
        if fact is not None:
            return fact.value
        if key in self._class_attrs_busy:
            return self._constructed_attr(class_qualname, attr)
        self._class_attrs_busy.add(key)
        self._begin()
        value: Optional[Val] = None
        partial = False  # a storing method was running, so what it stores is not in `value` yet
        # A record built all over the project (verl's `DataProto(batch=..., meta_info=...)`):
        # what one caller passes its methods is that caller's instance's, not every instance's,
        # so the storing methods run on what the class itself computes (arguments left alike).
        # An object set up at a site or two (`Trainer(rank=rank)`) keeps what its callers pass.
        per_instance = self.is_record(class_qualname)
        try:
            for cls in self.program.class_chain(class_qualname):
                self._input(("class", cls.qualname), cls)
                storing = [methods for stored_attr, methods in cls.self_stores if stored_attr == attr]
                # `self.outputs.append(x)` in `validation_step`: what `on_validation_epoch_end` reads.
                growing = self.catalog.container_adders | self.catalog.container_mutators | {ITEM_STORE}
                storing.extend(tuple(fn for name, fn in calls if name in growing) for mutated, calls in cls.self_mutations if mutated == attr)
                for methods in storing:
                    for method in methods:
                        if method in self._stack and per_instance:
                            partial = True
                            continue
                        if method in self._stack:
                            partial = True
                            # Running now (`if self.already_saved: return` at the top of the
                            # method that sets it): what its earlier calls left on some ranks
                            # only, learned over the binding rounds as module variables stored
                            # through `global` are. (What it stores alike on every rank, or from
                            # per-rank data, is left out, as it was before.)
                            learned_key = (SELF_STATE + method, attr)
                            got = self.stores_seen.get(learned_key)
                            self._input(("gstore", learned_key), got)
                        else:
                            got = self.run(method, {} if per_instance else None).self_stores.get(attr)
                        if got is not None and (got.taints or got.shape):
                            # Evidence: what another method made rank-dependent came through here.
                            fn = self.program.functions[method]
                            step = SourceStep(f"stored in `self.{attr}` by `{fn.name}()`", loc(self.program.path_of_function[method], fn.span))
                            got = value_through(got, step)
                        if got is not None:
                            value = got if value is None else join(value, got)
        finally:
            self._class_attrs_busy.discard(key)
            # Not kept when a storing method was skipped here (it was running: `update` appending
            # to `self._d` reads it while the memo computes `self._q`): read again later, it
            # holds what that method stores too.
            self._end(node, value, keep=value is not None and not partial)
        return value

    def _constructed_attr(self, class_qualname: str, attr: str) -> Optional[Val]:
        """What a method reads of `self.<attr>` while the methods that store it are being run to
        learn it (class_attr): the mapping the constructor wrote there, as on the method's first
        call (`self.metrics = {}` in `__init__`, keys added under a per-rank test in `step`: the
        keys added are `step`'s own). None: the constructor wrote no mapping display there, or it
        is running."""
        for cls in self.program.class_chain(class_qualname):
            init = cls.qualname + ".__init__"
            if init not in self.program.functions:
                continue
            if init in self._stack:
                return None
            built = self.run(init).self_stores.get(attr)
            # Only a mapping written as a display (`{}`, `defaultdict(list)`): what keys the
            # method adds to it is then its own; of any other value, nothing is taken here.
            return built if built is not None and built.entries is not None else None
        return None

    def _interpret(self, fn: FunctionSummary, bindings: Dict[str, Val], as_root: bool = True) -> Result:
        path = self.program.path_of_function[fn.qualname]
        env: Dict[str, Val] = {}
        hook_types = self._hook_types(fn)
        learned = self.param_bindings.get(fn.qualname, {}) if as_root else {}
        flags = dict(fn.flag_defaults)
        named = self._named_defaults(fn)
        computed = dict(fn.value_defaults)
        left_out: List[str] = []  # parameters that hold what their default computes
        for index, param in enumerate(fn.params):
            if index == 0 and fn.class_qualname and not fn.is_staticmethod:
                # A classmethod's `cls` is the class: `cls()` builds one (a singleton's `instance()`).
                # The instance, as the call's receiver was built where that is known (Calls:
                # `TokenLoss(reduction="none")(logits, labels)` runs `forward` on that object).
                env[param] = bindings.get(param) or Val(type=fn.class_qualname, ref=fn.class_qualname if fn.is_classmethod else None)
                continue
            # A call that leaves a parameter out leaves its default there: a flag default is known
            # (`use_barriers=False`), any other is alike on every rank.
            default = learned.get(param) if as_root else Val(const=(flags[param],)) if param in flags else named.get(param, UNIFORM)
            if default is None and learned:
                # Callers bind other parameters and leave this one out: it holds its default
                # (`def broadcast_list(..., rank=0)` called without `rank=`), alike everywhere.
                default = named.get(param, UNIFORM)
            elif default is None:
                # No caller in the project binds it: an entry point's parameter (a script's
                # `main(local_rank)`, a spawn target's first one) is what its name or use says.
                default = self.rank_by_convention(fn, param, path) or self.data_by_convention(fn, param, path) or UNIFORM
            if param in computed and param not in bindings and (not as_root or learned.get(param) is None):
                left_out.append(param)
            value = bindings.get(param, default)
            if value.varies and value.rank is None and value.pred is None:
                # One identity for the parameter, so `if not p:` and `if p:` are complementary.
                value = replace(value, key=("param", fn.qualname, param))
            passed = hook_types[index - 1] if 0 <= index - 1 < len(hook_types) else ""
            if passed == HOOK_DATA:
                # `validation_step(self, batch, ...)`: the framework hands each rank its own batch.
                # Like a loader's batch (Val.batch): as many samples as the loader's batch size.
                data = Taint(TaintKind.DATA, param, loc(path, fn.span))
                value = replace(value, taints=value.taints | {data}, key=value.key or ("param", fn.qualname, param), sized=True, batch=True)
                padded = self._hook_batch_padding(fn)
                if padded:
                    # The framework's own collator pads each batch to its longest sample (the
                    # Trainer's DataCollatorWithPadding): those fields are as wide as this rank's.
                    width = Taint(TaintKind.DATA, f"{param} (the framework pads each batch to its own longest sample)",
                                  loc(path, fn.span), trailing=True, fields=padded)
                    value = replace(value, shape=value.shape | {width})
            elif value.type is None and passed:
                value = replace(value, type=passed)  # what the framework passes
            if value.type is None:
                declared = self.declared_type(fn, param)
                if declared is not None:
                    value = replace(value, type=declared)  # `accelerator: Accelerator`
            env[param] = value
        for name, value in bindings.items():
            if name not in env:
                env[name] = value  # a variable of the enclosing function a nested one reads (_closure)
        # Judged as a root: the fields of the objects callers pass (`output.sample_metrics`).
        fields = {name: value for name, value in learned.items() if "." in name and name.split(".", 1)[0] in env}
        env.update(fields)
        frame = Frame(fn, path, env, as_root=as_root)
        for name in (*bindings, *fields):
            root = name.split(".", 1)[0]
            if root != name and root in env and root != (fn.params[0] if fn.class_qualname and fn.params else None):
                frame.field_roots.add(root)  # `state.since` as the caller stored it (calls._passed_fields)
        for param in left_out:
            # Read from where the `def` stands (`rank=int(os.environ["RANK"])`): what a rank-
            # or data-dependent default holds is what a call that leaves it out works with. What
            # it calls runs once, when the `def` runs, so it adds nothing to the call's tree.
            value = self.eval(frame, computed[param], [])
            if value.varies or value.type is not None:
                env[param] = replace(value, key=("param", fn.qualname, param)) if value.varies and value.rank is None and value.pred is None else value
        given = dict(env)  # what the parameters held on entry (the frame changes `env` in place)
        if not as_root:
            # (An optional input's presence is judged where the callee is a root: its binding keeps it.)
            frame.passed_data = frozenset(t for value in bindings.values() for t in value.taints | value.shape if t.kind is TaintKind.DATA and not t.presence)
        tree: List[Node] = []
        self._body(frame, fn.body, tree)
        if not frame.dead:
            tree.extend(self._stops(frame))
        if frame.returned_under_data_test and _returns_none_and_a_value(fn, falls_off=not frame.dead):
            # `if not torch.isfinite(loss): return None` ... `return loss * scale`: whether a rank
            # gets None is decided by its own data; what the value holds says as much as the test.
            frame.ret = replace(frame.ret, content_only=frozenset())
        reaches = tree_reaches(tree)
        raising = None if reaches else raising_branch(tree) or frame.raising
        # A parameter that held something varying and holds it agreed now, the same object (not
        # bound again): a collective on it made the caller's object alike everywhere.
        agreed = frozenset(param for param in fn.caller_params()
                           if param not in frame.rebound and given.get(param, UNIFORM).varies and is_agreed(frame.env.get(param)))
        # For one call, the receiver is one object, the call's: what the method left on it, the
        # branch each value was set in kept (`if metric > self._best: self._bad_epochs = 0`, as
        # the frame holds `self._bad_epochs` after the branch), for the caller's object to hold.
        receiver_stores = {} if as_root else {attr: join(stored, frame.env.get("self." + attr, stored)) for attr, stored in frame.self_stores.items()}
        return Result(tree=tree, ret=frame.ret, self_stores=_with_rank_branches(frame), call_args=frame.call_args, reaches=reaches,
                      arg_hazards=frame.arg_hazards, raising=raising, param_stores=frame.param_stores, agreed=agreed,
                      receiver_stores=receiver_stores, ret_fields=frame.ret_fields, never_returns=self._never_returns(frame))

    def _never_returns(self, frame: Frame) -> Optional[Tuple[ExitKind, Optional[Tuple[str, ...]]]]:
        """How the function ends where, as written, it never returns: a `raise` among its own
        statements and no `return` anywhere (that every path died in this run is not enough: a
        test of a value read as its default, `assert trainer.state.stage is not None`, fails in
        the run, not in the program). Not for a method a project subclass may override, an
        abstract one, or a `NotImplementedError` placeholder: a call of it runs something else."""
        fn = frame.fn
        if fn.is_generator or not frame.fatal_exits or not any(stmt[0] == "exit" and stmt[1] == "raise" for stmt in fn.body):
            return None
        if fn.class_qualname and (self.program.has_subclasses(fn.class_qualname) or any(d.rsplit(".", 1)[-1] == "abstractmethod" for d in fn.decorators)):
            return None
        if any(stmt[0] == "exit" and stmt[1] == "return" for stmt in statements(fn.body)):
            return None
        lineages = [raises for _, raises in frame.fatal_exits]
        if any(raises is not None and "NotImplementedError" in raises for raises in lineages):
            return None
        how = ExitKind.EXIT if any(kind is ExitKind.EXIT for kind, _ in frame.fatal_exits) else ExitKind.RAISE
        if any(raises is None for raises in lineages):
            return how, None
        return how, tuple(dict.fromkeys(name for raises in lineages for name in cast(Tuple[str, ...], raises)))


def _with_rank_branches(frame: Frame) -> Dict[str, Val]:
    """What the method leaves in each attribute for the other methods (and its own next call) to
    read: the value's own dependence (Frame.store_self), and whether it was set on some ranks
    only: an explicit test of the rank around the store (`if rank == 0: self.already_saved =
    True`) leaves another value on the other ranks. Branches on per-rank data or configuration,
    and loops, are left out, as store_self leaves them."""
    stores = frame.self_stores
    if not frame.stored_under_rank_tests:
        return stores
    out = dict(stores)
    for attr, tests in frame.stored_under_rank_tests.items():
        stored = out.get(attr)
        if stored is None or tests <= stored.taints:
            continue
        out[attr] = replace(stored, taints=stored.taints | tests, key=("phi", "self." + attr, frame.fn.qualname), rank=None, pred=None)
    return out


def _returns_none_and_a_value(fn: FunctionSummary, falls_off: bool) -> bool:
    """The function gives None on some path (`return`, `return None`, or the end of its body,
    when that is reached) and a value written otherwise on another."""
    returns = [stmt[2] for stmt in statements(fn.body) if stmt[0] == "exit" and stmt[1] == "return"]
    gives_none = falls_off or any(value is None or value == ("const", None) for value in returns)
    return gives_none and any(value is not None and value != ("const", None) for value in returns)
