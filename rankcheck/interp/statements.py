"""Statements: assignments, branches, loops, exits, `with`, `try` and `match`, and what each
adds to the collective tree."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, cast

from rankcheck.ftypes import ASSIGNED_PAST, PER_RANK_DATA, SKIPPED_UNDER
from rankcheck.interp.base import ITERATOR_MAKERS, InterpreterBase, counts_items, is_self, plain_reference
from rankcheck.interp.exceptions import ASSERTION, BROAD_HANDLERS, builtin_lineage, lineage
from rankcheck.interp.formulas import (
    Formula,
    cmp,
    evaluate,
    formula_of,
    names_the_rank,
    negate,
    tested_kinds,
    uniform_variable,
)
from rankcheck.interp.frame import Frame, Learned
from rankcheck.interp.tree import (
    UNDER_ANY,
    YIELD,
    Branch,
    Call,
    Collective,
    Exit,
    ExitKind,
    GuardRef,
    Handler,
    Loop,
    Node,
    SiteRef,
    Tree,
    Try,
    UniformBranch,
    WithContext,
    loc,
    own_nodes,
    tree_reaches,
)
from rankcheck.interp.values import (
    INDEX,
    MEMBER_OF,
    UNIFORM,
    WORLD_SIZE_KEY,
    Taint,
    TaintKind,
    Val,
    alike_in_members,
    batch_part,
    control_taint,
    dtypes_differ,
    from_sources,
    is_slice_object,
    join,
    leading,
    never_none,
    sizes_differ,
    taint_kinds,
    taints_only,
    with_entry,
    with_keyed,
    without_control,
)
from rankcheck.program.ir import (
    ASSIGN,
    Body,
    CallSite,
    Expr,
    GuardInfo,
    GuardKeyword,
    Span,
    Stmt,
    nested_bodies,
    nested_self_attribute,
    render_expr,
    statements,
    walk_tuples,
)


class Statements(InterpreterBase):
    def _body(self, frame: Frame, body: Body, out: List[Node]) -> None:
        for stmt in body:
            if frame.dead:
                return
            self._stmt(frame, stmt, out)

    def _stmt(self, frame: Frame, stmt: Stmt, out: List[Node]) -> None:
        kind = stmt[0]
        if kind in _COMPOUND:
            # What the statement's arms or rounds assign holds no one constant after it.
            first_write = len(frame.writes)
            self._simple_or_compound(frame, stmt, out)
            for name in frame.writes[first_write:]:
                frame.numbers.pop(name, None)
            return
        self._simple_or_compound(frame, stmt, out)

    def _simple_or_compound(self, frame: Frame, stmt: Stmt, out: List[Node]) -> None:
        kind = stmt[0]
        if kind == "expr":
            frame.span = stmt[2]
            self.eval(frame, stmt[1], out)
        elif kind == "assign":
            frame.span = stmt[3]
            frame.built = None
            value = self.eval(frame, stmt[2], out)
            if self._displays_itself(frame, stmt[1], stmt[2]):
                return  # `progress = tqdm(progress)`: the same items, whoever wraps them
            built, frame.built = frame.built, None
            value = self._with_sources(frame, stmt[1], stmt[2], value)
            for target in stmt[1]:
                self._assign(frame, target, value, out)
                if built is not None and target[0] == "name" and stmt[2][0] == "call" and frame.fn.calls[stmt[2][1]] is built[0]:
                    self._hold_built_fields(frame, target[1], built[1], built[2])
                _note_numbers(frame, target, stmt[2])
                if target[0] == "other" and target[1][0] == "attr":
                    self._framework_stop(frame, target[1], stmt[2])
                if target[0] == "name" and stmt[2][0] == "tuple":
                    frame.packed[target[1]] = tuple(_packed_name(item) for item in stmt[2][1])
                if target[0] == "name" and stmt[2][0] == "name" and stmt[2][1] in frame.env and stmt[2][1] != target[1]:
                    frame.alias(target[1], stmt[2][1])  # `view = state`: one object, two names
        elif kind == "augassign":
            frame.span = stmt[3]
            value = self.eval(frame, stmt[2], out)
            old = self._read_target(frame, stmt[1])
            counted = frame.numbers.get(stmt[1][1]) if stmt[1][0] == "name" else None
            updated = taints_only(join(old, value), key=("aug", stmt[3]))
            if old.sized and not old.shape and old.items is None and old.element is None and old.entries is None:
                # `tr_loss += loss.detach()`: a tensor of a size alike on every rank, updated in
                # place (what is added broadcasts to it): still there, never None, and still that
                # size. (A list, `items += more`, grows by what is added.)
                updated = replace(updated, sized=True)
            self._assign(frame, stmt[1], updated, out)
            step = _int_constant(stmt[2])
            if counted is not None and step is not None and stmt[4] in _STEPS:
                frame.numbers[stmt[1][1]] = _STEPS[stmt[4]](counted, step)
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

    def _displays_itself(self, frame: Frame, targets: tuple, value: Expr) -> bool:
        """`it = tqdm(it, ...)`: a progress display (catalog `[iteration] displays`) of the
        variable it is assigned to iterates the same items, so the variable is not rewritten (on
        rank 0 alone, `if rank == 0: it = tqdm(it)` leaves every rank's loop alike)."""
        if len(targets) != 1 or targets[0][0] != "name" or value[0] != "call" or value[1] >= len(frame.fn.calls):
            return False
        site = frame.fn.calls[value[1]]
        if site.callee[0] != "qual" or not site.args or site.args[0] != ("name", targets[0][1]):
            return False
        return self.program.resolve(site.callee[1]).qualname in self.catalog.iteration_displays

    def _with_sources(self, frame: Frame, targets: tuple, expr: Expr, value: Val) -> Val:
        """`epochs = opt.epochs`, `weights, epochs = opt.weights, opt.epochs`: what is read from an
        attribute of a variable's object, alike on every rank, marked with the read (Val.source)."""
        if len(targets) != 1:
            return value
        if targets[0][0] == "name":
            return self._sourced(frame, expr, value)
        if targets[0][0] == "unpack" and expr[0] == "tuple" and value.items is not None and len(value.items) == len(expr[1]):
            return replace(value, items=tuple(self._sourced(frame, part, item) for part, item in zip(expr[1], value.items)))
        return value

    @staticmethod
    def _sourced(frame: Frame, expr: Expr, value: Val) -> Val:
        if expr[0] != "attr" or not plain_reference(expr) or value.varies or value.shape:
            return value
        text = render_expr(expr)
        # Stores since into that attribute, or into an object on its way (`opt = ...`,
        # `opt.train = ...` for `opt.train.epochs`), make another read of it another value.
        stores = sum(1 for written in frame.writes if written == text or text.startswith(written + "."))
        return replace(value, source=f"{text}#{stores}")

    def _read_target(self, frame: Frame, target: tuple) -> Val:
        if target[0] == "name":
            return frame.env.get(target[1], UNIFORM)
        if target[0] == "selfattr":
            held = frame.env.get("self." + target[1])
            if held is None and frame.fn.params:
                # `self.current_position += step` before this method stored it: what the
                # attribute holds, as reading `self.current_position` gives it.
                return self.eval(frame, ("attr", ("name", frame.fn.params[0]), target[1]), [])
            return held if held is not None else UNIFORM
        if target[0] == "other" and target[1][0] == "attr" and plain_reference(target[1]):
            return self.eval(frame, target[1], [])  # `stats.count += n`: what it held
        return UNIFORM

    def _hold_built_fields(self, frame: Frame, name: str, class_qualname: Optional[str], stores: Dict[str, Val]) -> None:
        """`out = DataProto(batch=b, meta_info={"rank": rank})`: a record's fields are its own
        (the class-wide view leaves out what callers pass, Interpreter.class_attr), so `out`
        holds what this call gave its `__init__`, with what the class's own methods store.
        Without a class: what a project function left on the object it returned."""
        for attr, value in stores.items():
            if not (value.taints or value.shape):
                continue
            everywhere = self.class_attr(class_qualname, attr) if class_qualname is not None else None
            frame.store_field(f"{name}.{attr}", value if everywhere is None else join(value, everywhere))

    def _assign(self, frame: Frame, target: tuple, value: Val, out: List[Node]) -> None:
        tag = target[0]
        if tag == "name":
            if value.rank_dependent and value.rank is None and value.pred is None and value.key is None:
                value = replace(value, key=("name", target[1], frame.span))
            frame.env[target[1]] = value
            frame.writes.append(target[1])
            frame.rebind(target[1])
            if target[1] in frame.declared_global:
                # `global _GROUP; _GROUP = dist.new_group(...)`: what every reader of the module
                # variable sees (Megatron's parallel_state keeps its groups this way).
                self._store_global((frame.fn.module, target[1]), value)
        elif tag == "selfattr":
            frame.env["self." + target[1]] = value
            frame.writes.append("self." + target[1])
            frame.store_self(target[1], value)
        elif tag == "unpack":
            if value.items is not None and len(value.items) == len(target[1]):
                for item, sub in zip(value.items, target[1]):
                    self._assign(frame, sub, item, out)
                return
            # `images, labels = batch`: each a part of this rank's batch (Val.batch).
            part = batch_part(value, key=("unpack", frame.span)) if value.batch else taints_only(value, key=("unpack", frame.span))
            for position, sub in enumerate(target[1]):
                element = value.elements[position] if value.elements and position < len(value.elements) else None
                self._assign(frame, sub, replace(part, type=element) if element else part, out)
        elif tag == "other":
            self.eval(frame, target[1], out)
            store = target[1]
            if store[0] == "attr" and plain_reference(store):
                frame.store_field(render_expr(store), value)
                nested = nested_self_attribute(store, frame.fn.params[0]) if frame.fn.class_qualname and frame.fn.params else None
                if nested is not None:
                    # `self.state.model = wrap(model)`: read back as `self.state.model` by the others.
                    frame.store_self(nested, value)
            name = self._container_name(frame, store[1]) if store[0] == "subscript" else None
            if name is not None and name.startswith("self.") and name not in frame.env:
                frame.env[name] = self.eval(frame, store[1], [])  # `self.counts` as read here, before it grows
            if name is not None and name in frame.env:
                # `d[key] = v`, `self.counts[key] += 1`: the container now holds v, and how many
                # keys it has depends on key.
                index: FrozenSet[Taint] = frozenset()
                is_the_rank = False
                for part in store[2]:
                    key = self.eval(frame, part, [])
                    index |= key.taints
                    is_the_rank = is_the_rank or key.rank is not None
                container = frame.env[name]
                # A tensor built with its size (`torch.zeros(n)`) keeps it; a dict grows by keys.
                # A slot picked by the rank (`self._grad_norm_buf[self.dp_rank] = norm`, an index
                # array of this rank's rows) is one of a buffer every rank allocated alike, not a
                # key only this rank adds. A mapping written as a display (`metrics = {}`) grows
                # by every key but the rank itself (one a rank, on every rank).
                mapping = container.entries is not None
                if mapping:
                    grows = not store[3] and not is_the_rank
                else:
                    grows = not store[3] and not container.sized and not any(t.kind is TaintKind.RANK for t in index)
                # A slice object into a list of them (`slc[dim] = slice(r * n, (r + 1) * n)`):
                # the items are still slice objects, each with the width it cuts.
                sliced = container.element is not None and is_slice_object(container.element) and is_slice_object(value)
                # A key computed in a loop (`metrics[name] = v` for each name a batch yields): a key
                # more a round, as an append is, so rounds that vary per rank vary the key count.
                computed_key = grows and not all(part[0] == "const" for part in store[2])
                self._grow(frame, name, value.taints | value.shape, index if grows else frozenset(), by_one=computed_key, item=value if sliced else None)
                constant_key = store[2][0][1] if len(store[2]) == 1 and store[2][0][0] == "const" and isinstance(store[2][0][1], str) else None
                if constant_key is not None and not store[3] and container.entries is None and frame.env.get(name) is not None:
                    # `info["step"] = self.step` on a mapping of keys not known (a configuration):
                    # the other keys still read what they held (Val.keyed).
                    frame.env[name] = with_keyed(container, frame.env[name], constant_key, value)
                    frame.writes.append(name)  # under a rank branch, the key holds what it chose
                if container.entries is not None and constant_key is not None:
                    # `outputs["loss"] = loss` on a mapping whose entries are known: that entry is now `value`.
                    frame.env[name] = with_entry(replace(frame.env[name], entries=container.entries), constant_key, value)
                    if constant_key not in dict(container.entries):
                        frame.writes.append(name)  # a key more: under a rank branch, the key sets differ
                        frame.grown.add(name)

    def _stops(self, frame: Frame) -> List[Node]:
        """`if trainer.is_global_zero: trainer.should_stop = True` in a hook: where the flag holds
        differently on some ranks as the hook returns (here, or at its end), those ranks leave the
        framework's loop then while the others go on to its next step and wait in that step's
        collectives. As a branch on the flag: the stopping ranks return, the others run the step
        (TypeSpec.stops)."""
        found: List[Node] = []
        for path, (site, step) in sorted(frame.stops.items()):
            flag = frame.env.get(path)
            if flag is None or not flag.varies:
                continue
            where = site.location
            info = GuardInfo(span=Span(where.line, where.column, where.end_line, where.end_column), head=f"if {path}:", condition=path)
            leave = Exit(ExitKind.RETURN, site, site.text, False, None)
            next_step = Collective("framework_step", "WORLD", SiteRef(site.location, "the loop's next step"), step, None, False, UNDER_ANY)
            formula = formula_of(flag, ("stop", frame.path, site.location.line, site.location.column))
            found.append(Branch(formula, self._guard(frame, info, flag), [leave], [next_step]))
        return found

    def _framework_stop(self, frame: Frame, store: Expr, assigned: Expr) -> None:
        """`trainer.should_stop = True` in a hook: the framework's loop ends on this process once
        the hook returns (TypeSpec.stops); recorded for its returns and its end (Statements._stops)."""
        if assigned == ("const", False) or not plain_reference(store):
            return
        spec = self.external_spec(self.eval(frame, store[1], []).type)
        if spec is None or store[2] not in spec.stops:
            return
        path = render_expr(store)
        here = loc(frame.path, frame.span or frame.fn.span)
        frame.stops[path] = (SiteRef(here, f"{path} = {render_expr(assigned)}"), spec.stops[store[2]])

    def _merge(
        self,
        frame: Frame,
        envs: List[Tuple[Dict[str, Val], bool]],
        control: Optional[Taint] = None,
        written: Optional[Set[str]] = None,
        resized: FrozenSet[str] = frozenset(),
    ) -> None:
        """`resized`: the variables whose size the condition reads (`if x.numel() == 0:`); an arm
        that assigns one builds it anew, so its size after the branch is the condition's."""
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
                    if value.source is not None and not value.varies and all(env.get(name) is not None and env[name].source == value.source for env in live):
                        continue  # the same read of the same attribute on every path (Val.source)
                    # A container whose length already varies, or that grew an item at a time here,
                    # grows by a number of items that now depends on the condition too; so does a
                    # tensor each arm builds with another size (`torch.ones(2)` / `torch.ones(1)`),
                    # and one an arm rebuilds where the condition tested its size.
                    chosen = (all(name in env for env in live) and _built_differently([env[name] for env in live])) or name in resized
                    shape = value.shape | {control} if value.shape or name in frame.grown or chosen else value.shape
                    # Never None only where every path made it so (an arm that did not assign it
                    # left what was there before, which may be None).
                    defined = value.defined and all(name in env for env in live)
                    merged[name] = replace(value, taints=value.taints | {control}, shape=shape, key=("phi", name, frame.span), rank=None, pred=None,
                                           defined=defined)
                    if name.startswith("self.") and control in shape and name in frame.grown and frame.fn.class_qualname is not None:
                        # `if loss.isnan(): self.metrics["nan"].append(1)`: how many items the
                        # object's container holds now differs between ranks for every method
                        # that reads it (what they hold stays the value's own: Frame.store_self).
                        attr = name[len("self."):]
                        own = without_control(merged[name])
                        counted = replace(own, shape=own.shape | {control})
                        kept = frame.self_stores.get(attr)
                        frame.self_stores[attr] = counted if kept is None else join(kept, counted)
                    if value.unkeyed is not None:
                        merged[name] = _keyed_under(merged[name], [env.get(name) for env in live], control)
        frame.env = merged

    def _sizes_tested(self, frame: Frame, test: Expr) -> FrozenSet[str]:
        """The variables whose size a condition reads: `len(x)`, `x.numel()`, `x.size(0)`, `x.shape`.
        An empty batch replaced by a placeholder (`if logps.numel() == 0: logps = torch.tensor(
        [nan])`) has one size where the test held and this rank's own where it did not."""
        found: Set[str] = set()
        measures = self.catalog.shape_measures
        for node in walk_tuples(test):
            if node[0] == "call" and isinstance(node[1], int) and node[1] < len(frame.fn.calls):
                site = frame.fn.calls[node[1]]
                if site.callee[0] == "attr" and site.callee[2] in measures and site.callee[1][0] == "name":
                    found.add(site.callee[1][1])
                elif site.callee[0] == "qual" and site.callee[1].rsplit(".", 1)[-1] in self.catalog.shape_counts and site.args and site.args[0][0] == "name":
                    found.add(site.args[0][1])
            elif node[0] == "attr" and node[2] in self.catalog.shape_size_attributes and node[1][0] == "name":
                found.add(node[1][1])
        return frozenset(found)

    def _branch_arms(
        self, frame: Frame, then_body, else_body, cond: Val, info: GuardInfo, learned: Tuple[Learned, Learned] = ((), ()),
        narrowed: Tuple[Learned, Learned] = ((), ()), test: Optional[Expr] = None,
    ) -> Tuple[List[Node], List[Node]]:
        """`learned`: what each arm knows of a variable the test equates with a uniform value
        (forgotten past the branch); `narrowed`: what each arm knows of a variable's type from a
        type test (it holds on that path after the branch too)."""
        then_learned, else_learned = learned
        for key, current, _ in (*then_learned, *else_learned, *narrowed[0], *narrowed[1]):
            # Held in the frame before the arms, so that the arms' values join after them.
            frame.env.setdefault(key, current)
        base = dict(frame.env)
        first_write = len(frame.writes)
        returned_before, ret_before = frame.returned, frame.ret
        alone = self._alone_arm(frame, cond, test)
        was_alone = frame.alone
        # An explicit test of the rank (not a value derived from it): each arm runs on some ranks
        # only, and what an arm assigns differs per rank past the branch.
        explicit = cond.rank is not None or (cond.pred is not None and names_the_rank(cond.pred)) or self._arithmetic_on_rank(frame, test)
        rank_arm = int(explicit and cond.rank_dependent)
        frame.rank_arms += rank_arm
        then_out: List[Node] = []
        for key, _, value in (*then_learned, *narrowed[0]):
            frame.env[key] = value
        frame.alone = was_alone or alone is True
        self._body(frame, then_body, then_out)
        then_state = (frame.env, frame.dead)
        then_alone = frame.alone
        then_written = set(frame.writes[first_write:])
        frame.env, frame.dead = dict(base), False
        for key, _, value in (*else_learned, *narrowed[1]):
            frame.env[key] = value
        else_out: List[Node] = []
        else_first_write = len(frame.writes)
        frame.alone = was_alone or alone is False
        self._body(frame, else_body, else_out)
        frame.rank_arms -= rank_arm
        else_state = (frame.env, frame.dead)
        else_alone = frame.alone
        # Past the branch, the path runs alone where every arm that goes on does.
        frame.alone = then_alone if else_state[1] else else_alone if then_state[1] else then_alone and else_alone
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
            # So is a variable an arm knew to be None (`if x is not None: x = f(x)`): past the
            # branch it is None where it was, which the value it held says (Val.content_only).
            for narrowed_in_arm, env, written in ((narrowed[0], then_state[0], then_written), (narrowed[1], else_state[0], else_written)):
                for key, current, value in narrowed_in_arm:
                    if key not in written and value.const == (None,) and env.get(key) is value:
                        env[key] = current
        # Values assigned differently under an explicit rank test (`if rank == 0: start = load()`)
        # differ per rank afterwards, and so do values assigned under a test of per-rank data (a
        # patience counter reset when the local validation loss improves). A condition that is
        # rank-dependent only through a chain of derived values is too weak a reason to taint what
        # it assigns: configuration decided that way (`if self.distributed_type == ...`) would
        # taint everything.
        on_data = bool(cond.taints) and not cond.rank_dependent
        membership = cond.pred[1] if cond.pred is not None and cond.pred[0] == "member" else None
        control = control_taint(cond.taints, info, frame.path, membership=membership) if explicit or on_data else None
        if control is not None and control.kind is TaintKind.DATA and any(from_sources(t, frame.passed_data) for t in cond.taints):
            # What is assigned under a test of the data the caller passed in is that data too, for
            # the caller's comparison (`if batch["labels"].any(): window.append(batch)` and then
            # `if len(window) < n: return`).
            frame.passed_data = frame.passed_data | {control}
        states = [then_state, else_state]
        written = set(frame.writes[first_write:])
        if alone is not None and not states[1 if alone else 0][1]:
            # `if self.local_rank is not None: dist.all_reduce(x, MAX)`: the other arm runs only
            # where there is no other process, so what it leaves in a variable never meets a
            # value of another rank; after the branch, the variable is what the distributed arm made.
            states = [states[1 if alone else 0]]
            written = set(frame.writes[else_first_write:]) if alone else then_written
            # Every rank of a distributed job takes the other arm, whatever else the test reads
            # (`not self.is_distributed and policykl > limit`): it parts no ranks.
            control = None
        live_arms = [env for env, dead in states if not dead]
        self._merge(frame, states, control=control, written=written,
                    resized=self._sizes_tested(frame, test) if control is not None and test is not None else frozenset())
        if control is None and cond.taints and len(live_arms) > 1:
            # An arm that makes a variable a value where the other leaves what may be None, under
            # a test that varies through derived values (which taints nothing it assigns): whether
            # it is None is then as varying as all it holds (Val.content_only no longer applies).
            for name in written:
                merged = frame.env.get(name)
                if merged is not None and merged.content_only and _none_differs([env.get(name) for env in live_arms]):
                    frame.env[name] = replace(merged, content_only=frozenset())
        # The taint of an explicit test of the rank (not of per-rank data), when this is one.
        rank_test = control if explicit and control is not None and control.kind is TaintKind.RANK else None
        if (rank_test is not None and alone is None and then_state[1] != else_state[1]
                and frame.returned and (not returned_before or frame.ret is not ret_before)):
            past = control_taint(cond.taints, info, frame.path, ASSIGNED_PAST)
            if past is not None:
                frame.returned_under_rank_tests = frame.returned_under_rank_tests | {past}
        if rank_test is not None and membership is None:
            # (A store under a membership test, `if rank in ranks: self.group = group`, is each
            # member's own group: alike over that group, as the merge above says.)
            for name in written:
                if name.startswith("self."):
                    attr = name[len("self."):]
                    frame.stored_under_rank_tests[attr] = frame.stored_under_rank_tests.get(attr, frozenset()) | {rank_test}
        if (not explicit and control is not None and control.kind is TaintKind.DATA and alone is None and frame.returned
                and (not returned_before or frame.ret is not ret_before)):
            frame.returned_under_data_test = True
        if (explicit and control is not None and alone is None and frame.returned and (not returned_before or frame.ret is not ret_before)
                and _returns_a_constant(then_body, else_body)):
            # An arm returned a constant answer (`if not is_global_rank_zero: return False`):
            # which return a rank takes, and so what the call gives it, is decided by this test.
            frame.ret = replace(frame.ret, taints=frame.ret.taints | {control}, key=frame.ret.key or ("ret", frame.fn.qualname))
        if alone is not None:
            # The arm that runs only in a one-process job meets no other rank: nothing it does
            # (a stop test on this process's own tokens, `if world_size == 1: if done: break`)
            # can leave another waiting. Only how it ends is kept.
            single = then_out if alone else else_out
            single[:] = [node for node in single if isinstance(node, Exit)]
        return then_out, else_out

    def _single_process_arm(self, frame: Frame, test: Expr) -> Optional[bool]:
        """Which arm of `if test:` runs only where the job is not distributed: True for the arm the
        test takes (`if rank is None:`, `if not dist.is_initialized():`), False for the other
        (`if local_rank is not None:`, `if dist.is_initialized():`); None for any other test."""
        negated = False
        while test[0] == "not":
            test, negated = test[1], not negated
        found: Optional[bool] = None
        if test[0] == "bool" and test[1] == "and" and test[2]:
            # `dist.is_available() and dist.is_initialized()`: distributed when all of them hold.
            # `not self.is_distributed and policykl > limit`: one conjunct that holds only in a
            # one-process job makes the arm where they all hold one too.
            parts = [self._single_process_arm(frame, part) for part in test[2]]
            found = False if all(part is False for part in parts) else True if any(part is True for part in parts) else None
        elif test[0] == "cmp" and len(test[1]) == 1 and test[1][0] in ("is", "is not") and test[2][1] == ("const", None):
            subject = test[2][0]
            if plain_reference(subject) and self.eval(frame, subject, []).rank is not None:
                found = test[1][0] == "is"
        elif test[0] == "cmp" and len(test[1]) == 1 and test[2][1][0] == "const" and (test[1][0], test[2][1][1]) in _ONE_PROCESS_TESTS:
            # `if world_size == 1:`, `if world_size > 1:`: whether the job has other processes.
            subject = test[2][0]
            if self._world_size(frame, subject):
                found = _ONE_PROCESS_TESTS[(test[1][0], test[2][1][1])]
        elif test[0] in ("name", "attr") and plain_reference(test) and test[-1] in self.catalog.distributed_flags:
            # `if args.distributed:`, `if ddp:` (a flag named for it, alike on every process).
            found = False if not self.eval(frame, test, []).varies else None
        elif test[0] == "call":
            site = frame.fn.calls[test[1]]
            if site.callee[0] == "qual" and self.program.resolve(site.callee[1]).qualname in self.catalog.distributed_tests:
                found = False
            elif site.callee[0] == "qual" and not site.args and not site.kwargs:
                found = self._tests_distributed(self.program.resolve(site.callee[1]).qualname)
        if found is None:
            return None
        return not found if negated else found

    def _world_size(self, frame: Frame, expr: Expr) -> bool:
        """`expr` holds the job's world size, alike on every process: a world-size call's value, or
        a variable or attribute named for it ([world_size] names)."""
        if expr[0] == "call":
            site = frame.fn.calls[expr[1]]
            return site.callee[0] == "qual" and not site.args and self.program.resolve(site.callee[1]).qualname in self.catalog.world_size_calls
        if not plain_reference(expr):
            return False
        value = self.eval(frame, expr, [])
        return not value.varies and (value.key == WORLD_SIZE_KEY or expr[-1] in self.catalog.world_size_names)

    def _tests_distributed(self, qualname: str) -> Optional[bool]:
        """A project helper that only returns a test of whether the job is distributed (`def
        is_distributed(): return dist.is_available() and dist.is_initialized()`): False, as
        `_single_process_arm` answers for that test; else None."""
        fn = self.program.functions.get(qualname)
        # What is decided here rests on the helper's code: a fact that asks reads it (an edit of
        # the helper, in the language server, withdraws the verdict), and the answer is kept for
        # that code only.
        self._input(("code", qualname), fn)
        known = self._distributed_helpers.get(qualname)
        if known is not None and known[0] is fn:
            return known[1]
        self._distributed_helpers[qualname] = (fn, None)  # a helper that calls itself tests nothing
        found: Optional[bool] = None
        body = [stmt for stmt in fn.body if not (stmt[0] == "expr" and stmt[1][0] == "const")] if fn is not None else []
        if fn is not None and not fn.params and len(body) == 1 and body[0][0] == "exit" and body[0][1] == "return" and body[0][2] is not None:
            found = self._single_process_arm(Frame(fn, self.program.path_of_function[qualname], {}), body[0][2])
            found = False if found is False else None
        self._distributed_helpers[qualname] = (fn, found)
        return found

    def _alone_arm(self, frame: Frame, cond: Val, test: Optional[Expr]) -> Optional[bool]:
        """Which arm of the test runs only where the job has no other process (True: the arm the
        test takes, `if not dist.is_initialized():`; False: the other), where one does
        (Statements._single_process_arm); None where neither does."""
        alone = self._single_process_arm(frame, test) if test is not None else None
        if cond.varies and alone is False:
            # The test varies, so its false arm is not the distributed job's alone (`if not
            # (single and x):` is false on the ranks where x is); its true arm, where a conjunct
            # says one process, still is.
            return None
        return alone

    def _arithmetic_on_rank(self, frame: Frame, test: Optional[Expr]) -> bool:
        """`if rank % 2:`, `if rank - offset:`: arithmetic on a name that is the rank tests the rank
        as plainly as a comparison does (MPI's `if (rank % 2) root = 1;`). Only plain names and
        attributes are read again, so no call runs twice."""
        if test is None or test[0] not in ("op", "product"):
            return False
        return any(part[0] in ("name", "attr") and self.eval(frame, part, []).rank is not None for part in test[1])

    def _guard(self, frame: Frame, info: GuardInfo, value: Val, arms: Tuple[List[Node], ...] = (), test: Optional[Expr] = None) -> GuardRef:
        wanted = TaintKind.RANK if value.rank_dependent else None
        candidates = [t for t in value.taints if wanted is None or t.kind is wanted]
        candidates.sort(key=lambda t: (t.location.line, t.location.column, t.text))
        taint = candidates[0] if candidates else None
        membership = value.pred[1] if value.pred is not None and value.pred[0] == "member" else None
        uniform_in: FrozenSet[str] = frozenset()
        shared = self.catalog.uniform_in_group
        if shared:
            # What the condition tests (`pp_rank == 0`), or what it was computed from (a value
            # assigned under `if tp_rank == 0:`, `is_first_stage or is_last_stage`).
            kinds = tested_kinds(formula_of(value, ("guard",))) or taint_kinds(value.taints)
            if kinds:
                uniform_in = frozenset(group for group, alike in shared.items() if kinds <= alike)
        # A condition on what was assigned under a membership test of a group (`if self.world_size
        # > 1:` after `if rank in ranks: self.world_size = len(ranks)`) is alike on its members.
        kinds = taint_kinds(value.taints)
        owned = {kind[len(MEMBER_OF):] for kind in kinds if kind.startswith(MEMBER_OF)}
        uniform_in |= frozenset(group for group in owned if alike_in_members(kinds, group, shared.get(group, frozenset())))
        head, condition = info.shown(t.text for t in candidates if not t.control)
        from_caller = value.kind == PER_RANK_DATA and taint is not None and from_sources(taint, frame.passed_data)
        # The branch decides whether the caller's callback runs (`if is_main: func()`).
        callback = bool(frame.passed_calls) and any(id(node) in frame.passed_calls for arm in arms for node in own_nodes(arm))
        all_enter_under = self._backends_let_in(frame, test) if test is not None and test[0] == "bool" and test[1] == "or" else frozenset()
        return GuardRef(loc(frame.path, info.span), head, condition, taint, value.kind, membership, uniform_in, info.keyword, from_caller, callback,
                        all_enter_under)

    def _backends_let_in(self, frame: Frame, test: Expr) -> FrozenSet[str]:
        """The sharded backends (Catalog.backends) under which the `or` test holds on every rank:
        those one of its operands tests that the job runs under (`is_main_process or
        distributed_type == DistributedType.DEEPSPEED`, `is_main or is_fsdp`). A test of the
        backend alone is alike on every rank, no rank guard."""
        return frozenset().union(*(self._backend_tested(frame, part, 0) for part in test[2]))

    def _backend_tested(self, frame: Frame, test: Expr, depth: int) -> FrozenSet[str]:
        """The backends whose use `test` asserts: `x == DistributedType.FSDP` (or `is`, or `in` a
        display of members), `state.deepspeed_plugin is not None` (or a `getattr` of it), a flag
        named for one, or a local assigned one of those."""
        backends = self.catalog.backends
        if not backends or depth > 2:
            return frozenset()

        def last_name(expr: Expr) -> Optional[str]:
            if expr[0] == "attr":
                return cast(str, expr[2])
            if expr[0] == "name":
                return cast(str, expr[1])
            if expr[0] == "call":
                site = frame.fn.calls[expr[1]]
                if site.callee == ("qual", "getattr") and len(site.args) >= 2 and site.args[1][0] == "const" and isinstance(site.args[1][1], str):
                    return site.args[1][1]
            return None

        if test[0] == "cmp" and len(test[1]) == 1:
            op, (left, right) = test[1][0], test[2]
            if op in ("==", "is"):
                names = {last_name(left), last_name(right)}
                return frozenset(b for b, spec in backends.items() if names & spec.members)
            if op == "in" and right[0] == "tuple":
                names = {last_name(item) for item in right[1]}
                return frozenset(b for b, spec in backends.items() if names & spec.members)
            if op == "is not" and right == ("const", None):
                name = last_name(left)
                return frozenset(b for b, spec in backends.items() if name in spec.plugins)
            return frozenset()
        if test[0] in ("name", "attr") and plain_reference(test):
            name = cast(str, test[-1])
            flagged = frozenset(b for b, spec in backends.items() if name in spec.flags)
            if flagged or test[0] != "name":
                return flagged
            # `is_fsdp = getattr(accelerator.state, "fsdp_plugin", None) is not None`, then `if
            # accelerator.is_main_process or is_fsdp:`: what every assignment of the local tests.
            assigned = [ASSIGN.get(stmt, "value") for stmt in statements(frame.fn.body)
                        if stmt[0] == ASSIGN.tag and ("name", name) in ASSIGN.get(stmt, "targets")]
            tested = [self._backend_tested(frame, value, depth + 1) for value in assigned]
            return frozenset.intersection(*tested) if tested else frozenset()
        return frozenset()

    def _emit_branch(
        self, frame: Frame, cond: Val, info: GuardInfo, then_out, else_out, out: List[Node], test: Optional[Expr] = None
    ) -> None:
        if not then_out and not else_out:
            return  # nothing either way: no rank can differ here
        alone = self._alone_arm(frame, cond, test)
        if alone is not None:
            # The arm that runs only in a one-process job meets no other rank (an `if` statement's
            # arms were cut so already, Statements._branch_arms; a conditional expression's,
            # `model.module(x) if distributed else model(x)`, are here).
            single = then_out if alone else else_out
            single[:] = [node for node in single if isinstance(node, Exit)]
        if alone is not None and not (then_out if alone else else_out):
            # `if dist.is_initialized(): dist.gather_object(...) else: gathered = [local]`:
            # every rank of the job takes the distributed arm, and the other does nothing a
            # rank could wait for, so what the distributed arm issues is issued here, as plainly
            # as if written without the test (what a rank branch around it compares).
            out.extend(else_out if alone else then_out)
            return
        if cond.varies:
            formula = formula_of(cond, ("guard", frame.path, info.span.line, info.span.column))
            out.append(Branch(formula, self._guard(frame, info, cond, (then_out, else_out), test), then_out, else_out))
        else:
            shared = (uniform_variable(test) or self._helper_answer(frame, test)) if test is not None else None
            out.append(UniformBranch((frame.path, info.span.line, info.span.column), then_out, else_out, shared))

    def _helper_answer(self, frame: Frame, test: Expr) -> Optional[Formula]:
        """`if is_dist():` of a project function that takes no arguments, answered alike on every
        rank: one answer wherever the job asks it (`if is_dist(): <barriers before>`, the body,
        `if is_dist(): <barriers after>`), named so that the branches that ask it agree."""
        negated = False
        while test[0] == "not":
            test, negated = test[1], not negated
        if test[0] != "call":
            return None
        site = frame.fn.calls[test[1]]
        if site.callee[0] != "qual" or site.args or site.kwargs or site.has_star:
            return None
        target = self.program.resolve(site.callee[1])
        fn = self.program.functions.get(target.qualname) if target.kind == "function" else None
        if fn is None or fn.caller_params():
            return None
        answer: Formula = ("uvar", f"{fn.qualname}()")
        return negate(answer) if negated else answer

    def _if(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, test, then_body, else_body, info = stmt
        frame.span = info.span
        cond = self.eval(frame, test, out)
        known = self.known_truth(frame, test)
        if known is not None:
            # `if True:`, `if use_barriers:` with the flag this call left False: one arm is dead.
            self._body(frame, then_body if known else else_body, out)
            return
        learned = self._equalities(frame, test) if cond.varies else ((), ())
        narrowed = self._type_narrowing(frame, test)
        sent = dict(frame.sent)
        then_out, else_out = self._branch_arms(frame, then_body, else_body, cond, info, learned, narrowed, test)
        if not cond.varies and _creates_once(frame, test, then_body):
            # `if not hasattr(get_global_group, "_group"): get_global_group._group = new_group()`:
            # the group is created by the first call, on every rank, where the job sets up
            # (metaseq's distributed_init); a later call under a rank test only reads it.
            then_out = [node for node in then_out if not (isinstance(node, Collective) and node.op in _GROUP_CREATION)]
        if sent and cond.varies:
            self._adopted(frame, cond, then_body, else_body, sent)
        if cond.rank_dependent and (_skips_round(then_out) or _skips_round(else_out)):
            # `if i % world_size != rank: continue`: the rest of this loop's body runs on a share
            # of the rounds that differs per rank, so what it yields comes a per-rank number of
            # times (an IterableDataset sharding by modulo). Dropped with the loop's own rounds.
            skipped = control_taint(cond.taints, info, frame.path, SKIPPED_UNDER)
            if skipped is not None:
                frame.rounds.append(skipped)
        self._emit_branch(frame, cond, info, then_out, else_out, out, test)

    def _adopted(self, frame: Frame, cond: Val, then_body: Body, else_body: Body, sent: Dict[str, Tuple[str, int, int]]) -> None:
        """`if rank != 0: stop = objs[0]` after rank 0 broadcast `objs = [stop]`: the ranks that
        adopt the broadcast value and the source, which keeps the value it sent, end up alike
        (yolov5's early stop)."""
        formula = formula_of(cond, ("guard",))
        kinds = tested_kinds(formula)
        if not kinds or len(kinds) != 1:
            return
        (kind,) = kinds
        for name, (buffer, index, source) in sent.items():
            read = ("subscript", ("name", buffer), (("const", index),), False, ())
            adopting = [_only_assigns(body, name, read) for body in (then_body, else_body)]
            if adopting.count(True) != 1:
                continue
            source_arm_is_then = evaluate(formula, {kind: source})
            if adopting[0] == source_arm_is_then or _assigns_in(then_body if source_arm_is_then else else_body, name):
                continue  # the source rank must be the one that does not adopt
            frame.env[name] = self.eval(frame, read, [])

    def _type_narrowing(self, frame: Frame, test: Expr) -> Tuple[Learned, Learned]:
        """What each arm of `if test:` knows of a variable's type from a type test on it:
        `isinstance(model, DDP)` (the true arm holds a DDP, the other not), `hasattr(model,
        "module")` (where it has none, it is no wrapper that has one). Under `and`, the true arm
        knows every operand's; the other arm is taken as the unwrapping idiom means it (`if
        args.distributed and hasattr(model, "module"): model = model.module`): no wrapper there."""
        positive = True
        while test[0] == "not":
            test, positive = test[1], not positive
        tests = test[2] if test[0] == "bool" and test[1] == "and" else (test,)
        then_learned: List[Tuple[str, Val, Val]] = []
        else_learned: List[Tuple[str, Val, Val]] = []
        for part in tests:
            narrowing = self._type_test(frame, part)
            if narrowing is None:
                continue
            key, current, when_true, when_false = narrowing
            if when_true is not None:
                then_learned.append((key, current, when_true))
            if when_false is not None and (len(tests) == 1 or positive):
                else_learned.append((key, current, when_false))
        if not positive:
            then_learned, else_learned = else_learned, then_learned
        return tuple(then_learned), tuple(else_learned)

    def _type_test(self, frame: Frame, test: Expr) -> Optional[Tuple[str, Val, Optional[Val], Optional[Val]]]:
        """(variable key, its value, its value where the test holds, where it does not) for
        `isinstance(x, T)` and `hasattr(x, "attr")`, and `x is None` (where it holds, x is None,
        alike on every rank); None for any other test."""
        if test[0] == "cmp" and len(test[1]) == 1 and test[1][0] in ("is", "is not") and test[2][1] == ("const", None):
            key = self._variable_key(frame, test[2][0])
            if key is None:
                return None
            current = self.eval(frame, test[2][0], [])
            if current.rank is not None or current.pred is not None:
                return None  # the rank itself: whether there is one is alike everywhere (Expressions._cmp)
            # Where the test says it is not None, it is not (Val.defined); where it says it is,
            # a value that varies is None alike on every rank.
            none = Val(const=(None,)) if current.varies else None
            defined = None if current.defined or current.const is not None else replace(current, defined=True)
            if none is None and defined is None:
                return None
            return (key, current, none, defined) if test[1][0] == "is" else (key, current, defined, none)
        if test[0] != "call":
            return None
        site = frame.fn.calls[test[1]]
        if site.callee[0] != "qual" or site.callee[1] not in ("isinstance", "hasattr") or len(site.args) != 2:
            return None
        key = self._variable_key(frame, site.args[0])
        if key is None:
            return None
        current = self.eval(frame, site.args[0], [])
        if site.callee[1] == "hasattr":
            attr = site.args[1]
            spec = self.external_spec(current.type)
            if attr[0] == "const" and isinstance(attr[1], str) and spec is not None and attr[1] in spec.attributes:
                return key, current, None, replace(current, type=None)
            return None
        wanted = self._type_names(frame, site.args[1])
        if not wanted:
            return None
        when_true = replace(current, type=wanted[0]) if len(wanted) == 1 and current.type is None else self._instances_only(current, wanted)
        if not current.defined and _never_none(wanted):
            # An instance of a class is not None: a callee's `if plugin is not None:` takes its arm.
            when_true = replace(when_true if when_true is not None else current, defined=True)
        when_false = replace(current, type=None) if current.type in wanted else None
        return key, current, when_true, when_false

    def _instances_only(self, current: Val, wanted: Tuple[str, ...]) -> Optional[Val]:
        """`current` where `isinstance(current, wanted)` holds, when that rules out some of the
        classes it may be (`for obj in prepared: if isinstance(obj, nn.Module): model = obj`, over
        the optimizer, the scheduler wrapper and the model `prepare` returns): a method call on it
        then runs none of theirs. None: nothing ruled out."""
        candidates = current.types or ((current.type,) if current.type else ())
        kept = tuple(t for t in candidates if not self._never_instance(t, wanted))
        if len(kept) == len(candidates):
            return None
        if not kept:
            # None of the classes it was known to be: it is what else reached it, of that type.
            return replace(current, type=wanted[0] if len(wanted) == 1 else None, types=())
        return replace(current, type=min(kept), types=kept if len(kept) > 1 else ())

    def _never_instance(self, class_name: str, wanted: Tuple[str, ...]) -> bool:
        """A project class none of whose bases is one of `wanted` and all of whose bases are
        project classes (or `object`): no instance of it passes `isinstance(x, wanted)`. A class
        with a base from a library may be anything that base derives from."""
        if class_name not in self.program.classes or class_name in wanted:
            return False
        for cls in self.program.class_chain(class_name):
            if cls.qualname in wanted:
                return False
            for base in cls.bases:
                target = self.program.resolve(base)
                if target.kind != "class" and target.qualname.rsplit(".", 1)[-1] not in ("object", "Generic", "ABC", "Protocol"):
                    return False
        return True

    def _type_names(self, frame: Frame, expr: Expr) -> Tuple[str, ...]:
        """The types a class expression (or a tuple of them) names, as the catalog or the program
        knows them (aliases resolved to their type's own name)."""
        parts = expr[1] if expr[0] == "tuple" else (expr,)
        names: List[str] = []
        for part in parts:
            ref = self.eval(frame, part, []).ref
            if ref is None:
                continue
            target = self.program.resolve(ref)
            spec = self.catalog.type_spec(target.qualname) if target.kind == "external" else None
            names.append(spec.qualname if spec is not None else target.qualname)
        return tuple(names)

    def _equalities(self, frame: Frame, test: Expr) -> Tuple[Learned, Learned]:
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
            measured = self._measured(frame, target)
            if measured is not None and test[1][0] in ("==", "!="):
                # `if len(bucket) == self.batch_size: yield bucket`: in that arm the list holds as
                # many items as the uniform value says, whatever it was filled from.
                key = self._variable_key(frame, measured)
                value = self.eval(frame, other, [])
                current = self.eval(frame, measured, []) if key is not None else None
                if key is not None and current is not None and current.shape and not value.varies and not value.shape:
                    learned.append((key, current, replace(current, shape=frozenset(), sized=True)))
                continue
            key = self._variable_key(frame, target)
            if key is None or not plain_reference(other):
                continue
            current = self.eval(frame, target, [])
            if not current.varies or current.shape:
                continue
            value = self.eval(frame, other, [])
            if value.varies or value.shape:
                continue
            learned.append((key, current, value))
        return (tuple(learned), ()) if positive else ((), tuple(learned))

    def _measured(self, frame: Frame, expr: Expr) -> Optional[Expr]:
        """The variable `len(x)` counts the items of (catalog `[shape] counts`), else None."""
        if expr[0] != "call":
            return None
        site = frame.fn.calls[expr[1]]
        if site.callee[0] != "qual" or len(site.args) != 1 or site.kwargs:
            return None
        return site.args[0] if counts_items(site, site.callee[1].rsplit(".", 1)[-1], self.catalog) else None

    @staticmethod
    def _variable_key(frame: Frame, expr: Expr) -> Optional[str]:
        """The frame's key for a local variable or a `self` attribute, else None."""
        if expr[0] == "name" and expr[1] in frame.env:
            return expr[1]
        if expr[0] == "attr" and is_self(frame, expr[1]):
            return "self." + expr[2]
        return None

    def _loop_body(self, frame: Frame, body, orelse, rounds: Optional[Taint] = None) -> List[Node]:
        """`rounds`: what the number of rounds depends on; what the body changes depends on it too
        (`total += len(batch)` over a per-rank shard)."""
        base = dict(frame.env)
        first_write = len(frame.writes)
        body_out: List[Node] = []
        depth = len(frame.rounds)
        if rounds is not None:
            frame.rounds.append(rounds)
        try:
            self._body(frame, body, body_out)
        finally:
            del frame.rounds[depth:]
        state = (frame.env, False)
        frame.env, frame.dead = base, False
        self._merge(frame, [state, (dict(base), False)], control=rounds, written=set(frame.writes[first_write:]))
        if orelse:
            self._body(frame, orelse, body_out)
        return body_out

    def _while(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, test, body, orelse, info = stmt
        frame.span = info.span
        trips = _while_trips(frame, test, body)
        cond_out: List[Node] = []
        cond = self.eval(frame, test, cond_out)
        rounds = control_taint(cond.taints, info, frame.path)
        body_out = cond_out + self._loop_body(frame, body, orelse, rounds)
        if not body_out:
            return
        formula = None
        guard = None
        uneven = None
        if not cond.varies and not frame.join:
            # The test is asked again after every round: what the body leaves in the variables it
            # reads (a counter reset on rank 0 only, `if rank == 0 and improved: state.bad = 0`)
            # decides how many rounds there are.
            again = self.eval(frame, test, [])
            if again.varies and again.rank is None and again.pred is None:
                cond = again
        if cond.rank is not None or cond.pred is not None:
            # `while rank == 0:` / `while not is_main():`: some ranks loop, the others do not.
            formula = formula_of(cond, ("guard", frame.path, info.span.line, info.span.column))
            guard = self._guard(frame, info, cond)
        elif cond.varies and not frame.join:
            uneven = self._guard(frame, info, cond)  # how many rounds depends on the rank's own values
        if test[0] == "const" and test[1] and not isinstance(test[1], str):
            _drop_retries(body_out, issued=False, conditional=False)
        out.append(Loop((frame.path, info.span.line, info.span.column), formula, body_out, guard, uneven, trips))

    def _for(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, target, iterable, body, orelse, info = stmt
        frame.span = info.span
        trips = self._range_trips(frame, iterable, body)
        items = self.iterated_by_name(iterable, self.eval(frame, iterable, out))
        if self.shares_seed(items) and not self._makes_iterator(frame, iterable):
            out.append(self.seed_broadcast(frame, info.span, render_expr(iterable)))
        length = leading(items.shape) | self._iteration_shape(items)
        uneven = self._guard(frame, info, Val(taints=length)) if length and not frame.join else None
        element = self._iteration_value(items, info, frame)
        counter = target[1][0] if self._is_counter(frame, iterable) and target[0] == "unpack" and len(target[1]) == 2 else None
        if counter is not None:
            # `for i, batch in enumerate(loader)`: the index is the same on every rank for as long
            # as the loop runs (round k is round k everywhere; a loop whose rounds differ is the
            # loop's finding); only the batch is this rank's own.
            self._assign(frame, counter, UNIFORM, out)
            if element.items is not None and len(element.items) == 2 and element.items[0] is INDEX:
                element = element.items[1]  # the item `enumerate` pairs with the index
            self._assign(frame, target[1][1], element, out)
        else:
            self._assign(frame, target, element, out)
        body_out = self._loop_body(frame, body, orelse, control_taint(length, info, frame.path))
        if counter is not None and counter[0] == "name" and length:
            # Past the loop it holds the last round's index: as many rounds as this rank ran.
            last = Val(taints=length, key=("iter", frame.path, info.span.line))
            held = frame.env.get(counter[1])
            frame.env[counter[1]] = last if held is None else join(held, last)
        if body_out:
            out.append(Loop((frame.path, info.span.line, info.span.column), None, body_out, None, uneven, trips))

    def _makes_iterator(self, frame: Frame, iterable: Expr) -> bool:
        """`for x in iter(loader):`: the iterator was made (and its collective issued) by the call."""
        if iterable[0] != "call":
            return False
        callee = frame.fn.calls[iterable[1]].callee
        return callee[0] == "qual" and callee[1] in ITERATOR_MAKERS

    def _is_counter(self, frame: Frame, iterable: Expr) -> bool:
        if iterable[0] != "call":
            return False
        callee = frame.fn.calls[iterable[1]].callee
        return callee[0] == "qual" and callee[1] in self.catalog.iteration_counters

    def _exit(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, kind, value, span, text = stmt
        frame.span = span
        if value is not None:
            v = self.eval(frame, value, out)
            if frame.alone:
                # Returned only where the job has no other process: it meets no other rank's value.
                v = replace(v, taints=frozenset(), shape=frozenset(), key=None)
            if kind == "return" and not frame.fn.is_generator:
                if frame.returned and frame.alone != frame.returned_alone:
                    # What a distributed path returns is what ranks compare; the return of a job
                    # without other processes (`if not is_distributed(): return 0`) is no other
                    # value of it: `get_global_rank()` returns the rank, not "the rank or 0".
                    if not frame.alone:
                        frame.ret, frame.returned_alone = v, False
                else:
                    frame.ret = v if not frame.returned else join(frame.ret, v)
                    frame.returned_alone = frame.alone
                frame.returned = True
                if value[0] == "name" and not frame.alone:
                    for attr, held in frame.fields_held(value[1]).items():
                        before = frame.ret_fields.get(attr)
                        frame.ret_fields[attr] = held if before is None else join(before, held)
        elif kind == "return" and not frame.fn.is_generator:
            # A generator's `return` ends its items; what calling it gives is made by its yields.
            frame.ret = UNIFORM if not frame.returned else join(frame.ret, UNIFORM)
            frame.returned = True
        if kind == "return" and value is not None and value != ("const", None):
            acted_on = self._returned_into(frame.fn)
            if acted_on is not None:
                # `return loss` from training_step: the framework's backward on it follows here.
                here = loc(frame.path, span)
                out.append(Collective(acted_on.op, "WORLD", SiteRef(here, f"backward() of what {frame.fn.name} returns"), acted_on.note, None, False, UNDER_ANY))
        if kind == "return" and frame.stops:
            out.extend(self._stops(frame))
        exit_kind = ExitKind(kind)
        raises: Optional[Tuple[str, ...]] = None
        if exit_kind is ExitKind.RAISE:
            if value is not None:
                raised = self._exception_class(frame, value)
                raises = lineage(self.program, raised) if raised is not None else None
            elif text.startswith(GuardKeyword.ASSERT.value):
                raises = builtin_lineage(ASSERTION)
            elif frame.handling and frame.handling[-1] is not None:
                # A bare `raise` in a handler raises again what it caught: one of those it names.
                raises = tuple(dict.fromkeys(n for caught in frame.handling[-1] for n in lineage(self.program, caught)))
        out.append(Exit(exit_kind, SiteRef(loc(frame.path, span), text), text, exit_kind is ExitKind.RAISE, raises))
        if exit_kind is ExitKind.RAISE:
            frame.fatal_exits.append((exit_kind, raises))
        frame.dead = True

    def _exception_class(self, frame: Frame, expr: Expr) -> Optional[str]:
        """The class an exception expression names or builds (`ValueError("...")`, `errors.Stop`,
        a project class), as a builtin's name or a qualified name; None when not known."""
        if expr[0] == "call":
            callee = frame.fn.calls[expr[1]].callee
            if callee[0] == "qual":
                return self.program.resolve(callee[1]).qualname
            if callee[0] in ("global", "local"):
                return self._exception_class(frame, ("name", callee[1]))
            return None
        if expr[0] == "name":
            name = expr[1]
            held = frame.env.get(name)
            if held is not None:
                return held.type if held.type is not None else held.ref
            bound = self.program.modules[frame.fn.module].imports if frame.fn.module in self.program.modules else ()
            for alias, target in bound:
                if alias == name:
                    return self.program.resolve(target).qualname
            here = self.program.resolve(f"{frame.fn.module}.{name}")
            if here.kind == "class":
                return here.qualname
            builtin = builtin_lineage(name)
            return builtin[0] if builtin else None  # by its own name: `IOError` is `OSError`
        if expr[0] == "attr":
            base = self.eval(frame, expr[1], [])
            if base.ref is not None:
                return self.program.resolve(f"{base.ref}.{expr[2]}").qualname
            return render_expr(expr)
        return None

    def _handler_types(self, frame: Frame, expr: Optional[Expr]) -> Optional[Tuple[str, ...]]:
        """The classes an `except` names (each as `_exception_class` names it); None for a bare
        `except:`."""
        if expr is None:
            return None
        parts = expr[1] if expr[0] == "tuple" else (expr,)
        names = (self._exception_class(frame, part) for part in parts)
        return tuple(name for name in names if name is not None)

    def _with(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, items, body, span = stmt
        frame.span = span
        suppressing = next(((i, found) for i, (expr, _) in enumerate(items) if (found := self._suppressed(frame, expr)) is not None), None)
        if suppressing is not None:
            # `with a, suppress(E), b:` is `with a:` / `try: with b:` / `except E: pass`: a rank
            # whose body raises E goes on past the block, skipping what the rest of it issues.
            at, (caught, text) = suppressing
            if at > 0:
                self._with(frame, ("with", items[:at], (("with", items[at:], body, span),), span), out)
                return
            inner = (("with", items[1:], body, span),) if len(items) > 1 else body
            self._try(frame, ("try", inner, ((text, None, (), span, caught),), (), ()), out)
            return
        managers: List[Tuple[SiteRef, str, Tree]] = []
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
        body_out: List[Node] = []
        frame.quiet += quiet
        frame.join += joins
        try:
            self._body(frame, body, body_out)
        finally:
            frame.quiet -= quiet
            frame.join -= joins
        for site, qual, cm_tree in reversed(managers):
            body_out = [WithContext(site, qual, cm_tree, body_out)]
        out.extend(body_out)

    def _suppressed(self, frame: Frame, expr: Expr) -> Optional[Tuple[Expr, str]]:
        """`contextlib.suppress(OSError, KeyError)`: the exception classes it swallows, as the
        type expression an `except` would name them with, and the handler's head (the `with`)."""
        if expr[0] != "call" or not self.catalog.exception_suppressors:
            return None
        site = frame.fn.calls[expr[1]]
        if site.callee[0] != "qual" or self.program.resolve(site.callee[1]).qualname not in self.catalog.exception_suppressors:
            return None
        if not site.args or site.kwargs or site.has_star:
            return None  # `suppress()` swallows nothing
        caught = site.args[0] if len(site.args) == 1 else ("tuple", tuple(site.args))
        return caught, f"with {site.text}({', '.join(site.arg_texts[: len(site.args)])}):"

    def _catalogued_staggering(self, frame: Frame, site: CallSite) -> Optional[Tuple[SiteRef, str, Tree]]:
        """`with accelerator.main_process_first():`, a framework's "these ranks first" block, as
        the tree of the generator it is: `if not first: barrier()`, the body, `if first: barrier()`
        (what sequences.staggered judges)."""
        callee = site.callee
        if callee[0] != "attr" or callee[2] not in self.catalog.staggered_contexts:
            return None
        kind, op, const = self.catalog.staggered_contexts[callee[2]]
        here = loc(frame.path, site.span)
        first = cmp(kind, op, const)
        condition = f"{kind} {op} {const}"
        waiting = f"{kind} != {const}" if op == "==" else f"not {condition}"
        taint = Taint(TaintKind.RANK, f"{site.text}()", here, kinds=frozenset([kind]))
        note = f"{callee[2]}() holds the other ranks in a barrier until the first ones leave the block"

        def barrier() -> Tree:
            return [Collective("barrier", "WORLD", SiteRef(here, "barrier"), note, None, False, UNDER_ANY)]

        waits = Branch(negate(first), GuardRef(here, f"if {waiting}:", waiting, taint), barrier(), [])
        releases = Branch(first, GuardRef(here, f"if {condition}:", condition, taint), barrier(), [])
        return (SiteRef(here, site.text), site.text, [waits, YIELD, releases])

    def _context_manager(self, frame: Frame, expr: Expr, out: List[Node]) -> Optional[Tuple[SiteRef, str, Tree]]:
        """`with project_cm(...)`: a generator context manager that reaches a collective."""
        if expr[0] != "call":
            return None
        site = frame.fn.calls[expr[1]]
        staggered = self._catalogued_staggering(frame, site)
        if staggered is not None:
            self._eval_args(frame, site, out)
            return staggered
        target = self.resolve_call(frame, site, out)
        if target is not None and target.kind == "class":
            return self._class_context_manager(frame, site, target.qualname, expr, out)
        if target is None or target.kind != "function" or target.function is None or not target.function.is_generator:
            return None
        bindings = self._bind_args(frame, target.function, site, out)
        frame.call_args.append((target.qualname, bindings))
        result = self.run(target.qualname, bindings)
        if not result.reaches:
            return None
        return (SiteRef(loc(frame.path, site.span), site.text), target.qualname, self._callee_tree(result))

    def _class_context_manager(self, frame: Frame, site: CallSite, cls: str, expr: Expr, out: List[Node]) -> Optional[Tuple[SiteRef, str, Tree]]:
        """`with FirstRankPerNode():`, an instance of a project class as the context manager: its
        `__enter__` runs before the body and its `__exit__` after it, on the one object (what
        `__enter__` stores on `self`, `__exit__` reads), as a generator's code runs around its
        `yield`. None where the class has neither, or neither reaches a collective (the call is
        then evaluated as any other)."""
        enter = self.program.find_method(cls, "__enter__")
        leave = self.program.find_method(cls, "__exit__")
        if enter is None and leave is None:
            return None
        self.eval(frame, expr, out)  # the instance, built as the call builds it (its __init__)
        here = SiteRef(loc(frame.path, site.span), site.text)
        tree: List[Node] = []
        reaches = False
        stored: Dict[str, Val] = {}
        if enter is not None:
            before = self.run(enter.qualname, {})
            tree.append(Call(here, enter.qualname, self._callee_tree(before)))
            reaches = before.reaches
            stored = {"self." + attr: value for attr, value in before.self_stores.items()}
        tree.append(YIELD)
        if leave is not None:
            # Left normally: no exception, so `exc_type` and the others are None.
            finished = {param: Val(const=(None,)) for param in leave.caller_params()}
            after = self.run(leave.qualname, {**stored, **finished})
            tree.append(Call(here, leave.qualname, self._callee_tree(after)))
            reaches = reaches or after.reaches
        return (here, cls, tree) if reaches else None

    def _try(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, body, handlers, orelse, final = stmt
        base = dict(frame.env)
        body_out: List[Node] = []
        # Statement by statement: which ones issue collectives, and whether any other comes first.
        collectives_first, issued, may_raise = True, 0, False
        frame.in_try += 1
        for stmt in body:
            if frame.dead:
                break
            before = len(body_out)
            self._stmt(frame, stmt, body_out)
            if tree_reaches(body_out[before:]):
                issued += 1
                issued_here = body_out[before:]
                if may_raise or not (self._is_collective_statement(frame, stmt, issued_here) or self._swallows_what_it_issues(frame, stmt, issued_here)):
                    collectives_first = False
            elif not self._cannot_raise(stmt):
                may_raise = True  # only a collective after it makes that matter
        frame.in_try -= 1
        # With collectives in the body, RC105 says what the failing rank skips (Try.collectives_first).
        failing = self._fails_on_its_own(frame, body, handlers) if not tree_reaches(body_out) else None
        if failing is not None:
            body_out.insert(0, failing)
        states = [(frame.env, frame.dead)]
        arms: List[Handler] = []
        for type_text, name, hbody, hspan, caught in handlers:
            frame.env, frame.dead = dict(base), False
            if name:
                frame.env[name] = UNIFORM
            h_out: List[Node] = []
            catches = self._handler_types(frame, caught)
            frame.handling.append(catches)
            was_alone = frame.alone
            try:
                self._body(frame, hbody, h_out)
            finally:
                frame.handling.pop()
            # A handler that neither re-raises nor ends the process lets this rank go on alone;
            # one that goes on only where the job is not distributed (`if dist.is_initialized():
            # destroy_process_group(); sys.exit(1)`) leaves no other rank waiting.
            leaves = any(isinstance(node, Exit) and node.kind in (ExitKind.RAISE, ExitKind.EXIT) for node in h_out) or (frame.alone and not was_alone)
            frame.alone = was_alone
            # A `with suppress(...)` lowered to a `try` is shown as written (Statements._with).
            head = type_text if type_text.startswith("with ") else f"except {type_text}:" if type_text else "except:"
            arms.append(Handler(head, loc(frame.path, hspan), not leaves, h_out, catches))
            states.append((frame.env, frame.dead))
        frame.dead = False
        self._merge(frame, states)
        if frame.dead:
            frame.dead = False  # a `try` whose every path exits: keep interpreting conservatively
        orelse_out: List[Node] = []
        self._body(frame, orelse, orelse_out)
        final_out: List[Node] = []
        self._body(frame, final, final_out)
        if body_out or any(arm.body for arm in arms) or orelse_out or final_out:
            out.append(Try(body_out, tuple(arms), orelse_out, final_out, collectives_first and issued > 0))

    def _fails_on_its_own(self, frame: Frame, body: Body, handlers: Tuple) -> Optional[Branch]:
        """`try: loss = self.model_step(batch)` / `except torch.cuda.OutOfMemoryError:`: a handler
        of what the runtime raises on one rank by itself (Catalog.per_rank_exceptions) runs on the
        ranks that hit it, from the first statement of the body that does work. As a branch those
        ranks take there: a raise of it, which the handler catches."""
        known = self.catalog.per_rank_exceptions
        if not known:
            return None
        caught = next((name for *_, types in handlers for name in (self._handler_types(frame, types) or ()) if name in known), None)
        if caught is None:
            return None
        working = next((stmt for stmt in body if not self._cannot_raise(stmt)), None)
        if working is None:
            return None
        calls = sorted((frame.fn.calls[node[1]] for node in walk_tuples(working) if node[0] == "call"), key=lambda site: (site.span.line, site.span.column, site.span.end_line, site.span.end_column))
        if not calls:
            return None  # no call, no allocation to fail
        site = calls[0]  # the first written (a chain `model(x).float().mean()` is one, whole)
        here = loc(frame.path, site.span)
        condition = f"this rank runs out of memory in {site.text}()"
        taint = Taint(TaintKind.DATA, condition, here)
        raises = (caught, *(builtin_lineage(known[caught]) or ("Exception", "BaseException")))
        raise_there = Exit(ExitKind.RAISE, SiteRef(here, caught), caught, True, raises)
        guard = GuardRef(here, f"if {condition}:", condition, taint, kind=PER_RANK_DATA)
        return Branch(("var", ("fails", frame.path, site.span.line, site.span.column)), guard, [raise_there], [])

    def _swallows_what_it_issues(self, frame: Frame, stmt: Stmt, nodes: List[Node]) -> bool:
        """A statement whose collectives all sit in `try`s of their own that swallow every error
        (`try: dist.barrier() except Exception: pass`, under `if dist.is_initialized():`), with
        nothing before them that can fail: nothing it raises reaches an enclosing `try`, and a
        rank that fails after it has skipped none of them (Megatron's shutdown path)."""
        return _only_in_swallowing_trys(nodes) and self._swallowing_statement(frame, stmt)

    def _swallowing_statement(self, frame: Frame, stmt: Stmt) -> bool:
        if stmt[0] == "try":
            return _swallows_everything(stmt)
        if stmt[0] != "if" or not self._cannot_fail_test(frame, stmt[1]):
            return False
        for arm in (stmt[2], stmt[3]):
            with_try = [i for i, inner in enumerate(arm) if any(s[0] == "try" for s in statements((inner,)))]
            # Up to the last statement holding a `try` (the collectives are in such tries), nothing
            # may fail; what follows it comes after them.
            for inner in arm[: with_try[-1] + 1] if with_try else ():
                if not (self._cannot_raise(inner) or self._swallowing_statement(frame, inner)):
                    return False
        return True

    def _cannot_fail_test(self, frame: Frame, test: Expr) -> bool:
        """A condition that reads state and fails on no rank: names, attributes, constants and the
        catalog's tests of the distributed setup (`dist.is_initialized()`), with and/or/not."""
        tag = test[0]
        if tag == "const" or plain_reference(test):
            return True
        if tag == "not":
            return self._cannot_fail_test(frame, test[1])
        if tag == "bool":
            return all(self._cannot_fail_test(frame, part) for part in test[2])
        if tag == "call":
            site = frame.fn.calls[test[1]]
            return site.callee[0] == "qual" and self.program.resolve(site.callee[1]).qualname in self.catalog.distributed_tests
        return False

    def _is_collective_statement(self, frame: Frame, stmt: Stmt, nodes: List[Node]) -> bool:
        """`dist.barrier()` / `work = dist.all_reduce(t, async_op=True)` as a statement of its own:
        one collective of the catalog called directly, with arguments that run no code."""
        if len(nodes) != 1 or not isinstance(nodes[0], Collective):
            return False
        value = stmt[1] if stmt[0] == "expr" else stmt[2] if stmt[0] == "assign" else None
        if value is None or value[0] != "call":
            return False
        site = frame.fn.calls[value[1]]
        return all(self._rereadable(frame, a) for a in (*site.args, *(v for _, v in site.kwargs)))

    @staticmethod
    def _cannot_raise(stmt: Stmt) -> bool:
        """A statement that runs no code that could fail on one rank: `pass`, a docstring, a
        constant assignment."""
        if stmt[0] == "expr":
            return stmt[1][0] == "const"
        if stmt[0] == "assign":
            return stmt[2][0] == "const" and all(t[0] == "name" for t in stmt[1])
        return stmt[0] == "global"

    @staticmethod
    def _range_trips(frame: Frame, iterable: Expr, body: Body) -> Optional[int]:
        """`for _ in range(9):` with constant bounds and no exit in the body: 9 rounds."""
        if iterable[0] != "call" or _leaves_early(body):
            return None
        site = frame.fn.calls[iterable[1]]
        if site.callee != ("qual", "range") or site.kwargs or not 1 <= len(site.args) <= 3:
            return None
        bounds = [_count_value(frame, arg) for arg in site.args]
        if any(b is None for b in bounds) or (len(bounds) == 3 and bounds[2] == 0):
            return None
        return len(range(*cast(List[int], bounds)))

    def _match(self, frame: Frame, stmt: tuple, out: List[Node]) -> None:
        _, subject_expr, cases = stmt
        subject = self.eval(frame, subject_expr, out)
        # Build the chain of cases from the last one up: case_i ? body_i : (rest)
        base = dict(frame.env)
        states = []
        chain: List[Node] = []
        for pattern, guard_expr, body, info in reversed(cases):
            frame.env, frame.dead = dict(base), False
            body_out: List[Node] = []
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
            known = [v for v in vals if v is not None]
            if len(known) < len(vals):
                return None
            return self._or_values(known)
        return Val(taints=subject.taints, key=("pattern", info.span)) if subject.taints else UNIFORM


_COMPOUND = frozenset(("if", "while", "for", "try", "with", "match"))
_STEPS: Dict[str, Callable[[int, int], int]] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
_TESTS: Dict[str, Callable[[int, int], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b,
}
MAX_TRIPS = 100_000


def _int_constant(expr: Expr) -> Optional[int]:
    if expr[0] == "const" and isinstance(expr[1], int) and not isinstance(expr[1], bool):
        return expr[1]
    return None


def _count_value(frame: Frame, expr: Expr) -> Optional[int]:
    """An int constant, or a name that holds one here."""
    if expr[0] == "name":
        return frame.numbers.get(expr[1])
    return _int_constant(expr)


def _note_numbers(frame: Frame, target: tuple, value: Expr) -> None:
    """`i = 1`, `i, j = 1, 10`: the names that now hold an int constant."""
    if target[0] == "name":
        number = _int_constant(value)
        if number is not None:
            frame.numbers[target[1]] = number
    elif target[0] == "unpack" and value[0] == "const" and isinstance(value[1], tuple) and len(value[1]) == len(target[1]):
        for sub, item in zip(target[1], value[1]):
            if sub[0] == "name" and isinstance(item, int) and not isinstance(item, bool):
                frame.numbers[sub[1]] = item


def _leaves_early(body: Body) -> bool:
    """The body can end its loop before the count says (`break`, `return`, `raise`)."""
    return any(s[0] == "exit" and s[1] in ("break", "return", "raise") for s in statements(body))


def _drop_retries(tree: Sequence[Node], issued: bool, conditional: bool) -> bool:
    """In the body of a `while True:` loop, the `continue`s some ranks take under a further test
    before they have issued anything this round (rank 0 asks for a prompt again when it was
    empty) go round again: the loop counts no rounds, so those ranks meet the others at the
    round's first collective a round later, in the same order. Such a `continue` is dropped from
    the tree: what follows it is what those ranks go on to issue. One taken on every round by
    some ranks (not under a further test) still parts them: they spin while the others wait.
    Returns whether anything may have been issued by the end of `tree`."""
    for index, node in enumerate(tree):
        if isinstance(node, Exit):
            if node.kind is ExitKind.CONTINUE and not issued and conditional and isinstance(tree, list):
                del tree[index:index + 1]  # nothing follows an exit in its list
            return issued
        if isinstance(node, (Branch, UniformBranch)):
            # Past a test of anything but the rank itself (per-rank data, or what was assigned
            # under a rank test: rank 0's prompt), the `continue` is not every round's.
            further = conditional or isinstance(node, UniformBranch) or node.guard.kind == PER_RANK_DATA or (
                node.guard.taint is not None and node.guard.taint.control)
            then_issued = _drop_retries(node.then, issued, further)
            else_issued = _drop_retries(node.orelse, issued, further)
            issued = then_issued or else_issued
        else:
            # A collective, a call that reaches one, or code whose exits are its own (a loop).
            issued = True
    return issued


def _while_trips(frame: Frame, test: Expr, body: Body) -> Optional[int]:
    """`while i < 10:` with `i` a constant here, stepped by a constant once per round at the
    body's top level and assigned nowhere else in it: how many rounds it runs."""
    if test[0] != "cmp" or len(test[1]) != 1 or test[1][0] not in _TESTS or test[2][0][0] != "name" or _leaves_early(body):
        return None
    counter = test[2][0][1]
    start, bound = frame.numbers.get(counter), _count_value(frame, test[2][1])
    if start is None or bound is None:
        return None
    steps = [s for s in body if s[0] == "augassign" and s[1] == ("name", counter)]
    if len(steps) != 1 or steps[0][4] not in ("+", "-") or _int_constant(steps[0][2]) is None:
        return None
    if any(_assigns(s, counter) for s in statements(body) if s is not steps[0]):
        return None
    step = cast(int, _int_constant(steps[0][2])) * (1 if steps[0][4] == "+" else -1)
    holds, count, value = _TESTS[test[1][0]], 0, start
    while holds(value, bound):
        value += step
        count += 1
        if count > MAX_TRIPS:
            return None
    return count


def _built_differently(values: List[Val]) -> bool:
    """The arms left tensors of other sizes or dtypes as written in one variable."""
    return sizes_differ(values) or dtypes_differ(values)


def _returns_a_constant(*bodies: Body) -> bool:
    """One of the bodies returns a value written as a constant (`return False`, bare `return`)."""
    return any(stmt[0] == "exit" and stmt[1] == "return" and (stmt[2] is None or stmt[2][0] == "const")
               for body in bodies for stmt in statements(body))


def counted_yield_limit(body: Body) -> Optional[Expr]:
    """A generator that counts what it yields to a limit: `while produced < steps:` (or `while
    True:` with `if produced == steps: return`) around every `yield`, each followed at once by
    `produced += 1`, the counter changed nowhere else, and no way out of that loop but its test or
    a `return`/`break` under a test of the counter: it yields `steps` items however often its inner
    loops (over this rank's shard) come round. The limit; None for any other generator."""
    for loop in body:
        test = loop[1] if loop[0] == "while" else None
        if test is None:
            continue
        if test == ("const", True):
            # `while True:` ended by `if produced == limit: return` (the count's own test).
            stops = {(s[1][2][0][1], s[1][2][1]) for s in statements(loop[2])
                     if s[0] == "if" and _counts_to(s[1], ("==", ">=")) and any(inner[0] == "exit" and inner[1] == "return" for inner in s[2])}
            if len(stops) != 1:
                continue
            (counter, limit), = stops
        elif _counts_to(test, ("<", "<=", "!=")):
            counter, limit = test[2][0][1], test[2][1]
        else:
            continue
        inside = list(statements(loop[2]))
        yields = [s for s in inside if s[0] == "expr" and s[1][0] == "yield"]
        if not yields or _yield_count(body) != len(yields):
            continue
        steps = [s for s in inside if s[0] == "augassign" and s[1] == ("name", counter)]
        if len(steps) != len(yields) or any(s[4] != "+" or _int_constant(s[2]) != 1 for s in steps):
            continue
        if any(_assigns(s, counter) for s in inside if s not in steps) or not _each_yield_counted(loop[2], counter):
            continue
        if _leaves_uncounted(loop[2], counter, nested=False):
            continue
        return cast(Expr, limit)
    return None


def _yield_count(body: Body) -> int:
    """How many `yield` expressions the body has, in statements of any kind."""
    found = 0
    for stmt in statements(body):
        # A compound statement's own expressions (its test, its iterable); its bodies come next.
        parts = () if stmt[0] == "try" else stmt[1:3] if stmt[0] == "for" else stmt[1:2] if nested_bodies(stmt) or stmt[0] == "match" else stmt[1:]
        found += sum(1 for node in walk_tuples(parts) if node and node[0] == "yield")
    return found


def _each_yield_counted(body: Body, counter: str) -> bool:
    """Every `yield` statement of the body is followed at once by the counter's step."""
    for index, stmt in enumerate(body):
        if stmt[0] == "expr" and stmt[1][0] == "yield":
            following = body[index + 1] if index + 1 < len(body) else None
            if following is None or following[0] != "augassign" or following[1] != ("name", counter):
                return False
        if not all(_each_yield_counted(inner, counter) for inner in nested_bodies(stmt)):
            return False
    return True


def _leaves_uncounted(body: Body, counter: str, nested: bool) -> bool:
    """The body can leave the counting loop other than under a test of the counter: a `return` or
    `raise` anywhere, a `break` of the loop itself (`nested`: inside an inner loop, whose own
    `break` only ends that one)."""
    for stmt in body:
        if stmt[0] == "if" and _tests_name(stmt[1], counter):
            continue  # `if produced >= steps: return`: the count reached
        if stmt[0] == "exit" and (stmt[1] in ("return", "raise") or (stmt[1] == "break" and not nested)):
            return True
        inner_nested = nested or stmt[0] in ("for", "while")
        if any(_leaves_uncounted(inner, counter, inner_nested) for inner in nested_bodies(stmt)):
            return True
    return False


def _counts_to(test: Expr, ops: Tuple[str, ...]) -> bool:
    """`name <op> limit`: one comparison of a variable, by one of `ops`."""
    return test[0] == "cmp" and len(test[1]) == 1 and test[1][0] in ops and test[2][0][0] == "name"


def _tests_name(test: Expr, name: str) -> bool:
    return test[0] == "cmp" and len(test[1]) == 1 and test[2][0] == ("name", name)


def _swallows_everything(stmt: Stmt) -> bool:
    """`try: ... except Exception: pass`: a handler for every error that does not raise it on,
    and no `else`/`finally` that could."""
    if stmt[0] != "try" or stmt[3] or stmt[4]:
        return False
    return any((not h[0] or h[0] in BROAD_HANDLERS) and not any(s[0] == "exit" and s[1] == "raise" for s in statements(h[2])) for h in stmt[2])


def _only_in_swallowing_trys(nodes: Tree) -> bool:
    """Every collective of `nodes` is in the body of a `try` (whose handlers issue none), possibly
    under branches every rank takes alike."""
    for node in nodes:
        if isinstance(node, Try):
            if any(tree_reaches(h.body) for h in node.handlers) or tree_reaches(node.orelse) or tree_reaches(node.final):
                return False
        elif isinstance(node, UniformBranch):
            if not all(_only_in_swallowing_trys(part) for part in node.children()):
                return False
        elif tree_reaches([node]):
            return False
    return True


def _packed_name(item: Expr) -> Optional[str]:
    """The variable a list item takes its value from on the rank that sends it: `stop`, or `stop`
    of `stop if rank == 0 else None`."""
    if item[0] == "name":
        return item[1]
    if item[0] == "ifexp" and item[2][0] == "name":
        return item[2][1]
    return None


def _only_assigns(body: Body, name: str, value: Expr) -> bool:
    """The body binds `name` exactly once, to `value`, at its top level."""
    binding = [s for s in statements(body) if _assigns(s, name)]
    return len(binding) == 1 and binding[0] in body and binding[0][0] == "assign" and binding[0][1] == (("name", name),) and binding[0][2] == value


# (operator, constant) of a comparison of the world size -> whether it holds in a one-process job.
_ONE_PROCESS_TESTS = {("==", 1): True, ("<=", 1): True, ("<", 2): True, ("!=", 1): False, (">", 1): False, (">=", 2): False}


def _keyed_under(value: Val, arms: List[Optional[Val]], control: Taint) -> Val:
    """A mapping's partial view (Val.keyed) past a condition that varies between ranks: a key the
    arms stored differently (or one arm only) holds what the condition chose; the rest of the
    mapping too, where an arm replaced the whole of it."""
    def stored(arm: Optional[Val], name: str) -> Optional[Val]:
        return None if arm is None or arm.unkeyed is None else dict(arm.keyed).get(name)

    keyed = tuple(
        (name, held if len({stored(arm, name) for arm in arms}) == 1 else replace(held, taints=held.taints | {control}, rank=None, pred=None))
        for name, held in value.keyed
    )
    before = {arm.unkeyed if arm is not None and arm.unkeyed is not None else arm for arm in arms}
    unkeyed = value.unkeyed
    if len(before) > 1 and unkeyed is not None:
        unkeyed = replace(unkeyed, taints=unkeyed.taints | {control}, rank=None, pred=None)
    return replace(value, keyed=keyed, unkeyed=unkeyed)


def _assigns_in(body: Body, name: str) -> bool:
    return any(_assigns(s, name) for s in statements(body))


def _assigns(stmt: Stmt, name: str) -> bool:
    """Whether the statement binds `name` (as a target of an assignment, a `for` or a `with`)."""
    def binds(target: Any) -> bool:
        if not isinstance(target, tuple) or not target:
            return False
        if target[0] == "name":
            return target[1] == name
        return target[0] == "unpack" and any(binds(t) for t in target[1])

    if stmt[0] == "assign":
        return any(binds(t) for t in stmt[1])
    if stmt[0] in ("augassign", "for"):
        return binds(stmt[1])
    if stmt[0] == "with":
        return any(binds(target) for _, target in stmt[1])
    return False


def _skips_round(arm: List[Node]) -> bool:
    """The arm ends in `continue` (or `break`): the loop's later statements do not run this round."""
    return bool(arm) and isinstance(arm[-1], Exit) and arm[-1].kind in (ExitKind.CONTINUE, ExitKind.BREAK)


def _never_none(types: Tuple[str, ...]) -> bool:
    """None is an instance of none of these (`isinstance(x, (int, type(None)))` admits it)."""
    return not any(t.rpartition(".")[2] in ("NoneType", "object", "Optional", "Any") for t in types)


# The collectives that create a process group: memoised where the group is kept (_creates_once).
_GROUP_CREATION = frozenset({"new_group"})


def _creates_once(frame: Frame, test: Expr, body: Body) -> bool:
    """`if not hasattr(holder, "name"):` or `if holder.name is None:` (or `if not holder.name:`,
    `if _GROUP is None:` of a `global`), whose body stores that very place: the body runs once per
    process, on the first call."""
    cached: Optional[Expr] = None
    if test[0] == "not" and test[1][0] == "call":
        site = frame.fn.calls[test[1][1]]
        if site.callee == ("qual", "hasattr") and len(site.args) == 2 and site.args[1][0] == "const" and isinstance(site.args[1][1], str):
            cached = ("attr", site.args[0], site.args[1][1])
    elif test[0] == "not":
        cached = test[1]
    elif test[0] == "cmp" and test[1] == ("is",) and test[2][1] == ("const", None):
        cached = test[2][0]
    if cached is None or not (cached[0] == "attr" or (cached[0] == "name" and cached[1] in frame.declared_global)):
        return False
    held = render_expr(cached)
    for stmt in statements(body):
        if stmt[0] == "assign" and any(render_expr(t[1] if t[0] == "other" else t) == held for t in stmt[1]):
            return True
    return False


def _none_differs(arms: List[Optional[Val]]) -> bool:
    """One arm holds a value that is never None (Val.defined, built with a length), another one
    that may be None."""
    never = [value is not None and never_none(value) for value in arms]
    return any(never) and not all(never)
