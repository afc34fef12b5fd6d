"""Expressions: what a value carries of the rank, and the collectives its calls issue."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from rankcheck.catalog import GROUP_ROLE
from rankcheck.ftypes import Location
from rankcheck.interp.base import (
    InterpreterBase,
    group_members,
    is_self,
    plain_reference,
)
from rankcheck.interp.formulas import (
    FLIP,
    cmp,
    combine,
    compare_rank,
    formula_of,
    freeze,
    is_rank_constant,
    member,
    negate,
    same_on_every_rank,
    uniform_variable,
)
from rankcheck.interp.frame import Frame, Learned
from rankcheck.interp.statements import counted_yield_limit
from rankcheck.interp.tree import UNDER_ANY, YIELD, Collective, Node, SiteRef, loc
from rankcheck.interp.values import (
    CEIL_KEY,
    EMPTY,
    RECTANGULAR,
    SIZED,
    SLICE_TYPE,
    SLOT,
    UNIFORM,
    WORLD_SIZE_KEY,
    Taint,
    TaintKind,
    Val,
    assigned_under,
    batch_part,
    chosen_by_rank,
    control_taint,
    dtypes_differ,
    entry,
    is_slice_object,
    is_world_size,
    join,
    join_all,
    keyed_entry,
    leading,
    none_taints,
    present,
    rank_value,
    rows_of,
    sizes_differ,
    taints_only,
)
from rankcheck.program.ir import MODULE_FUNCTION, Expr, GuardInfo, Span, bound_before, is_no_group_rank, nested_self_attribute, render_expr

# Comparisons that a member of an enum, known by name, decides against others of its enum.
_MEMBER_TESTS = ("==", "!=", "is", "is not", "in", "not in")
# The standard library's enum bases (`class SamplerType(Enum)`), by their last name.
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"})
_PURE_BUILTINS = frozenset(("qual", name) for name in ("len", "int", "min", "max", "abs"))


class Expressions(InterpreterBase):
    def eval(self, frame: Frame, expr: Optional[Expr], out: List[Node]) -> Val:
        if expr is None:
            return UNIFORM
        tag = expr[0]
        if tag == "const":
            # A tuple or list of constants (`[]` too) holds as many items as it was written with,
            # each alike on every rank (`return 1, 0` joins item by item with `return ws, rank`).
            if isinstance(expr[1], tuple):
                # `plan, current = [], []`: each an empty list (what is appended is all it holds).
                return Val(sized=True, items=tuple(EMPTY if item == () else UNIFORM for item in expr[1])) if expr[1] else EMPTY
            if is_no_group_rank(expr[1]):
                # `device_id = -1` beside `device_id = int(os.environ["LOCAL_RANK"])`: the rank
                # where there are ranks (values.join keeps it, `_rank_or_no_group`).
                return Val(const=(expr[1],))
            return UNIFORM
        if tag == "name":
            return self._named_group(self._name(frame, expr[1]), expr[1])
        if tag == "attr":
            return self._named_group(self._attr(frame, expr, out), expr[2])
        if tag == "call":
            return self._call(frame, frame.fn.calls[expr[1]], out)
        if tag == "environ":
            kind = self.catalog.rank_environ.get(expr[1])
            if kind is None:
                return UNIFORM
            return rank_value(f'os.environ["{expr[1]}"]', self._here(frame), kind)
        if tag == "cmp":
            return self._cmp(frame, expr, out)
        if tag == "not":
            v = self.eval(frame, expr[1], out)
            if not v.varies:
                return taints_only(v)
            return Val(taints=v.taints, pred=negate(formula_of(v, ("not", frame.span, render_expr(expr[1])))))
        if tag == "bool":
            return self._bool(frame, expr, out)
        if tag == "ifexp":
            _, test, body, orelse, info = expr
            cond = self.eval(frame, test, out)
            then_out: List[Node] = []
            else_out: List[Node] = []
            then_knows, else_knows = self._type_narrowing(frame, test)
            a = self._eval_knowing(frame, body, then_out, then_knows)
            b = self._eval_knowing(frame, orelse, else_out, else_knows)
            self._emit_branch(frame, cond, info, then_out, else_out, out, test)
            value = join(a, b)
            if not cond.taints and (_world_size_or_one(a, orelse) or _world_size_or_one(b, body)):
                # `get_world_size() if is_initialized() else 1`: one where there is no other rank,
                # where every count is a multiple of it; the world size everywhere else.
                value = a if is_world_size(a) else b
            if cond.taints and body != orelse:
                # which value you get depends on the condition (rank 0 reads the file, others 0),
                # and so does its shape when the two are built with other sizes; the value is
                # chosen by it as an assignment under it is (`t if rank == 0 else None` is None
                # on some ranks: Taint.control)
                shape = value.shape | (cond.taints if sizes_differ([a, b]) or dtypes_differ([a, b]) else frozenset())
                chosen = control_taint(cond.taints, info, frame.path)
                # What either value may be stays known (`ema if ema is not None else model`: the
                # prepared DDP model on the ranks without an EMA copy; calling it is its forward).
                value = Val(taints=value.taints | cond.taints | ({chosen} if chosen else frozenset()), shape=shape, key=("ifexp", frame.span),
                            type=value.type, types=value.types, wraps=value.wraps, refs=value.refs, ref=value.ref, defined=value.defined,
                            dtype_choice=value.dtype_choice | (cond.taints if _number_types_differ(body, orelse) else frozenset()))
            return value
        if tag == "subscript":
            sizes = self._sizes_past_the_first(frame, expr, out)
            if sizes is not None:
                return sizes
            base = self.eval(frame, expr[1], out)
            has_slice = len(expr) > 3 and expr[3]
            named = expr[2][0][1] if len(expr[2]) == 1 and not has_slice and expr[2][0][0] == "const" and isinstance(expr[2][0][1], str) else None
            if base.unkeyed is not None and named is not None:
                # `info["step"]` of a mapping with values stored under constant keys (Val.keyed):
                # what went there, else what the mapping held before them.
                stored = keyed_entry(base, named)
                if stored is not None:
                    return stored
                base = base.unkeyed
            if len(expr[2]) == 1 and not has_slice and base.entries:
                held = entry(base, named) if named is not None else None
                if held is not None:
                    return held  # `outputs["loss"]`: what was put under "loss"
                # `outputs[name]`: one of the values put there, whichever the key picks.
                picked_by = self.eval(frame, expr[2][0], out)
                picked = join_all([value for _, value in base.entries])
                control = assigned_under(base)
                return replace(picked, taints=picked.taints | picked_by.taints | control) if picked_by.taints or control else picked
            position = expr[2][0][1] if len(expr[2]) == 1 and not has_slice and expr[2][0][0] == "const" else None
            if base.items is not None and isinstance(position, int) and not isinstance(position, bool) and -len(base.items) <= position < len(base.items):
                # `get_dist_setting()[1]` of a tuple whose items are known: that item, as
                # unpacking it would give (`rank, local_rank, ... = get_dist_setting()`).
                item = base.items[position]
                control = assigned_under(base)
                return replace(item, taints=item.taints | control) if control - item.taints else item
            index_taints: FrozenSet[Taint] = frozenset()
            index_values: List[Val] = []
            for index in expr[2]:
                part = self.eval(frame, index, out)
                index_values.append(part)
                index_taints = index_taints | part.taints | part.shape
            taints = base.taints | index_taints
            chosen = chosen_by_rank(part, render_expr(expr[2][0]), self._here(frame)) if len(expr[2]) == 1 and not has_slice else None
            if chosen is not None:
                taints = taints | {chosen}  # `shards[rank]`: this rank's entry, or none
            slot_key: Tuple = ("subscript", frame.span, render_expr(expr))
            if len(expr[2]) == 1 and not has_slice and plain_reference(expr[1]) and part.rank is not None:
                slot_key = (SLOT, render_expr(expr[1]))  # the rank's own slot of a list (calls._is_own_slot)
            # `files[rank::ws]`, `preds[mask]`, `chunks[rank]`: which and how many elements depends
            # on the index. A slice keeps the base's varying length; one element does not have it.
            # `x[start:start + n]`, `x[r * n:(r + 1) * n]`, `x[:n]`, `x[process_slice]`: n items
            # wherever a rank starts, so only n decides the length.
            width: Optional[FrozenSet[Taint]]
            if has_slice and _even_stride(base, expr[4], index_values):
                # `batches[rank::world_size]` of a multiple of the world size: as many on every rank.
                width = base.shape
            elif has_slice:
                width = self._slice_width_shape(frame, base, expr[4])
                if width is None and _only_full_slices(expr[4]) and any(is_slice_object(v) for v in _plain_indices(expr, index_values)):
                    width = base.shape  # `x[:, s]`, `s = slice(r * n, (r + 1) * n)`: the slice object's width
                elif width is None and _only_full_slices(expr[4]) and _integer_arrays(_plain_indices(expr, index_values)):
                    # `W[:, indices]`, `indices = torch.randint(...)`: as many columns as the index
                    # array has items, whichever columns its values pick (a boolean mask's count
                    # is its values', so only an index known to be integer).
                    width = base.shape
                elif width is None and _only_full_slices(expr[4]) and all(v.rank is not None for v in _plain_indices(expr, index_values)):
                    # `embeds[:, rank, :, :]`: a slice beside it makes the index a tuple, so `embeds`
                    # is an array, and an integer index drops its dimension whichever element it
                    # picks: the rank's own slice of a sequence-parallel split is as wide as any.
                    width = base.shape
            elif len(expr[2]) == 1 and is_slice_object(part):
                width = part.shape
            elif len(expr[2]) == 1 and part.element is not None and is_slice_object(part.element):
                # `x[tuple(slc)]`, every item of `slc` a slice object (`slc[dim] = slice(r * n,
                # (r + 1) * n)`): each dimension cut to its slice's width.
                width = part.element.shape
            else:
                width = None
            if base.rectangular and not base.shape and not is_mask(expr[2]):
                # A row or an element of a tensor built with sizes alike on every rank
                # (`table[rank, :]`): the same shape whichever index a rank picks; only slice
                # bounds can change it.
                bounds = width if width is not None else self._slice_bound_taints(frame, expr[4]) if has_slice else frozenset()
                if bounds is not None:
                    if not taints and not bounds:
                        return RECTANGULAR
                    return Val(taints=taints, shape=bounds, key=slot_key, sized=True, rectangular=not bounds)
            if base.batch and width is None and not has_slice and not is_mask(expr[2]) and not index_taints:
                # `batch["input_ids"]`, `batch[0]`: a field of this rank's batch, as many samples.
                field = expr[2][0][1] if expr[2][0][0] == "const" and isinstance(expr[2][0][1], str) else None
                return batch_part(base, key=slot_key, name=field)
            if width is not None:
                shape = width | _element_index_taints(expr, index_values) if has_slice else width
            elif has_slice or is_mask(expr[2]):
                shape = base.shape | index_taints
            elif len(expr[2]) > 1:
                # `logits[torch.arange(n), last_token]`: an index tuple is an array's (no list or
                # dict takes one), and its result has the shape of the index arrays whatever
                # elements they pick; the dimensions they index are gone, the first and the
                # sequence's among them (Taint.trailing).
                shape = frozenset().union(*(part.shape for part in index_values)) | base.element_shape
            elif _integer_arrays(index_values):
                # `x[perm]`, `perm = torch.randperm(n)`: as many rows as the index array has
                # items, whichever rows its values pick (its values are not its length).
                shape = frozenset().union(*(part.shape for part in index_values)) | frozenset(t for t in base.shape if t.trailing) | base.element_shape
            else:
                # One item: the shape the items have. Which item a rank picks changes that shape
                # only where the items differ, which a rank's own pick is written for
                # (`shards[rank]`); an item picked by a per-rank draw or a data value
                # (`alphas[t]`, `t = timesteps.item()`) is a row like every other.
                picks = part.taints if _may_be_mask(part) else _rank_taints(part.taints)
                shape = part.shape | picks | base.element_shape
            # `state_dict[name]` for a name drawn from a set: which entry is this process's pick.
            order = frozenset().union(*(v.order for v in index_values))
            if not taints and not shape:
                made = SIZED if width is not None else UNIFORM
                return replace(made, order=order) if order else made
            # Cut to a width, its length is what `shape` says (`len()` of it reads no values).
            return Val(taints=taints | base.shape, shape=shape, key=slot_key, sized=width is not None,
                       element_shape=base.element_shape if has_slice else frozenset(), order=order)
        if tag == "slice":
            return self._slice_object(frame, expr, out)
        if tag == "ceil":
            # Marked even when alike on every rank: shares of this size overrun the last rank's.
            return replace(self.eval(frame, expr[1], out), key=(CEIL_KEY, frame.span, render_expr(expr[1])))
        if tag == "comp":
            return self._comprehension(frame, expr, out)
        if tag == "walrus":
            v = self.eval(frame, expr[2], out)
            if expr[1]:
                self._assign(frame, ("name", expr[1]), v, out)
            return v
        if tag == "yield":
            value = self.eval(frame, expr[1], out)
            # What calling a generator gives: an iterator with one item a round of the loops around
            # the `yield` (rounds that vary per rank make its length vary), each item what is
            # yielded, with that item's own length (a per-rank slice yielded once a global step).
            rounds = frozenset(frame.rounds)
            limit = counted_yield_limit(frame.fn.body) if rounds else None
            if limit is not None:
                # Counted to a limit (`while produced < steps:`): as many items as it says.
                counted = self.eval(frame, limit, [])
                rounds = counted.taints | counted.shape
            made = Val(taints=value.taints | rounds, shape=rounds, sized=True, element=value,
                       key=("yield", frame.fn.qualname) if value.varies or rounds else None)
            frame.ret = made if not frame.returned else join(frame.ret, made)
            frame.returned = True
            out.append(YIELD)
            return UNIFORM
        if tag == "tuple":
            items = tuple(self.eval(frame, part, out) for part in expr[1])
            whole_taints: FrozenSet[Taint] = frozenset().union(*(v.taints for v in items))
            # As many items as written on every rank; what they hold is their own (Val.element_shape):
            # `torch.stack([preds, labels])` has their shapes, `for t in (preds, labels):` two rounds.
            held_shape: FrozenSet[Taint] = frozenset().union(*(v.shape for v in items))
            if not items:
                return EMPTY
            if not whole_taints and not held_shape and not any(v.type or v.items or v.members or v.rectangular or v.element or v.order for v in items):
                # Alike everywhere, and as many items as written (what a rank branch compares).
                return Val(sized=True, items=(UNIFORM,) * len(items))
            key = ("tuple", frame.span, render_expr(expr)) if whole_taints or held_shape else None
            return Val(taints=whole_taints, key=key, sized=True, items=items, element_shape=held_shape)
        if tag == "dict":
            return self._dict_display(frame, expr, out)
        if tag == "padded":
            # `mine + [None] * (longest - len(mine))`: as long as `longest`, what it holds from both.
            kept, fill, length = [present(self.eval(frame, part, out)) for part in expr[1]]
            padded_taints = kept.taints | kept.shape | fill.taints | length.taints | length.shape
            padded_shape = length.taints | length.shape
            return Val(taints=padded_taints, shape=padded_shape, sized=True, key=("op", frame.span, render_expr(expr)) if padded_taints else None)
        if tag in ("op", "product", "trimmed", "spread"):
            parts_taints: FrozenSet[Taint] = frozenset()
            parts_shape: FrozenSet[Taint] = frozenset()
            operands: Optional[List[Any]] = []
            part_values: List[Val] = []
            for part in expr[1]:
                value = present(self.eval(frame, part, out))
                part_values.append(value)
                parts_taints = parts_taints | value.taints
                parts_shape = parts_shape | value.shape
                if operands is not None:
                    operands.append(_operand_identity(part, value))
                    if operands[-1] is None:
                        operands = None
            held = _repeated_slice_objects(expr[1], part_values) if tag == "product" else None
            if held is not None:
                # `[slice(None)] * x.dim()`: a list of slice objects, for an index built per
                # dimension; as many as the count says, each with the width it cuts.
                return Val(taints=parts_taints, shape=parts_shape, sized=True, element=held,
                           key=("op", frame.span, render_expr(expr)) if parts_taints or parts_shape else None)
            multiple = False
            if tag == "product":
                # `[0] * dist.get_rank()`: a display repeated a per-rank number of times is as
                # long as that number says.
                parts_shape = parts_shape | _repeat_count_shape(expr[1], part_values)
                multiple = any(is_world_size(v) or v.world_multiple for v in part_values)
            elif tag == "trimmed":
                # `n - n % world_size`: cut down to a multiple of the world size.
                multiple = is_world_size(part_values[-1]) or part_values[-1].world_multiple
            if not parts_taints and not parts_shape:
                return Val(world_multiple=True) if multiple else UNIFORM
            # The same arithmetic on the same values is the same value wherever it is written
            # (`if rank % 2:` and `if not rank % 2:` are complementary); else one per statement.
            op_key: Tuple = (tag, render_expr(expr), tuple(operands)) if operands is not None else (tag, frame.span, render_expr(expr))
            # Arithmetic gives a value, never None (Val.defined).
            return Val(taints=parts_taints, shape=parts_shape, key=op_key, world_multiple=multiple, defined=True)
        return UNIFORM

    def known_truth(self, frame: Frame, test: Expr) -> Optional[bool]:
        """Whether `test` holds, when it is decided by constants alone: `if True:`, a flag the
        call passed or left at its default (`if use_barriers:`, `if adapter_config is not None:`),
        `not`, `and`, `or` of those. Read without running code; None when anything else decides."""
        tag = test[0]
        if tag == "const":
            return bool(test[1])
        if tag == "not":
            inner = self.known_truth(frame, test[1])
            return None if inner is None else not inner
        if tag in ("name", "attr") and plain_reference(test):
            value = self.eval(frame, test, [])
            if value.const is None and value.items is not None and tag == "name" and test[1] in frame.fn.params and not bound_before(frame.fn, test[1], frame.span):
                # A parameter every call passes a tuple or list display of known length
                # (`all_to_all([k, v], group)`), not bound again before the test: empty or not as
                # the callers wrote it (`if not inputs: return []` is never taken).
                return bool(value.items)
            return bool(value.const[0]) if value.const is not None else None
        if tag == "cmp" and len(test[1]) == 1 and test[1][0] in ("is", "is not") and test[2][1] == ("const", None):
            subject = test[2][0]
            if not plain_reference(subject):
                return None
            value = self.eval(frame, subject, [])
            if value.defined:
                return test[1][0] == "is not"  # never None (Val.defined)
            if value.const is None:
                return None
            return (value.const[0] is None) == (test[1][0] == "is")
        if tag == "cmp" and len(test[1]) == 1 and plain_reference(test[2][0]) and test[2][1][0] == "const":
            # `if local_rank not in [-1, 0]:` where the call passed `-1` (no process group).
            value = self.eval(frame, test[2][0], [])
            if value.const is not None and is_no_group_rank(value.const[0]):
                try:
                    decided = compare_rank(value.const[0], test[1][0], test[2][1][1])
                except TypeError:  # `-1 < "a"`, `-1 in 3`: not a test this decides
                    decided = None
                if decided is not None:
                    return decided
        if tag == "cmp" and len(test[1]) == 1 and test[1][0] in _NEGATIVE_RANK_TESTS and plain_reference(test[2][0]):
            # `if RANK != -1:`: a rank of a distributed job is never negative (-1 is the "not
            # distributed" a launcher leaves in RANK); this is the distributed arm.
            bound = test[2][1]
            if bound[0] == "const" and isinstance(bound[1], int) and not isinstance(bound[1], bool) and bound[1] < 0:
                if self.eval(frame, test[2][0], []).rank is not None:
                    return _NEGATIVE_RANK_TESTS[test[1][0]]
        if tag == "cmp" and len(test[1]) == 1 and test[1][0] in _BELOW_WORLD_SIZE and all(plain_reference(part) for part in test[2]):
            # `if rank < world_size:`: every global rank is below the job's world size.
            left, right = (self.eval(frame, part, []) for part in test[2])
            if left.rank == "global_rank" and right.key == WORLD_SIZE_KEY:
                return _BELOW_WORLD_SIZE[test[1][0]]
            if left.key == WORLD_SIZE_KEY and right.rank == "global_rank":
                return _BELOW_WORLD_SIZE[FLIP[test[1][0]]]  # `world_size > rank` is `rank < world_size`
        if tag == "cmp" and len(test[1]) == 1 and test[1][0] in _MEMBER_TESTS:
            # `if type == SamplerType.DISTRIBUTED:` with `type` a member the call passed: which
            # arm runs is decided where the call is (dinov2's make_data_loader builds one sampler).
            decided = self._member_test(frame, test[1][0], test[2][0], test[2][1])
            if decided is not None:
                return decided
        if tag == "call" and test[1] < len(frame.fn.calls):
            site = frame.fn.calls[test[1]]
            if site.callee[0] == "qual" and self.program.shards_parameters_in(frame.fn.module):
                # `is_deepspeed_zero3_enabled()` where submodule forwards are taken to gather.
                return True if self.program.resolve(site.callee[1]).qualname in self.catalog.sharding_tests else None
            return None
        if tag == "bool":
            truths = [self.known_truth(frame, operand) for operand in test[2]]
            # One false operand makes `and` false, one true makes `or` true, whatever the rest are.
            deciding = test[1] == "or"
            if deciding in truths:
                return deciding
            return None if None in truths else not deciding
        return None

    def _member_test(self, frame: Frame, op: str, left: Expr, right: Expr) -> Optional[bool]:
        """`x == E.A`, `x is not E.A`, `x in (E.A, E.B)` where both sides are members of one project
        enum (`class E(Enum)`), each known by name: whether the test holds."""
        if not plain_reference(left):
            return None
        member = self._enum_member(self.eval(frame, left, []))
        if member is None:
            return None
        if op in ("in", "not in"):
            if right[0] != "tuple":  # a tuple or list display (a set's is not kept item by item)
                return None
            choices = right[1]
        else:
            choices = (right,)
        if not choices or not all(plain_reference(choice) for choice in choices):
            return None
        others = [self._enum_member(self.eval(frame, choice, [])) for choice in choices]
        if any(other is None or other[0] != member[0] for other in others):
            return None
        found = any(other == member for other in others)
        return found if op in ("==", "is", "in") else not found

    def _enum_member(self, value: Val) -> Optional[Tuple[str, str]]:
        """(the enum class, the member) of a value that is a member of a project Enum subclass."""
        if value.ref is None or value.refs:
            return None
        owner, _, member = value.ref.rpartition(".")
        target = self.program.resolve(owner) if owner else None  # `pkg.SamplerType`, re-exported
        cls = target.klass if target is not None and target.kind == "class" else None
        if cls is None or not member or member.startswith("_") or member in dict(cls.methods):
            return None
        owner = cls.qualname
        if not any(self.program.resolve(base).qualname.rsplit(".", 1)[-1] in _ENUM_BASES for base in cls.bases):
            return None
        return owner, member

    def _eval_knowing(self, frame: Frame, expr: Expr, out: List[Node], knows: Learned) -> Val:
        """`expr` evaluated where a test has told what some variables hold (an arm of `x if test
        else y`)."""
        if not knows:
            return self.eval(frame, expr, out)
        saved = {key: frame.env.get(key) for key, _, _ in knows}
        for key, _, value in knows:
            frame.env[key] = value
        try:
            return self.eval(frame, expr, out)
        finally:
            for key, old in saved.items():
                if old is None:
                    frame.env.pop(key, None)
                else:
                    frame.env[key] = old

    def _dict_display(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        """`{"preds": preds[keep], "labels": labels[keep]}`: as many entries as written, whatever
        the values hold (their shapes are what iterating `.values()` or `torch.stack` of them
        has, Val.element_shape), and more only by what a `**mapping` spread adds."""
        taints: FrozenSet[Taint] = frozenset()
        held: FrozenSet[Taint] = frozenset()
        length: FrozenSet[Taint] = frozenset()
        entries: Optional[Dict[str, Val]] = {}
        # Apart from `entries`: the constant keys and the `**spread`s, when those are all it has
        # (`{"step": step, **configs}`: Val.keyed, each other key read from the spreads).
        written: Optional[Dict[str, Val]] = {}
        spreads: List[Val] = []
        for key, value in expr[1]:
            if key is not None:
                taints |= self.eval(frame, key, out).taints
            part = self.eval(frame, value, out)
            taints |= part.taints
            if key is None:
                length |= part.shape
                held |= part.element_shape
            else:
                held |= part.shape
            constant = key is not None and key[0] == "const" and isinstance(key[1], str)
            if entries is not None and constant:
                entries[key[1]] = part
            else:
                entries = None  # a computed key or a `**spread`: which keys it has is not known
            if written is not None and constant:
                written[key[1]] = part
            elif written is not None and key is None:
                # A spread may hold any key, the ones written before it too.
                written = {name: join(v, taints_only(part)) for name, v in written.items()}
                spreads.append(part)
            else:
                written = None
        known = tuple(sorted(entries.items())) if entries is not None else None
        if not taints and not held and not length:
            # Alike everywhere; its keys are kept, for what a rank branch adds to them.
            return Val(sized=True, entries=known) if known is not None else UNIFORM
        made = Val(taints=taints, shape=length, key=("dict", frame.span, render_expr(expr)), sized=True, element_shape=held, entries=known)
        if known is None and written is not None and spreads:
            made = replace(made, keyed=tuple(sorted(written.items())), unkeyed=join_all(spreads))
        return made

    def _slice_bound_taints(self, frame: Frame, slices: Tuple) -> Optional[FrozenSet[Taint]]:
        """What the bounds of `x[a:b:c]` depend on, when they are plain names, attributes or
        constants (read again without running code); None otherwise."""
        found: FrozenSet[Taint] = frozenset()
        for bound in (b for s in slices for b in s[:3] if b is not None):
            if bound[0] != "const" and not plain_reference(bound):
                return None
            value = self.eval(frame, bound, [])
            found |= value.taints | value.shape
        return found

    def _slice_width_shape(self, frame: Frame, base: Val, slices: Tuple) -> Optional[FrozenSet[Taint]]:
        """What the length of `base[...]` depends on when its slices say it by their widths
        (`x[:n]`, `x[a:a + n]`, `x[:, r * n:(r + 1) * n]`: n, and a step's value); a full `:` keeps
        the base's. None when a slice's length needs the bounds themselves, or no slice has a
        width. The usual idiom agrees on n with `all_reduce(..., MIN)` first, so the length is even."""
        found: FrozenSet[Taint] = frozenset()
        any_width = False
        for lower, upper, step, width in slices:
            if width is None:
                if lower is None and upper is None and step is None:
                    found |= base.shape
                    continue
                return None
            for part in (width, step):
                if part is None:
                    continue
                if not self._rereadable(frame, part):
                    return None
                value = self.eval(frame, part, [])
                if part is width and value.key is not None and value.key[0] == CEIL_KEY:
                    # `data[r * per:(r + 1) * per]` with `per = ceil(len(data) / ws)`: the last
                    # ranks' slices run past the end, shorter or empty.
                    return None
                found |= value.taints | value.shape
            any_width = True
        return found if any_width else None

    def _rereadable(self, frame: Frame, expr: Expr) -> bool:
        """`expr` can be evaluated again without effects: constants, names, attributes, operators,
        displays and subscripts of those, and `len()`/`int()`/`min()`/`max()` of them."""
        tag = expr[0]
        if tag == "const" or plain_reference(expr):
            return True
        if tag in ("op", "product", "trimmed", "spread", "tuple", "padded"):
            return all(self._rereadable(frame, part) for part in expr[1])
        if tag == "subscript":
            return self._rereadable(frame, expr[1]) and all(self._rereadable(frame, i) for i in expr[2])
        if tag == "call":
            site = frame.fn.calls[expr[1]]
            return (
                site.callee in _PURE_BUILTINS
                and not site.kwargs
                and all(self._rereadable(frame, a) for a in site.args)
            )
        return False

    def _slice_object(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        """`slice(lower, upper, step)`: its values' taints; its `shape`, the length it cuts."""
        _, lower, upper, step, width = expr
        taints: FrozenSet[Taint] = frozenset()
        for bound in (lower, upper, step):
            value = self.eval(frame, bound, out)
            taints |= value.taints | value.shape
        length = self._slice_width_shape(frame, UNIFORM, ((lower, upper, step, width),))
        return Val(taints=taints, shape=taints if length is None else length, type=SLICE_TYPE,
                   key=("slice", frame.span, render_expr(expr)) if taints else None)

    def _comprehension(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        saved = dict(frame.env)  # comprehension variables do not leak (Python 3)
        taints: FrozenSet[Taint] = frozenset()
        shape: FrozenSet[Taint] = frozenset()
        first_write = len(frame.writes)
        for target, iterable, conditions in expr[1]:
            items = self.eval(frame, iterable, out)
            shape |= leading(items.shape) | self._iteration_shape(items)
            taints |= items.taints
            row = items.element_shape | rows_of(items.shape)
            held = items.element
            if held is not None and (held.batch or held.order or any(item.batch or item.order for item in held.items or ())):
                # `for k, v in batch.items()`: each item as it is held (a part of the batch); so
                # an item of a set walked in this process's order (Val.order).
                variable = replace(held, taints=held.taints | items.taints | items.shape)
            else:
                variable = taints_only(items, key=("comp", frame.span))
                variable = replace(variable, shape=row) if row else variable
            self._assign(frame, target, variable, out)
            for condition in conditions:
                cond = self.eval(frame, condition, out)
                shape |= cond.taints | cond.shape  # a filter decides how many items are kept
                taints |= cond.taints
                # `[m.rank for m in model.modules() if isinstance(m, PipelineBlock)]`: the kept
                # items are of the type the filter tests (the variables are the comprehension's own).
                for key, _, value in self._type_narrowing(frame, condition)[0]:
                    frame.env[key] = value
        bound = frozenset(frame.writes[first_write:])  # the comprehension's variables
        equal_shards = False
        value = UNIFORM
        for element in expr[2]:
            value = self.eval(frame, element, out)
            taints |= value.taints
            equal_shards = len(expr[2]) == 1 and not value.shape and _equal_width_slice(element, bound)
        frame.env = saved
        if equal_shards and not any(conditions for _, _, conditions in expr[1]):
            # `[buf[r * n:(r + 1) * n] for r in range(ws)]`: shards of one width, n, whichever
            # shard a rank takes (`shards[rank]`) has the shape of the others' (Val.rectangular).
            if not taints and not shape:
                return RECTANGULAR
            return Val(taints=taints | shape, shape=shape, key=("comp", frame.span, render_expr(expr)), sized=True, rectangular=not shape)
        if len(expr[2]) == 2 and value.batch and not any(conditions for _, _, conditions in expr[1]):
            # `{k: v.to(device) for k, v in batch.items()}`: the batch, moved (Val.batch).
            return batch_part(value, key=("comp", frame.span, render_expr(expr)))
        # A list or set comprehension's items are its element (Val.element); a dict's, not one value.
        held = (replace(value, key=None) if value.key is not None else value) if len(expr[2]) == 1 else None  # not one item's identity
        if not taints and not shape:
            # As many items on every rank, fixed by how it was built (Val.sized).
            return SIZED if held is None or held == UNIFORM else Val(sized=True, element=held)
        return Val(taints=taints | shape, shape=shape, key=("comp", frame.span, render_expr(expr)), sized=True, element=held)

    def _here(self, frame: Frame) -> Location:
        span = frame.span or frame.fn.span
        return loc(frame.path, span)

    def _name(self, frame: Frame, name: str) -> Val:
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
                return stored if globals_[name] in (UNIFORM, SIZED, EMPTY) else join(globals_[name], stored)
        return stored if stored is not None else UNIFORM

    def _named_group(self, value: Val, name: str) -> Val:
        """A process group of unknown origin in a variable named for the mesh dimension it spans
        (`pp_group`, `self.data_parallel_group`: Catalog.group_names) is that dimension's group.
        So is one the project picks per rank among the groups it created (`if rank in ranks:
        self.pp_pg = group`, nanotron's ParallelContext) or computes from the rank's coordinates
        (ColossalAI's `pg_mesh.get_group_along_axis(dp_axis)`): each rank holds the group of that
        dimension it is in, which is what the name says."""
        if value.members is not None or value.type is not None or value.ref is not None:
            return value
        if value.rank is not None or value.pred is not None:
            return value  # the rank, or a test of it: no group
        kind = self.catalog.group_names.get(name)
        return replace(value, members=GROUP_ROLE + kind) if kind is not None else value

    def _global_ref(self, qualname: str) -> Val:
        """A dotted global read as a value: a project module variable, or a reference."""
        module, _, name = qualname.rpartition(".")
        if module in self.program.modules and qualname not in self.program.functions and qualname not in self.program.classes:
            globals_ = self.module_globals(module)
            if name in globals_:
                return globals_[name]
        return Val(ref=qualname)

    def nested_self_value(self, frame: Frame, expr: Expr) -> Optional[Val]:
        """`self.state.model` where a method of the class stored it (`self.state.model = DDP(m)`,
        ClassSummary.self_stores "state.model"): what was stored, as `self.model` reads back."""
        cls = frame.fn.class_qualname
        path = nested_self_attribute(expr, frame.fn.params[0]) if cls is not None and frame.fn.params else None
        if cls is None or path is None or not self.program.stored_attribute(cls, path):
            return None
        return self.class_attr(cls, path)

    def _attr(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        _, base_expr, attr = expr
        if frame.field_roots and plain_reference(base_expr):
            stored_field = frame.env.get(render_expr(expr))
            if stored_field is not None:
                return stored_field  # `params.mype` as this function, or a callee, stored it
        held = self.nested_self_value(frame, expr)
        if held is not None:
            return held
        on_self = is_self(frame, base_expr) and frame.fn.class_qualname is not None
        if on_self and frame.fn.class_qualname is not None:
            stored = frame.env.get("self." + attr)
            if stored is not None:
                return stored
            value = self.class_attr(frame.fn.class_qualname, attr)
            if value is not None:
                return value
            prop = self._property(frame.fn.class_qualname, attr)
            if prop is not None:
                return prop
            method = self.program.find_method(frame.fn.class_qualname, attr)
            if method is not None:
                return Val(ref=method.qualname)  # `self.save`, a bound method passed as a callback
            spec = self.external_spec(frame.fn.class_qualname)
            if spec is not None and attr in spec.attributes:
                return Val(type=spec.attributes[attr] or None)
        base = self.eval(frame, base_expr, out)
        catalog = self.catalog
        if attr not in catalog.optional_inputs:
            base = present(base)  # `pixel_values.shape`: read of a value that is there
        owner = render_expr(base_expr)
        if attr in catalog.rank_attributes and base.type in self.program.classes:
            # `block.rank` of a project class that stores it (`self.rank = pp_rank`, the stage a
            # pipeline block is placed on): what the class stores there, not the name, says what
            # it is.
            stored_there = self.class_attr(base.type, attr)
            if stored_there is not None:
                return stored_there
        if attr in catalog.rank_attributes and not self.names_another_rank(owner):
            return rank_value(f"{owner}.{attr}", self._here(frame), catalog.rank_attributes[attr])
        if attr in catalog.predicate_attributes:
            return rank_value(f"{owner}.{attr}", self._here(frame), test=catalog.predicate_attributes[attr])
        if attr in catalog.uniform_attributes:
            return UNIFORM  # `device.type`, `x.dtype`: alike on every rank even where the index is not
        if attr in catalog.shape_size_attributes and base.sized and base.type is None:
            # `batch.shape`: the sizes, which depend on what the shape does, not on the values.
            return Val(taints=base.shape, key=("attr", frame.span, f"{owner}.{attr}")) if base.shape else UNIFORM
        if base.ref is not None:
            return self._global_ref(f"{base.ref}.{attr}")
        if base.type is not None:
            value = self.class_attr(base.type, attr) if base.type in self.program.classes else None
            if value is not None:
                return value
            own_state = frame.fields_of(base_expr[1]) if base_expr[0] in ("name", "local") else {}
            prop = self._property(base.type, attr, own_state) if base.type in self.program.classes else None
            if prop is not None:
                return prop
            method = self.program.find_method(base.type, attr) if base.type in self.program.classes else None
            if method is not None:
                return Val(ref=method.qualname)  # `self.checkpointer.save`, passed as a callback
            spec = self.external_spec(base.type)
            if spec is not None and attr in spec.reads:
                read = spec.reads[attr]
                # `trainer.callback_metrics`: reading it computes (and syncs) what was logged.
                out.append(Collective(read.op, "WORLD", SiteRef(self._here(frame), f"{owner}.{attr}"), read.note, None, False, UNDER_ANY))
                return Val(taints=base.taints) if base.taints else UNIFORM
            if spec is not None and attr in spec.attributes:
                return Val(taints=base.taints, type=spec.attributes[attr] or None)
        if (on_self or (base.type is None and base.ref is None)) and not self.names_another_rank(owner):
            # An attribute of an object rankcheck knows nothing of (a config, a context passed
            # in), or a `self` attribute nothing in the project sets: named as the rank is named.
            named = catalog.predicate_names.get(attr)
            if named is not None:
                return rank_value(f"{owner}.{attr}", self._here(frame), test=named)
            named_kind = catalog.rank_names.get(attr)
            if named_kind is not None:
                return rank_value(f"{owner}.{attr}", self._here(frame), named_kind)
        if not (base.taints or base.shape):
            if base.type is None and base.ref is None and base.members is None and base.elements is None:
                # `self.checkpointer.save_and_keep_only` passed as a callback, the checkpointer
                # set up by a framework base class: the project's one method of that name, as a
                # call of it on such an object is (Program.sole_method).
                method = self.program.sole_method(attr)
                if method is not None:
                    return Val(ref=method.qualname)
            return UNIFORM
        if base.batch and base.type is None:
            # `outputs.logits`, `batch.input_ids`: a field of this rank's batch, or of a model's
            # output on it, with as many samples as the batch (Val.batch), as `batch["ids"]` has.
            return batch_part(base, key=("attr", frame.span, f"{owner}.{attr}"), name=attr)
        return taints_only(base, key=("attr", frame.span, f"{owner}.{attr}"))

    def _property(self, class_qualname: str, attr: str, held: Optional[Dict[str, Val]] = None) -> Optional[Val]:
        """`obj.name` where the class defines `name` as a `@property`: what the getter returns
        (on the object's own state where calls stored some, Frame.fields_of)."""
        method = self.program.find_method(class_qualname, attr)
        if method is None or not any(d.rsplit(".", 1)[-1] == "property" for d in method.decorators):
            return None
        if method.qualname in self._stack:
            return None
        return self.run(method.qualname, held or {}).ret

    def _compare(self, left: Val, op: str, right: Val, right_const: Any, span: Optional[Span], right_text: str = "") -> Val:
        taints = left.taints | right.taints
        if op in ("is", "is not") and right_const is None and not right.taints:
            # A value built with a length (a tensor from a factory, a literal), or one known never
            # to be None (Val.defined), is not None on any rank, whatever branch built it: `if x
            # is not None:` then asks nothing of it. One that is None on some paths varies by
            # what chose the path, not by what it holds (Val.content_only).
            deciding = none_taints(left)
            if not deciding:
                return UNIFORM
            if deciding != left.taints:
                left = replace(left, taints=deciding, rank=None, pred=None)
                taints = deciding
        if not (left.rank_dependent or right.rank_dependent):
            return Val(taints=taints, key=("cmp", span, op)) if taints else UNIFORM
        if left.rank is not None and is_rank_constant(right_const) and not right.taints:
            pred = cmp(left.rank, op, freeze(right_const))
            if same_on_every_rank(pred):
                # `local_rank != -1` ("launched distributed"): true on every rank alike.
                return UNIFORM
            return Val(taints=taints, pred=pred)
        if left.rank is not None and op in ("in", "not in") and right_text and not right.taints:
            test = member(right_text)
            return Val(taints=taints, pred=test if op == "in" else negate(test))
        if left.pred is not None and isinstance(right_const, bool) and op in ("==", "is", "!=", "is not"):
            positive = (op in ("==", "is")) == right_const
            return Val(taints=taints, pred=left.pred if positive else negate(left.pred))
        return Val(taints=taints, key=("cmp", span, op, left.key, right.key))

    def _cmp(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        _, ops, operands = expr
        values = [self.eval(frame, o, out) for o in operands]
        if len(ops) == 1:
            left, right = values
            left_e, right_e = operands
            if ops[0] in ("is", "is not") and right_e == ("const", None) and left.const is not None:
                # `is_train = optimizer is not None` where the call passed `None`: a known flag too.
                return Val(const=((left.const[0] is None) == (ops[0] == "is"),))
            if _asks_presence(ops[0], left_e, right_e, left, right) and not self._optional_input_missing(frame, ops[0], left_e, left):
                return UNIFORM
            if _asks_batch_kind(ops[0], left, right_e) and self._batch_field(frame, left_e, left):
                return UNIFORM
            if right_e[0] == "const" or not right.taints:
                text = render_expr(right_e) if right_e[0] in ("name", "attr") else self._members_listed_by(frame, right_e) or ""
                result = self._compare(left, ops[0], right, right_e[1] if right_e[0] == "const" else None, frame.span, text)
                if result.pred is not None or not left.rank_dependent or right_e[0] == "const":
                    return result
            if left_e[0] == "const":
                flipped = FLIP.get(ops[0])
                if flipped is not None:
                    return self._compare(right, flipped, left, left_e[1], frame.span)
        taints: FrozenSet[Taint] = frozenset()
        for v in values:
            taints |= v.taints
        return Val(taints=taints, key=("cmp", frame.span, ops)) if taints else UNIFORM

    def _sizes_past_the_first(self, frame: Frame, expr: Expr, out: List[Node]) -> Optional[Val]:
        """`t.shape[1:]`, `t.shape[2]`: the sizes after the first of a tensor whose shape is known,
        which depend only on what its trailing sizes depend on (Taint.trailing), not on how many
        rows it has (the padding recipe `torch.zeros((longest,) + t.shape[1:])`). None for any
        other subscript."""
        owner = expr[1]
        if owner[0] != "attr" or owner[2] not in self.catalog.shape_size_attributes:
            return None
        has_slice = len(expr) > 3 and expr[3]
        if has_slice:
            (lower, upper, step, _), = expr[4] if len(expr[4]) == 1 else ((None, None, None, None),)
            first = lower
            if upper is not None or step is not None:
                return None
        elif len(expr[2]) == 1:
            first = expr[2][0]
        else:
            return None
        if first is None or first[0] != "const" or not isinstance(first[1], int) or isinstance(first[1], bool) or first[1] < 0:
            return None
        tensor = self.eval(frame, owner[1], out)
        if first[1] == 0 and not has_slice:
            # `t.shape[0]`: how many rows, as `t.size(0)` and `len(t)` count them: not what only
            # a row's length depends on (Taint.trailing).
            counted = leading(tensor.shape) | (frozenset() if tensor.sized else leading(tensor.taints))
            return Val(taints=counted, key=("attr", frame.span, render_expr(expr))) if counted else UNIFORM
        if not tensor.sized or tensor.type is not None:
            return None
        rows = rows_of(tensor.shape)
        return Val(taints=rows, key=("attr", frame.span, render_expr(expr))) if rows else UNIFORM

    def _batch_field(self, frame: Frame, expr: Expr, value: Val) -> bool:
        """`batch["mode"]`, `batch.get("mode", None)`: a field read by a constant name from this
        rank's batch (a part of one, or per-rank data that is not one item of a loop over it)."""
        if value.batch:
            return True
        read = self._keyed_read(frame, expr)
        if read is None or read[1][0] != "const" or not isinstance(read[1][1], str) or not plain_reference(read[0]):
            return False
        held = self.eval(frame, read[0], [])
        if held.batch:
            return True
        return bool(held.taints) and all(t.kind is TaintKind.DATA and not t.control for t in held.taints) and not (held.key and held.key[0] in ("comp", "iter"))

    def _optional_input_missing(self, frame: Frame, op: str, subject_e: Expr, subject: Val) -> bool:
        """`pixel_values is None` of an input some batches lack: asked of this rank's batch, the
        answer is its own (a text-only batch beside one with images). (`"images" in batch` is
        not: a batch's keys are its dataset's columns, alike on every rank.)"""
        if op not in ("is", "is not"):
            return False
        # `batch["pixel_values"] is None` asks of the batch itself; a name (`images is None`)
        # asks of what was assigned or passed to it, which says so where it can be missing
        # (`batch.get(...)`, a parameter no caller passes: Taint.presence).
        read_from_batch = subject_e[0] == "subscript" and self._names_optional_input(frame, subject_e)
        return read_from_batch or any(t.presence for t in subject.taints)

    def _names_optional_input(self, frame: Frame, expr: Expr) -> bool:
        """Whether the expression names an input some batches lack (catalog `optional_inputs`):
        `pixel_values`, `self.images`, `batch["images"]`, `batch.get("pixel_values")`, the key
        `"images"`."""
        optional = self.catalog.optional_inputs
        tag = expr[0]
        if tag == "name":
            return expr[1] in optional
        if tag == "attr":
            return expr[2] in optional
        if tag == "const":
            return isinstance(expr[1], str) and expr[1] in optional
        read = self._keyed_read(frame, expr)
        return read is not None and self._names_optional_input(frame, read[1])

    def _keyed_read(self, frame: Frame, expr: Expr) -> Optional[Tuple[Expr, Expr]]:
        """(the mapping, the key) of `m[k]` or `m.get(k, ...)`; None for any other expression."""
        if expr[0] == "subscript" and len(expr[2]) == 1:
            return expr[1], expr[2][0]
        if expr[0] == "call" and expr[1] < len(frame.fn.calls):
            site = frame.fn.calls[expr[1]]
            if site.callee[0] == "attr" and site.callee[2] == "get" and site.args:
                return site.callee[1], site.args[0]
        return None

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
        if op == "or" and len(exprs) == len(vals):
            # `os.environ.get("RANK") or dist.get_rank()`, `os.environ.get("LOCAL_RANK") or 0`:
            # the first of several readings of one rank that is set, else a constant default (what
            # a job without that variable runs as): the value is that rank, as each reading is.
            kinds = {v.rank for v in vals if v.varies}
            if len(kinds) == 1 and None not in kinds and all(v.varies or e[0] == "const" for v, e in zip(vals, exprs)):
                taints = frozenset().union(*(v.taints for v in vals))
                return Val(taints=taints, rank=next(iter(kinds)))
        formulas = []
        for index, v in enumerate(vals):
            if v.varies:
                formulas.append(formula_of(v, (op, info.span if info else None, index)))
            elif index < len(exprs):
                shared = uniform_variable(exprs[index])
                if shared is not None:
                    formulas.append(shared)
        taints = frozenset().union(*(v.taints for v in vals))
        return Val(taints=taints, pred=formulas[0] if len(formulas) == 1 else combine(op, tuple(formulas)))

    def _bool(self, frame: Frame, expr: Expr, out: List[Node]) -> Val:
        _, op, operands, info = expr
        values: List[Val] = []
        for index, operand in enumerate(operands):
            sub: List[Node] = []
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
            if all(value.const is not None for value in values) and v.const is not None and bool(v.const[0]) == (op == "or"):
                # `distributed and dist.is_initialized()` with `distributed=False` passed: the
                # operands before were constants, this one decides, and the rest never runs.
                return v
        return self._combine(op, values, info, operands)

    def _members_listed_by(self, frame: Frame, expr: Expr) -> Optional[str]:
        """`dist.get_process_group_ranks(group)` (Catalog.group_ranks_calls) lists the members of
        `group`: what names them (`group_members`), for `rank in ...` to test membership of it."""
        if expr[0] != "call":
            return None
        site = frame.fn.calls[expr[1]]
        if site.callee[0] != "qual" or self.program.resolve(site.callee[1]).qualname not in self.catalog.group_ranks_calls:
            return None
        group_expr = self._arg(site, 0, "group")
        if group_expr is None or not plain_reference(group_expr):
            return None
        return group_members(group_expr, self.eval(frame, group_expr, []))


def _asks_presence(op: str, left_e: Expr, right_e: Expr, left: Val, right: Val) -> bool:
    """`outputs.loss is not None`, `"labels" in batch`: a test of what per-rank data holds, not of
    its contents. Every rank's batch, model output or state dict is built by the same code, with
    the same keys and fields; only the values and sizes in them differ (not so for each item of a
    batch a loop or comprehension takes in turn). So does a value computed from the rank (the
    logits of a forward on this rank's slice of the batch): what it was computed from decides
    what it holds, not whether it is there. And `rank is None` of the
    rank itself asks whether the job is distributed at all. A value a rank-dependent
    branch assigned (`x = None` then `if loss > 0: x = t`) is another matter: its presence is
    decided per rank, and its taint says so (control)."""
    if op in ("is", "is not") and right_e == ("const", None):
        subject = left
        if subject.rank is not None:
            # `self.local_rank is not None`, the rank itself and not a value chosen by it: every
            # process of a job has one, or none has (the script runs without a launcher).
            return True
        if subject.key is not None and subject.key[0] in ("comp", "iter"):
            # `[s for s in batch if s is not None]`: one item of this rank's data, which may be
            # missing for one sample and not another (a dataset returning None for a bad file).
            return False
    elif op in ("in", "not in") and ((left_e[0] == "const" and isinstance(left_e[1], str)) or _names_a_chosen_key(left_e, left)):
        subject = right
    else:
        return False
    return bool(subject.taints) and all(not t.control for t in subject.taints)


def _names_a_chosen_key(expr: Expr, value: Val) -> bool:
    """`main_input_name in inputs`: a key the code chose alike on every rank (a variable or an
    attribute holding a name, `getattr(model, "main_input_name", "input_ids")`), asked of what
    per-rank data holds as a constant key would be."""
    return expr[0] in ("name", "attr") and not value.varies and value.const is None and value.ref is None and value.type is None


def _asks_batch_kind(op: str, left: Val, right_e: Expr) -> bool:
    """`batch["mode"] == "generate"`, `batch.get("split") in ("val", "test")`: a field of this
    rank's batch compared with strings names what kind of batch it is (an evaluation task's mode,
    a split), which the code that builds every rank's batches for one loader sets alike; what
    differs between ranks' batches are the tensors and numbers in them. Only a field of a batch
    (Expressions._batch_field) and only string constants: a per-rank draw (`random.choice(...)
    == "a"`) or the rank itself stays per-rank."""
    if op not in ("==", "!=", "in", "not in") or left.rank is not None:
        return False
    if any(t.kind is TaintKind.RANK or t.control for t in left.taints):
        return False
    if right_e[0] != "const":
        return False
    value = right_e[1]
    if op in ("in", "not in"):
        return isinstance(value, tuple) and bool(value) and all(isinstance(v, str) for v in value)
    return isinstance(value, str)


# `rank OP c` with a negative constant c, on any rank of a distributed job (>= 0).
_NEGATIVE_RANK_TESTS = {"==": False, "!=": True, "<": False, "<=": False, ">": True, ">=": True}
# `rank OP world_size` for a global rank: whether it holds (every rank is below the world size).
_BELOW_WORLD_SIZE = {"<": True, "<=": True, "!=": True, ">": False, ">=": False, "==": False}


def _operand_identity(expr: Expr, value: Val) -> Optional[Tuple]:
    """What an operand is, when that is known whatever statement reads it: a literal, the rank of
    a kind, or a rank-dependent value with an identity; None otherwise (a uniform variable may
    be bound again between two statements)."""
    if expr[0] == "const":
        return ("const", expr[1])
    if value.rank is not None:
        return ("rank", value.rank)
    if value.varies and value.key is not None:
        return value.key
    return None


def _equal_width_slice(element: Expr, variables: FrozenSet[str]) -> bool:
    """`buf[r * n:(r + 1) * n]`: a slice whose width (n) does not depend on the comprehension's
    variables, so every element it makes is that wide (the lowering names the width)."""
    if element[0] != "subscript" or not (len(element) > 4 and element[3]):
        return False
    widths = [width for lower, upper, step, width in element[4] if not (lower is None and upper is None and step is None)]
    return len(widths) == 1 and widths[0] is not None and not _mentions(widths[0], variables)


def _mentions(expr: Any, names: FrozenSet[str]) -> bool:
    """Whether `expr` may read one of `names` (a call may read anything)."""
    if not isinstance(expr, tuple) or not expr:
        return False
    if expr[0] == "name":
        return expr[1] in names
    if expr[0] == "call":
        return True
    return any(_mentions(part, names) for part in expr[1:])


def is_mask(indices: Tuple[Expr, ...]) -> bool:
    """`preds[preds > 0.5]`: a boolean mask keeps a data-dependent number of elements."""
    return any(index[0] in ("cmp", "not", "bool") for index in indices)


def _even_stride(base: Val, slices: Tuple, index_values: List[Val]) -> bool:
    """`x[start::world_size]` (no upper bound) of a value as long as a multiple of the world size
    (Val.world_multiple): whichever rank's start it takes, it holds length / world size. The
    slice's bounds are the last of `index_values`, the step last of all."""
    if not base.world_multiple or len(slices) != 1 or not index_values:
        return False
    _, upper, step, _ = slices[0]
    return upper is None and step is not None and is_world_size(index_values[-1])


def _number_types_differ(body: Expr, orelse: Expr) -> bool:
    """Both arms are numbers written as constants, of different Python types (`1.0` and `0`,
    `True` and `1`): a tensor made from the choice infers another dtype on each side."""
    kinds = set()
    for arm in (body, orelse):
        if arm[0] != "const" or not isinstance(arm[1], (bool, int, float, complex)):
            return False
        kinds.add(type(arm[1]))
    return len(kinds) > 1


def _world_size_or_one(value: Val, other: Expr) -> bool:
    """One arm of a conditional is the world size and the other the constant 1."""
    return is_world_size(value) and other == ("const", 1)


def _repeat_count_shape(operands: Sequence[Expr], values: List[Val]) -> FrozenSet[Taint]:
    """What the length of `[x] * n` (or `n * (x,)`) depends on besides its items: the count's
    value, when one operand is a list or tuple display and the other is not."""
    if len(operands) != 2:
        return frozenset()
    for display, count_expr, count in ((operands[0], operands[1], values[1]), (operands[1], operands[0], values[0])):
        if _is_display(display) and not _is_display(count_expr):
            return count.taints | count.shape
    return frozenset()


def _is_display(expr: Expr) -> bool:
    return expr[0] == "tuple" or (expr[0] == "const" and isinstance(expr[1], (tuple, list)))


def _repeated_slice_objects(operands: Sequence[Expr], values: List[Val]) -> Optional[Val]:
    """`[slice(None)] * n` (or `n * [...]`): what each item holds, when the display repeated is
    of slice objects only; None otherwise."""
    if len(operands) != 2:
        return None
    for display, value, count in ((operands[0], values[0], values[1]), (operands[1], values[1], values[0])):
        if display[0] == "tuple" and value.items and all(is_slice_object(item) for item in value.items) and count.items is None and count.element is None:
            return join_all(list(value.items))
    return None


def _plain_indices(expr: Expr, index_values: List[Val]) -> List[Val]:
    """The values of the indices of `x[i, a:b]` that are not slice bounds (listed first)."""
    bounds = sum(1 for s in expr[4] for b in s[:3] if b is not None)
    return index_values[: len(index_values) - bounds]


# The dtypes of an index array that picks elements by position (not a boolean mask).
_INTEGER_DTYPES = frozenset({"torch.int64", "torch.int32", "torch.int16", "torch.int8", "torch.uint8"})


def _integer_arrays(indices: List[Val]) -> bool:
    """Every index is an integer tensor as written (Val.dtype): it picks by position."""
    return bool(indices) and all(v.dtype in _INTEGER_DTYPES for v in indices)


def _only_full_slices(slices: Tuple) -> bool:
    return all(lower is None and upper is None and step is None for lower, upper, step, _ in slices)


def _rank_taints(taints: FrozenSet[Taint]) -> FrozenSet[Taint]:
    return frozenset(t for t in taints if t.kind is TaintKind.RANK)


def _may_be_mask(index: Val) -> bool:
    """The index may be an array, a boolean mask among them (`x[keep]`, `keep = labels != -100`),
    which keeps as many elements as its values say: a tensor's dtype, a comparison, a batch."""
    return index.dtype is not None or index.batch or index.sized or (index.key is not None and index.key[0] == "cmp")


def _element_index_taints(expr: Expr, index_values: List[Val]) -> FrozenSet[Taint]:
    """What the plain indices of `x[i, a:b]` (not the slice bounds) add to the result's shape:
    the lowering lists them first in the subscript's index, and `index_values` are their values in
    that order. With a slice beside them the index is a tuple, so `x` is an array: an integer
    index drops its dimension and an index array gives its own shape, whichever elements it
    picks (`W[:, sampled]` has as many columns as `sampled` has items)."""
    found: FrozenSet[Taint] = frozenset()
    for value in _plain_indices(expr, index_values):
        found |= value.shape
    return found

