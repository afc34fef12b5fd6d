"""Calls: what a call resolves to, the arguments it binds, and what it gives: a collective, a
rank source, a framework's implicit collective, a project function's run, or an external call
whose result depends on its arguments."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, cast

from rankcheck.catalog import GROUP_ROLE, Catalog, CollectiveSpec, ImplicitSpec, Predicate, SpawnSpec
from rankcheck.ftypes import PER_RANK_DATA, RANK_IDENTITY, Location, SourceStep
from rankcheck.interp.base import (
    ITERATOR_MAKERS,
    InterpreterBase,
    counts_items,
    group_members,
    group_text,
    is_self,
    plain_reference,
    runs_unevenly,
    when_holds,
)
from rankcheck.interp.exceptions import SYSTEM_EXIT, UNCATCHABLE, builtin_lineage
from rankcheck.interp.files import FILES, opened_for_writing, path_words, synchronised_after, written_path
from rankcheck.interp.files import scope as file_scope
from rankcheck.interp.frame import ArgHazard, Frame
from rankcheck.interp.frameworks import without_collective
from rankcheck.interp.tree import UNDER_ANY, Branch, Call, Collective, Exit, ExitKind, GuardRef, Loop, Node, RaisingCall, SiteRef, UniformBranch, loc, own_nodes
from rankcheck.interp.values import (
    CEIL_KEY,
    GROUP_SOURCE,
    INDEX,
    RECTANGULAR,
    SIZED,
    SLOT,
    STREAM_TYPE,
    UNIFORM,
    WORLD_SIZE_KEY,
    Taint,
    TaintKind,
    Val,
    agreed,
    alike_in_members,
    assigned_under,
    batch_part,
    chosen_by_rank,
    entry,
    first_taint,
    in_one_order,
    is_empty,
    is_world_size,
    join,
    join_all,
    keyed_entry,
    leading,
    present,
    rank_value,
    rows_of,
    taint_kinds,
    taints_only,
    value_through,
    with_entry,
    with_keyed,
)
from rankcheck.program.ir import (
    ATTR_METHOD,
    CALLED_VALUE,
    SELF_METHOD,
    CallSite,
    Expr,
    FunctionSummary,
    GuardInfo,
    GuardKeyword,
    Span,
    bound_before,
    bound_names,
    free_names,
    is_no_group_rank,
    names_bound,
    render_expr,
    statements,
)
from rankcheck.program.link import Target


def _constant_keywords(site: CallSite) -> Tuple[Tuple[str, object], ...]:
    """The keywords a call passes as constants (`sync_on_compute=False`)."""
    return tuple((kw, expr[1]) for kw, expr in site.kwargs if expr[0] == "const" and isinstance(expr[1], (bool, int, str, type(None))))


def _element_after(container: Val, item: Optional[Val]) -> Optional[Val]:
    """What every item of `container` holds once `item` is added to it: the item itself in a list
    that was empty, the join with what the others hold; unknown after anything else."""
    if item is None:
        return None
    if container.element is not None:
        return join(container.element, item)
    return item if is_empty(container) else None


def _with_added(container: Val, key: Tuple, taints: FrozenSet[Taint], length: FrozenSet[Taint], element_shape: FrozenSet[Taint],
                element: Optional[Val]) -> Val:
    """`container` after items were added to it: it varies with them, it is no longer the display
    it was written as, and no longer the rank (or a test of it); which keys the additions went
    under is not known, so neither is what any key holds (Val.keyed)."""
    return replace(container, taints=container.taints | taints, shape=container.shape | length, key=container.key or key, rank=None, pred=None,
                   element_shape=container.element_shape | element_shape, items=None, element=element, entries=None, keyed=(), unkeyed=None)


_UNSET = object()  # a keyword the call does not give


def _passed_arguments(fn: FunctionSummary, site: CallSite) -> List[Tuple[str, Expr]]:
    """(parameter, argument expression) for what this call passes to `fn`'s parameters."""
    params = fn.caller_params()
    passed: List[Tuple[str, Expr]] = list(zip(params, site.args))
    passed.extend((name, arg) for name, arg in site.kwargs if name in params)
    return passed


def _passed_fields(frame: Frame, fn: FunctionSummary, site: CallSite) -> Dict[str, Val]:
    """What was stored on the objects this call passes (`state.since = 0` before
    `keep_going(state)`), under the parameters' names (`state.since`), as the callee reads them."""
    fields: Dict[str, Val] = {}
    for param, arg in _passed_arguments(fn, site):
        if arg[0] == "name" and arg[1] in frame.field_roots:
            for key, value in frame.fields_of(arg[1]).items():
                fields[param + key[len("self"):]] = value
    return fields


def _length_only(value: Val) -> Val:
    """A container's value with how many items it holds, not what they are."""
    return Val(taints=value.shape, shape=value.shape, sized=True, entries=value.entries, element_shape=value.element_shape)


def _is_field_path(name: str) -> bool:
    """`result.metrics`, a container held in a field of a variable's object (not `self.`'s)."""
    return "." in name and not name.startswith("self.")


def _hold_container(frame: Frame, name: str, value: Val) -> None:
    """The container `name` (Calls._container_name) holds `value` now: a field of a variable's
    object is the object's (Frame.store_field), wherever it is passed or returned."""
    if _is_field_path(name):
        frame.store_field(name, value)
    else:
        frame.env[name] = value


# Mappings built empty, by the number of arguments that are no content (a default factory).
_EMPTY_MAPPINGS = {"collections.defaultdict": 1, "collections.OrderedDict": 0}


def _receiver_variable(frame: Frame, fn: FunctionSummary, site: CallSite) -> Optional[str]:
    """The local variable whose object a method call runs on (`tracker.add_metric(m)`, `metric(x)`
    for `__call__`), when it holds an instance of a project class; None otherwise."""
    if fn.class_qualname is None or fn.is_staticmethod or fn.is_classmethod:
        return None
    callee = site.callee
    if callee[0] == "attr" and callee[1][0] == "name":
        name = callee[1][1]
    elif callee[0] in ("name", "local") and fn.name == "__call__":
        name = callee[1]
    else:
        return None
    if name in frame.fn.params:
        # The frame's own `self` (its state is the class's, ClassSummary.self_stores), or an
        # object a caller passed: what the callee leaves on it would be the caller's to hold, and
        # one caller's per-rank state would reach every other caller's (Result.param_stores).
        return None
    held = frame.env.get(name)
    return name if held is not None and held.type is not None and held.ref is None else None


def _names_a_class(qualname: str) -> bool:
    """`torch.nn.CrossEntropyLoss`, not `torch.nn.functional.cross_entropy`: by Python's naming."""
    return qualname.rsplit(".", 1)[-1][:1].isupper()


def _without_rank_lengths(value: Val) -> Val:
    kept = frozenset(t for t in value.shape if t.kind is not TaintKind.RANK)
    return value if kept == value.shape else replace(value, shape=kept)


def _flags_bound_once(fn: FunctionSummary) -> Dict[str, Tuple[Optional[bool]]]:
    """name -> (value,) for each variable whose only binding in the function is one assignment,
    among its straight-line statements, of `None`, `True` or `False` (not a parameter, and bound
    nowhere else: not in a loop target, a `def`, a `with ... as`, an `except ... as`, a walrus)."""
    assigned: Dict[str, List[tuple]] = {}
    for stmt in statements(fn.body):
        if stmt[0] == "assign":
            for target in stmt[1]:
                for name in bound_names(target):
                    assigned.setdefault(name, []).append(stmt)
    excluded = set(fn.params) | names_bound(fn.body, assignments=False)
    straight = {id(stmt) for stmt in _straight_line(fn.body)}
    flags: Dict[str, Tuple[Optional[bool]]] = {}
    for name, stmts in assigned.items():
        if name in excluded or len(stmts) != 1 or id(stmts[0]) not in straight:
            continue
        targets, value = stmts[0][1], stmts[0][2]
        if targets == (("name", name),) and value[0] == "const" and (value[1] is None or isinstance(value[1], bool)):
            flags[name] = (value[1],)
    return flags


def _straight_line(body: Sequence[tuple]) -> List[tuple]:
    """The statements that run whenever the body runs to its end: its own, and those of the
    `with` blocks among them (not a branch's, a loop's or a `try`'s)."""
    found: List[tuple] = []
    for stmt in body:
        found.append(stmt)
        if stmt[0] == "with":
            found.extend(_straight_line(stmt[2]))
    return found


def _slot_text(site: CallSite, slot: Tuple[int, str]) -> str:
    position, keyword = slot
    for name, text in site.kwarg_texts:
        if name == keyword:
            return text
    return site.arg_texts[position] if 0 <= position < len(site.args) else keyword


def _loop_of_its_own(frame: Frame, site: CallSite, collective: Collective, condition: str, reason: Taint, keyword: GuardKeyword) -> Loop:
    """The loop a framework call runs its collective in, uneven for `reason`, reported at the call."""
    here = loc(frame.path, site.span)
    kind = RANK_IDENTITY if reason.kind is TaintKind.RANK else PER_RANK_DATA
    guard = GuardRef(here, f"{site.text}()", condition, reason, kind, keyword=keyword)
    return Loop((frame.path, site.span.line, site.span.column), None, [collective], None, guard, None)


def _keys_of(mapping: Val) -> Val:
    """A key of a mapping written with constant keys: alike on every rank, but for what the
    mapping owes to a branch or loop it was assigned under."""
    control = assigned_under(mapping) | mapping.shape
    return Val(taints=control) if control else UNIFORM


def _inferred_dtype_choice(site: CallSite, all_vals: List[Val], layout_keywords: FrozenSet[str]) -> FrozenSet[Taint]:
    """`torch.tensor(1.0 if rank == 0 else 0)`: without a `dtype=`, the dtype is inferred from the
    data, a Python number whose type a rank test chose (Val.dtype_choice), or a display of them."""
    if not site.args or site.has_star or any(keyword in layout_keywords for keyword, _ in site.kwargs):
        return frozenset()
    data = all_vals[0]
    chosen = data.dtype_choice
    for item in data.items or ():
        chosen = chosen | item.dtype_choice
    return chosen


def _passed_shapes(value: Val, depth: int = 4) -> FrozenSet[Taint]:
    """What the shapes of a collective's tensor argument depend on: its own, and for a tuple, list
    or dict of tensors (`accelerator.gather((preds, labels))`), however nested (a list of
    per-image dicts of boxes), those of the tensors it holds."""
    found = value.shape | value.element_shape | value.order
    if depth == 0:
        return found
    for held in (*(value.items or ()), *((value.element,) if value.element is not None else ()), *(v for _, v in value.entries or ())):
        found |= _passed_shapes(held, depth - 1)
    return found


def _iterated_at(site: CallSite, args: Sequence[Expr]) -> GuardInfo:
    """A call that iterates its arguments (`next(it)`, `zip(a, b)`), as the loop header evidence
    quotes for what it yields."""
    shown = f"{site.text}({', '.join(render_expr(a) for a in args)})"
    return GuardInfo(span=site.span, head=shown, condition=shown, keyword=GuardKeyword.FOR)


def _returns_self(fn: FunctionSummary) -> bool:
    """Every `return` of the function returns its receiver (`def __iter__(self): ...; return self`)."""
    returns = [stmt for stmt in statements(fn.body) if stmt[0] == "exit" and stmt[1] == "return"]
    return bool(returns) and bool(fn.params) and all(stmt[2] == ("name", fn.params[0]) for stmt in returns)


def _returned_by_library(value: Val) -> bool:
    """The value is what a call without a body in the project returned (its identity says so)."""
    return value.key is not None and value.key[0] == "call"


def _role_kind(group: Optional[Val], catalog: Catalog) -> Optional[str]:
    """The rank kind of a member within a group known by its mesh dimension: named for it
    (Catalog.group_names), or a catalogued group's (Catalog.group_rank_kinds)."""
    if group is None or group.members is None:
        return None
    if group.members.startswith(GROUP_ROLE):
        return group.members[len(GROUP_ROLE):]
    return catalog.group_rank_kinds.get(group.members)



def _names_a_group(expr: Expr, catalog: Catalog) -> bool:
    """`dp_group`, `self.tp_pg`, `process_group`: a name that holds a process group."""
    name = expr[1] if expr[0] == "name" else expr[2] if expr[0] == "attr" else None
    return isinstance(name, str) and (name in catalog.group_names or name.endswith(catalog.group_name_suffixes))


class Calls(InterpreterBase):
    def _group_size(self, site: CallSite, name: str, last: str, base: Optional[Val]) -> bool:
        """`dist.get_world_size(group)`, `group.size()` of a process group."""
        if name in self.catalog.world_size_calls:
            return bool(site.args or site.kwargs) and not site.has_star
        if site.callee[0] != "attr" or last != "size" or site.args or site.kwargs or base is None:
            return False
        return base.members is not None or (not base.sized and _names_a_group(site.callee[1], self.catalog))

    def resolve_call(self, frame: Frame, site: CallSite, out: List[Node]) -> Optional[Target]:
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
            overrides = program.self_call_targets(frame.fn, site)
            if overrides:
                # The instance may be of a subclass that overrides the method: each may run (every
                # rank's object is of one class), the class's own as well where it has one.
                found = {fn.qualname: fn for fn in ([method] if method is not None and not program.placeholder(method) else []) + overrides}
                if len(found) > 1:
                    return Target("dispatch", name, detail=tuple(found[q] for q in sorted(found)))
                (only,) = found.values()
                return Target("function", only.qualname, function=only)
            if method is not None:
                return Target("function", method.qualname, function=method)
            if kind == "super" and name in ("forward", "__call__"):
                # `super().forward(input, target)` in a subclass of `nn.CrossEntropyLoss` (or of
                # a wrapper): calling the framework module this object is, as built.
                inherited = self._external_base_call(frame, cls)
                if inherited is not None:
                    return inherited
            implicit = self._implicit_method(cls, name)
            if implicit is not None:
                return implicit
            # `self.model(x)`: calling an attribute that holds a wrapped model
            stored = self.class_attr(cls, name) if kind == "self" else None
            if stored is not None:
                return self._callable_value(stored)
            spec = self.external_spec(cls) if kind == "self" else None
            if spec is not None and spec.attributes.get(name):
                # `self._pytorch_model(batch)` in a subclass of a framework trainer: what the
                # framework's constructor stored there, as the catalog types it.
                return self._callable_value(Val(type=spec.attributes[name]))
            if name in self.catalog.predicate_methods:
                # `self.is_world_process_zero()` in a subclass of a framework class that has it
                return Target("predicate_call", name, detail=self.catalog.predicate_methods[name])
            return None
        if kind in ("local", "global"):
            return self._callable_value(self._name(frame, site.callee[1]))
        if kind == "attr":
            stored = self.nested_self_value(frame, site.callee)
            if stored is not None:
                # `self.state.model(batch)`: calling what a method stored there.
                called = self._callable_value(stored)
                if called is not None:
                    return called
            base = self.eval(frame, site.callee[1], out)
            name = site.callee[2]
            dispatched = self._dispatched(base, name)
            if dispatched is not None:
                return dispatched
            if base.type is not None:
                if base.type in program.classes:
                    # The tree is the framework itself (accelerate's examples call its Accelerator):
                    # a catalogued method is its documented contract, as in a user's project,
                    # not the internals that implement it for every configuration at once.
                    catalogued = self._catalogued_method(base.type, name)
                    if catalogued is not None:
                        return catalogued
                    method = program.find_method(base.type, name)
                    if method is not None:
                        return Target("function", method.qualname, function=method)
                implicit = self._implicit_method(base.type, name)
                if implicit is not None and base.built_with and name in self.catalog.self_methods and not cast(Tuple[str, ImplicitSpec], implicit.detail)[1].op:
                    # `MeanMetric(sync_on_compute=False).to(device)`: the object itself, as built.
                    return Target("external", "", detail=base)
                if implicit is not None:
                    return without_collective(base, implicit)
                spec = self.external_spec(base.type)
                held = spec.attributes.get(name) if spec is not None else None
                if held:
                    # `engine.module(batch)`: calling an attribute the catalog types.
                    called = self._callable_value(Val(type=held))
                    if called is not None:
                        return called
            if name == "backward" and not frame.quiet:
                grad = self._grad_spec(base) or (self._synced_by_caller(frame.fn) if base.varies else None)
                if grad is not None:
                    return grad
            if base.ref is not None:
                return program.resolve(f"{base.ref}.{name}")
            if name in self.catalog.predicate_methods:
                return Target("predicate_call", name, detail=self.catalog.predicate_methods[name])
            if base.type is None and base.members is None and base.elements is None:
                # `self.task.get_batch_iterator(...)` with `task` a constructor argument: the
                # project's one method of that name (Program.sole_method).
                method = program.sole_method(name)
                if method is not None:
                    return Target("function", method.qualname, function=method)
            return Target("external", "", detail=base)
        if kind == "value":
            # `unwrap(model)(x)`: what the expression evaluates to is called
            return self._callable_value(self.eval(frame, site.callee[1], out))
        return None

    def _external_base(self, class_qualname: str) -> Optional[str]:
        """The first class outside the project that a project class derives from, if any."""
        for cls in self.program.class_chain(class_qualname):
            for base_name in cls.bases:
                base = self.program.resolve(base_name)
                if base.kind == "external":
                    return base.qualname
        return None

    def _external_base_call(self, frame: Frame, class_qualname: str) -> Optional[Target]:
        """What calling the first framework base of a project class does, for the instance being
        run (the keywords it was built with, where known): None where that base is not one the
        catalog knows how to call."""
        base = self._external_base(class_qualname)
        if base is None:
            return None
        receiver = frame.env.get(frame.fn.params[0]) if frame.fn.params else None
        return self._callable_value(Val(type=base, built_with=receiver.built_with if receiver is not None else ()))

    def _dispatched(self, base: Val, name: str) -> Optional[Target]:
        """`logger.log(...)` on a value that may be an instance of several project classes whose
        `log` differ: each of them may run (Target kind "dispatch", detail the functions)."""
        if len(base.types) < 2 or not all(t in self.program.classes for t in base.types):
            return None
        found: Dict[str, FunctionSummary] = {}
        for type_name in base.types:
            method = self.program.find_method(type_name, name)
            if method is None:
                return None  # one of them has no such method of the project's: leave it
            found[method.qualname] = method
        if len(found) < 2:
            return None
        return Target("dispatch", name, detail=tuple(found[q] for q in sorted(found)))

    def _dispatch(self, frame: Frame, site: CallSite, functions: Tuple[FunctionSummary, ...], out: List[Node]) -> Val:
        """Each method a call may run, as arms every rank takes alike (which class the object is
        does not differ between ranks); what it returns is what any of them returns."""
        arms: List[List[Node]] = []
        ret: Optional[Val] = None
        for fn in functions:
            arm: List[Node] = []
            value = self._project_call(frame, site, Target("function", fn.qualname, function=fn), "function", arm)
            arms.append(arm)
            ret = value if ret is None else join(ret, value)
        where = (frame.path, site.span.line, site.span.column)
        tree: List[Node] = arms[-1]
        for index in range(len(arms) - 2, -1, -1):
            tree = [UniformBranch(where + (index,), arms[index], tree, None)]
        out.extend(tree)
        return ret if ret is not None else UNIFORM

    def _is_own_slot(self, frame: Frame, item: Optional[Expr], slots: Optional[Expr], values: Dict[int, Val]) -> bool:
        """`item` holds `slots[rank]` (`slots` maybe copied: `list(slots)`): the rank's own slot of
        the list the collective fills."""
        if item is None or slots is None or id(item) not in values:
            return False
        if slots[0] == "call":
            copy = frame.fn.calls[slots[1]]
            if copy.text in ("list", "tuple") and len(copy.args) == 1 and not copy.kwargs:
                slots = copy.args[0]
        return plain_reference(slots) and values[id(item)].key == (SLOT, render_expr(slots))

    def _typed(self, returns: Tuple[str, ...], taints: FrozenSet[Taint] = frozenset()) -> Val:
        if len(returns) == 1:
            return Val(taints=taints, type=returns[0] or None)
        return Val(taints=taints, elements=tuple(returns))

    def _bind_args(self, frame: Frame, fn: FunctionSummary, site: CallSite, out: List[Node]) -> Dict[str, Val]:
        params = fn.caller_params()
        bindings: Dict[str, Val] = {}
        for param, arg in zip(params, site.args):
            bindings[param] = self._argument(frame, arg, out)
        extra: Dict[str, Val] = {}
        for name, arg in site.kwargs:
            if name in params and name != fn.star_kwargs:
                bindings[name] = self._argument(frame, arg, out)
            else:
                extra[name] = self._argument(frame, arg, out)
        for arg in site.args[len(params):]:
            self.eval(frame, arg, out)
        if fn.star_kwargs is not None and not site.has_star:
            # `def from_pretrained(cls, path, **kwargs)` called with keywords written out: the
            # mapping holds those and no others (what `kwargs.pop("parallel_config", None)` gives).
            bindings[fn.star_kwargs] = Val(sized=True, entries=tuple(sorted(extra.items())), defined=True)
        for param, flag in fn.flag_defaults:
            # A flag the call leaves out holds its default; behind `*args`/`**kwargs` it may not.
            bindings.setdefault(param, UNIFORM if site.has_star else Val(const=(flag,)))
        bindings.update(self._closure(frame, fn, bindings))
        return bindings

    def _closure(self, frame: Frame, fn: FunctionSummary, bindings: Dict[str, Val]) -> Dict[str, Val]:
        """What a function nested in the caller reads of the caller's variables, as the call sees
        them (`def _broadcast(t): dist.broadcast(t, src=0, group=mp_group)` inside the loader that
        set `mp_group = mpu.get_model_parallel_group()`): a closure reads them when it runs."""
        if frame.fn.qualname + "." + fn.name != fn.qualname:
            return {}
        self._input(("code", fn.qualname), fn)  # which variables are bound rests on its code
        known = self._free_names.get(fn.qualname)
        if known is None or known[0] is not fn:
            known = self._free_names[fn.qualname] = (fn, free_names(fn))
        return {name: frame.env[name] for name in known[1] if name in frame.env and name not in bindings}

    def _argument(self, frame: Frame, arg: Expr, out: List[Node]) -> Val:
        """What a parameter is bound to: a flag written as `True`, `False` or `None` is known, and
        so is a rank written as `-1` (no process group: tests of it are decided in the callee)."""
        if arg[0] == "const" and (arg[1] is None or isinstance(arg[1], bool) or is_no_group_rank(arg[1])):
            return Val(const=(arg[1],))
        if arg[0] == "name" and not frame.join:
            # `optimizer = None; train(model, optimizer)`: a variable the function binds once, to
            # such a flag, among its own statements, holds it wherever it is read.
            known = self._flag_bindings.get(frame.fn.qualname)
            if known is None or known[0] is not frame.fn:
                known = self._flag_bindings[frame.fn.qualname] = (frame.fn, _flags_bound_once(frame.fn))
            flag = known[1].get(arg[1])
            if flag is not None:
                return Val(const=flag)
        return self.eval(frame, arg, out)

    def _passed_keywords(self, frame: Frame, expr: Expr) -> bool:
        """`expr` reads the function's `**kwargs` as the call bound it (not bound again since):
        a mapping of the keywords the call wrote out, no others (Calls._bind_args)."""
        name = frame.fn.star_kwargs
        return name is not None and expr == ("name", name) and not bound_before(frame.fn, name, frame.span)

    def _eval_args(self, frame: Frame, site: CallSite, out: List[Node]) -> List[Val]:
        vals = [self.eval(frame, a, out) for a in site.args]
        vals.extend(self.eval(frame, a, out) for _, a in site.kwargs)
        for spread in site.spreads:
            # `model(**batch)`: this rank's batch spread into the call reaches it as a named one
            # would (after the named ones: their positions hold). Anything else spread (`*args`
            # forwarded by a wrapper) is what the wrapper's own callers pass, followed there.
            value = self.eval(frame, spread, out)
            if value.batch:
                vals.append(value)
        return vals

    def _arg(self, site: CallSite, position: Optional[int], keyword: Optional[str]) -> Optional[Expr]:
        if keyword:
            for name, expr in site.kwargs:
                if name == keyword:
                    return expr
        if position is not None and position < len(site.args):
            return site.args[position]
        return None

    def _torn_down(self, frame: Frame, site: CallSite, here: Location, out: List[Node]) -> Val:
        """The default process group destroyed (`dist.destroy_process_group()`, accelerate's
        `end_training()`): a collective this process issues afterwards raises at once ("Default
        process group has not been initialized"), so it cannot leave the others waiting; what
        follows is compared as after a process exit, one that is not an error and that no
        `except` sees. On some ranks only, the others' next collective waits for them (RC102)."""
        out.append(Exit(ExitKind.EXIT, SiteRef(here, f"{site.text}()"), f"{site.text}()", False, UNCATCHABLE))
        frame.dead = True
        return UNIFORM

    def _collective(self, frame: Frame, site: CallSite, spec: CollectiveSpec, here: Location, out: List[Node]) -> Val:
        values = {id(e): v for e, v in zip([*site.args, *(e for _, e in site.kwargs)], self._eval_args(frame, site, out))}
        group = group_text(site, spec.group_position, spec.group_keyword)
        group_expr = self._arg(site, spec.group_position, spec.group_keyword)
        members = group_members(group_expr, values[id(group_expr)]) if group_expr is not None and id(group_expr) in values else None
        if group_expr is None and spec.default_group is not None:
            group = members = spec.default_group
        site_ref = SiteRef(here, site.text)
        out.append(Collective(spec.op, group, site_ref, spec.note, members, spec.fails_together, UNDER_ANY))
        # RC104: what every rank must pass alike (the sizes, unless the call lists each rank's).
        split = any((e := self._arg(site, position, keyword)) is not None and e != ("const", None) for keyword, position in spec.splits)
        for position in () if split else spec.tensors:
            expr = self._arg(site, position, None)
            if spec.own_slot is not None and position == spec.own_slot[1] and self._is_own_slot(frame, expr, self._arg(site, spec.own_slot[0], None), values):
                continue
            passed = _passed_shapes(values[id(expr)]) if expr is not None and id(expr) in values else frozenset()
            if passed and not self._alike_in_group(passed, members):
                frame.arg_hazards.append(ArgHazard(site_ref, spec.op, "shape", site.arg_texts[position], first_taint(passed)))
        for keyword, position in spec.agreed:
            expr = self._arg(site, position, keyword)
            key = values[id(expr)].key if expr is not None and id(expr) in values else None
            if members is not None and key is not None and key[0] == GROUP_SOURCE and key[1] in (members, self.catalog.groups_within.get(members)):
                continue  # the root the group's own members agree on (or those of a group it lies within)
            if expr is not None and id(expr) in values and values[id(expr)].varies and not self._alike_in_group(values[id(expr)].taints, members):
                text = dict(site.kwarg_texts).get(keyword) or (site.arg_texts[position] if position < len(site.arg_texts) else keyword)
                frame.arg_hazards.append(ArgHazard(site_ref, spec.op, keyword, text, first_taint(values[id(expr)].taints)))
        for position in spec.uniformizes:
            if position < len(site.args):
                self._uniformize(frame, site.args[position])
                self._note_sent(frame, site, spec, site.args[position])
        if spec.op == "new_group":
            ranks = self._arg(site, 0, "ranks")
            if ranks is None:
                return Val(members="WORLD")
            # Named by its ranks' variable (`if rank in ranks:` tests membership of it), else by
            # where it is built: two lists written out are not one group because both render "...".
            return Val(members=render_expr(ranks) if plain_reference(ranks) else f"{render_expr(ranks)} at {here.path}:{here.line}:{here.column}")
        return UNIFORM

    def _call(self, frame: Frame, site: CallSite, out: List[Node]) -> Val:
        forwarded = self._forwarded(frame, site)
        if forwarded is not None:
            return self._call(frame, forwarded, out)
        self._sharded_forward(frame, site, out)
        target = self.resolve_call(frame, site, out)
        kind = target.kind if target is not None else "unknown"
        if kind in ("function", "dispatch") and site.callee[0] == "local" and frame.holds_callers_object(site.callee[1]):
            return self._passed_callable_call(frame, site, target, out)
        if kind == "dispatch" and target is not None:
            return self._dispatch(frame, site, cast(Tuple[FunctionSummary, ...], target.detail), out)
        if target is None or kind in ("function", "class", "external"):
            # The common kinds: where the call is, is needed only if it leads to a collective.
            return self._project_call(frame, site, target, kind, out)
        here = loc(frame.path, site.span)
        if kind == "collective" and target.collective is not None:
            return self._collective(frame, site, target.collective, here, out)
        if kind == "rank_call":
            vals = self._eval_args(frame, site, out)
            # `dist.get_rank(group=dp_group)`: the rank in a group known by its mesh dimension.
            group = next((v for (kw, _), v in zip(site.kwargs, vals[len(site.args):]) if kw == "group"), vals[0] if site.args else None)
            return rank_value(f"{site.text}()", here, _role_kind(group, self.catalog) or cast(str, target.detail))
        if kind == "predicate_call":
            self._eval_args(frame, site, out)
            return rank_value(f"{site.text}()", here, test=cast(Predicate, target.detail))
        if kind == "exit":
            self._eval_args(frame, site, out)
            if target.qualname in self.catalog.teardown_calls:
                return self._torn_down(frame, site, here, out) if _tears_down_the_default_group(site) else UNIFORM
            # sys.exit() raises SystemExit (what `except Exception:` does not catch); os._exit()
            # ends the process on the spot.
            raises = UNCATCHABLE if target.qualname in self.catalog.uncatchable_exits else builtin_lineage(SYSTEM_EXIT)
            out.append(Exit(ExitKind.EXIT, SiteRef(here, f"{site.text}()"), f"{site.text}()", _fails(site), raises))
            frame.fatal_exits.append((ExitKind.EXIT, raises))
            frame.dead = True
            return UNIFORM
        if kind == "implicit":
            how, spec = cast(Tuple[str, ImplicitSpec], target.detail)
            vals = self._eval_args(frame, site, out)
            if spec.teardown and _tears_down_the_default_group(site):
                return self._torn_down(frame, site, here, out)
            # Where the call communicates only under sharded backends, those this program may run
            # under; none: it is local wherever the program runs (`save_state` under plain DDP).
            backends = frozenset(b for b in spec.only_under if self.program.runs_under(frame.fn.module, b))
            if spec.op and when_holds(site, spec.when) and (backends or not spec.only_under):
                collective = Collective(spec.op, "WORLD", SiteRef(here, f"{site.text}()"), spec.note, None, False, backends)
                padded = any(keyword == name for keyword, _ in site.kwargs for name in spec.padded_by)
                for position in () if padded else spec.tensors:
                    # RC104: `accelerator.gather(t)` needs `t` of one shape on every rank.
                    passed = _passed_shapes(vals[position]) if position < len(site.args) else frozenset()
                    if passed:
                        frame.arg_hazards.append(ArgHazard(SiteRef(here, site.text), spec.op, "shape", site.arg_texts[position], first_taint(passed)))
                if spec.receiver_shape and site.callee[0] == "attr":
                    # `dtensor.full_tensor()`: every rank of the mesh gathers the receiver's shards.
                    # The ranks of a tensor-parallel mesh share their batch, so what the data
                    # sizes is alike there; which tensor a rank picks (by its rank, or in its own
                    # order) is not.
                    receiver = self.eval(frame, site.callee[1], [])
                    passed = receiver.order | frozenset(t for t in _passed_shapes(receiver) if t.kind is TaintKind.RANK)
                    if passed:
                        frame.arg_hazards.append(ArgHazard(SiteRef(here, site.text), spec.op, "shape", render_expr(site.callee[1]), first_taint(passed)))
                # `log_dict(metrics)`: one collective per key, as many as this rank's keys.
                # What a library call returned (`self.val_metrics(preds[mask], y[mask])`) has
                # the shape of its arguments' tensors in `shape`, not a count of keys it varies by.
                items = next(((site.arg_texts[p], vals[p].shape) for p in spec.per_item
                              if p < len(site.args) and vals[p].shape and not _returned_by_library(vals[p])), None)
                if spec.drives and not frame.join:
                    self._driven_loops(frame, site, spec, vals, out)
                if runs_unevenly(site, spec) and not frame.join:
                    out.append(self._uneven_call(frame, site, spec, collective))
                elif items is not None and not frame.join:
                    out.append(self._per_item_call(frame, site, collective, *items))
                else:
                    out.append(collective)
            if how == "call" and target.function is not None:
                # The wrapped project module's forward runs with the call's arguments.
                self._project_call(frame, site, Target("function", target.function.qualname, function=target.function), "function", out)
            if how == "call":
                # A wrapped model's output is this rank's own: per-rank data, and it carries the
                # gradient collective into `.backward()`.
                taints: FrozenSet[Taint] = frozenset({Taint(TaintKind.GRAD, target.qualname, here)})
                shape: FrozenSet[Taint] = frozenset()
                for v in vals:
                    taints |= v.taints
                    shape |= v.shape
                # Its output on a batch has a row per sample: as many as the batch (Val.batch).
                batched = any(v.batch for v in vals)
                return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column), sized=batched, batch=batched)
            if spec.returns and spec.per_argument:
                # `model = accelerator.prepare(model)`: one result per argument, in order. A data
                # loader given there stays a loader of this rank's batches (`prepare(loader)`,
                # `prepare(model, opt, loader)`), whatever position the spec would type.
                loaders = [self.iterates_data(v) for v in vals[: len(site.args)]]
                if len(site.args) == 1:
                    return vals[0] if loaders[0] else self._typed(spec.returns[:1])
                typed = self._typed(tuple(cast(str, vals[i].type) if loaders[i] else spec.returns[i] if i < len(spec.returns) else ""
                                          for i in range(len(site.args))))
                if any(loaders[i] and vals[i].element is not None for i in range(len(site.args))):
                    # `model, loader = accelerator.prepare(model, loader)`: the loader keeps
                    # what its batches hold (a padding collator's widths), item for item.
                    prepared = tuple(vals[i] if loaders[i] else Val(type=element or None) for i, element in enumerate(cast(Tuple[str, ...], typed.elements)))
                    return replace(typed, items=prepared)
                return typed
            if spec.returns:
                return self._typed(spec.returns)
            if site.callee[0] == "attr" and site.callee[2] in self.catalog.shape_decoders:
                # `model.generate(...)` of a sharded model: collective inside, and what it decodes
                # has this rank's own length.
                return Val(shape=self._decoded_length(frame, site), sized=True, key=("call", frame.path, site.span.line, site.span.column))
            return UNIFORM  # what a collective hands back is the same on every rank
        return self._project_call(frame, site, target, kind, out)

    def _sharded_forward(self, frame: Frame, site: CallSite, out: List[Node]) -> None:
        """`self.vision_tower(pixels)` in a model whose parameters are sharded (Program.
        sharded_call): the submodule's parameters are gathered over the data-parallel group before
        its forward runs, unless what the attribute holds has none (a function, an activation)."""
        spec = self.catalog.sharded_forward
        attr = self.program.sharded_call(frame.fn, site)
        if spec is None or attr is None:
            return
        held = self.class_attr(cast(str, frame.fn.class_qualname), attr)
        if held is not None and (held.ref is not None or held.refs or held.const is not None or held.type in self.catalog.parameter_free_modules
                                 or (held.type in self.program.classes and not self.program.is_module_class(held.type))):
            return
        here = SiteRef(loc(frame.path, site.span), f"{site.text}()")
        out.append(Collective(spec.op, cast(str, spec.default_group), here, spec.note, spec.default_group, False, UNDER_ANY))

    def _passed_callable_call(self, frame: Frame, site: CallSite, target: Optional[Target], out: List[Node]) -> Val:
        """`func(*args)` where `func` is a parameter: what the caller passed runs here (a
        `run_on_main(self.checkpointer.save)`). Called for a caller, what it reaches is part of
        that call's tree, and a rank branch around it parts the caller's ranks (GuardRef.
        runs_callers_callable): the divergence is the caller's, reported at its call. Judged as a root,
        the function itself does no wrong by calling what it is given: those collectives are left
        to each caller."""
        assert target is not None
        made: List[Node] = []
        if target.kind == "dispatch":
            value = self._dispatch(frame, site, cast(Tuple[FunctionSummary, ...], target.detail), made)
        else:
            value = self._project_call(frame, site, target, "function", made)
        if not frame.as_root:
            frame.passed_calls.update(id(node) for node in made)
            out.extend(made)
        return value

    def _project_call(self, frame: Frame, site: CallSite, target: Optional[Target], kind: str, out: List[Node]) -> Val:
        """A call of project code, or of something the catalog does not know."""
        if kind == "function" and target is not None and target.function is not None:
            fn = target.function
            wrapped = self._wrapped_override(fn)
            if wrapped is not None and when_holds(site, wrapped.when):
                # torchmetrics wraps a subclass's own compute() in its syncing: still a collective
                out.append(Collective(wrapped.op, "WORLD", SiteRef(loc(frame.path, site.span), f"{site.text}()"), wrapped.note, None, False, UNDER_ANY))
            bindings = self._bind_args(frame, fn, site, out)
            passed_fields = _passed_fields(frame, fn, site) if frame.field_roots else {}
            # How many items the fields of the objects passed hold is bound too (the keys of
            # `output.sample_metrics` a scoring function filled from this rank's share): what the
            # callee, judged as a root, loops over. What they hold stays with this call, as
            # other per-rank values do (rounds._root_binding).
            sized_fields = {path: _length_only(value) for path, value in passed_fields.items() if value.shape}
            recorded = {**bindings, **sized_fields} if sized_fields else bindings
            if frame.rank_arms:
                # Made only under a test of the rank (`if rank == 0: validate(valid_loader)`), the
                # call is one class of ranks' own: what it passes is as long on each of them as
                # that class decides, and the callee judged on its own is not uneven for it (the
                # callee's collectives, if any, are this call's, reported at it as some ranks' only).
                recorded = {name: _without_rank_lengths(value) for name, value in recorded.items()}
            frame.call_args.append((fn.qualname, recorded))
            receiver = _receiver_variable(frame, fn, site)
            held = frame.fields_of(receiver) if receiver is not None else {}
            held = {**held, **passed_fields} if passed_fields else held
            if isinstance(target.detail, Val) and target.detail.built_with and fn.params:
                # A module instance called (`loss(logits, labels)`): its forward runs on that
                # object, built with those keywords (what `super().forward` passes its base).
                held = {**held, fn.params[0]: Val(type=fn.class_qualname, built_with=target.detail.built_with)}
            result = self.run(fn.qualname, {**bindings, **held} if held else bindings)
            if result.param_stores:
                self._take_param_stores(frame, fn, site, result.param_stores)
            if receiver is not None and result.receiver_stores:
                self._take_receiver_stores(frame, receiver, result.receiver_stores)
            if result.agreed:
                self._take_agreed(frame, fn, site, result.agreed)
            if result.ret_fields:
                frame.built = (site, None, result.ret_fields)
            if bindings:
                # What this call passes may give the callee's collective a per-rank argument (a
                # batch's masked rows): judged as a root, the callee keeps no caller's data.
                frame.arg_hazards.extend(h for h in result.arg_hazards if h.taint is not None and h.taint.kind is TaintKind.DATA)
            if result.reaches and self.rank_zero_only(fn) is None:
                out.append(Call(SiteRef(loc(frame.path, site.span), site.text), fn.qualname, self._callee_tree(result)))
            elif result.raising is not None and frame.in_try:
                out.append(RaisingCall(SiteRef(loc(frame.path, site.span), site.text), fn.qualname, result.raising))
            elif result.raising is not None and frame.raising is None:
                frame.raising = result.raising  # raised on through this function to its caller
            if result.never_returns is not None:
                # `except GangError as ex: raise_operational_error(ex)`: the call raises (or ends
                # the process) on every path, as a `raise` written here would.
                how, raises = result.never_returns
                text = f"{site.text}()"
                out.append(Exit(how, SiteRef(loc(frame.path, site.span), text), text, True, raises))
                frame.fatal_exits.append((how, raises))
                frame.dead = True
            ret = result.ret
            if fn.is_generator and any(d.endswith("contextmanager") for d in fn.decorators):
                ret = ret.element if ret.element is not None else UNIFORM  # `with cm() as x`: what it yields
            if ret.taints or ret.shape:
                # Evidence: what the callee made rank-dependent came back through this call.
                passed = frozenset(t for v in bindings.values() for t in v.taints | v.shape)
                step = SourceStep(f"returned by `{site.text}()`", loc(frame.path, site.span))
                ret = value_through(ret, step, passed)
            if ret.varies and ret.rank is None and ret.pred is None:
                ret = replace(ret, key=("ret", fn.qualname))
            return ret
        if kind == "class" and target is not None:
            init = self.program.find_method(target.qualname, "__init__")
            if init is not None:
                bindings = self._bind_args(frame, init, site, out)
                frame.call_args.append((init.qualname, bindings))
                result = self.run(init.qualname, bindings)
                if result.reaches:
                    out.append(Call(SiteRef(loc(frame.path, site.span), site.text), init.qualname, self._callee_tree(result)))
                if result.receiver_stores and self.is_record(target.qualname):
                    frame.built = (site, target.qualname, result.receiver_stores)
            else:
                self._eval_args(frame, site, out)
            if self._external_base(target.qualname) is not None:
                # A subclass of a framework class passes its constant keywords on to it, as a
                # rule (`TokenLoss(reduction="none")`): what calling the base does reads them
                # (_external_base_call, without_collective).
                flags = dict(_constant_keywords(site))
                return Val(type=target.qualname, built_with=tuple(sorted(flags.items())) if flags else (), defined=True)
            return Val(type=target.qualname, defined=True)  # an instance: never None
        return self._external_call(frame, site, target, out)

    def _external_call(self, frame: Frame, site: CallSite, target: Optional[Target], out: List[Node]) -> Val:
        """A call rankcheck has no body for: its result depends on its arguments (and object)."""
        catalog = self.catalog
        name = target.qualname if target is not None else ""
        if name in _EMPTY_MAPPINGS and len(site.args) <= _EMPTY_MAPPINGS[name] and not site.kwargs and not site.has_star:
            # `defaultdict(list)`, `OrderedDict()`: an empty mapping, as `{}` is (its keys are
            # what is stored or appended under them, Statements._assign, _grow_by_key).
            if site.args:
                self._eval_args(frame, site, out)
            return Val(sized=True, entries=())
        if name in ("dict", "builtins.dict") and not site.args and not site.has_star:
            # `dict(device=device, distributed=True, global_rank=rank)`: a display by another
            # name, entry by entry (what `result["distributed"]` reads is that entry alone).
            return self._dict_display(frame, ("dict", tuple((("const", keyword), value) for keyword, value in site.kwargs)), out)
        spawn = catalog.spawners.get(name) if name else None
        if spawn is not None:
            self._spawn(frame, site, spawn, out)
        all_vals = [present(v) for v in self._eval_args(frame, site, out)]
        if name == "getattr" and len(site.args) in (2, 3) and is_self(frame, site.args[0]) and site.args[1][0] == "name":
            handlers = self._named_handlers(frame)
            if handlers:
                # `handler = getattr(self, event)`: one of the object's methods, picked by name.
                return Val(ref=handlers[0]) if len(handlers) == 1 else Val(refs=handlers)
        if name in catalog.shape_copies and len(site.args) == 1 and not site.has_star:
            return all_vals[0]  # `copy.deepcopy(prompts)`: the list it copies, item for item
        if any(kw in catalog.seed_keywords for kw, _ in site.kwargs):
            texts = dict(site.kwarg_texts)
            all_vals = all_vals[: len(site.args)] + [
                self._seeded(frame, site, kw, texts.get(kw, "..."), v) if kw in catalog.seed_keywords else v
                for (kw, _), v in zip(site.kwargs, all_vals[len(site.args):])
            ]
        if name in catalog.seed_calls and site.args:
            all_vals = [self._seeded(frame, site, "", site.arg_texts[0], all_vals[0])] + all_vals[1:]
        if name in catalog.stream_types:
            # `torch.Generator(device)`: a stream of its own, at its fixed default seed until seeded.
            return Val(type=STREAM_TYPE, defined=True)
        if site.callee[0] == "attr" and site.callee[2] in catalog.reseeders and len(site.args) == 1 and not site.has_star:
            return self._reseed(frame, site, all_vals[0])
        if name == "next" and site.args:
            # `batch = next(train_iter)`: the next item of an iterator over this rank's data is
            # what a `for` over it gives (a loader's batch: per-rank data).
            items = all_vals[0]
            item = self._iteration_value(items, _iterated_at(site, site.args[:1]), frame)
            if item.varies or items.type is not None:
                return item
        if name in ITERATOR_MAKERS and site.args and self.shares_seed(all_vals[0]):
            out.append(self.seed_broadcast(frame, site.span, site.arg_texts[0]))
        if name in catalog.iteration_wrappers or name in catalog.iteration_zips:
            # `enumerate(train_loader)` with the loader from a helper rankcheck cannot read
            all_vals = [self.iterated_by_name(arg, v) for arg, v in zip(site.args, all_vals)] + all_vals[len(site.args):]
        if name in catalog.iteration_zips and site.args and not site.has_star:
            return self._zipped(frame, site, all_vals[: len(site.args)])
        base = present(target.detail) if target is not None and isinstance(target.detail, Val) else None
        last = (site.callee[2] if site.callee[0] == "attr" else name.rsplit(".", 1)[-1]) if (name or site.callee[0] == "attr") else ""
        made = self._external_result(frame, site, name, last, base, all_vals, out)
        if name in catalog.files_observers or name in catalog.files_writers or name in catalog.files_opens or (
                site.callee[0] == "attr" and (last in catalog.files_observer_methods or last in catalog.files_writer_methods
                                              or last in catalog.files_receiver_writers)):
            made = self._file_access(frame, site, name, last, made)
        if self._counts_a_world_multiple(site, name, last, all_vals):
            made = replace(made, world_multiple=True)
        dtype = self._written_dtype(site, name, last, base)
        if dtype != made.dtype:
            made = replace(made, dtype=dtype)
        if not made.defined and self._never_none(site, name, last, base):
            made = replace(made, defined=True)
        if name in catalog.iteration_counters and site.args and not site.has_star:
            # `enumerate(loader)`: (index, item) pairs; the index of the k-th pair is k on every
            # rank, what `next(it)` hands out too (`step, batch = next(pbar_iter)`).
            item = self._iteration_value(all_vals[0], _iterated_at(site, site.args[:1]), frame)
            made = replace(made, element=Val(sized=True, items=(INDEX, item)))
        if name in catalog.iteration_unordered and len(site.args) == 1 and not _holds_numbers(site.args[0], frame):
            # `set(names)`: the same items, walked in an order of this process's own.
            held = all_vals[0].element if all_vals[0].element is not None else UNIFORM
            order = Taint(TaintKind.DATA, f"the order `{site.text}(...)` iterates in (string hashes are salted per process)", loc(frame.path, site.span))
            made = replace(made, element=replace(held, order=held.order | {order}), items=None)
        elif name in catalog.iteration_orderers:
            made = in_one_order(made)
        elif last == "get" and site.callee[0] == "attr" and site.args and all_vals[0].order:
            made = replace(made, order=made.order | all_vals[0].order)  # `state_dict.get(name)`: which entry
        return made

    def _never_none(self, site: CallSite, name: str, last: str, base: Optional[Val]) -> bool:
        """The call gives a value whatever it is given, never None (Val.defined): a tensor from a
        factory, one built from values or like another, a reduction to a scalar, a defined
        tensor's conversion, move or reshape, or an instance of a library class."""
        catalog = self.catalog
        if name in catalog.shape_factories or name in catalog.shape_from_values or name in catalog.shape_like_functions:
            return True
        if site.callee[0] == "qual" and _names_a_class(name):
            return True  # `HybridParallelPlugin(**config)`: a library class's instance
        if last in catalog.shape_reducers:
            return True  # `len(x)`, `loss.mean()`, `x.item()`: a number or a scalar tensor, whatever x held
        return (site.callee[0] == "attr" and base is not None and base.defined
                and (last in catalog.shape_keepers or last in catalog.placement_methods or last in catalog.shape_dtype_methods
                     or last in catalog.shape_dtype_converters or last in catalog.shape_reshapers))

    def _named_handlers(self, frame: Frame) -> Tuple[str, ...]:
        """The methods `getattr(self, name)` may give in this method (Program.named_handlers)."""
        cls = cast(str, frame.fn.class_qualname)
        handlers = self.program.named_handlers(cls, frame.fn.name)
        for qual in {cls} | {h.class_qualname for h in handlers if h.class_qualname}:
            self._input(("class", qual), self.program.classes.get(qual))
        return tuple(h.qualname for h in handlers)

    def _file_access(self, frame: Frame, site: CallSite, name: str, last: str, made: Val) -> Val:
        """A file written here under a test of the rank is stored as written on some ranks only;
        a test for a file (`path.exists()`) whose path names one of those is this rank's answer:
        per-rank data (interp.files)."""
        catalog = self.catalog
        method = site.callee[0] == "attr"
        position = catalog.files_writers.get(name)
        if position is None and name in catalog.files_opens and opened_for_writing(site):
            position = 0
        if position is None and method:
            position = catalog.files_writer_methods.get(last, -1 if last in catalog.files_receiver_writers else None)
        if position is not None:
            path = written_path(site, position)
            if path is not None and (frame.rank_arms or frame.returned_under_rank_tests):
                where = loc(frame.path, site.span)
                written = Val(taints=frozenset([Taint(TaintKind.DATA, f"{site.text}()", where)]))
                for word in path_words(frame.fn, path, catalog.files_other_paths):
                    self._store_global((FILES, f"{file_scope(frame.fn)}|{word}"), written)
            return made
        position = catalog.files_observers.get(name, -1 if method and last in catalog.files_observer_methods else None)
        path = written_path(site, position) if position is not None else None
        if path is None:
            return made
        writes: List[Taint] = []
        for word in sorted(path_words(frame.fn, path, catalog.files_other_paths)):
            key = (FILES, f"{file_scope(frame.fn)}|{word}")
            stored = self.stores_seen.get(key)
            self._input(("gstore", key), stored)
            if stored is not None:
                writes.extend(stored.taints)
        writes = [t for t in writes if t.location.path != frame.path
                  or not synchronised_after(frame.fn, t.location.line, site.span.line, catalog.collective_names)]
        if not writes:
            return made
        write = min(writes, key=lambda t: (t.location.path, t.location.line, t.location.column))
        # The answer is this process's: another may look before the file is written, or see a
        # shared filesystem's stale view of it.
        step = SourceStep(f"a file written on some ranks only, by `{write.text}`", write.location)
        tested = Taint(TaintKind.DATA, f"{site.text}()", loc(frame.path, site.span), via=(step,))
        return replace(made, taints=made.taints | {tested}, key=("call", frame.path, site.span.line, site.span.column))

    def _written_dtype(self, site: CallSite, name: str, last: str, base: Optional[Val]) -> Optional[str]:
        """The dtype the call's tensor has as written (Val.dtype): a factory's `dtype=` (or its
        float32 default), a conversion (`.half()`, `.to(torch.float16)`), or the receiver's through
        a method that keeps it (`.to(device)`, `.clone()`); None where not known."""
        catalog = self.catalog
        aliases = catalog.shape_dtype_aliases
        given = next((text for keyword, text in site.kwarg_texts if keyword in catalog.shape_layout_keywords), None)
        written = aliases.get(given.replace(" ", "")) if given is not None else None
        if site.callee[0] == "attr" and base is not None:
            if last in catalog.shape_dtype_methods and not site.args and not site.kwargs:
                return catalog.shape_dtype_methods[last]
            if last in catalog.shape_dtype_converters:
                named = [aliases[text.replace(" ", "")] for text in site.arg_texts if text.replace(" ", "") in aliases]
                return written or (named[0] if named else None) or (base.dtype if given is None else None)
            if last in catalog.shape_keepers or last in catalog.placement_methods:
                return base.dtype
            return None
        if name in catalog.shape_factories or name in catalog.shape_from_values or name in catalog.shape_like_functions:
            return written if given is not None else catalog.shape_default_dtypes.get(name)
        return None

    @staticmethod
    def _split_by_one_size(site: CallSite, base: Optional[Val], all_vals: List[Val], rounded_up: bool = False) -> bool:
        """`x.split(n)`, `torch.split(x, n)`: a tensor alike on every rank in shape, cut by one size
        alike on every rank (not a list of sizes); with `rounded_up`, a size that is a ceiling
        division (`math.ceil(len(x) / world_size)`), which leaves the last piece short."""
        method = site.callee[0] == "attr" and base is not None
        tensor = base if method else all_vals[0] if site.args else None
        position = 0 if method else 1
        if tensor is None or tensor.shape or tensor.varies or len(site.args) <= position or site.has_star:
            return False
        size = site.args[position]
        one_size = size[0] != "tuple" and (size[0] != "const" or isinstance(size[1], int))
        key = all_vals[position].key
        ceiling = key is not None and key[0] == CEIL_KEY
        return one_size and not all_vals[position].varies and not all_vals[position].shape and ceiling == rounded_up

    @staticmethod
    def _even_shares(site: CallSite, base: Optional[Val], all_vals: List[Val]) -> bool:
        """A sharder's input holds a multiple of the world size (Val.world_multiple) and it is cut
        into world-size shares (`ds.shard(world_size, rank)`, `x.chunk(world_size)`,
        `split_dataset_by_node(ds, rank=rank, world_size=world_size)`): every share is as long."""
        data = base if base is not None and site.callee[0] == "attr" else all_vals[0] if site.args else None
        return data is not None and data.world_multiple and any(is_world_size(v) for v in all_vals)

    def _counts_a_world_multiple(self, site: CallSite, name: str, last: str, all_vals: List[Val]) -> bool:
        """`range(m)`, `torch.arange(m)`, `x.tensor_split(m)` for a multiple m of the world size
        (Val.world_multiple): as many items as m."""
        positional = all_vals[: len(site.args)]
        if not positional or site.has_star:
            return False
        if name in self.catalog.shape_factories and len(positional) == 1 and not site.kwargs:
            return positional[0].world_multiple
        if last in self.catalog.shape_selectors and len(positional) == 1 and not site.kwargs:
            return positional[0].world_multiple
        return last in self.catalog.shape_pieces and positional[-1].world_multiple

    def _external_result(self, frame: Frame, site: CallSite, name: str, last: str, base: Optional[Val], all_vals: List[Val], out: List[Node]) -> Val:
        """What a call rankcheck has no body for gives, its arguments evaluated."""
        catalog = self.catalog
        named_rank = catalog.rank_call_names.get(last) if last else None
        receiver = render_expr(site.callee[1]) if site.callee[0] == "attr" else name
        role = _role_kind(base, catalog) if named_rank is not None and site.callee[0] == "attr" else None
        if role is not None:
            named_rank = (role,)  # `pp_group.rank()`: the rank along that dimension
        if named_rank is not None and not self.names_another_rank(receiver):
            # `hvd.rank()`, `xm.get_ordinal()`, `rank, world = get_dist_info()`: a library call
            # whose name says it returns the rank (or a tuple with it).
            taint = Taint(TaintKind.RANK, f"{site.text}()", loc(frame.path, site.span), kinds=frozenset(k for k in named_rank if k))
            ranked = [Val(taints=frozenset([taint]), rank=kind) if kind else UNIFORM for kind in named_rank]
            return ranked[0] if len(ranked) == 1 else Val(taints=frozenset([taint]), key=("call", frame.path, site.span.line, site.span.column), items=tuple(ranked))
        pairs = last in catalog.iteration_key_values
        if base is not None and base.batch and site.callee[0] == "attr" and (pairs or last in catalog.iteration_values) and not site.args:
            # `for k, v in batch.items()`: each value a part of the batch (Val.batch).
            part = batch_part(base)
            return Val(taints=base.taints, sized=True, key=("call", frame.path, site.span.line, site.span.column),
                       element=Val(taints=part.taints, sized=True, items=(UNIFORM, part)) if pairs else part)
        if (last in ("get", "pop") and base is not None and base.entries is not None and site.callee[0] == "attr"
                and self._passed_keywords(frame, site.callee[1]) and 1 <= len(site.args) <= 2 and not site.kwargs
                and site.args[0][0] == "const" and isinstance(site.args[0][1], str)):
            # `kwargs.pop("parallel_config", None)` in a function whose callers wrote out every
            # keyword they pass: what the call passed under it, else the default.
            passed = entry(base, site.args[0][1])
            if passed is not None:
                return passed
            if len(site.args) == 2:
                default = site.args[1]
                return Val(const=(default[1],)) if default[0] == "const" and (default[1] is None or isinstance(default[1], bool)) else all_vals[1]
            if last == "get":
                return Val(const=(None,))
        if (last == "get" and base is not None and base.unkeyed is not None and site.callee[0] == "attr" and site.args
                and site.args[0][0] == "const" and isinstance(site.args[0][1], str)):
            # `info.get("train_engine", "torch_ddp")` of a mapping with values stored under
            # constant keys (Val.keyed): what went there, else what the mapping held before them.
            stored = keyed_entry(base, site.args[0][1])
            if stored is not None:
                return stored
            base = base.unkeyed
            if len(all_vals) > 1:
                return join(taints_only(base), all_vals[1])
            return taints_only(base)
        if last == "get" and base is not None and (base.varies or base.batch) and site.callee[0] == "attr" and site.args and self._names_optional_input(frame, site.args[0]):
            # `batch.get("pixel_values")`: an input some batches lack, None on the ranks whose
            # batch has none of it; it stays so where it is passed on (Taint.presence).
            part = batch_part(base) if base.batch else base
            return replace(part, taints=frozenset(replace(t, presence=True) if t.kind is TaintKind.DATA else t for t in part.taints),
                           key=("call", frame.path, site.span.line, site.span.column), sized=False)
        if (base is not None and base.sized and base.type is None and site.callee[0] == "attr" and not site.args
                and (pairs or last in catalog.iteration_values or last == "keys")):
            # `outputs.items()` of a mapping whose entries are known: as many as it has, each
            # value holding what the mapping's values hold.
            if not (base.taints or base.shape or base.element_shape):
                return SIZED
            value = Val(taints=base.taints, shape=base.element_shape, sized=bool(base.element_shape))
            name_of = _entry_names(base)
            if base.entries is not None:
                # Written with constant keys: the names are alike on every rank; each value is
                # one of those put there.
                name_of = _keys_of(base)
                value = join_all([held for _, held in base.entries]) if base.entries else value
            element = Val(taints=base.taints, sized=True, items=(name_of, value)) if pairs else value if last != "keys" else name_of
            return Val(taints=base.taints, shape=base.shape, sized=True, element_shape=base.element_shape if last != "keys" else frozenset(),
                       element=element, key=("call", frame.path, site.span.line, site.span.column))
        if (base is not None and not base.sized and base.type is None and site.callee[0] == "attr" and not site.args
                and (pairs or last == "keys") and base.varies and base.items is None and base.element is None):
            # `output.items()` of a mapping something returned (a model's outputs, a metrics
            # dict): the values are what it holds; the names are what its code chose, per rank
            # only where the key set is (Val.shape).
            name_of = _entry_names(base)
            element = Val(taints=base.taints, sized=True, items=(name_of, Val(taints=base.taints))) if pairs else name_of
            return Val(taints=base.taints, shape=base.shape, element=element, key=("call", frame.path, site.span.line, site.span.column))
        chosen = chosen_by_rank(all_vals[0], site.arg_texts[0], loc(frame.path, site.span)) if last == "get" and site.callee[0] == "attr" and len(site.args) == 1 else None
        if chosen is not None:
            # `owners.get(rank)`, as `owners[rank]` (Expressions): this rank's entry, or none.
            table = base.taints if base is not None else frozenset()
            return Val(taints=table | all_vals[0].taints | {chosen}, key=("call", frame.path, site.span.line, site.span.column))
        named_test = catalog.predicate_names.get(last) if last and (base is None or base.type is None) else None
        if named_test is not None and not self.names_another_rank(receiver):
            # `comm.is_main_process()` (detectron2), `utils.is_master()`: a library call whose name
            # says it tests the rank, as a parameter or attribute so named is that test.
            return rank_value(f"{site.text}()", loc(frame.path, site.span), test=named_test)
        # Where a value lives is not what it is: `model.to(device)`, `torch.zeros(n, device=dev)`
        # with a per-rank device leave the contents and the shape alike on every rank.
        if site.callee[0] == "attr" and last in catalog.placement_methods:
            vals: List[Val] = []
        elif name in catalog.iteration_wrappers or last == "tqdm":
            vals = all_vals[: len(site.args)]  # `tqdm(loader, disable=not is_main)`: the options are not the items
        else:
            positional = all_vals[: len(site.args)]
            keywords = [v for (kw, _), v in zip(site.kwargs, all_vals[len(site.args) :]) if kw not in catalog.placement_keywords]
            # `model(**batch)`: a batch spread in reaches the result as what is named does (_eval_args).
            vals = positional + keywords + all_vals[len(site.args) + len(site.kwargs):]
        if name in ("int", "builtins.int") and len(vals) == 1 and vals[0].rank is not None:
            return vals[0]
        if name in catalog.module_containers and len(site.args) == 1 and not site.kwargs and not site.has_star:
            return all_vals[0]  # `nn.ModuleList(blocks)`: the blocks, as the list held them
        if name in catalog.sharding_tests and self.program.shards_parameters_in(frame.fn.module):
            return Val(const=(True,))  # `is_deepspeed_zero3_enabled()` where submodule forwards gather
        if name in catalog.uniform_calls:
            return UNIFORM  # `isinstance(batch, dict)`: types do not differ between ranks
        if site.callee[0] == "attr" and last in catalog.uniform_methods and not site.args:
            return UNIFORM  # `x.dim()`: how many dimensions, alike on every rank
        if name in catalog.shape_counts and len(site.args) == 1 and site.args[0][0] == "attr" and site.args[0][2] in catalog.shape_size_attributes:
            return UNIFORM  # `len(x.shape)`: the same
        if name in catalog.synchronized_calls and vals:
            # `nn.Parameter(torch.randn(d))`: module state, alike on every rank but for the rank.
            initial = vals[0]
            kept = frozenset(t for t in initial.taints if t.kind is not TaintKind.DATA)
            return replace(initial, taints=kept, key=initial.key if kept else None) if kept != initial.taints else initial
        if name in catalog.world_size_calls and not site.args and not site.kwargs:
            return Val(key=WORLD_SIZE_KEY)  # alike on every rank, and above every global rank
        if self._group_size(site, name, last, base):
            # How many ranks a group holds is the same on all of them, whichever group of its
            # dimension the rank picked (the rank's own group is per rank, its size is not).
            return Val(key=("group-size", site.text))
        scalar_loss = self._reduces_to_scalar(site, name, base)
        taints: FrozenSet[Taint] = frozenset()
        shapes: FrozenSet[Taint] = frozenset()
        measures = last in catalog.shape_measures
        # `len(x)`, `x.size(0)`: how many items, not how long each is (Taint.trailing).
        counts = counts_items(site, last, catalog)
        for v in vals:
            # `len(x)` depends on how many items x has, not on what they are (when that is known).
            measured = leading(v.shape) if counts else v.shape
            taints |= measured if measures and v.sized else (leading(v.taints) if counts else v.taints) | measured
            counted = self._iteration_shape(v)
            shapes |= v.shape | counted
            if counts:
                taints |= counted  # `len(shard)` of a project object: how many items it gives
        if base is not None and base.sized and base.type is None and _size_past_the_first(site, last, catalog):
            return Val(taints=rows_of(base.shape), key=("call", frame.path, site.span.line, site.span.column)) if rows_of(base.shape) else UNIFORM
        if base is not None:
            # Of a value whose shape is not all known (a model's output on decoded sequences), how
            # many rows it has still does not depend on what only a row's length did (Taint.trailing).
            measured = leading(base.shape) if counts else base.shape
            taints |= measured if measures and base.sized else (leading(base.taints) if counts else base.taints) | measured
        if name in catalog.data_calls and not self._draws_from_a_stream(site, all_vals):
            # Drawn from the process's own random stream. (Given a stream of its own, the draw is
            # what that stream's seed makes it: its dependence is among the arguments'.)
            taints |= {Taint(TaintKind.DATA, f"{site.text}()", loc(frame.path, site.span))}
        callee = site.callee
        if callee[0] == "attr" and (last in catalog.container_mutators or last in catalog.container_adders) and callee[1][0] == "subscript":
            # `metrics[key].append(v)` on a mapping: the key is stored, as `metrics[key] = v` does.
            self._grow_by_key(frame, callee[1], vals)
        elif callee[0] == "attr" and last == "setdefault" and site.args and not site.has_star:
            # `metrics.setdefault(key, []).append(v)`: the same.
            self._grow_by_key(frame, ("subscript", callee[1], (site.args[0],), False, ()), vals[1:], known_mapping=True)
        # An object of a known type (`self.fid.update(images)`: a metric) is not a container.
        growing = callee[0] == "attr" and (last in catalog.container_mutators or last in catalog.container_adders)
        container = self._container_name(frame, callee[1]) if growing and (base is None or base.type is None) else None
        if container is not None and container not in frame.env and base is not None:
            _hold_container(frame, container, base)  # `self.outputs` as read here, before it grows
        if container is not None and last in catalog.container_mutators:
            # `flagged.extend(ids[mask])` / `counter.update(words)`: how many items it holds
            # depends on what was added. A mapping of constant keys added to it (`losses.update(
            # {"loss_ce": ce})`, or what a loss method returns so) adds those keys on every rank:
            # what they hold varies, how many there are does not.
            added: FrozenSet[Taint] = frozenset()
            length: FrozenSet[Taint] = frozenset()
            for v in vals:
                added |= v.taints | v.shape
                if v.entries is None:
                    length |= v.taints | v.shape
            before = frame.env.get(container)
            self._grow(frame, container, added, length, element_shape=frozenset(t for v in vals for t in v.element_shape) if container.startswith("self.") else frozenset())
            if vals and all(v.entries is not None for v in vals):
                known = before is not None and before.entries is not None
                merged = before if before is not None and known else Val()
                for v in vals:
                    for name_of_entry, entry_value in v.entries or ():
                        merged = with_entry(merged, name_of_entry, entry_value)
                if not known or merged.entries != cast(Val, before).entries:
                    # Keys more: under a rank branch, the key sets differ.
                    frame.grown.add(container)
                    frame.writes.append(container)
                if known:
                    frame.env[container] = replace(frame.env[container], entries=merged.entries)
                elif before is not None and container in frame.env:
                    # `info.update({"tag": tag})` on a mapping of keys not known: those keys now
                    # hold these values, the others what they held (Val.keyed).
                    record = before
                    for v in vals:
                        for name_of_entry, entry_value in v.entries or ():
                            record = with_keyed(record, frame.env[container], name_of_entry, entry_value)
                    frame.env[container] = record
        elif container is not None and last in catalog.container_adders:
            # `window.append(item)`: one more item, whatever it is; how often that runs decides
            # the length (Statements._merge adds the condition or the loop to it). The item's
            # shape is what a `torch.cat` of them has.
            held: FrozenSet[Taint] = frozenset()
            for v in vals:
                held |= v.taints | v.shape
            # Kept for object state (`self.outputs`, filled by one method and concatenated by
            # another); a local list's items are not followed (a p2p receive buffer list, a list
            # of microbatches: their shapes are agreed in ways not modelled).
            item_shapes = frozenset(t for v in vals for t in v.shape) if container.startswith("self.") else frozenset()
            self._grow(frame, container, held, frozenset(), by_one=True, element_shape=item_shapes, item=vals[-1] if vals else None, counted=True)
        rows = self._row_wise(frame, site, all_vals, taints)
        if rows is not None:
            return rows
        # What the result's shape (or length) depends on.
        sized = name in catalog.shape_factories or name in catalog.shape_from_values
        rectangular = name in catalog.shape_factories
        called_on = base if site.callee[0] == "attr" else None  # the tensor a method is called on
        if name in catalog.shape_like_functions and site.args:
            # `torch.ones_like(x)`: x's shape, as x has it (rows of a batch, a fixed size), and none
            # of its values (what it holds is the fill, or a draw: catalog data calls).
            like = all_vals[0]
            drawn = frozenset(t for t in taints if t.kind is TaintKind.DATA and name in catalog.data_calls)
            made = Val(taints=like.shape | drawn, shape=like.shape, sized=like.sized, rectangular=like.rectangular,
                       key=("call", frame.path, site.span.line, site.span.column) if like.shape or drawn else None)
            return batch_part(made, key=made.key) if like.batch else made
        if called_on is not None and last in catalog.shape_like and vals:
            # `logits.view_as(target)`: the shape is the argument's, whatever the receiver's was,
            # and a tensor's (`view_as(target)[mask] = 0` stores into it, it does not grow).
            shape, sized, rectangular = vals[0].shape, True, vals[0].rectangular
        elif called_on is not None and (last in catalog.shape_keepers or last in catalog.placement_methods):
            # `torch.zeros(n).to(device)`, `.clone()`: the receiver's shape, as it was built.
            shape, sized, rectangular = called_on.shape, called_on.sized, called_on.rectangular
            if called_on.batch:
                return batch_part(called_on, key=("call", frame.path, site.span.line, site.span.column))
        elif name in catalog.shape_factories:
            sizes = self._size_values(site, all_vals, catalog.shape_size_arguments[name]) if name in catalog.shape_size_arguments else vals
            written = self._size_display(frame, site, catalog.shape_size_arguments.get(name), name in catalog.shape_dimension_factories)
            if written is not None:
                # `torch.full((n, *row_shape), v)`, `torch.zeros((n, d))`: one argument holds the
                # sizes of successive dimensions, the first the number of rows.
                sizes = written[:1] + [_as_row_length(v) for v in written[1:]] + (sizes[len(site.args):] if name not in catalog.shape_size_arguments else [])
            elif name in catalog.shape_dimension_factories and not site.has_star and len(site.args) > 1:
                # `torch.zeros(n, d)`: the sizes after the first are a row's (Taint.trailing).
                sizes = sizes[:1] + [_as_row_length(v) for v in sizes[1:len(site.args)]] + sizes[len(site.args):]
            shape = frozenset(t for v in sizes for t in (v.taints | v.shape)) | self._layout_taints(site, all_vals)
        elif name in catalog.shape_from_values:
            shape = shapes | self._layout_taints(site, all_vals) | _inferred_dtype_choice(site, all_vals, catalog.shape_layout_keywords)
            held_shapes = frozenset(t for v in vals for t in v.element_shape)
            if held_shapes and name in catalog.shape_sequences:
                # `list(outs)`: as many items, each of the shape it had.
                return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column), sized=True, element_shape=held_shapes)
            shape |= held_shapes  # `torch.cat(outs)`: its items' shapes make its own
        elif last in catalog.shape_decoders and not any(kw in catalog.shape_decoders_not_with for kw, _ in site.kwargs):
            shape = self._decoded_length(frame, site)
        elif name in catalog.shape_pad_by and self._padded_to_an_agreed_size(frame, site):
            # `F.pad(x, (0, 0, 0, max_len - x.shape[1]))`: as long as `max_len` on every rank.
            shape, sized = frozenset(), True
        elif name in catalog.shape_padders and site.args and (all_vals[0].element_shape or all_vals[0].taints):
            # `pad_sequence(feats, batch_first=True)`: as many rows as items, each as long as this
            # rank's longest item (the first dimension without `batch_first`).
            first = dict(site.kwargs).get("batch_first", ("const", False)) == ("const", False)
            longest = Taint(TaintKind.DATA, f"{site.text}() (as long as this rank's longest item)", loc(frame.path, site.span), trailing=not first)
            shape = leading(all_vals[0].shape) | {longest}
        elif last in catalog.shape_equal_splitters and self._split_by_one_size(site, base, all_vals):
            # `torch.split(x, x.size(-1) // n)`: pieces of one size (the remainder, if any, after
            # them): whichever piece a rank picks (`pieces[rank]`), it has that size.
            return RECTANGULAR
        elif last in catalog.shape_equal_splitters and self._split_by_one_size(site, base, all_vals, rounded_up=True):
            # `torch.split(x, math.ceil(n / world_size))`: pieces of the rounded-up size, but the
            # last one holds what is left: shorter, or missing, where n does not divide.
            shape = frozenset(t for v in vals for t in (v.taints | v.shape)) | (base.taints | base.shape if base else frozenset())
        elif last in catalog.shape_sharders and self._even_shares(site, base, all_vals):
            # `dataset.shard(world_size, rank)` of a multiple of the world size: equal shares.
            shape = (base if base is not None else all_vals[0]).shape
        elif last in catalog.shape_sharders:
            shape = frozenset(t for v in vals for t in (v.taints | v.shape)) | (base.taints | base.shape if base else frozenset())
        elif last in catalog.shape_selectors and len(site.args) == 1 and not site.kwargs and all_vals[0].sized:
            # `dataset.select(range(n))`: the items the indices name, as many as they are.
            shape = all_vals[0].shape
        elif last in catalog.shape_data_dependent:
            # `torch.nonzero(scores > t)`: as many as the values pick, per-rank where they are.
            picked = [v for v in vals if not v.type] + ([base] if base is not None else [])
            shape, sized = frozenset(t for v in picked for t in (v.taints | v.shape)), True
        elif last in catalog.shape_reducers or scalar_loss:
            shape = frozenset()
        elif base is not None:
            shape = base.shape | (frozenset(t for v in vals for t in v.taints) if last in catalog.shape_reshapers else frozenset())
        else:
            shape = shapes
        split = self._split_by_node(frame, site)
        if split is not None:
            # `wds.WebDataset(urls, nodesplitter=wds.split_by_node)`: this rank's shards, as many
            # samples as they hold; a loop over what is built from them runs that many rounds.
            taints, shape, shapes = taints | {split}, shape | {split}, shapes | {split}
        if site.callee[0] == "attr" and base is not None and base.type is not None and last in catalog.self_methods:
            return Val(taints=base.taints, shape=base.shape, type=base.type, key=base.key, built_with=base.built_with)  # `model.eval()`: the model
        if name and not scalar_loss:
            typed = self._external_constructor(frame, name, site, all_vals)
            if typed is not None:
                # An object built from its arguments: how many items it has follows their lengths,
                # not their values (a DataLoader over `torch.randn(64, 4)` has a fixed length).
                wrapped = all_vals[0].type if site.args and all_vals[0].type in self.program.classes else None
                built = replace(typed, taints=typed.taints | self._kept_by_object(typed, taints), shape=typed.shape | shapes, sized=True,
                                wraps=typed.wraps or wrapped or (all_vals[0].wraps if site.args else None))
                return self._collated(frame, site, all_vals, built)
        if (name in catalog.iteration_displays or (last == "tqdm" and not name)) and site.args and not site.has_star:
            return all_vals[0]  # `tqdm(loader, disable=not is_main)`: the loader, as it was
        if name in catalog.iteration_wrappers or last in ("tqdm",):
            typed_arg = next((v for v in vals if v.type), None)
            if typed_arg is not None:
                # `enumerate(loader)`: the loader's items, what its batches hold (Val.element) kept.
                return Val(taints=taints, shape=shape, type=typed_arg.type, key=("call", frame.path, site.span.line, site.span.column),
                           element=typed_arg.element, wraps=typed_arg.wraps)
            if len(vals) == 1 and vals[0].element is not None:
                # `enumerate(view_items)`, `list(view_items)`: the same items (for a counter, what
                # the `for` unpacks beside the index).
                return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column) if taints or shape else None,
                           sized=vals[0].sized, element=vals[0].element)
        if name in catalog.group_membership.values() or name in catalog.uniform_in_group or name in catalog.group_source_ranks.values():
            return Val(members=name)
        if name in catalog.group_source_ranks:
            # One member's global rank, agreed on by the whole of that group (`_collective`).
            taint = Taint(TaintKind.RANK, f"{site.text}()", loc(frame.path, site.span))
            return Val(taints=frozenset([taint]), key=(GROUP_SOURCE, catalog.group_source_ranks[name]))
        if name in catalog.group_membership:
            return Val(taints=frozenset([Taint(TaintKind.RANK, f"{site.text}()", loc(frame.path, site.span))]), pred=("member", catalog.group_membership[name]))
        rectangular = rectangular and not shape
        size = self._constant_size(site, name) if sized else None
        if not taints and not shape:
            built = RECTANGULAR if rectangular else SIZED if sized else UNIFORM
            return replace(built, size=size) if size is not None else built
        return Val(taints=taints, shape=shape, key=("call", frame.path, site.span.line, site.span.column), sized=sized, rectangular=rectangular, size=size)

    def _constant_size(self, site: CallSite, name: str) -> Optional[Tuple]:
        """The dimensions a tensor factory is given as constants (`torch.ones(2)`, `torch.zeros((3,
        4))`), or those of `torch.tensor([a, b])` built from a flat display; else None."""
        catalog = self.catalog
        if name in catalog.shape_factories:
            exprs: List[Expr] = list(site.args)
            if name in catalog.shape_size_arguments:
                position, keyword = catalog.shape_size_arguments[name]
                given = dict(site.kwargs).get(keyword)
                index = position if position >= 0 else len(site.args) + position
                exprs = [given] if given is not None else [site.args[index]] if 0 <= index < len(site.args) else []
            dims: List[int] = []
            for expr in exprs:
                values = expr[1] if expr[0] == "const" and isinstance(expr[1], tuple) else (expr[1],) if expr[0] == "const" else None
                if values is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                    return None
                dims.extend(values)
            return ("dims", tuple(dims)) if dims else None
        if name in catalog.shape_from_values and name not in catalog.shape_sequences and site.args:
            # `torch.tensor([loss, 1.0])`: a flat display of n scalars is a tensor of n elements
            # (a nested display, a list of lists, has more to its shape than is read here).
            first = site.args[0]
            items = first[1] if first[0] == "tuple" or (first[0] == "const" and isinstance(first[1], tuple)) else None
            flat = items is not None and all(
                not isinstance(item, tuple) if first[0] == "const" else item[0] not in ("tuple", "op", "product", "spread", "dict", "comp") and not (item[0] == "const" and isinstance(item[1], tuple))
                for item in items)
            return ("dims", (len(items),)) if items is not None and flat else None
        return None

    @staticmethod
    def _size_values(site: CallSite, all_vals: List[Val], size: Tuple[int, str]) -> List[Val]:
        """The value of a factory's size argument (`torch.full(size, fill_value)`: `size`)."""
        index = _size_argument(site, size)
        return [all_vals[index]] if index is not None else []

    def _size_display(self, frame: Frame, site: CallSite, size: Optional[Tuple[int, str]], by_dimension: bool) -> Optional[List[Val]]:
        """The sizes of a factory's dimensions, one value each, when its size argument is written as
        a display whose first item is the number of rows (`(n, *rest)`, `[n, d]`); None otherwise.
        `size`: where the catalog says the size argument is; `by_dimension`: a factory that takes
        the sizes as successive arguments takes them as one tuple too (`torch.zeros((n, d))`)."""
        index = _size_argument(site, size) if size is not None else 0 if by_dimension and len(site.args) == 1 else None
        if index is None or (index < len(site.args) and site.has_star):
            return None
        expr = site.args[index] if index < len(site.args) else site.kwargs[index - len(site.args)][1]
        if not (expr[0] == "tuple" or (expr[0] == "spread" and expr[2] > 0)):
            return None
        items = list(expr[1])
        if not all(self._rereadable(frame, item) for item in items):
            return None
        return [self.eval(frame, item, []) for item in items]

    def _layout_taints(self, site: CallSite, all_vals: List[Val]) -> FrozenSet[Taint]:
        """What a new tensor's dtype depends on (`dtype=` given per rank): compared as its size is."""
        found: FrozenSet[Taint] = frozenset()
        for (keyword, _), value in zip(site.kwargs, all_vals[len(site.args) :]):
            if keyword in self.catalog.shape_layout_keywords:
                found |= value.taints
        return found

    def _forwarded(self, frame: Frame, site: CallSite) -> Optional[CallSite]:
        """`asyncio.to_thread(dist.broadcast_object_list, objs, src=0)`,
        `loop.run_in_executor(None, self.save, path)`: the call the forwarding call makes, at its
        place (Catalog.forwarding_calls): the function given, with the arguments after it."""
        kind = site.callee[0]
        if kind == "qual":
            position = self.catalog.forwarding_calls.get(site.callee[1])
        elif kind == "attr":
            position = self.catalog.forwarding_methods.get(site.callee[2])
        else:
            position = None
        if position is None or position >= len(site.args):
            return None
        function = site.args[position]
        if function[0] == "attr" and is_self(frame, function[1]):
            callee = SELF_METHOD.make(function[2])
        elif function[0] == "attr":
            callee = ATTR_METHOD.make(function[1], function[2])
        else:
            callee = CALLED_VALUE.make(function)
        rest = position + 1
        return replace(site, callee=callee, text=site.arg_texts[position], args=site.args[rest:], arg_texts=site.arg_texts[rest:])

    def _driven_loops(self, frame: Frame, site: CallSite, spec: ImplicitSpec, vals: List[Val], out: List[Node]) -> None:
        """`trainer.fit(module, val_dataloaders=loader)`: the framework's own loop calls
        `module.validation_step` once per batch of `loader`. Where how many batches this rank's
        loader yields may differ from the others' (a loader over this rank's own shards), the
        hook's collectives run another number of times on each rank: a loop of the call's own,
        uneven for what the loader's length depends on, whose body is the hook's run."""
        here = loc(frame.path, site.span)
        for driven in spec.drives:
            model = self._slot_value(frame, site, vals, driven.model)
            hook = self.program.find_method(model.type, driven.hook) if model is not None and model.type else None
            if hook is None:
                continue
            loader = self._slot_value(frame, site, vals, driven.loader)
            text = _slot_text(site, driven.loader)
            if loader is None and driven.provider:
                # No loader passed: the datamodule's, or the model's own `val_dataloader()`.
                owner = self._slot_value(frame, site, vals, driven.datamodule) if driven.datamodule[1] else None
                owner = owner if owner is not None and owner.type else model
                provider = self.program.find_method(cast(str, cast(Val, owner).type), driven.provider)
                if provider is not None:
                    loader, text = self.run(provider.qualname).ret, f"{provider.name}()"
            if loader is None:
                continue
            length = leading(loader.shape) | self._iteration_shape(loader)
            if not length:
                continue
            result = self.run(hook.qualname)
            if not result.reaches:
                continue
            reason = cast(Taint, first_taint(length))
            kind = RANK_IDENTITY if reason.kind is TaintKind.RANK else PER_RANK_DATA
            guard = GuardRef(here, f"{site.text}()", f"`{hook.name}` once per batch of `{text}`", reason, kind, keyword=GuardKeyword.DRIVEN)
            body: List[Node] = [Call(SiteRef(here, f"{hook.name}"), hook.qualname, self._callee_tree(result))]
            out.append(Loop((frame.path, site.span.line, site.span.column, driven.hook), None, body, None, guard, None))

    def _slot_value(self, frame: Frame, site: CallSite, vals: List[Val], slot: Tuple[int, str]) -> Optional[Val]:
        """The value given for a catalogued argument (position, keyword); (-1, "") is the receiver."""
        position, keyword = slot
        if position == -1 and not keyword:
            return self.eval(frame, site.callee[1], []) if site.callee[0] == "attr" else None
        for (name, _), value in zip(site.kwargs, vals[len(site.args):]):
            if name == keyword:
                return value
        if 0 <= position < len(site.args) and not site.has_star:
            return vals[position]
        return None

    def _uneven_call(self, frame: Frame, site: CallSite, spec: ImplicitSpec, collective: Collective) -> Loop:
        """A framework call that repeats its collective as often as this rank's data decides: a
        loop of its own, uneven for the reason the catalog gives."""
        reason = Taint(TaintKind.DATA, spec.uneven, loc(frame.path, site.span))
        return _loop_of_its_own(frame, site, collective, f"{site.text}()", reason, GuardKeyword.CALL)

    def _reduces_to_scalar(self, site: CallSite, name: str, module: Optional[Val]) -> bool:
        """`F.cross_entropy(logits, labels)`, or `self.loss(logits, labels)` with `self.loss` an
        `nn.CrossEntropyLoss()`: one scalar loss, unless `reduction="none"` keeps the input's shape
        (given to the call, or to the module's constructor: catalog `[shape] losses_unreduced`)."""
        if name not in self.catalog.shape_losses:
            return False
        is_module = _names_a_class(name)
        if is_module and (module is None or module.type != name):
            return False  # building the module, not calling it
        keywords = dict(_constant_keywords(site))
        if is_module and module is not None:
            keywords = {**dict(module.built_with), **keywords}
        return not any(keywords.get(keyword, _UNSET) == value for keyword, value in self.catalog.shape_losses_unreduced)

    def _per_item_call(self, frame: Frame, site: CallSite, collective: Collective, argument: str, items: FrozenSet[Taint]) -> Loop:
        """A framework call that issues its collective once per item of an argument whose number
        of items differs per rank: a loop of its own, uneven for why that number differs."""
        return _loop_of_its_own(frame, site, collective, argument, cast(Taint, first_taint(items)), GuardKeyword.ITEMS)

    def _spawn(self, frame: Frame, site: CallSite, spec: SpawnSpec, out: List[Node]) -> None:
        """`mp.spawn(train, args=(cfg,), nprocs=n)`: each process runs `train(rank, cfg)`; what
        `train`'s parameters hold there (the rank first) joins its bindings, as a call's would.
        Its collectives are the spawned processes', not this one's: no call node."""
        if spec.function_position >= len(site.args):
            return
        function = self.eval(frame, site.args[spec.function_position], out)
        target = self.program.resolve(function.ref) if function.ref is not None else None
        if target is None or target.kind != "function" or target.function is None:
            return
        fn = target.function
        params = fn.caller_params()
        if not params:
            return
        taint = Taint(TaintKind.RANK, f"the process index {site.text}() passes to `{fn.name}`", loc(frame.path, site.span), kinds=frozenset([spec.kind]))
        bindings: Dict[str, Val] = {params[0]: Val(taints=frozenset([taint]), rank=spec.kind)}
        args = self._arg(site, spec.args_position, spec.args_keyword)
        if args is not None:
            packed = self.eval(frame, args, out)
            for param, value in zip(params[1:], packed.items or ()):
                bindings[param] = value
        frame.call_args.append((fn.qualname, bindings))

    def shares_seed(self, value: Val) -> bool:
        """A loader over a dataset whose class derives from an IterDataPipe (catalog
        `seed_sharing_datasets`): making its iterator broadcasts the pipe's seed from rank 0."""
        if value.wraps is None or not self.iterates_data(value) or not self.catalog.seed_sharing_datasets:
            return False
        bases = self.catalog.seed_sharing_datasets
        return any(base in bases for cls in self.program.class_chain(value.wraps) for base in cls.bases)

    def seed_broadcast(self, frame: Frame, span: Span, text: str) -> Collective:
        """The broadcast of the shared seed that making an iterator of `text` issues."""
        here = SiteRef(loc(frame.path, span), f"iter({text})")
        note = "a DataLoader over an IterDataPipe broadcasts a shared seed from rank 0 whenever an iterator of it is made"
        return Collective("broadcast", "WORLD", here, note, None, False, UNDER_ANY)

    def iterates_data(self, value: Val) -> bool:
        """An object of a catalog type whose items are this rank's data (a DataLoader)."""
        spec = self.external_spec(value.type) if value.type else None
        return spec is not None and spec.iterates == "data"

    def _seeded(self, frame: Frame, site: CallSite, keyword: str, text: str, value: Val) -> Val:
        """A seed derived from the rank (`make_env(seed=1000 + rank)`): what the seeded stream
        draws (an episode's length, a sampled token) is this rank's data, not a test of which rank
        it is. The rank's taints become one of per-rank data, from the call."""
        if not value.rank_dependent:
            return value
        given = f"{keyword}={text}" if keyword else text
        drawn = Taint(TaintKind.DATA, f"{site.text}({given})", loc(frame.path, site.span))
        return Val(taints=frozenset(t for t in value.taints if t.kind is not TaintKind.RANK) | {drawn})

    def _split_by_node(self, frame: Frame, site: CallSite) -> Optional[Taint]:
        """The taint of a dataset a call cuts to this rank's shards (Catalog.shape_node_splitters): a
        keyword that turns the split on (`split_by_node=True`), or a node splitter handed over by
        name (`nodesplitter=wds.split_by_node`, `wds.DataPipeline(urls, wds.split_by_node, ...)`).
        None where the call does neither."""
        catalog = self.catalog
        if not catalog.shape_node_split_keywords and not catalog.shape_node_splitters:
            return None
        for (keyword, value), (_, text) in zip(site.kwargs, site.kwarg_texts):
            turned_on = value not in (("const", False), ("const", None), ("const", 0))
            if (keyword in catalog.shape_node_split_keywords and turned_on) or text.rsplit(".", 1)[-1] in catalog.shape_node_splitters:
                return Taint(TaintKind.DATA, f"{site.text}({keyword}={text}) (this rank's shards)", loc(frame.path, site.span))
        for text in site.arg_texts:
            if text.rsplit(".", 1)[-1] in catalog.shape_node_splitters:
                return Taint(TaintKind.DATA, f"{site.text}({text}) (this rank's shards)", loc(frame.path, site.span))
        return None

    def _padded_to_an_agreed_size(self, frame: Frame, site: CallSite) -> bool:
        """`F.pad(x, amounts)` with every amount a constant or a size alike on every rank less one
        of x's own sizes (`max_len - x.shape[1]`, `max_len - x.size(1)`: Statements._sizes_tested),
        and at least one such: x padded to that size everywhere."""
        if len(site.args) < 2 or site.args[0][0] != "name" or site.args[1][0] != "tuple":
            return False
        padded = site.args[0][1]
        found = False
        for amount in site.args[1][1]:
            if amount[0] == "const":
                continue
            if amount[0] != "op" or len(amount[1]) != 2 or padded not in self._sizes_tested(frame, amount[1][1]):
                return False
            if self.eval(frame, amount[1][0], []).varies:
                return False
            found = True
        return found

    def _holds_in_a_job(self, frame: Frame, site: CallSite, when: Tuple[Tuple[str, object], ...]) -> bool:
        """Each keyword is given as that constant where the job has other processes: written so, or
        as the arm a test of the job being distributed picks there (`drop_last=True if world_size >
        1 else args.drop_last`, Statements._single_process_arm)."""
        given = dict(site.kwargs)
        for keyword, value in when:
            expr = given.get(keyword)
            if expr is not None and expr[0] == "ifexp":
                alone = self._single_process_arm(frame, expr[1])
                expr = expr[3] if alone is True else expr[2] if alone is False else None
            if expr is None or expr[0] != "const" or expr[1] != value:
                return False
        return True

    def _draws_from_a_stream(self, site: CallSite, all_vals: List[Val]) -> bool:
        """The call is given a random stream of its own (`generator=g`, `g` a `torch.Generator`
        built or seeded in the code: Catalog.stream_types, _reseed). A `generator=None` passed on,
        or a value not known to be a stream, draws from the process's own."""
        given = dict(zip((kw for kw, _ in site.kwargs), all_vals[len(site.args):]))
        return any(given[kw].type == STREAM_TYPE for kw in self.catalog.stream_keywords if kw in given)

    def _reseed(self, frame: Frame, site: CallSite, seed: Val) -> Val:
        """`g.manual_seed(s)`: the stream `g` holds now draws what `s` makes it, whatever it drew
        before: alike on every rank for a seed alike (`1234 + epoch`), this rank's own for one
        derived from the rank. The call returns the stream (`torch.Generator().manual_seed(s)`)."""
        seeded = self._seeded(frame, site, "", site.arg_texts[0], seed)
        varies = seeded.taints | seeded.shape
        stream = Val(taints=varies, type=STREAM_TYPE, defined=True, key=("call", frame.path, site.span.line, site.span.column) if varies else None)
        holder = self._container_name(frame, site.callee[1])
        if holder is not None and not _is_field_path(holder):
            frame.env[holder] = stream
            frame.writes.append(holder)
            if holder.startswith("self."):
                frame.store_self(holder[len("self."):], stream)
        return stream

    def _grow_by_key(self, frame: Frame, slot: Expr, added: List[Val], known_mapping: bool = False) -> None:
        """`mapping[key]` had something added to what it holds: a mapping written empty (`{}`,
        `defaultdict(list)`) has the key now, a key more a round of a loop that computes it
        (Statements._assign does the same for `mapping[key] = v`). `known_mapping`: the call
        says it is one (`setdefault`), whatever was seen of how it was built."""
        _, base_expr, index, has_slice, _ = slot[:5]
        name = self._container_name(frame, base_expr)
        if name is None or has_slice or len(index) != 1:
            return
        if index[0][0] == "const":
            self._grow_by_constant_key(frame, name, index[0][1], added)
            return
        if not self._rereadable(frame, index[0]):
            return
        container = frame.env.get(name)
        if container is None and _is_field_path(name):
            # `result.sample_metrics[key].append(v)`: the mapping an object held in a variable
            # was built with (its class's `__init__`), now growing on this object.
            container = self.eval(frame, base_expr, [])
            if container.entries is not None:
                _hold_container(frame, name, container)
        if container is None or (container.entries is None and not known_mapping):
            return
        key = self.eval(frame, index[0], [])
        if key.rank is not None:
            return  # `outs[rank]`: a key a rank, on every rank
        # Keys that are this rank's data (the labels its batches hold) make the key set this
        # rank's; so do rounds of a per-rank length that add keys (by_one).
        held = frozenset(t for v in added for t in v.taints | v.shape)
        self._grow(frame, name, key.taints | held, key.taints | key.shape, by_one=True, counted=True)

    def _grow_by_constant_key(self, frame: Frame, name: str, key: object, added: List[Val]) -> None:
        """`metrics["nan_steps"].append(1)` on a mapping written empty (`defaultdict(list)`, `{}`
        then `setdefault`): the key is there from now on if it was not, as `metrics["nan_steps"]
        = [1]` would put it, so under a branch that varies between ranks the key sets differ.
        A key the mapping already holds adds none."""
        container = frame.env.get(name)
        if container is None or container.entries is None or not isinstance(key, str) or key in dict(container.entries):
            return
        held = join_all(added) if added else UNIFORM
        frame.env[name] = with_entry(container, key, taints_only(held))
        frame.writes.append(name)
        frame.grown.add(name)

    def _container_name(self, frame: Frame, expr: Expr) -> Optional[str]:
        """The variable (`outs`) or attribute of the receiver (`self.outputs`, kept as
        "self.outputs") a container method is called on, when it is one of those."""
        if expr[0] == "name":
            return cast(str, expr[1])
        if expr[0] == "attr" and is_self(frame, expr[1]) and frame.fn.class_qualname is not None:
            return "self." + cast(str, expr[2])
        if expr[0] == "attr" and expr[1][0] == "name":
            # `result.sample_metrics`: a field of the object a variable holds (Frame.store_field),
            # which the object keeps when it is passed on or returned.
            return f"{expr[1][1]}.{expr[2]}"
        return None

    def _grow(self, frame: Frame, name: str, taints: FrozenSet[Taint], length: FrozenSet[Taint], by_one: bool = False,
              element_shape: FrozenSet[Taint] = frozenset(), item: Optional[Val] = None, counted: bool = False) -> None:
        """A container changed in place (`lst.append(x)`, `d[k] = v`, `counter.update(words)`);
        `item`: the one item added, when that is all (Val.element); `counted`: the change surely
        adds one (an append, a key given to `setdefault`), whatever it holds."""
        if by_one:
            frame.grown.add(name)
        old = frame.env.get(name, UNIFORM)
        element = _element_after(old, item)
        if not taints and not length and not element_shape:
            if name in frame.env and (element != old.element or old.items is not None):
                # Nothing that varies was added: what the items hold is all that changed.
                _hold_container(frame, name, replace(old, items=None, element=element))
            if counted and name in frame.env:
                # Still one item (or key) more: under a branch or in rounds that vary between
                # ranks, how many there are varies (`done.append(1)` over this rank's shard,
                # `setdefault(key, [])`). An item stored at an index of a list (`sizes[i] = s`)
                # adds none.
                frame.writes.append(name)
            return
        grown = _with_added(old, ("grow", name, frame.span), taints, length, element_shape, element)
        if by_one and not old.sized:
            # One more item in a container of unknown length (a list a caller passed in): it is as
            # long as it was, and one; what the item holds is not how many there are.
            grown = replace(grown, sized=True, shape=old.taints | old.shape | grown.shape)
        if _is_field_path(name):
            frame.store_field(name, grown)  # the object's, wherever it is passed or returned
            return
        frame.env[name] = grown
        frame.writes.append(name)
        if name.startswith("self."):
            # What the other methods see of it: a list filled in `validation_step` and
            # concatenated in `on_validation_epoch_end` (ClassSummary.self_mutations).
            frame.store_self(name[len("self."):], grown)
        if frame.holds_callers_object(name):
            took = frame.param_stores.get(name, UNIFORM)
            frame.param_stores[name] = replace(took, taints=took.taints | taints, shape=took.shape | length, element_shape=took.element_shape | element_shape)
        for other in sorted(frame.same_object(name)):
            # `view = state; view["slot"] = rank`: `state` holds it too.
            frame.env[other] = _with_added(frame.env.get(other, UNIFORM), ("grow", other, frame.span), taints, length, element_shape, None)
            frame.writes.append(other)

    def _take_receiver_stores(self, frame: Frame, receiver: str, stores: Dict[str, Val]) -> None:
        """`tracker.add_metric(m)` stored per-rank state on the object `tracker` holds (what this
        rank's metric decided): `tracker.should_stop_early()` reads it back, on this object only
        (ClassSummary-wide, what every instance may hold stays as it was)."""
        for attr, value in stores.items():
            # Per-rank data only: the rank an object keeps (a device, a `self.rank`) the class-wide
            # view already gives every instance (Interpreter.class_attr), and the branches its own
            # methods take on it are its configuration's (Frame.store_self).
            data = frozenset(t for t in value.taints if t.kind is TaintKind.DATA)
            shape = frozenset(t for t in value.shape if t.kind is TaintKind.DATA)
            if not (data or shape):
                continue
            value = replace(value, taints=data, shape=shape, rank=None, pred=None)
            path = f"{receiver}.{attr}"
            old = frame.env.get(path)
            frame.store_field(path, value if old is None else join(old, value))

    def _take_param_stores(self, frame: Frame, fn: FunctionSummary, site: CallSite, stores: Dict[str, Val]) -> None:
        """The callee changed objects this call passed it (`setup(params)` storing
        `params.mype`, `fill(out)` storing into `out`): the variables that hold them here see it."""
        for param, arg in _passed_arguments(fn, site):
            if not plain_reference(arg):
                continue
            here = render_expr(arg)
            for path, value in stores.items():
                if path == param:
                    if arg[0] == "name":
                        self._grow(frame, arg[1], value.taints, value.shape)
                    continue
                if not path.startswith(param + "."):
                    continue
                frame.store_field(here + path[len(param):], value)

    def _alike_in_group(self, taints: FrozenSet[Taint], members: Optional[str]) -> bool:
        """What these taints make differ is alike on every member of the collective's group: they
        are ranks of kinds the members share (Catalog.uniform_in_group: a shape chosen by the
        tensor-parallel rank, all-reduced over the data-parallel group)."""
        alike = self.catalog.uniform_in_group.get(members, frozenset()) if members is not None else frozenset()
        return alike_in_members(taint_kinds(taints), members, alike)

    def _take_agreed(self, frame: Frame, fn: FunctionSummary, site: CallSite, agreed: FrozenSet[str]) -> None:
        """The callee broadcast or reduced, in place, objects this call passed it
        (`_broadcast(n)`): the variables that hold them here are alike on every rank now."""
        for param, arg in _passed_arguments(fn, site):
            if param in agreed and plain_reference(arg):
                self._uniformize(frame, arg)

    def _iteration_shape(self, value: Val) -> FrozenSet[Taint]:
        """How many items iterating `value` gives may differ per rank: a project sampler or
        dataset class whose count depends on the rank. The count is what `__len__` returns where
        the class has one (what a DataLoader and its users go by: a DistributedSampler copy pads
        to equal lengths there); else how many items `__iter__` hands out (the length of what it
        iterates, the rounds of its loops), not what the items are (a sampler's indices)."""
        if value.type is None or value.type not in self.program.classes:
            return frozenset()
        found: FrozenSet[Taint] = frozenset()
        length = self.program.find_method(value.type, "__len__")
        method = self.program.find_method(value.type, "__iter__")
        iterator = method is not None and not method.is_generator and _returns_self(method)
        if length is not None and length.qualname not in self._stack:
            ret = self.run(length.qualname).ret
            found = ret.taints | ret.shape
            if not found and iterator:
                # A `__len__` that counts by iterating the object, run for the class that defines
                # it, calls that class's `__next__`, not this subclass's: how many items this one's
                # gives is what the `for` goes by.
                found = self._stops_of(value.type)
        elif method is not None and method.qualname not in self._stack:
            # No `__len__`, or this is it counting by iterating the object (`sum(1 for _ in self)`).
            if iterator:
                found = self._stops_of(value.type)
            else:
                ret = self.run(method.qualname).ret
                # A generator object's length is the rounds of the loops around its `yield`
                # (Expressions, `yield`), whatever each item is; an iterator returned, its items.
                found = ret.shape if method.is_generator else ret.shape | frozenset(t for t in ret.taints if t.control)
        return frozenset(t for t in found if t.kind is TaintKind.RANK) or found

    def _stops_of(self, cls: str) -> FrozenSet[Taint]:
        """An iterator object (`__iter__` returns self) gives items until its `__next__` raises
        StopIteration: how many it gives depends on what the tests that decide that raise read
        (`if self.idx >= len(self.shard): raise StopIteration`, a sampler over this rank's share)."""
        method = self.program.find_method(cls, "__next__")
        if method is None or method.qualname in self._stack:
            return frozenset()
        found: Set[Taint] = set()
        for node in own_nodes(self.run(method.qualname).tree):
            if isinstance(node, Branch) and node.guard.taint is not None and any(
                    isinstance(inner, Exit) and inner.kind is ExitKind.RAISE and inner.raises is not None and "StopIteration" in inner.raises
                    for arm in (node.then, node.orelse) for inner in own_nodes(arm)):
                found.add(node.guard.taint)
        return frozenset(found)

    def _yielded(self, value: Val) -> Optional[Val]:
        """What iterating an instance of a project class gives: what its `__iter__` yields where
        that is a generator (a fetcher's per-rank list of micro-batches, with that list's length),
        what its `__next__` returns where `__iter__` returns the object itself."""
        if value.element is not None or value.type is None or value.type not in self.program.classes:
            return None
        method = self.program.find_method(value.type, "__iter__")
        if method is not None and not method.is_generator and _returns_self(method):
            # An iterator object: each item is what its `__next__` returns.
            following = self.program.find_method(value.type, "__next__")
            if following is None or following.qualname in self._stack:
                return None
            return self.run(following.qualname).ret
        if method is None or not method.is_generator or method.qualname in self._stack or self.program.find_method(value.type, "__len__") is not None:
            return None
        return self.run(method.qualname).ret.element

    def _iteration_value(self, items: Val, info: GuardInfo, frame: Frame) -> Val:
        """The loop variable of `for x in items`."""
        if items.entries is not None and items.element is None and items.items is None:
            return _keys_of(items)  # `for name in outputs:` of a mapping written with its keys
        taints = items.taints | items.shape | self._iteration_shape(items)
        yielded = self._yielded(items)
        if yielded is not None:
            items = replace(items, element=yielded)
        elif items.element is None and items.items:
            # `for logger in [StdOutLogger(), WandbLogger(acc)]:` each item, whichever it is
            held = items.items[0]
            for item in items.items[1:]:
                held = join(held, item)
            items = replace(items, element=held)
        spec = self.external_spec(items.type)
        # A loader's batch is this rank's data, of the batch size the loader was built with (or
        # what its collate function makes of it): how many samples it and each of its parts hold
        # (`batch.size(0)`, `len(batch["ids"])`) is what its shape says (Val.batch).
        batched = spec is not None and spec.iterates == "data"
        if batched:
            taints |= {Taint(TaintKind.DATA, info.shown()[1], loc(frame.path, info.span))}
        if items.element is not None:
            # What each item holds (Val.element), and what a count of them depends on.
            held = items.element
            if held.items is not None and batched:
                # `for imgs, boxes, labels in loader:` of a collate function returning a tuple:
                # each part is this rank's data too.
                held = replace(held, items=tuple(part if part is INDEX else replace(part, taints=part.taints | taints) for part in held.items))
            return replace(held, taints=held.taints | taints, key=held.key or (("iter", frame.path, info.span.line) if taints else None),
                           shape=held.shape | items.element_shape, rank=None, pred=None, sized=held.sized or batched, batch=held.batch or batched)
        # Each item has the shape the container's items have (Val.element_shape), a row the
        # container's trailing sizes (`for ids in generated:`).
        row = items.element_shape | rows_of(items.shape)
        return Val(taints=taints, key=("iter", frame.path, info.span.line), shape=row, sized=batched, batch=batched) if taints else UNIFORM

    def _zipped(self, frame: Frame, site: CallSite, vals: List[Val]) -> Val:
        """`zip(loader, range(start, end))`: as many items as the shortest argument, each a tuple
        of one item of every argument (unpacking gives each target its own: this rank's batch,
        the shared step)."""
        info = _iterated_at(site, site.args)
        items = tuple(self._iteration_value(v, info, frame) for v in vals)
        length: FrozenSet[Taint] = frozenset()
        for v in vals:
            length |= leading(v.shape) | self._iteration_shape(v)
        held = Val(taints=frozenset().union(*(item.taints for item in items)), sized=True, items=items)
        return Val(shape=length, sized=True, element=held, key=("call", frame.path, site.span.line, site.span.column) if length else None)

    def _row_wise(self, frame: Frame, site: CallSite, all_vals: List[Val], taints: FrozenSet[Taint]) -> Optional[Val]:
        """`tokenizer(prompts)`, `apply_chat_template(conversation=prompts)`, `batch_decode(ids)`
        (catalog `[shape] row_wise`): one row per item of the input, so as many rows as iterating
        the input gives, whatever the items hold; each row as long as its own item, which for
        per-rank items is this rank's own (a padded batch is as wide as its longest row)."""
        callee = site.callee
        # The name it is called by: `self.tokenizer(...)`, `tokenizer(...)`, `tok.batch_decode(...)`.
        last = callee[2] if callee[0] == "attr" else callee[1].rsplit(".", 1)[-1] if callee[0] in ("self", "local", "global", "qual") else ""
        if last not in self.catalog.shape_row_wise:
            return None
        given = all_vals[0] if site.args else next((v for (kw, _), v in zip(site.kwargs, all_vals) if kw in self.catalog.shape_row_inputs), None)
        if given is None:
            return None
        # As many rows as iterating the input gives items (what a comprehension over it counts).
        count = leading(given.shape) | self._iteration_shape(given)
        if not (given.taints or given.shape):
            return replace(SIZED, batch=True)
        if any(kw == "padding" and text.strip("'\"") == "max_length" for kw, text in site.kwarg_texts):
            # `padding="max_length"`: every row is padded (and cut) to the one length given.
            return Val(taints=taints | given.taints, shape=count, sized=True, batch=True, key=("call", frame.path, site.span.line, site.span.column))
        # Each row holds this rank's own item: as long as that is (past the first dimension).
        row = Taint(TaintKind.DATA, f"{site.text}() (each row as long as its own input)", loc(frame.path, site.span), trailing=True)
        return Val(taints=taints | given.taints, shape=count | {row}, sized=True, batch=True,
                   element_shape=frozenset([replace(row, trailing=False)]), key=("call", frame.path, site.span.line, site.span.column))

    def _decoded_length(self, frame: Frame, site: CallSite) -> FrozenSet[Taint]:
        """The length of what a decoder returns (catalog `[shape] decoders`): this rank's own."""
        return frozenset([Taint(TaintKind.DATA, f"{site.text}() (decoded until this rank's own sequences end)", loc(frame.path, site.span), trailing=True)])

    def _collated(self, frame: Frame, site: CallSite, all_vals: List[Val], built: Val) -> Val:
        """A loader built with a project collate function (catalog `collate_keywords`) yields what
        that function returns for a list of this rank's samples: what it drops or pads per rank
        is in the batches' shapes."""
        spec = self.external_spec(built.type)
        if spec is None or spec.iterates != "data" or built.element is not None:
            return built
        given = {kw: v for (kw, _), v in zip(site.kwargs, all_vals[len(site.args):])}
        for spread in site.spreads:
            # `DataLoader(dataset, **loader_kwargs)`, the keywords written in a dict display.
            held = self.eval(frame, spread, [])
            for kw, value in held.entries or ():
                given.setdefault(kw, value)
        for keyword in sorted(self.catalog.collate_keywords):
            if keyword not in given:
                continue
            batch = self._collated_batch(frame, site, keyword, given[keyword])
            if batch is not None:
                return replace(built, element=batch)
        return built

    def _collated_batch(self, frame: Frame, site: CallSite, keyword: str, collator: Val) -> Optional[Val]:
        """A batch as the collate function or object given as `keyword` makes it of this rank's
        samples: a catalogued padding collator's (_padded_batch), or what the project's function or
        collator object (its `__call__`) returns; None where that is not known."""
        padded = self._padded_batch(frame, site, keyword, collator)
        if padded is not None:
            return padded
        fn: Optional[FunctionSummary] = None
        name = ""
        if collator.ref is not None:
            fn = self.program.resolve(collator.ref).function
            name = fn.name if fn is not None else ""
        elif collator.type is not None and collator.type in self.program.classes:
            fn = self.program.find_method(collator.type, "__call__")
            name = f"{collator.type.rsplit('.', 1)[-1]}()"
        if fn is None or not fn.caller_params() or fn.qualname in self._stack:
            return None
        # This rank's samples: as many as the batch size (Val.batch), each this rank's data, its
        # fields each of its own length. What fields a sample has is the dataset's, alike on every
        # rank (the collator's loop over `features[0].keys()` parts no ranks).
        data = Taint(TaintKind.DATA, f"{site.text}({keyword}={name})", loc(frame.path, site.span))
        sample = Val(taints=frozenset([data]), element_shape=frozenset([data]), sized=True)
        samples = Val(taints=frozenset([data]), sized=True, batch=True, element=sample)
        bindings = {fn.caller_params()[0]: samples}
        if fn.name == "__call__":
            bindings[fn.params[0]] = collator
        ret = self.run(fn.qualname, bindings).ret
        return replace(ret, taints=ret.taints | {data}, sized=not ret.shape, key=None)

    def _padded_batch(self, frame: Frame, site: CallSite, keyword: str, collator: Optional[Val]) -> Optional[Val]:
        """A loader's batch when its collate function is a padding collator (TypeSpec.pads):
        the fields it pads are as wide as this rank's longest sample in the batch (dynamic
        padding), so they differ between ranks past the first dimension."""
        spec = self.external_spec(collator.type) if collator is not None and collator.type else None
        if collator is None or spec is None or not spec.pads:
            return None
        if any(flag in collator.built_with for flag in spec.pads_unless):
            return None  # `padding="max_length"`: every batch as wide as the length given
        width = Taint(TaintKind.DATA, f"{site.text}({keyword}=...) (each batch padded to its own longest sample)", loc(frame.path, site.span),
                      trailing=True, fields=spec.pads)
        data = Taint(TaintKind.DATA, f"{site.text}({keyword}=...)", loc(frame.path, site.span))
        return Val(taints=frozenset([data]), shape=frozenset([width]), sized=True, batch=True)

    def _kept_by_object(self, built: Val, taints: FrozenSet[Taint]) -> FrozenSet[Taint]:
        """What a framework object keeps of the arguments it was built from: their per-rank data,
        not the rank. `DDP(model, device_ids=[local_rank])`, `deepspeed.initialize(args={
        "local_rank": ...})` give the same object on every rank: the rank it was given shows only
        where the catalog says it does (`accelerator.process_index`), so its truth, its identity
        and what its methods return do not vary with it. What a loader yields is this rank's data
        by its type (`iterates`), and how many items it has follows the arguments' shapes."""
        types = built.elements if built.elements is not None else (built.type,)
        specs = [self.external_spec(t) for t in types if t]
        if not specs or any(spec is None for spec in specs):
            return taints
        return frozenset(t for t in taints if t.kind is not TaintKind.RANK)

    def _external_constructor(self, frame: Frame, name: str, site: CallSite, vals: List[Val]) -> Optional[Val]:
        """`DDP(model)`, `Accelerator()`, `deepspeed.initialize(...)`, `fully_shard(model)`,
        `torch.compile(model)`, with the constant keywords it was given (Val.built_with)."""
        built = self._framework_object(frame, name, site, vals)
        if built is None or built.type is None:
            return built
        flags = dict(_constant_keywords(site))
        spec = self.external_spec(built.type)
        if spec is not None and spec.uneven_length_when and when_holds(site, spec.uneven_length_when):
            given = ", ".join(f"{kw}={value}" for kw, value in spec.uneven_length_when)
            share = Taint(TaintKind.DATA, f"{site.text}({given}) (this rank's share, not evened out)", loc(frame.path, site.span))
            built = replace(built, shape=built.shape | {share}, sized=True)
        elif spec is not None and spec.uneven_length_unless and not self._holds_in_a_job(frame, site, spec.uneven_length_unless):
            wanted = ", ".join(f"{kw}={value}" for kw, value in spec.uneven_length_unless)
            share = Taint(TaintKind.DATA, f"{site.text}() (this rank's share, not evened out without {wanted})", loc(frame.path, site.span))
            built = replace(built, shape=built.shape | {share}, sized=True)
        for arg in site.args:
            # `MetricCollection({"acc": Accuracy(..., sync_on_compute=False), ...})`: built of
            # framework objects that were all built with a flag, it is built with it too.
            for kw, value in self._flags_all_members_share(frame, arg):
                flags.setdefault(kw, value)
        return replace(built, built_with=tuple(sorted(flags.items()))) if flags else built

    def _flags_all_members_share(self, frame: Frame, expr: Expr) -> Tuple[Tuple[str, object], ...]:
        """The constant keywords every item of a list or dict display was constructed with, when
        every item is a framework object built there; or the one framework object a wrapper is
        given, built there."""
        if expr[0] == "call":
            members = [expr]  # `Running(MeanMetric(sync_on_compute=False))`: a wrapper of one
        elif expr[0] == "dict":
            members = [value for key, value in expr[1] if key is not None and value[0] == "call"]
            if not members or len(members) != len(expr[1]):
                return ()  # a member not built here, or a `**spread`
        elif expr[0] == "tuple":
            members = [part for part in expr[1] if part[0] == "call"]
            if not members or len(members) != len(expr[1]):
                return ()  # a member not built here
        else:
            return ()
        shared: Optional[set] = None
        for part in members:
            site = frame.fn.calls[part[1]]
            if site.callee[0] != "qual" or self.catalog.type_spec(self.program.resolve(site.callee[1]).qualname) is None:
                return ()
            own = set(_constant_keywords(site))
            shared = own if shared is None else shared & own
        return tuple(sorted(shared or ()))

    def _wrapped_module(self, site: CallSite, vals: List[Val], where: Tuple[str, int]) -> Optional[str]:
        """The project module class of the argument at `where` (keyword, position), or what it wraps."""
        keyword, position = where
        held = next((v for (kw, _), v in zip(site.kwargs, vals[len(site.args):]) if kw == keyword), None)
        if held is None and position < len(site.args):
            held = vals[position]
        if held is None:
            return None
        return held.type if held.type in self.program.classes else held.wraps

    def _framework_object(self, frame: Frame, name: str, site: CallSite, vals: List[Val]) -> Optional[Val]:
        fn_spec = self.catalog.functions.get(name)
        if fn_spec is not None:
            if fn_spec.returns_argument is not None and fn_spec.returns_argument < len(site.args):
                given = vals[fn_spec.returns_argument]
                return Val(type=given.type) if given.type is not None else None
            if fn_spec.types_argument is not None and fn_spec.types_argument < len(site.args):
                arg = site.args[fn_spec.types_argument]
                if arg[0] == "name" and fn_spec.returns:
                    frame.env[arg[1]] = replace(frame.env.get(arg[1], UNIFORM), type=fn_spec.returns[0])
            wrapped = self._wrapped_module(site, vals, fn_spec.wraps_argument) if fn_spec.wraps_argument and fn_spec.returns else None
            if wrapped is not None:
                # `engine, optimizer, _, _ = deepspeed.initialize(model=model, ...)`: the engine
                # runs the model's forward.
                first = Val(type=fn_spec.returns[0] or None, wraps=wrapped)
                if len(fn_spec.returns) == 1:
                    return first
                return Val(items=(first, *(Val(type=r) if r else UNIFORM for r in fn_spec.returns[1:])), elements=fn_spec.returns)
            return self._typed(fn_spec.returns) if fn_spec.returns else None
        if name in self.catalog.types or (_names_a_class(name) and self.catalog.type_spec(name)):
            return Val(type=name)
        if name in self.catalog.shape_losses and _names_a_class(name):
            return Val(type=name)  # `nn.CrossEntropyLoss(...)`: what calling it gives (_reduces_to_scalar)
        return None

    def _note_sent(self, frame: Frame, site: CallSite, spec: CollectiveSpec, arg: Expr) -> None:
        """`broadcast_object_list(objs, 0)` of a list built from variables (`[stop]`): on the
        source rank those variables hold what every rank now finds in the list."""
        if arg[0] != "name" or arg[1] not in frame.packed:
            return
        agreed = dict(spec.agreed)
        if "src" not in agreed:
            return
        src = self._arg(site, agreed["src"], "src")
        if src is None or src[0] != "const" or not isinstance(src[1], int) or isinstance(src[1], bool):
            return
        for index, name in enumerate(frame.packed[arg[1]]):
            if name is not None:
                frame.sent[name] = (arg[1], index, src[1])

    def _uniformize(self, frame: Frame, arg: Expr) -> None:
        if arg[0] == "name":
            frame.env[arg[1]] = agreed(frame.env.get(arg[1]))
        elif arg[0] == "attr" and is_self(frame, arg[1]):
            frame.env["self." + arg[2]] = agreed(frame.env.get("self." + arg[2]))
        elif arg[0] == "attr" and plain_reference(arg):
            frame.store_field(render_expr(arg), UNIFORM)  # `dist.broadcast(state.flags, 0)`
        elif arg[0] == "subscript":
            self._uniformize(frame, arg[1])


def _holds_numbers(arg: Expr, frame: Frame) -> bool:
    """`set(range(n))`, `set([1, 2])`: integers hash to themselves, so their order is the same in
    every process."""
    if arg[0] == "const":
        return all(isinstance(v, int) for v in (arg[1] if isinstance(arg[1], tuple) else (arg[1],)))
    if arg[0] == "call" and arg[1] < len(frame.fn.calls):
        callee = frame.fn.calls[arg[1]].callee
        return callee[0] == "qual" and callee[1] in ("range", "builtins.range")
    return False


def _size_argument(site: CallSite, size: Tuple[int, str]) -> Optional[int]:
    """Where a factory's size argument is among the call's arguments, the keyword ones counted
    after the positional ones (Catalog.shape_size_arguments: a position, negative from the last
    positional one, and a keyword); None when the call does not pass it."""
    position, keyword = size
    for offset, (kw, _) in enumerate(site.kwargs):
        if kw == keyword:
            return len(site.args) + offset
    index = position if position >= 0 else len(site.args) + position
    return index if 0 <= index < len(site.args) else None


def _as_row_length(size: Val) -> Val:
    """A size past the first dimension: what it depends on is how long each row is, not how many
    rows there are (Taint.trailing)."""
    return Val(taints=frozenset(replace(t, trailing=True) for t in size.taints | size.shape))


def _entry_names(mapping: Val) -> Val:
    """The names of a mapping's entries: per rank where its key set is (what how many entries it
    has depends on, Val.shape), not where only the values it holds are."""
    taints = leading(mapping.shape)
    return Val(taints=taints, key=("names", mapping.key)) if taints else UNIFORM


def _tears_down_the_default_group(site: CallSite) -> bool:
    """A teardown call given no group: `destroy_process_group(group)` ends that group alone, and
    the others still talk."""
    return not site.args and not any(keyword == "group" for keyword, _ in site.kwargs)


def _fails(site: CallSite) -> bool:
    """`sys.exit(1)`, `sys.exit("message")`, `os._exit(3)`: a status that says failure. `exit()`,
    `sys.exit(0)` and `sys.exit(None)` succeed (a launcher waits for the other ranks then), and
    a status that is not a constant is not known to fail."""
    status = site.args[0] if site.args else dict(site.kwargs).get("status", dict(site.kwargs).get("code"))
    if site.args and _STRING_LITERAL.match(site.arg_texts[0]):
        # `sys.exit(f"ERROR: {error}")`, `sys.exit("ERROR: " + why)`: a message, printed, status 1.
        return True
    if status is None or status[0] != "const":
        return False
    value = status[1]
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool) and value != 0)


# Source text that starts with a string literal (any prefix: f"...", r'...', """...""").
_STRING_LITERAL = re.compile(r"""^[rRbBuUfF]{0,2}["']""")


def _size_past_the_first(site: CallSite, last: str, catalog: Catalog) -> bool:
    """`x.size(1)`, `x.size(2)`: one of the sizes after the first (catalog `count_methods` given
    a constant dimension from 1)."""
    if site.callee[0] != "attr" or last not in catalog.shape_count_methods or len(site.args) != 1 or site.kwargs:
        return False
    arg = site.args[0]
    return arg[0] == "const" and isinstance(arg[1], int) and not isinstance(arg[1], bool) and arg[1] >= 1
