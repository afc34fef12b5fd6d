"""Abstract values and their lattice: what a value carries of the rank.

A value is `UNIFORM` (alike on every rank) or it carries `Taint`s, the places its dependence on
the rank came from: the rank itself (`TaintKind.RANK`), per-rank data such as a local batch or loss
(`TaintKind.DATA`), or a wrapped model's output that carries the gradient collective into
`.backward()` (`TaintKind.GRAD`). Besides its taints a value may *be* the rank (`rank`, a rank kind)
or a test of it (`pred`, a formula), a known global or type, a tuple of typed values, a process
group, and what its length depends on (`shape`). `join` is the least upper bound where control
flow meets.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Optional, Tuple

from rankcheck.ftypes import ASSIGNED_UNDER, PER_RANK_DATA, RANK_IDENTITY, Location, SourceStep
from rankcheck.interp.formulas import cmp
from rankcheck.program.ir import is_no_group_rank

if TYPE_CHECKING:
    from rankcheck.interp.formulas import Formula
    from rankcheck.program.ir import FlagValue, GuardInfo


class TaintKind(enum.Enum):
    RANK = "rank"  # the rank itself, or a test of it
    DATA = "data"  # per-rank data: a local batch, a local loss, a clock
    GRAD = "grad"  # a wrapped model's output: its `.backward()` runs the gradient collective


# The key of `slots[rank]`, with the text of `slots`: the rank's own element of a list.
SLOT = "slot"
# The key of the job's world size (Catalog.world_size_calls), which every global rank is below.
WORLD_SIZE_KEY = ("world-size",)
# The type of a `slice(...)` value: indexing with it cuts as a slice does.
SLICE_TYPE = "builtins.slice"
# The type of a random stream of its own (`torch.Generator()`, `g.manual_seed(s)`): a draw given
# it (`generator=g`) is what its seed makes it, not a draw of the process's global stream.
STREAM_TYPE = "torch.Generator"
# The key of a group's source rank (Catalog.group_source_ranks), with the group getter's name.
GROUP_SOURCE = "group-source"
# The key of a ceiling division's value (`(n + ws - 1) // ws`, `math.ceil(n / ws)`): a slice that
# wide, or pieces of that size, are no even shares.
CEIL_KEY = "ceil"


@dataclass(frozen=True)
class Taint:
    kind: TaintKind
    text: str  # e.g. "dist.get_rank()"
    location: Location
    # The value was assigned under a condition (or in a loop) that varies between ranks; `text`
    # then names that statement ("assigned under `if rank == 0:`").
    control: bool = False
    # The rank kinds the value varies with, when known (`get_tensor_model_parallel_rank()`:
    # tp_rank; assigned under `if tp_rank == 0:`: tp_rank too): ranks alike in those are alike in
    # the value (GuardRef.uniform_in). Empty: not known.
    kinds: FrozenSet[str] = frozenset()
    # A size past the first dimension (the sequence length `generate` decodes to): a collective
    # on the value mismatches, but how many items it has (`len()`, a loop or comprehension over
    # it, `size(0)`) does not depend on it. Each item (a row) has it as its own length.
    trailing: bool = False
    # Whether the value is there at all differs between ranks: an input some batches lack (a
    # forward's `pixel_values=None` on a text-only batch). Unlike other per-rank data it stays
    # with a parameter its callers pass it to (interp.rounds), and testing it for None asks a
    # per-rank question (Expressions._cmp).
    presence: bool = False
    # The fields of a batch the size is of (a padding collator pads `input_ids` and `labels` to
    # the batch's longest sample, not a sequence classifier's one label per sample): a part read
    # by another name does not have it. Empty: every part.
    fields: FrozenSet[str] = frozenset()
    # The calls that returned the value on its way from `location` to here, first first (evidence
    # only: two taints of one source are one taint, whichever way each came).
    via: Tuple[SourceStep, ...] = field(default=(), compare=False)


def in_one_order(value: Val) -> Val:
    """`sorted(set(names))`: the items in one order on every rank (Val.order), also inside."""
    element = in_one_order(value.element) if value.element is not None else None
    if not value.order and element is value.element:
        return value
    return replace(value, order=frozenset(), element=element)


def is_slice_object(value: Val) -> bool:
    """`slice(lower, upper)` (Expressions._slice_object): its `shape` is the length it cuts."""
    return value.type == SLICE_TYPE and not value.types


MAX_STEPS = 6  # a longer way is cut: the first steps and the source say where to look


def value_through(v: Val, step: SourceStep, kept: FrozenSet[Taint] = frozenset()) -> Val:
    """`v` with `step` added to the way each of its taints came (through), wherever it keeps them."""
    return replace(v, taints=through(v.taints, step, kept), shape=through(v.shape, step, kept), content_only=through(v.content_only, step, kept))


def through(taints: FrozenSet[Taint], step: SourceStep, kept: FrozenSet[Taint] = frozenset()) -> FrozenSet[Taint]:
    """`taints` with `step` added to the way each came (those in `kept` unchanged: the caller's
    own, which came in as arguments)."""
    if not taints:
        return taints
    return frozenset(t if t in kept or len(t.via) >= MAX_STEPS else replace(t, via=t.via + (step,)) for t in taints)


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
    shape: FrozenSet[Taint] = frozenset()
    members: Optional[str] = None  # a process group created from these ranks / by this function
    # The length is fixed by how the value was built (`torch.zeros(n)`, a comprehension), so
    # `shape` says all there is; otherwise `len()` of per-rank data is per-rank data too.
    sized: bool = False
    # A tuple or list built item by item (`(world_size, rank)`, what a function returns that
    # way): unpacking it gives each target its own item, not the taints of them all.
    items: Optional[Tuple[Val, ...]] = None
    # A tensor whose shape was fixed where it was built (`torch.zeros(world_size, n)`), with sizes
    # alike on every rank: an element or a row of it has the same shape on every rank, whichever
    # one a rank picks (`table[rank]`); a list of tensors (`chunks[rank]`) has no such promise.
    rectangular: bool = False
    # A flag a call passed or left at its default, alike on every rank: `(False,)` for
    # `use_barriers=False`, `(None,)`, or a rank passed as `(-1,)` (no process group). A branch on
    # it takes one arm only (Statements._if, Expressions.known_truth).
    const: Optional[Tuple[FlagValue]] = None
    # What the shapes of the items a container holds depend on (`outs.append(x[mask])`, a
    # comprehension of per-rank slices): concatenating or stacking them, iterating them or taking
    # one has it. Apart from `shape`, which is how many items there are: `len(outs)` is not it.
    element_shape: FrozenSet[Taint] = frozenset()
    # What every item of a list built item by item holds (a comprehension's element, what was
    # appended to an empty list): iterating it gives that (`for _, views in view_items:` unpacks
    # the tuple each append put there). None: not known.
    element: Optional[Val] = None
    # The constant keywords the object was constructed with (`MeanMetric(sync_on_compute=False)`):
    # what the catalog says switches its collectives off (ImplicitSpec.unless_built).
    built_with: Tuple[Tuple[str, object], ...] = ()
    # The size as written with constants (`torch.ones(2)`, `torch.tensor([a, b])`: ("dims", (2,))).
    # Two values of other sizes in the arms of a rank branch (or of a conditional expression on the
    # rank) make the shape past it the rank's (sizes_differ; a display compares its items' count).
    size: Optional[Tuple] = None
    # A framework wrapper (DDP, FSDP) around an instance of this project nn.Module subclass:
    # calling the wrapper runs that module's forward too (Frameworks._module_forward).
    wraps: Optional[str] = None
    # The classes the value may be an instance of where paths made it differently (the items of
    # `[StdOutLogger(), WandbLogger(acc)]`, `a if cfg.x else b`): `type` names one of them; a
    # method call may run any of theirs (Calls.resolve_call).
    types: Tuple[str, ...] = ()
    # This rank's batch from a data loader, or a part of one (`batch["input_ids"]`, `x, y = batch`,
    # a value of `batch.items()`, a model's output on it): it holds as many samples as the batch,
    # so how many items it has is what `shape` says, whatever its values are (Val.sized).
    batch: bool = False
    # The functions the value may be where paths (or callers) gave it different ones (a callback
    # parameter bound to `save_all` by one caller and to `self.checkpointer.save` by another):
    # `ref` names one only when they agree; calling it may run any of these (Calls.resolve_call).
    refs: Tuple[str, ...] = ()
    # A mapping written with constant string keys (`{"preds": preds[keep], "loss": loss}`), key by
    # key in key order: `outputs["loss"]` is what was put under "loss", not any of its values.
    # None: not known (built otherwise, or changed in ways not followed).
    entries: Optional[Tuple[Tuple[str, Val], ...]] = None
    # A multiple of the job's world size: a count (`n * world_size`, `(n // ws) * ws`), or how many
    # items a value has (`range(that)`, `x.tensor_split(that)`). Its strided share
    # (`x[rank::world_size]`) or `shard(world_size, rank)` is as long on every rank.
    world_multiple: bool = False
    # A Python number whose type is chosen by a test that varies between ranks (`1.0 if rank == 0
    # else 0`): what a tensor built from it infers as its dtype (`torch.tensor(that)`, float32 on
    # one rank and int64 on the others) differs with it.
    dtype_choice: FrozenSet[Taint] = frozenset()
    # The dtype as written where the tensor was built or converted (`dtype=torch.float16`,
    # `.half()`, a float32 factory's default): two values of other dtypes in the arms of a rank
    # branch make what follows it per-rank (dtypes_differ). None: not known.
    dtype: Optional[str] = None
    # A mapping whose keys are not all known (a configuration passed in, `copy.deepcopy(configs)`)
    # with values stored under constant keys since (`info["step"] = self.step`): `keyed` holds
    # those, key by key; `unkeyed` what the mapping was before them, which every other key reads
    # (`info["train_engine"]` is the configuration's, whatever per-rank value went under "step").
    # None: no such view (Val.entries, or a mapping not followed key by key).
    keyed: Tuple[Tuple[str, Val], ...] = ()
    unkeyed: Optional[Val] = None
    # Never None: a tensor a factory built (`torch.tensor([n])`), or a value on the path where a
    # test said it is not None (`x if x is not None else torch.empty(n)`). A callee's `if item is
    # not None:` on it takes its one arm (Expressions.known_truth).
    defined: bool = False
    # Taints that reach only what the value holds, never whether it is None (a tensor computed
    # from this rank's batch on one path, None on the other where the configuration says so):
    # `if x is not None:` then varies by what chose the path, not by the tensor's contents.
    # Whatever is added to `taints` later (a rank test the assignment was under) is not in here,
    # so it counts for the test (none_taints).
    content_only: FrozenSet[Taint] = frozenset()
    # Picked in an order of this process's own: an item of a set of names iterated (string
    # hashes are salted per process), or what such an item looks up (`state_dict[name]`). Which
    # item a rank holds at a step differs, how many there are does not: only a collective's
    # operand cares (RC104: the ranks gather different tensors at one step). Sorting the set
    # removes it. The sources, as taints for the evidence.
    order: FrozenSet[Taint] = frozenset()
    # Read from this attribute of a variable's object as it stood (`opt.epochs`, with how many
    # stores into that object had run): assigned again from the same read under a rank branch
    # (`if RANK in {-1, 0}: epochs = opt.epochs`), the variable holds what it held (Statements._merge).
    source: Optional[str] = None

    @property
    def rank_dependent(self) -> bool:
        return any(t.kind is TaintKind.RANK for t in self.taints)

    @property
    def varies(self) -> bool:
        """Can differ between ranks: the rank itself, or per-rank data (local batch, loss, ...)."""
        return bool(self.taints)

    @property
    def kind(self) -> str:
        return RANK_IDENTITY if self.rank_dependent else PER_RANK_DATA


UNIFORM = Val()
SIZED = Val(sized=True)  # the same on every rank, with a length fixed when it was built
RECTANGULAR = Val(sized=True, rectangular=True)  # a tensor of that kind (Val.rectangular)
EMPTY = Val(sized=True, items=())  # `[]`, `()`: no items yet (what an append puts there is all it holds)
# The index `enumerate` pairs each item with: the k-th pair's is k on every rank.
INDEX = Val(defined=True)


def join(a: Val, b: Val) -> Val:
    if a is b or a == b:
        return a
    keyed, unkeyed = _join_keyed(a, b)
    return Val(
        taints=a.taints | b.taints,
        rank=a.rank if a.rank == b.rank else _rank_or_no_group(a, b),
        pred=a.pred if a.pred == b.pred else None,
        ref=a.ref if a.ref == b.ref else None,
        type=_join_type(a, b),
        key=a.key if a.key == b.key else None,
        elements=a.elements if a.elements == b.elements else None,
        shape=a.shape | b.shape,
        members=a.members if a.members == b.members else None,
        sized=a.sized and b.sized,
        items=_join_items(a.items, b.items),
        rectangular=a.rectangular and b.rectangular,
        const=a.const if a.const == b.const else None,
        element_shape=a.element_shape | b.element_shape,
        element=_join_element(a, b),
        built_with=a.built_with if a.built_with == b.built_with else (),
        size=a.size if a.size == b.size else None,
        wraps=a.wraps if a.wraps == b.wraps else a.wraps or b.wraps,
        types=_join_types(a, b),
        batch=a.batch and b.batch,
        refs=_join_refs(a, b),
        entries=_join_entries(a.entries, b.entries),
        world_multiple=a.world_multiple and b.world_multiple,
        dtype_choice=a.dtype_choice | b.dtype_choice,
        dtype=a.dtype if a.dtype == b.dtype else None,
        keyed=keyed,
        unkeyed=unkeyed,
        defined=a.defined and b.defined,
        content_only=(a.taints | b.taints) - none_taints(a) - none_taints(b),
        order=a.order | b.order,
        source=a.source if a.source == b.source else None,
    )


def _join_keyed(a: Val, b: Val) -> Tuple[Tuple[Tuple[str, Val], ...], Optional[Val]]:
    """The partial view of a mapping where two paths meet (Val.keyed): a path without one held
    the mapping as it was, so each key it did not store reads that; every key either stored is
    kept, holding what either path put or left there."""
    if a.unkeyed is None and b.unkeyed is None:
        return (), None
    before_a = a.unkeyed if a.unkeyed is not None else a
    before_b = b.unkeyed if b.unkeyed is not None else b
    stored_a, stored_b = dict(a.keyed), dict(b.keyed)
    keyed: Dict[str, Val] = {}
    for name in sorted(set(stored_a) | set(stored_b)):
        left = stored_a.get(name)
        right = stored_b.get(name)
        keyed[name] = join(taints_only(before_a) if left is None else left, taints_only(before_b) if right is None else right)
    return tuple(keyed.items()), join(before_a, before_b)


def keyed_entry(container: Val, name: str) -> Optional[Val]:
    """What `container[name]` reads of a mapping's partial view (Val.keyed): the value stored
    under `name`, else None (read the mapping as it was, Val.unkeyed)."""
    if container.unkeyed is None:
        return None
    return dict(container.keyed).get(name)


def with_keyed(before: Val, after: Val, name: str, value: Val) -> Val:
    """`after` (the mapping `before` was, grown by `mapping[name] = value`) with the store kept in
    its partial view: a mapping whose entries are not known keeps what went under each constant
    key apart from the rest (Val.keyed); a mapping whose entries are known keeps them instead
    (with_entry), so callers pass only one whose entries are not."""
    stored = dict(before.keyed) if before.unkeyed is not None else {}
    stored[name] = value
    unkeyed = before.unkeyed if before.unkeyed is not None else replace(before, keyed=(), unkeyed=None)
    return replace(after, keyed=tuple(sorted(stored.items())), unkeyed=unkeyed)


def _no_group_rank(value: Val) -> bool:
    """`-1` passed as a rank (Calls._argument): the call runs without a process group."""
    return value.const is not None and is_no_group_rank(value.const[0]) and not value.taints


def _rank_or_no_group(a: Val, b: Val) -> Optional[str]:
    """A parameter one caller binds to the rank and another to `-1`: on the ranks of a distributed
    job it is the rank (no rank is negative; the `-1` calls run where there is no other process),
    so its tests still tell the ranks apart (`if local_rank not in [-1, 0]: dist.barrier()`)."""
    if a.rank is not None and _no_group_rank(b):
        return a.rank
    if b.rank is not None and _no_group_rank(a):
        return b.rank
    return None


def _join_entries(a: Optional[Tuple[Tuple[str, Val], ...]], b: Optional[Tuple[Tuple[str, Val], ...]]) -> Optional[Tuple[Tuple[str, Val], ...]]:
    """A mapping's entries where two paths meet, key by key (a key one path lacks is what the
    other put there)."""
    if a is None or b is None:
        return None
    merged = dict(a)
    for name, value in b:
        merged[name] = join(merged[name], value) if name in merged else value
    return tuple(sorted(merged.items()))


def with_entry(container: Val, name: str, value: Val) -> Val:
    """`d["name"] = value` on a mapping whose entries are known."""
    if container.entries is None:
        return container
    merged = dict(container.entries)
    merged[name] = value
    return replace(container, entries=tuple(sorted(merged.items())))


def entry(container: Val, name: str) -> Optional[Val]:
    """What a mapping with known entries holds under `name` (None: not known), with what the
    mapping owes to the branch or loop it was assigned under."""
    if container.entries is None:
        return None
    found = dict(container.entries).get(name)
    if found is None:
        return None
    control = assigned_under(container)
    return replace(found, taints=found.taints | control) if control - found.taints else found


def agreed(buffer: Optional[Val]) -> Val:
    """A buffer a collective filled alike on every rank (`dist.all_gather_into_tensor(out, t)`,
    `dist.broadcast(t, 0)`): what it holds no longer varies; what was known of how it was built
    (a factory's tensor: its fixed length, never None) still holds."""
    if buffer is None:
        return UNIFORM
    return Val(sized=buffer.sized, rectangular=buffer.rectangular, defined=buffer.defined)


def is_agreed(value: Optional[Val]) -> bool:
    """`value` is what `agreed` leaves: nothing that varies, only how the buffer was built."""
    return value is not None and value == agreed(value)


def assigned_under(value: Val) -> FrozenSet[Taint]:
    """What `value` owes to the branches or loops that varied between ranks where it was assigned
    (Taint.control)."""
    return frozenset(t for t in value.taints if t.control)


def join_all(values: List[Val]) -> Val:
    """The join of one or more values."""
    joined = values[0]
    for value in values[1:]:
        joined = join(joined, value)
    return joined


MAX_REFS = 8  # past this many, a callable parameter is anything (a registry of handlers)


def _join_refs(a: Val, b: Val) -> Tuple[str, ...]:
    """The functions either value may be, when both are functions and not all one (Val.refs)."""
    left = a.refs or ((a.ref,) if a.ref else ())
    right = b.refs or ((b.ref,) if b.ref else ())
    if not left or not right:
        return ()
    found = sorted(set(left) | set(right))
    return tuple(found) if 1 < len(found) <= MAX_REFS else ()


def _join_types(a: Val, b: Val) -> Tuple[str, ...]:
    """The classes either value may be an instance of, when they are not all one."""
    found = set(a.types or ((a.type,) if a.type else ())) | set(b.types or ((b.type,) if b.type else ()))
    return tuple(sorted(found)) if len(found) > 1 else ()


def sizes_differ(values: List[Val]) -> bool:
    """Every value has a size known as written, of one kind, and not all the same one: a tensor's
    constant dimensions (Val.size), or how many items a tuple or list display holds."""
    sizes = {v.size if v.size is not None else ("items", len(v.items)) if v.items is not None else None for v in values}
    if None in sizes or len({size[0] for size in sizes if size is not None}) != 1:
        return False
    return len(sizes) > 1


def dtypes_differ(values: List[Val]) -> bool:
    """Every value's dtype is known as written (Val.dtype), and not all the same one."""
    dtypes = {v.dtype for v in values}
    return None not in dtypes and len(dtypes) > 1


def is_empty(v: Val) -> bool:
    """`[]` as written (EMPTY), nothing added to it: what it holds is what is added next."""
    return v.element is None and v.items == () and not v.taints


def _join_element(a: Val, b: Val) -> Optional[Val]:
    """What the items hold where two paths meet: an empty list adds none."""
    if a.element is not None and b.element is not None:
        return join(a.element, b.element)
    if is_empty(a) or a is UNIFORM:
        # `self.names = None` in `__init__`, the set built in a method: iterating it gives what
        # the set holds (a value with nothing known of it holds nothing that varies).
        return b.element
    if is_empty(b) or b is UNIFORM:
        return a.element
    return None


def _join_type(a: Val, b: Val) -> Optional[str]:
    """What a value may be an instance of where two paths meet: `if ddp: model = DDP(model)` leaves
    a model that may be a DDP, and what a DDP does (its forward's broadcast) may happen. Of a
    wrapper and the module it wraps, the wrapper (calling it runs the module's forward too); of
    two other known types, one of them, the same whichever path came first."""
    if a.type == b.type or b.type is None:
        return a.type
    if a.type is None:
        return b.type
    if a.wraps is not None and a.wraps == b.type:
        return a.type
    if b.wraps is not None and b.wraps == a.type:
        return b.type
    return min(a.type, b.type)


def _join_items(a: Optional[Tuple[Val, ...]], b: Optional[Tuple[Val, ...]]) -> Optional[Tuple[Val, ...]]:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(join(x, y) for x, y in zip(a, b))


def is_world_size(value: Val) -> bool:
    """The job's world size (Catalog.world_size_calls)."""
    return value.key == WORLD_SIZE_KEY


def leading(shape: FrozenSet[Taint]) -> FrozenSet[Taint]:
    """What how many items a value has depends on, of what its shape depends on."""
    return frozenset(t for t in shape if not t.trailing)


def rows_of(shape: FrozenSet[Taint]) -> FrozenSet[Taint]:
    """What the length of one item (a row) depends on, of its container's trailing sizes."""
    return frozenset(replace(t, trailing=False) for t in shape if t.trailing)


def batch_part(v: Val, key: Optional[Tuple] = None, name: Optional[str] = None) -> Val:
    """A part of a batch (Val.batch): this rank's data, with as many samples as the batch has.
    `name`: the field read (`batch["labels"]`), which has only the sizes of that field
    (Taint.fields)."""
    shape = v.shape if name is None else frozenset(t for t in v.shape if not t.fields or name in t.fields)
    taints = v.taints if name is None else frozenset(t for t in v.taints if not t.fields or name in t.fields)
    return Val(taints=taints | shape, shape=shape, key=key, sized=True, batch=True) if taints or shape else replace(SIZED, batch=True)


def present(v: Val) -> Val:
    """`v` as a computation on it sees it: there (a call, an operator, an attribute or an index of
    None raises), so what is computed from an input some batches lack (`pixel_values.shape[0]`,
    `queries.repeat(n)`) is never None for that reason (Taint.presence)."""
    if not any(t.presence for t in v.taints | v.shape):
        return v
    return replace(v, taints=frozenset(replace(t, presence=False) for t in v.taints), shape=frozenset(replace(t, presence=False) for t in v.shape))


def never_none(v: Val) -> bool:
    """`v` is not None on any path: known so (Val.defined), or built with a length."""
    return v.defined or v.sized


def none_taints(v: Val) -> FrozenSet[Taint]:
    """What decides whether `v` is None: nothing for a value that never is (never_none); else its
    taints less those that reach only its contents (Val.content_only)."""
    if never_none(v):
        return frozenset()
    return v.taints - v.content_only


def taints_only(v: Val, key: Optional[Tuple] = None) -> Val:
    """A value derived from `v`: it varies wherever `v` or its shape varies."""
    taints = v.taints | v.shape
    return Val(taints=taints, key=key) if taints else UNIFORM


def without_control(value: Val) -> Val:
    """`value` less what it owes to the branch it was assigned under (what other methods read
    back of an attribute: object state set per configuration would otherwise taint them all)."""
    taints = value.taints - assigned_under(value)
    shape = frozenset(t for t in value.shape if not t.control)
    if taints == value.taints and shape == value.shape:
        return value
    return replace(value, taints=taints, shape=shape)


# The rank kind of what was assigned under a test of membership of a process group (`if rank in
# ranks: self.group = group; self.size = len(ranks)`): every member took that arm alike, so it is
# alike on the members of that group (MEMBER_OF + the group's name, as Val.members names it).
MEMBER_OF = "member of "


def alike_in_members(kinds: FrozenSet[str], members: Optional[str], shared: FrozenSet[str] = frozenset()) -> bool:
    """Ranks that differ only in these kinds are alike on every member of the group `members`:
    the kinds are ones its members share (`shared`), or its own membership (MEMBER_OF)."""
    return members is not None and bool(kinds) and kinds <= shared | {MEMBER_OF + members}


def control_taint(
    taints: FrozenSet[Taint], info: GuardInfo, path: str, how: str = ASSIGNED_UNDER, membership: Optional[str] = None
) -> Optional[Taint]:
    """The taint of values assigned under a condition (or loop) that varies between ranks; `how`
    (SKIPPED_UNDER) for what runs on the rounds a condition does not skip; `membership`: the
    condition tests membership of that process group (MEMBER_OF)."""
    if not taints:
        return None
    kind = TaintKind.RANK if any(t.kind is TaintKind.RANK for t in taints) else TaintKind.DATA
    span = info.span
    where = Location(path, span.line, span.column, span.end_line, span.end_column)
    head, _ = info.shown(t.text for t in taints if not t.control)
    kinds = frozenset([MEMBER_OF + membership]) if membership is not None and kind is TaintKind.RANK else taint_kinds(taints)
    return Taint(kind, f"{how}`{head}`", where, control=True, kinds=kinds)


def rank_value(text: str, where: Location, kind: Optional[str] = None, test: Optional[Tuple[str, str, object]] = None) -> Val:
    """The rank of a kind read at `where` (`dist.get_rank()`), or a test of it (`test`: kind,
    operator, constant; `accelerator.is_main_process`), with a taint that knows its kind."""
    named = kind if test is None else test[0]
    taint = Taint(TaintKind.RANK, text, where, kinds=frozenset([named]) if named else frozenset())
    if test is not None:
        return Val(taints=frozenset([taint]), pred=cmp(*test))
    return Val(taints=frozenset([taint]), rank=kind)


def taint_kinds(taints: FrozenSet[Taint]) -> FrozenSet[str]:
    """The rank kinds a value with these taints varies with: when every taint is the rank's, of
    known kinds; else empty (it may differ between any two ranks)."""
    kinds: FrozenSet[str] = frozenset()
    for t in taints:
        if t.kind is not TaintKind.RANK or not t.kinds:
            return frozenset()
        kinds |= t.kinds
    return kinds


def chosen_by_rank(key: Val, text: str, where: Location) -> Optional[Taint]:
    """The taint of a value looked up with the rank itself as key or index (`shards[rank]`,
    `owners.get(rank)`): which entry, and whether there is one, is decided rank by rank, as for a
    value assigned under a test of the rank (control: `is None` of it differs). None for any other
    key."""
    if key.rank is None:
        return None
    return Taint(TaintKind.RANK, f"looked up by `{text}`", where, control=True, kinds=taint_kinds(key.taints))


def from_sources(taint: Taint, sources: FrozenSet[Taint]) -> bool:
    """Whether `taint` is one of `sources`, by what it is and the file it comes from, not the line:
    a memoised run reused after an edit that moved lines (its key abstracts taints) carries the
    source as it was read then, and the data a caller passes is the same data."""
    if taint in sources:
        return True
    return any(s.kind is taint.kind and s.text == taint.text and s.location.path == taint.location.path and s.control == taint.control for s in sources)


def first_taint(taints: FrozenSet[Taint]) -> Optional[Taint]:
    """The taint evidence names: the rank before per-rank data, then the earliest."""
    return min(taints, key=lambda t: (t.kind is not TaintKind.RANK, t.location.line, t.location.column, t.text), default=None)
