"""The knowledge, loaded from rules/*.toml: collectives, rank sources, rank predicates, exits.

Adding a framework is a TOML file (see rules/torch_distributed.toml for the format); nothing in the
analysis names a framework API in Python.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Tuple

from rankcheck import _toml
from rankcheck.rules_meta import rules_dir

# A rank predicate: (rank kind, comparison operator, constant), e.g. ("global_rank", "==", 0).
Predicate = Tuple[str, str, object]

_NON_CATALOG_FILES = {"codes.toml"}


class CatalogError(ValueError):
    """A rules/*.toml file (or a config extra) is malformed: the message names file and key."""



# The members of a process group known by the mesh dimension it spans (Catalog.group_names):
# GROUP_ROLE + the rank kind of a member within it, "mesh:dp_rank".
GROUP_ROLE = "mesh:"
# The qualname of `Catalog.sharded_forward`: a submodule's forward under parameter sharding.
SUBMODULE_FORWARD = "<submodule forward>"

@dataclass(frozen=True)
class CollectiveSpec:
    qualname: str
    op: str
    group_position: Optional[int] = None
    group_keyword: Optional[str] = "group"
    uniformizes: Tuple[int, ...] = ()
    returns_uniform: bool = False
    note: str = ""
    framework: str = ""
    tensors: Tuple[int, ...] = ()  # positions of tensors whose shape must match on every rank
    agreed: Tuple[Tuple[str, int], ...] = ()  # (keyword, position) of op/src/dst every rank must agree on
    # (output list, input) positions: each rank's input fills its own slot of the output list, so
    # an input that *is* the rank's slot of that list (`all_gather(slots, slots[rank])`) matches
    # whatever size each slot has.
    own_slot: Optional[Tuple[int, int]] = None
    # The group getter the call uses when no group is passed (Megatron's broadcast_data runs on
    # the tensor-parallel group): the collective's members, for guards alike on them.
    default_group: Optional[str] = None
    # (keyword, position) of split-size arguments: given, each rank sends and receives the sizes
    # they list (`all_to_all_single(out, inp, out_splits, in_splits)`), so `tensors` may differ.
    splits: Tuple[Tuple[str, int], ...] = ()
    # A failure on any rank inside the call is raised on every rank (torch.distributed.checkpoint
    # gathers each rank's exception and raises CheckpointException everywhere): a `try` around it
    # is left by every rank together.
    fails_together: bool = False


@dataclass(frozen=True)
class ImplicitSpec:
    """A framework API that issues a collective although it is not called `all_reduce`."""

    op: str = ""  # canonical op for sequence comparison ("" = issues none, only types a value)
    note: str = ""  # the reason shown at the end of the evidence chain
    when: Tuple[Tuple[str, object], ...] = ()  # keyword arguments that must be given (sync_dist=True)
    returns: Tuple[str, ...] = ()  # type(s) of the result; several: a tuple to unpack
    per_argument: bool = False  # one result per positional argument (`prepare(model)` -> model)
    framework: str = ""
    # The call repeats `op` a number of times that depends on this rank's own data (what `uneven`
    # says: generation decodes until this rank's sequences end) when these keywords are given as
    # these constants (`synced_gpus=False`; the library's default keeps every rank stepping).
    uneven: str = ""
    uneven_when: Tuple[Tuple[str, object], ...] = ()
    # ... or unless these keywords are given, as these constants or as anything not a constant
    # (`synced_gpus=True`, `synced_gpus=self.z3_enabled`): where the library's default is the
    # uneven one (generate on a raw ZeRO-3 engine defaults to `synced_gpus=False`).
    uneven_unless: Tuple[Tuple[str, object], ...] = ()
    # Keywords that, given as None, make every rank run the same number of rounds
    # (`eos_token_id=None`: every rank decodes max_new_tokens steps).
    even_when_none: Tuple[str, ...] = ()
    # Positions of tensors whose shape must match on every rank (`accelerator.gather(t)` is an
    # all_gather_into_tensor of `t`), as `CollectiveSpec.tensors`.
    tensors: Tuple[int, ...] = ()
    # Keywords that, given, make the call pad those tensors to one shape across ranks first
    # (pytorch-accelerated's `gather(t, padding_value=0)`): no shape to check then.
    padded_by: Tuple[str, ...] = ()
    # Constructor keywords that turn it off: a metric built with `sync_on_compute=False` computes
    # locally, a DDP built with `broadcast_buffers=False` broadcasts nothing in its forward.
    unless_built: Tuple[Tuple[str, object], ...] = ()
    # Positions of arguments whose items each get their own `op`, in order (`log_dict(metrics,
    # sync_dist=True)` reduces every key): a mapping with keys per rank runs it unevenly.
    per_item: Tuple[int, ...] = ()
    # The method's receiver is the tensor whose shape must match on every rank
    # (`dtensor.full_tensor()` all-gathers the receiver's shards).
    receiver_shape: bool = False
    # The method tears the default process group down (`Accelerator.end_training()`): what this
    # process does after it communicates no more (a collective raises), as after a process exit.
    teardown: bool = False
    # The loops the call runs over data loaders, a hook of the model per batch (`trainer.fit`).
    drives: Tuple[DrivenLoop, ...] = ()
    # The sharded backends (Catalog.backends) under which alone the call communicates
    # (`Accelerator.save_state` gathers sharded state under DeepSpeed and FSDP, and is local under
    # plain DDP). Empty: it communicates under every configuration.
    only_under: Tuple[str, ...] = ()


@dataclass(frozen=True)
class BackendSpec:
    """A sharded training backend (DeepSpeed, FSDP), as a program selects it and tests for it."""

    name: str
    # Enum members that name it, compared with `==`, `is` or `in` (`DistributedType.DEEPSPEED`).
    members: FrozenSet[str] = frozenset()
    # Attributes set only under it, tested with `is not None` (`state.deepspeed_plugin`).
    plugins: FrozenSet[str] = frozenset()
    # Flags, by their last name, that say it is on (`is_fsdp`, `args.use_deepspeed`).
    flags: FrozenSet[str] = frozenset()
    # Whether any program may run under it without naming it (a launcher's config applies it to
    # an unchanged script); else only a program that names it does (`words`).
    assumed: bool = False
    # Words whose presence in a name, attribute, import or string of the program says it does.
    words: FrozenSet[str] = frozenset()
    # Methods that refuse to run under it when handed more than one model in one call
    # (accelerate's `prepare` under DeepSpeed): a program whose every such call hands over two
    # models or more never runs under it. An argument is a model unless its name holds one of
    # `not_models` (`optimizer`, `train_dataloader`, `lr_scheduler`).
    one_model_calls: FrozenSet[str] = frozenset()
    not_models: FrozenSet[str] = frozenset()


@dataclass(frozen=True)
class DrivenLoop:
    """A loop a framework call runs for its caller: one call of a hook of the model it is given
    per batch of a loader (`trainer.fit(module, val_dataloaders=loader)` calls
    `module.validation_step` once per batch of `loader`). Where this rank's loader yields another
    number of batches than the others', the hook's collectives run another number of times."""

    hook: str  # the model's method called per batch
    loader: Tuple[int, str]  # the loader argument: (position or -1, keyword)
    model: Tuple[int, str] = (0, "model")  # the model argument; (-1, "") for the call's receiver
    # Where no loader is passed, the model's (or the datamodule's) method that returns it.
    provider: str = ""
    datamodule: Tuple[int, str] = (-1, "")  # an argument whose object provides the loader


# A hook parameter typed so (`hooks = { training_step = ["data"] }`) holds what the framework hands
# this rank: its own batch, per-rank data, not an instance of a type.
HOOK_DATA = "data"


@dataclass(frozen=True)
class TypeSpec:
    """What an object of a framework type does: calling it, its methods, its attributes."""

    qualname: str
    call: Optional[ImplicitSpec] = None  # calling the object (a wrapped model's forward)
    grad: Optional[ImplicitSpec] = None  # `.backward()` of a value computed by calling it
    methods: Mapping[str, ImplicitSpec] = field(default_factory=dict)
    attributes: Mapping[str, str] = field(default_factory=dict)  # attribute -> type ("" unknown)
    # Attributes whose read runs a collective (a property that syncs: `trainer.callback_metrics`).
    reads: Mapping[str, ImplicitSpec] = field(default_factory=dict)
    quiet: FrozenSet[str] = frozenset()  # context-manager methods that switch `grad` off (no_sync)
    uneven_ok: FrozenSet[str] = frozenset()  # context-manager methods that handle uneven inputs (join)
    iterates: str = ""  # "data": iterating the object yields per-rank data (a DataLoader's batches)
    # For project subclasses: method-name pattern -> types of its parameters after `self`, as the
    # framework passes them (`Callback.on_*` hooks get the trainer and the module).
    hooks: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    rank_zero_methods: FrozenSet[str] = frozenset()  # hooks the framework calls on one rank only
    wraps: FrozenSet[str] = frozenset()  # methods whose collective survives a project override
    # Hooks of a project subclass whose returned value the framework acts on with a collective
    # (Lightning runs backward on the loss `training_step` returns: the gradient all-reduce). A
    # `return` of a value issues it there; returning None, or nothing, skips it. `unless_set`:
    # attributes whose assignment in the class switches that off (`automatic_optimization`).
    returned: Mapping[str, ImplicitSpec] = field(default_factory=dict)
    returned_unless_set: FrozenSet[str] = frozenset()
    # Attributes whose assignment (of anything but False) makes the framework's loop end on this
    # process after the hook returns (`trainer.should_stop = True`), while the processes that did
    # not set it go on to the loop's next step and its collectives: attribute -> what that step is.
    stops: Mapping[str, str] = field(default_factory=dict)
    framework: str = ""
    # A collate function object (`DataCollatorForSeq2Seq(tokenizer)`): the batch fields it pads to
    # the longest sample of each batch, so a loader built with it yields them each as wide as
    # this rank's own longest; unless built with one of `pads_unless` (`padding="max_length"`).
    pads: FrozenSet[str] = frozenset()
    pads_unless: Tuple[Tuple[str, object], ...] = ()
    # Built with these constant keywords, iterating the object gives this rank's own share, not
    # evened out across ranks (MONAI's `DistributedSampler(even_divisible=False)`): its length,
    # and that of a loader built on it, differs between ranks.
    uneven_length_when: Tuple[Tuple[str, object], ...] = ()
    # ... or unless built with these (lhotse's samplers: their own share of the cuts, in
    # batches whose count differs between ranks unless `drop_last=True`).
    uneven_length_unless: Tuple[Tuple[str, object], ...] = ()


@dataclass(frozen=True)
class FunctionSpec:
    """A framework function that returns (or turns an argument into) a known type."""

    qualname: str
    returns: Tuple[str, ...] = ()
    types_argument: Optional[int] = None  # this positional argument becomes returns[0]
    returns_argument: Optional[int] = None  # returns this argument as it is (`torch.compile(model)`)
    # (keyword, position) of the module the first result wraps (`deepspeed.initialize(model=m)`:
    # the engine's forward runs m's).
    wraps_argument: Optional[Tuple[str, int]] = None
    framework: str = ""


@dataclass(frozen=True)
class RevealSpec:
    """A call whose argument is this process's rank (`init_process_group(rank=r)`): a parameter
    passed there is the rank."""

    position: Optional[int]
    keyword: Optional[str]
    kind: str  # the rank kind the argument holds
    in_list: bool = False  # the rank is an item of a list argument (`device_ids=[local_rank]`)


@dataclass(frozen=True)
class SpawnSpec:
    """A call that starts one process per rank and runs a function there, passing the process's
    rank first (`torch.multiprocessing.spawn(fn, args=(...), nprocs=n)`)."""

    function_position: int
    args_position: Optional[int]
    args_keyword: Optional[str]
    kind: str  # the rank kind the function's first parameter receives


@dataclass(frozen=True)
class Catalog:
    collectives: Mapping[str, CollectiveSpec] = field(default_factory=dict)
    rank_calls: Mapping[str, str] = field(default_factory=dict)
    rank_environ: Mapping[str, str] = field(default_factory=dict)
    rank_attributes: Mapping[str, str] = field(default_factory=dict)
    predicate_attributes: Mapping[str, Predicate] = field(default_factory=dict)
    predicate_calls: Mapping[str, Predicate] = field(default_factory=dict)
    exit_calls: FrozenSet[str] = frozenset()
    uncatchable_exits: FrozenSet[str] = frozenset()  # of exit_calls, what no `except` catches
    # Of exit_calls, those that end only this process's communication, not the process: the
    # default process group destroyed (`dist.destroy_process_group()` with no group given).
    teardown_calls: FrozenSet[str] = frozenset()
    types: Mapping[str, TypeSpec] = field(default_factory=dict)
    functions: Mapping[str, FunctionSpec] = field(default_factory=dict)
    predicate_methods: Mapping[str, Predicate] = field(default_factory=dict)
    # Context-manager methods that let these ranks into the block first, the others after a
    # barrier (`with accelerator.main_process_first():`): method name -> who goes first.
    staggered_contexts: Mapping[str, Predicate] = field(default_factory=dict)
    rank_zero_only: FrozenSet[str] = frozenset()  # decorator names (last component)
    data_calls: FrozenSet[str] = frozenset()  # calls whose value differs per rank (clocks, RNGs)
    # Keywords that seed a random stream (`make_env(seed=base + rank)`): a rank given there makes
    # what the stream draws per-rank data, not the rank.
    seed_keywords: FrozenSet[str] = frozenset()
    seed_calls: FrozenSet[str] = frozenset()  # random streams built from their first argument, a seed
    # The keyword that hands a draw its own random stream (`torch.rand(1, generator=g)`), and the
    # methods that seed such a stream in place from their first argument (`g.manual_seed(s)`).
    stream_keywords: FrozenSet[str] = frozenset()
    reseeders: FrozenSet[str] = frozenset()
    stream_types: FrozenSet[str] = frozenset()  # constructors of such streams (`torch.Generator`)
    shape_factories: FrozenSet[str] = frozenset()  # the size arguments decide the shape
    shape_from_values: FrozenSet[str] = frozenset()  # the shape follows the argument's length
    # Factories whose positional arguments are the sizes of successive dimensions (`torch.zeros(n, d)`).
    shape_dimension_factories: FrozenSet[str] = frozenset()
    # Exception classes a collective that fails together raises on every rank at once
    # (CheckpointException of torch.distributed.checkpoint): a handler of only these is entered by
    # every rank or by none, unless the code raises one itself on some ranks.
    raised_together: FrozenSet[str] = frozenset()
    # Of those, the ones that build a sequence of the items they are given (`list(outs)`), not
    # one tensor of them: the items keep their shapes (Val.element_shape).
    shape_sequences: FrozenSet[str] = frozenset()
    shape_sharders: FrozenSet[str] = frozenset()  # last names of calls that cut out a per-rank share
    # Keywords that make a dataset call take this rank's shards only (`split_by_node=True`), and
    # the last names of node splitters handed to one (`nodesplitter=wds.split_by_node`).
    shape_node_split_keywords: FrozenSet[str] = frozenset()
    shape_node_splitters: FrozenSet[str] = frozenset()
    # Last names of calls that decode until this rank's own sequences end (`generate`): the
    # result's length is this rank's, whatever the inputs' shapes.
    shape_decoders: FrozenSet[str] = frozenset()
    # Calls (last name) that cut a tensor into pieces of the one size given (`x.split(n)`).
    shape_equal_splitters: FrozenSet[str] = frozenset()
    # Calls that pad the items they are given to the longest of them (`pad_sequence(feats)`).
    shape_padders: FrozenSet[str] = frozenset()
    # Calls that pad their first argument by the amounts their second gives (`F.pad(x, amounts)`).
    shape_pad_by: FrozenSet[str] = frozenset()
    # Keywords that say a call of that name is another library's (vLLM's `generate(prompts,
    # sampling_params=...)` returns one output per prompt): not a decoder then.
    shape_decoders_not_with: FrozenSet[str] = frozenset()
    # Calls (last name) that give one row per input item (`tokenizer(prompts)`,
    # `batch_decode(ids)`): as many rows as the input has items, each as long as its own item;
    # and the keywords that pass the input when no positional argument does.
    shape_row_wise: FrozenSet[str] = frozenset()
    shape_row_inputs: FrozenSet[str] = frozenset()
    # Measures that count items, the first dimension only: functions (`len(x)`) and methods
    # given dimension 0 (`x.size(0)`).
    shape_counts: FrozenSet[str] = frozenset()
    shape_count_methods: FrozenSet[str] = frozenset()
    shape_reducers: FrozenSet[str] = frozenset()  # last names of calls that give a scalar
    # Last names of calls whose result has as many elements as the values select
    # (`torch.nonzero(scores > t)`): how long it is is the data's, not the input's shape.
    shape_data_dependent: FrozenSet[str] = frozenset()
    # Last names of calls that cut their input into exactly as many pieces as their last positional
    # argument says (`x.tensor_split(n)`), whatever the input's length.
    shape_pieces: FrozenSet[str] = frozenset()
    # Last names of calls that keep the items their one argument indexes (`dataset.select(range(n))`).
    shape_selectors: FrozenSet[str] = frozenset()
    shape_copies: FrozenSet[str] = frozenset()  # `copy.deepcopy(x)`: x as it was, another object
    # Loss functions and loss module classes (qualified names): a call, or a call of a module built
    # so, gives one scalar unless given `reduction="none"`.
    shape_losses: FrozenSet[str] = frozenset()
    # The constant keywords that keep a loss unreduced, the input's shape (`reduction="none"`).
    shape_losses_unreduced: Tuple[Tuple[str, object], ...] = ()
    # The dtype a tensor method converts to (`half` -> "torch.float16"), the dtype names written
    # for another (`torch.half` -> "torch.float16"), and the factories whose default is float32:
    # a tensor each arm of a rank branch builds with another dtype (Val.dtype) mismatches.
    shape_dtype_methods: Mapping[str, str] = field(default_factory=dict)
    shape_dtype_aliases: Mapping[str, str] = field(default_factory=dict)
    shape_default_dtypes: Mapping[str, str] = field(default_factory=dict)
    shape_dtype_converters: FrozenSet[str] = frozenset()  # `.to(torch.float16)`: a dtype argument converts
    shape_reshapers: FrozenSet[str] = frozenset()  # method names whose arguments decide the shape
    shape_measures: FrozenSet[str] = frozenset()  # last names of calls that measure a length (len)
    shape_size_attributes: FrozenSet[str] = frozenset()  # attributes that read a tensor's sizes (`x.shape`)
    shape_keepers: FrozenSet[str] = frozenset()  # tensor methods whose result has the receiver's shape
    shape_like: FrozenSet[str] = frozenset()  # tensor methods whose result has the argument's shape
    # Functions (qualified names) whose result has their first argument's shape (`torch.ones_like`).
    shape_like_functions: FrozenSet[str] = frozenset()
    # Placement keywords that are part of what a collective compares (`dtype=`): a factory given a
    # per-rank one builds tensors that differ between ranks as a per-rank size would.
    shape_layout_keywords: FrozenSet[str] = frozenset()
    # Factories that take values besides sizes (`torch.full(size, fill_value)`): the position and
    # keyword of the size argument; the others fill the tensor and leave its shape alone.
    shape_size_arguments: Mapping[str, Tuple[int, str]] = field(default_factory=dict)
    iteration_counters: FrozenSet[str] = frozenset()  # `enumerate`: (index, item) pairs
    # Dataset bases over which creating a loader's iterator broadcasts a shared seed (IterDataPipe):
    # every `for` over such a loader and every `iter(loader)` is a collective.
    seed_sharing_datasets: FrozenSet[str] = frozenset()
    iteration_zips: FrozenSet[str] = frozenset()  # `zip`: a tuple of one item of each argument
    # `set(names)`: the items in an order of this process's own (Val.order); `sorted(...)` gives
    # them in one order everywhere.
    iteration_unordered: FrozenSet[str] = frozenset()
    iteration_orderers: FrozenSet[str] = frozenset()
    iteration_key_values: FrozenSet[str] = frozenset()  # `d.items()`: (key, value) pairs of a mapping
    iteration_values: FrozenSet[str] = frozenset()  # `d.values()`: the values of a mapping
    # Progress displays (`tqdm(loader)`): the same iterable, item for item, so wrapping it on rank
    # 0 alone (`if rank == 0: it = tqdm(it)`) changes nothing the loop gets.
    iteration_displays: FrozenSet[str] = frozenset()
    collate_keywords: FrozenSet[str] = frozenset()  # `collate_fn=`: what a loader's batches are
    container_mutators: FrozenSet[str] = frozenset()  # `lst.extend(xs)`: the container grows by what is added
    container_adders: FrozenSet[str] = frozenset()  # `lst.append(x)`: the container grows by one
    uniform_calls: FrozenSet[str] = frozenset()  # results that never differ between ranks
    uniform_attributes: FrozenSet[str] = frozenset()  # attributes alike on every rank (`.dtype`)
    uniform_methods: FrozenSet[str] = frozenset()  # methods (by name) answering alike on every rank (`.dim()`)
    # Calls whose result is module state every rank holds alike (`nn.Parameter(torch.randn(d))`):
    # the per-rank data of what they wrap is not in it.
    synchronized_calls: FrozenSet[str] = frozenset()
    placement_methods: FrozenSet[str] = frozenset()  # `.to(device)`: the argument is a placement
    placement_keywords: FrozenSet[str] = frozenset()  # `device=`, `dtype=`: placement arguments
    self_methods: FrozenSet[str] = frozenset()  # `model.eval()`, `model.to(device)`: the object itself
    module_bases: FrozenSet[str] = frozenset()  # nn.Module: calling an instance runs `forward`
    # `nn.ModuleList(layers)`: holds the modules it is given, as the list did (iterating it, or
    # calling an item, runs their forward).
    module_containers: FrozenSet[str] = frozenset()
    # Method names that objects of libraries have (a tensor's, a module's, an optimizer's): a call
    # `x.name()` on a value of unknown type is never taken for the project's one method of that name.
    library_methods: FrozenSet[str] = frozenset()
    # Calls that call the function they are given with the rest of their arguments
    # (`asyncio.to_thread(dist.broadcast_object_list, objs, src=0)`): qualname, or a method's
    # name, -> the position of that function.
    # Files ([files]): calls and methods that write at a path (-> its position), `open` by name,
    # methods writing at their receiver; calls testing for a path (-> its position), and methods
    # testing their receiver (interp.files).
    files_writers: Mapping[str, int] = field(default_factory=dict)
    files_opens: FrozenSet[str] = frozenset()
    files_writer_methods: Mapping[str, int] = field(default_factory=dict)
    files_receiver_writers: FrozenSet[str] = frozenset()
    files_observers: Mapping[str, int] = field(default_factory=dict)
    files_observer_methods: FrozenSet[str] = frozenset()
    files_other_paths: FrozenSet[str] = frozenset()
    forwarding_calls: Mapping[str, int] = field(default_factory=dict)
    forwarding_methods: Mapping[str, int] = field(default_factory=dict)
    iteration_wrappers: FrozenSet[str] = frozenset()  # enumerate, zip, tqdm: iterate what they wrap
    uneven_ok_contexts: FrozenSet[str] = frozenset()  # `with Join([...]):`
    group_membership: Mapping[str, str] = field(default_factory=dict)  # is_rank_in_X -> get_X_group
    # get_X_src_rank -> get_X_group: the global rank of a member every member of that group agrees on
    group_source_ranks: Mapping[str, str] = field(default_factory=dict)
    # get_X_group -> get_Y_group: every group X lies within one group Y (Megatron's embedding group
    # is the first and last stage of one pipeline group): what Y's members agree on, X's do.
    groups_within: Mapping[str, str] = field(default_factory=dict)
    group_ranks_calls: FrozenSet[str] = frozenset()  # get_process_group_ranks(group): its members
    # Calls that tell whether this process is part of a distributed job, alike on every process.
    distributed_tests: FrozenSet[str] = frozenset()
    # Flags named for it (`args.distributed`, `ddp`): the same answer, as configured.
    distributed_flags: FrozenSet[str] = frozenset()
    # Calls that return the number of processes of the job (with no group given): every global
    # rank is below it (`if rank < world_size:` holds on every rank).
    world_size_calls: FrozenSet[str] = frozenset()
    world_size_names: FrozenSet[str] = frozenset()  # `world_size == 1`: a test of a distributed job
    # get_X_group -> the rank kinds every member of that group shares (all ranks of one
    # data-parallel group are on one pipeline stage): a test of only those is alike within it.
    uniform_in_group: Mapping[str, FrozenSet[str]] = field(default_factory=dict)
    # A process group nothing in the project says the origin of, held in a name that says which
    # mesh dimension it spans (`dp_group`, `self.tensor_parallel_group`): name -> the rank kind
    # of a member within it. Its members are named GROUP_ROLE + kind (`uniform_in_group` keys).
    group_names: Mapping[str, str] = field(default_factory=dict)
    # How a name that holds a process group of any dimension ends (`group`, `self.dp_pg`,
    # `process_group`): how many ranks it holds (`g.size()`) is alike on all of them.
    group_name_suffixes: Tuple[str, ...] = ()
    # get_X_group -> the rank kind of a member within that group (`get_data_parallel_group()`
    # spans the data-parallel dimension): `group.rank()` / `get_rank(group=...)` of it is that kind.
    group_rank_kinds: Mapping[str, str] = field(default_factory=dict)
    # Exceptions the runtime raises on one rank by itself (running out of this GPU's memory):
    # qualname -> the builtin class it derives from. A handler naming one is a branch some ranks
    # take wherever its `try` does work (Statements._try).
    per_rank_exceptions: Mapping[str, str] = field(default_factory=dict)
    # Context managers that swallow the exceptions they are given (`contextlib.suppress(OSError)`):
    # a `with` of one is a `try` whose handler of those does nothing (Statements._with).
    exception_suppressors: FrozenSet[str] = frozenset()
    # Where real code gets its rank without naming a rank source: parameters (and what a method
    # stores from them on `self`) that no caller binds, named as the rank or a test of it is
    # named; the words that say a `rank` is some other rank (an adapter's, a matrix's); calls
    # that reveal their argument is the rank; the process spawners; external calls whose name
    # says they return the rank (`hvd.rank()`), or a tuple holding it (`get_dist_info()`).
    rank_names: Mapping[str, str] = field(default_factory=dict)
    predicate_names: Mapping[str, Predicate] = field(default_factory=dict)
    # Parameters no caller binds named as per-rank data are: name -> "" (the value is per-rank
    # data: `batch`) or the type it holds (`train_loader`: a DataLoader, whose items are).
    data_names: Mapping[str, str] = field(default_factory=dict)
    # The same by the last word of a longer name (`validation_loader`, `eval_dataloader`).
    data_name_suffixes: Mapping[str, str] = field(default_factory=dict)
    # Parameters defaulting to None named for an input a batch may lack (`pixel_values=None`):
    # whether one is None differs between ranks whose batches differ (a text-only batch).
    optional_inputs: FrozenSet[str] = frozenset()
    # Parameter sharding (ZeRO-3, FSDP): calling a submodule of a sharded model gathers its
    # parameters first (a pre-forward hook). `sharded_forward` is that collective (over the
    # data-parallel group); it applies in a project that names one of `sharding_evidence`, to the
    # submodules of its nn.Module subclasses, except modules built from `parameter_free_modules`.
    sharded_forward: Optional[CollectiveSpec] = None
    sharding_evidence: FrozenSet[str] = frozenset()
    # Of those, the ones that shard only at ZeRO stage 3 (`deepspeed.initialize`): where the project
    # writes every `"zero_optimization": {"stage": N}` of its DeepSpeed config as a constant below 3,
    # they are no evidence.
    staged_sharding_evidence: FrozenSet[str] = frozenset()
    # Where a config display holds the stage (`"zero_optimization": {"stage": N}`: the keys, outer
    # first), and the lowest stage that shards parameters.
    sharding_stage_key: Tuple[str, ...] = ()
    sharding_stage: int = 0
    # Calls that test whether parameters are sharded (`is_deepspeed_zero3_enabled()`): where the
    # analysis takes them to be (the project names sharding), these hold.
    sharding_tests: FrozenSet[str] = frozenset()
    # Sharded backends by name: how a program tests for each, and whether it may run under one
    # (ImplicitSpec.only_under).
    backends: Mapping[str, BackendSpec] = field(default_factory=dict)
    parameter_free_modules: FrozenSet[str] = frozenset()
    not_rank_words: FrozenSet[str] = frozenset()
    # Packages whose own source, where the project is that package, is read instead of what the
    # catalog says of its functions (`[framework] own_package`): composer's repository defines
    # `composer.utils.dist.get_local_rank`, and its own code is judged by what it does.
    own_packages: FrozenSet[str] = frozenset()
    rank_revealing: Mapping[str, RevealSpec] = field(default_factory=dict)
    spawners: Mapping[str, SpawnSpec] = field(default_factory=dict)
    rank_call_names: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)  # one kind, or one per item ("" uniform)
    fingerprint: str = ""

    def collective(self, qualname: str) -> Optional[CollectiveSpec]:
        return self.collectives.get(qualname)

    def type_spec(self, qualname: Optional[str]) -> Optional[TypeSpec]:
        """The spec of a type by name; `pkg.*` entries cover every type of a package."""
        if not qualname:
            return None
        spec = self.types.get(qualname)
        if spec is not None:
            return spec
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            spec = self.types.get(".".join(parts[:cut]) + ".*")
            if spec is not None:
                return spec
        return None

    def with_extras(self, extra_collectives: Mapping[str, str], extra_rank_sources: Mapping[str, str]) -> Catalog:
        """A user's own wrappers from `[tool.rankcheck]`: qualname -> op / rank kind."""
        if not extra_collectives and not extra_rank_sources:
            return self
        collectives = dict(self.collectives)
        for qual, op in extra_collectives.items():
            collectives[qual] = CollectiveSpec(qualname=qual, op=op, framework="configuration")
        rank_calls = dict(self.rank_calls)
        rank_calls.update(extra_rank_sources)
        digest = hashlib.sha256(
            (self.fingerprint + repr(sorted(extra_collectives.items())) + repr(sorted(extra_rank_sources.items()))).encode()
        ).hexdigest()
        return replace(self, collectives=collectives, rank_calls=rank_calls, fingerprint=digest)

    @cached_property
    def collective_names(self) -> FrozenSet[str]:
        """The collectives' last names (`barrier`, `all_reduce`): what a call by name alone
        (`distr.barrier()`, a project wrapper's method) is taken to be."""
        return frozenset(qualname.rsplit(".", 1)[-1] for qualname in self.collectives)

    def with_rank_zero_only(self, decorators: Iterable[str]) -> Catalog:
        names = frozenset(d.rsplit(".", 1)[-1] for d in decorators)
        if not names:
            return self
        return replace(self, rank_zero_only=self.rank_zero_only | names)


_PREDICATE_OPS = ("==", "!=", "<=", ">=", "<", ">")


def parse_predicate(text: str, where: str) -> Predicate:
    """'global_rank == 0' -> ('global_rank', '==', 0)."""
    for op in _PREDICATE_OPS:
        if f" {op} " in text:
            kind, _, const = text.partition(f" {op} ")
            try:
                return (kind.strip(), op, int(const.strip()))
            except ValueError:
                break
    raise CatalogError(f"{where}: expected a predicate like 'global_rank == 0', got {text!r}")


def _table(data: Mapping, key: str, where: str) -> Mapping:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise CatalogError(f"{where}: `{key}` must be a table")
    return value


def _list(data: Mapping, key: str, where: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise CatalogError(f"{where}: `{key}` must be a list")
    return value


def _str_map(data: Mapping, key: str, where: str) -> Dict[str, str]:
    table = _table(data, key, where)
    for k, v in table.items():
        if not isinstance(v, str):
            raise CatalogError(f"{where}: `{key}.{k}` must be a string")
    return dict(table)


def _int_map(data: Mapping, key: str, where: str) -> Dict[str, int]:
    table = _table(data, key, where)
    for k, v in table.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise CatalogError(f"{where}: `{key}.{k}` must be a position (an integer from 0)")
    return dict(table)


def _str_list(data: Mapping, key: str, where: str) -> List[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CatalogError(f"{where}: `{key}` must be a list of strings")
    return list(value)


def _str_list_map(data: Mapping, key: str, where: str) -> Dict[str, FrozenSet[str]]:
    table = _table(data, key, where)
    out = {}
    for k, v in table.items():
        if not isinstance(v, list) or not all(isinstance(item, str) for item in v):
            raise CatalogError(f"{where}: `{key}.{k}` must be a list of strings")
        out[k] = frozenset(v)
    return out


def _load_file(path: Path, acc: Dict[str, Any]) -> None:
    where = str(path)
    try:
        data = _toml.loads(path.read_text(encoding="utf-8"))
    except (OSError, _toml.TOMLDecodeError) as exc:
        raise CatalogError(f"{where}: {exc}") from exc
    framework = _table(data, "framework", where).get("name", path.stem)
    own_package = _table(data, "framework", where).get("own_package")
    if own_package is not None:
        if not isinstance(own_package, str) or not own_package.isidentifier():
            raise CatalogError(f"{where}: `framework.own_package` must be a package name")
        acc["own_packages"].add(own_package)
    for op, entry in _table(data, "collective", where).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("callables"), list):
            raise CatalogError(f"{where}: `collective.{op}.callables` must be a list of names")
        group = entry.get("group", [None, "group"])
        if not (isinstance(group, list) and len(group) == 2):
            raise CatalogError(f"{where}: `collective.{op}.group` must be [position, keyword]")
        own_slot = entry.get("own_slot")
        if own_slot is not None and not (isinstance(own_slot, list) and len(own_slot) == 2 and all(isinstance(p, int) for p in own_slot)):
            raise CatalogError(f"{where}: `collective.{op}.own_slot` must be [output position, input position]")
        splits = entry.get("splits", {})
        if not (isinstance(splits, dict) and all(isinstance(p, int) and not isinstance(p, bool) for p in splits.values())):
            raise CatalogError(f"{where}: `collective.{op}.splits` must be a table of keyword -> position")
        raised = entry.get("raises_together", [])
        if not (isinstance(raised, list) and all(isinstance(name, str) for name in raised)) or (raised and not entry.get("fails_together")):
            raise CatalogError(f"{where}: `collective.{op}.raises_together` must be a list of exception class names, on a collective that fails together")
        acc["raised_together"].update(raised)
        for qual in entry["callables"]:
            agreed = entry.get("agreed", {})
            if not isinstance(agreed, dict):
                raise CatalogError(f"{where}: `collective.{op}.agreed` must be a table of keyword -> position")
            acc["collectives"][qual] = CollectiveSpec(
                qualname=qual,
                op=op,
                group_position=group[0],
                group_keyword=group[1],
                uniformizes=tuple(entry.get("uniformizes", ())),
                returns_uniform=bool(entry.get("returns_uniform", False)),
                note=str(entry.get("note", "")),
                framework=str(framework),
                tensors=tuple(entry.get("tensors", ())),
                agreed=tuple(sorted(agreed.items())),
                own_slot=(own_slot[0], own_slot[1]) if own_slot is not None else None,
                default_group=str(entry["default_group"]) if entry.get("default_group") else None,
                splits=tuple(sorted(splits.items())),
                fails_together=bool(entry.get("fails_together", False)),
            )
    sources = _table(data, "rank_source", where)
    acc["rank_calls"].update(_str_map(sources, "calls", where + " [rank_source]"))
    acc["rank_environ"].update(_str_map(sources, "environ", where + " [rank_source]"))
    acc["rank_attributes"].update(_str_map(sources, "attributes", where + " [rank_source]"))
    predicates = _table(data, "rank_predicate", where)
    for key, target in (("attributes", "predicate_attributes"), ("calls", "predicate_calls")):
        for name, text in _str_map(predicates, key, where + " [rank_predicate]").items():
            acc[target][name] = parse_predicate(text, f"{where}: rank_predicate.{key}.{name}")
    exits = _table(data, "exit", where)
    acc["exit_calls"].update(exits.get("calls", ()))
    acc["uncatchable_exits"].update(exits.get("uncatchable", ()))
    acc["teardown_calls"].update(exits.get("teardown", ()))
    acc["exit_calls"].update(exits.get("teardown", ()))
    for name, text in _str_map(predicates, "methods", where + " [rank_predicate]").items():
        acc["predicate_methods"][name] = parse_predicate(text, f"{where}: rank_predicate.methods.{name}")
    acc["rank_zero_only"].update(_table(data, "rank_zero_only", where).get("decorators", ()))
    staggered = _table(data, "staggered_context", where)
    for name, text in _str_map(staggered, "methods", where + " [staggered_context]").items():
        acc["staggered_contexts"][name] = parse_predicate(text, f"{where}: staggered_context.methods.{name}")
    acc["data_calls"].update(_table(data, "data_source", where).get("calls", ()))
    acc["seed_keywords"].update(_table(data, "data_source", where).get("seed_keywords", ()))
    acc["seed_calls"].update(_table(data, "data_source", where).get("seed_calls", ()))
    acc["stream_keywords"].update(_table(data, "data_source", where).get("stream_keywords", ()))
    acc["reseeders"].update(_table(data, "data_source", where).get("reseeders", ()))
    acc["stream_types"].update(_table(data, "data_source", where).get("stream_types", ()))
    shape = _table(data, "shape", where)
    for key in ("factories", "dimension_factories", "from_values", "sequences", "sharders", "decoders", "decoders_not_with", "padders", "pad_by", "equal_splitters", "node_split_keywords", "node_splitters", "row_wise", "row_inputs", "counts", "count_methods", "reducers", "data_dependent", "pieces", "selectors", "copies", "losses", "reshapers", "measures", "keepers", "like", "like_functions", "layout_keywords", "size_attributes"):
        acc["shape_" + key].update(shape.get(key, ()))
    for key in ("dtype_methods", "dtype_aliases", "default_dtypes"):
        table = shape.get(key, {})
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise CatalogError(f"{where}: `shape.{key}` must be a table of name -> dtype name")
        acc["shape_" + key].update(table)
    acc["shape_dtype_converters"].update(shape.get("dtype_converters", ()))
    unreduced = shape.get("losses_unreduced", {})
    if not isinstance(unreduced, dict):
        raise CatalogError(f"{where}: `shape.losses_unreduced` must be a table of keyword -> value")
    acc["shape_losses_unreduced"].update(unreduced)
    for name, entry in shape.get("size_arguments", {}).items():
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int) and not isinstance(entry[0], bool) and isinstance(entry[1], str)):
            raise CatalogError(f"{where}: `shape.size_arguments.{name}` must be [position, keyword] of the size argument")
        acc["shape_size_arguments"][name] = (entry[0], entry[1])
    acc["iteration_wrappers"].update(_table(data, "iteration", where).get("wrappers", ()))
    acc["iteration_counters"].update(_table(data, "iteration", where).get("counters", ()))
    acc["seed_sharing_datasets"].update(_table(data, "iteration", where).get("seed_sharing_datasets", ()))
    acc["iteration_zips"].update(_table(data, "iteration", where).get("zips", ()))
    acc["iteration_unordered"].update(_table(data, "iteration", where).get("unordered", ()))
    acc["iteration_orderers"].update(_table(data, "iteration", where).get("orderers", ()))
    acc["iteration_key_values"].update(_table(data, "iteration", where).get("key_values", ()))
    acc["iteration_values"].update(_table(data, "iteration", where).get("values", ()))
    acc["iteration_displays"].update(_table(data, "iteration", where).get("displays", ()))
    acc["collate_keywords"].update(_table(data, "iteration", where).get("collate_keywords", ()))
    acc["container_mutators"].update(_table(data, "containers", where).get("mutators", ()))
    acc["container_adders"].update(_table(data, "containers", where).get("adders", ()))
    acc["uniform_calls"].update(_table(data, "uniform", where).get("calls", ()))
    acc["uniform_attributes"].update(_table(data, "uniform", where).get("attributes", ()))
    acc["uniform_methods"].update(_table(data, "uniform", where).get("methods", ()))
    acc["synchronized_calls"].update(_table(data, "uniform", where).get("synchronized", ()))
    acc["placement_methods"].update(_table(data, "placement", where).get("methods", ()))
    acc["placement_keywords"].update(_table(data, "placement", where).get("keywords", ()))
    acc["self_methods"].update(_table(data, "module", where).get("self_returning", ()))
    acc["module_bases"].update(_table(data, "module", where).get("forward_bases", ()))
    acc["module_containers"].update(_table(data, "module", where).get("containers", ()))
    acc["library_methods"].update(_table(data, "dispatch", where).get("library_methods", ()))
    files = _table(data, "files", where)
    for key in ("writers", "writer_methods", "observers"):
        acc["files_" + key].update(_int_map(files, key, where + " [files]"))
    for key in ("opens", "receiver_writers", "observer_methods", "other_paths"):
        acc["files_" + key].update(_str_list(files, key, where + " [files]"))
    forwarding = _table(data, "forwarding", where)
    acc["forwarding_calls"].update(_int_map(forwarding, "calls", where + " [forwarding]"))
    acc["forwarding_methods"].update(_int_map(forwarding, "methods", where + " [forwarding]"))
    acc["uneven_ok_contexts"].update(_table(data, "uneven_ok", where).get("contexts", ()))
    acc["group_membership"].update(_str_map(data, "group_membership", where))
    acc["group_source_ranks"].update(_str_map(data, "group_source_rank", where))
    acc["groups_within"].update(_str_map(data, "group_within", where))
    acc["group_ranks_calls"].update(_table(data, "group_ranks", where).get("calls", ()))
    acc["distributed_tests"].update(_table(data, "distributed_test", where).get("calls", ()))
    acc["distributed_flags"].update(_table(data, "distributed_test", where).get("names", ()))
    acc["world_size_calls"].update(_table(data, "world_size", where).get("calls", ()))
    acc["world_size_names"].update(_table(data, "world_size", where).get("names", ()))
    for group, kinds in _str_list_map(data, "uniform_in_group", where).items():
        acc["uniform_in_group"][group] = acc["uniform_in_group"].get(group, frozenset()) | kinds
    acc["group_names"].update(_str_map(_table(data, "group_names", where), "values", where + " [group_names]"))
    acc["group_name_suffixes"].update(_table(data, "group_names", where).get("suffixes", ()))
    acc["group_rank_kinds"].update(_str_map(data, "group_rank", where))
    acc["per_rank_exceptions"].update(_str_map(_table(data, "exceptions", where), "per_rank", where + " [exceptions]"))
    acc["exception_suppressors"].update(_table(data, "exceptions", where).get("suppressors", ()))
    names = _table(data, "rank_names", where)
    acc["rank_names"].update(_str_map(names, "values", where + " [rank_names]"))
    for name, text in _str_map(names, "predicates", where + " [rank_names]").items():
        acc["predicate_names"][name] = parse_predicate(text, f"{where}: rank_names.predicates.{name}")
    acc["not_rank_words"].update(names.get("not_a_process_rank", ()))
    acc["data_names"].update(_str_map(_table(data, "data_names", where), "values", where + " [data_names]"))
    acc["data_name_suffixes"].update(_str_map(_table(data, "data_names", where), "suffixes", where + " [data_names]"))
    acc["optional_inputs"].update(_table(data, "data_names", where).get("optional_inputs", ()))
    sharded = _table(data, "sharded_submodules", where)
    if sharded:
        unknown = set(sharded) - {"evidence", "op", "group_kind", "note", "parameter_free", "tests", "staged_evidence", "stage_key", "sharding_stage"}
        if unknown or not isinstance(sharded.get("op"), str) or not isinstance(sharded.get("group_kind"), str):
            raise CatalogError(f"{where}: `sharded_submodules` needs `op` and `group_kind` strings (unknown keys: {sorted(unknown)})")
        acc["sharded_forward"] = CollectiveSpec(qualname=SUBMODULE_FORWARD, op=sharded["op"], note=str(sharded.get("note", "")),
                                                framework=str(framework), default_group=GROUP_ROLE + sharded["group_kind"])
        acc["sharding_evidence"].update(sharded.get("evidence", ()))
        acc["staged_sharding_evidence"].update(sharded.get("staged_evidence", ()))
        if "staged_evidence" in sharded:
            stage_key, stage = sharded.get("stage_key"), sharded.get("sharding_stage")
            if not (isinstance(stage_key, list) and stage_key and all(isinstance(k, str) for k in stage_key)
                    and isinstance(stage, int) and not isinstance(stage, bool)):
                raise CatalogError(f"{where}: `sharded_submodules.staged_evidence` needs `stage_key` (a list of keys) and `sharding_stage` (an integer)")
            acc["sharding_stage_key"], acc["sharding_stage"] = tuple(stage_key), stage
        acc["parameter_free_modules"].update(sharded.get("parameter_free", ()))
        acc["sharding_tests"].update(sharded.get("tests", ()))
    for name, entry in _table(data, "backend", where).items():
        lists = ("members", "plugins", "flags", "words", "one_model_calls", "not_models")
        if not isinstance(entry, dict) or set(entry) - {*lists, "assumed"} or not all(
                isinstance(entry.get(key, []), list) and all(isinstance(v, str) for v in entry.get(key, [])) for key in lists):
            raise CatalogError(f"{where}: `backend.{name}` takes lists of names (`members`, `plugins`, `flags`, `words`, `one_model_calls`, `not_models`) and a boolean `assumed`")
        acc["backends"][name] = BackendSpec(name, members=frozenset(entry.get("members", [])), plugins=frozenset(entry.get("plugins", [])),
                                            flags=frozenset(entry.get("flags", [])), assumed=bool(entry.get("assumed", False)),
                                            words=frozenset(w.lower() for w in entry.get("words", [])),
                                            one_model_calls=frozenset(entry.get("one_model_calls", [])),
                                            not_models=frozenset(w.lower() for w in entry.get("not_models", [])))
    for qual, entry in _table(data, "rank_revealing", where).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
            raise CatalogError(f"{where}: `rank_revealing.{qual}` must be a table with a `kind`")
        acc["rank_revealing"][qual] = RevealSpec(entry.get("position"), entry.get("keyword"), entry["kind"], bool(entry.get("in_list", False)))
    for qual, entry in _table(data, "spawn", where).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("kind"), str):
            raise CatalogError(f"{where}: `spawn.{qual}` must be a table with a `kind`")
        args = entry.get("args", [None, None])
        acc["spawners"][qual] = SpawnSpec(int(entry.get("function", 0)), args[0], args[1], entry["kind"])
    for name, kinds in _table(_table(data, "rank_source", where), "call_names", where).items():
        acc["rank_call_names"][name] = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    for qual, entry in _table(data, "type", where).items():
        acc["types"][qual] = _type_spec(qual, entry, f"{where}: type.{qual}", str(framework))
        for alias in entry.get("aliases", ()):
            acc["types"][alias] = acc["types"][qual]
    for qual, entry in _table(data, "function", where).items():
        if not isinstance(entry, dict):
            raise CatalogError(f"{where}: `function.{qual}` must be a table")
        returns = entry.get("returns", ())
        returns = (returns,) if isinstance(returns, str) else tuple(returns)
        wraps = entry.get("wraps_argument")
        if wraps is not None and not (isinstance(wraps, list) and len(wraps) == 2 and isinstance(wraps[0], str) and isinstance(wraps[1], int)):
            raise CatalogError(f"{where}: `function.{qual}.wraps_argument` must be [keyword, position]")
        spec = FunctionSpec(qual, returns=returns, types_argument=entry.get("types_argument"),
                            returns_argument=entry.get("returns_argument"), framework=str(framework),
                            wraps_argument=(wraps[0], wraps[1]) if wraps is not None else None)
        acc["functions"][qual] = spec
        for alias in entry.get("aliases", ()):
            acc["functions"][alias] = spec


def _implicit(entry: object, where: str, framework: str) -> ImplicitSpec:
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: must be a table like {{ op = \"all_reduce\", note = \"...\" }}")
    unknown = set(entry) - {"op", "note", "when", "returns", "per_argument", "uneven", "uneven_when", "uneven_unless", "even_when_none",
                            "tensors", "padded_by", "unless_built", "per_item", "receiver_shape", "teardown", "drives", "only_under"}
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {sorted(unknown)}")
    returns = entry.get("returns", ())
    returns = (returns,) if isinstance(returns, str) else tuple(returns)
    when = entry.get("when", {})
    uneven_when = entry.get("uneven_when", {})
    uneven_unless = entry.get("uneven_unless", {})
    unless_built = entry.get("unless_built", {})
    if not all(isinstance(t, dict) for t in (when, uneven_when, uneven_unless, unless_built)):
        raise CatalogError(f"{where}: `when`, `uneven_when`, `uneven_unless` and `unless_built` must be tables of keyword -> value")
    keywords = {key: entry.get(key, []) for key in ("even_when_none", "padded_by", "only_under")}
    for key, names in keywords.items():
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise CatalogError(f"{where}: `{key}` must be a list of keyword names")
    tensors = entry.get("tensors", [])
    per_item = entry.get("per_item", [])
    for key, positions in (("tensors", tensors), ("per_item", per_item)):
        if not (isinstance(positions, list) and all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in positions)):
            raise CatalogError(f"{where}: `{key}` must be a list of argument positions")
    return ImplicitSpec(
        op=str(entry.get("op", "")),
        note=str(entry.get("note", "")),
        when=tuple(sorted(when.items())),
        returns=returns,
        per_argument=bool(entry.get("per_argument", False)),
        framework=framework,
        uneven=str(entry.get("uneven", "")),
        uneven_when=tuple(sorted(uneven_when.items())),
        uneven_unless=tuple(sorted(uneven_unless.items())),
        even_when_none=tuple(keywords["even_when_none"]),
        tensors=tuple(tensors),
        padded_by=tuple(keywords["padded_by"]),
        unless_built=tuple(sorted(unless_built.items())),
        per_item=tuple(per_item),
        receiver_shape=bool(entry.get("receiver_shape", False)),
        teardown=bool(entry.get("teardown", False)),
        drives=tuple(_driven_loop(d, f"{where}.drives[{i}]") for i, d in enumerate(_list(entry, "drives", where))),
        only_under=tuple(keywords["only_under"]),
    )


def _argument_slot(value: object, where: str) -> Tuple[int, str]:
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) and not isinstance(value[0], bool)
            and value[0] >= -1 and isinstance(value[1], str)):
        raise CatalogError(f"{where}: must be [position, \"keyword\"] (position -1: keyword only, or the receiver with \"\")")
    return int(value[0]), str(value[1])


def _driven_loop(entry: object, where: str) -> DrivenLoop:
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: must be a table like {{ hook = \"training_step\", loader = [1, \"train_dataloaders\"] }}")
    unknown = set(entry) - {"hook", "loader", "model", "provider", "datamodule"}
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {sorted(unknown)}")
    hook, provider = entry.get("hook"), entry.get("provider", "")
    if not isinstance(hook, str) or not hook or not isinstance(provider, str):
        raise CatalogError(f"{where}: `hook` (and `provider`) must be method names")
    return DrivenLoop(
        hook=hook,
        loader=_argument_slot(entry.get("loader"), f"{where}.loader"),
        model=_argument_slot(entry.get("model", [0, "model"]), f"{where}.model"),
        provider=provider,
        datamodule=_argument_slot(entry.get("datamodule", [-1, ""]), f"{where}.datamodule"),
    )


def _type_spec(qual: str, entry: object, where: str, framework: str) -> TypeSpec:
    if not isinstance(entry, dict):
        raise CatalogError(f"{where}: must be a table")
    unknown = set(entry) - {
        "call", "grad", "methods", "attributes", "reads", "quiet", "uneven_ok", "iterates", "aliases", "note",
        "hooks", "rank_zero_methods", "wraps", "returned", "returned_unless_set", "stops", "pads", "pads_unless", "uneven_length_when", "uneven_length_unless",
    }
    hooks = _table(entry, "hooks", where)
    for pattern, types in hooks.items():
        if not (isinstance(types, list) and all(isinstance(t, str) for t in types)):
            raise CatalogError(f"{where}.hooks.{pattern}: must be a list of type names (or \"{HOOK_DATA}\")")
    if unknown:
        raise CatalogError(f"{where}: unknown key(s) {sorted(unknown)}")
    methods = {name: _implicit(spec, f"{where}.methods.{name}", framework) for name, spec in _table(entry, "methods", where).items()}
    return TypeSpec(
        qualname=qual,
        call=_implicit(entry["call"], f"{where}.call", framework) if "call" in entry else None,
        grad=_implicit(entry["grad"], f"{where}.grad", framework) if "grad" in entry else None,
        methods=methods,
        attributes=_str_map(entry, "attributes", where),
        reads={name: _implicit(spec, f"{where}.reads.{name}", framework) for name, spec in _table(entry, "reads", where).items()},
        quiet=frozenset(entry.get("quiet", ())),
        uneven_ok=frozenset(entry.get("uneven_ok", ())),
        iterates=str(entry.get("iterates", "")),
        hooks=tuple((pattern, tuple(types)) for pattern, types in hooks.items()),
        rank_zero_methods=frozenset(entry.get("rank_zero_methods", ())),
        wraps=frozenset(entry.get("wraps", ())),
        returned={name: _implicit(spec, f"{where}.returned.{name}", framework) for name, spec in _table(entry, "returned", where).items()},
        returned_unless_set=frozenset(entry.get("returned_unless_set", ())),
        stops=_str_map(entry, "stops", where),
        framework=framework,
        pads=frozenset(entry.get("pads", ())),
        pads_unless=tuple(sorted(_table(entry, "pads_unless", where).items())),
        uneven_length_when=tuple(sorted(_table(entry, "uneven_length_when", where).items())),
        uneven_length_unless=tuple(sorted(_table(entry, "uneven_length_unless", where).items())),
    )


def catalog_digest(directory: Optional[Path] = None) -> str:
    """A digest of the knowledge files `load_catalog` reads: what a cached result depends on."""
    digest = hashlib.sha256()
    for path in sorted(Path(directory or rules_dir()).glob("*.toml")):
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        except OSError:
            digest.update(path.name.encode() + b"\0unreadable")
    return digest.hexdigest()


def load_catalog(directory: Optional[Path] = None) -> Catalog:
    return _load_catalog_cached(str(directory or rules_dir()))


@functools.lru_cache(maxsize=8)
def _load_catalog_cached(directory: str) -> Catalog:
    acc: Dict[str, Any] = {
        "collectives": {},
        "rank_calls": {},
        "rank_environ": {},
        "rank_attributes": {},
        "predicate_attributes": {},
        "predicate_calls": {},
        "exit_calls": set(),
        "uncatchable_exits": set(),
        "teardown_calls": set(),
        "types": {},
        "functions": {},
        "predicate_methods": {},
        "staggered_contexts": {},
        "rank_zero_only": set(),
        "data_calls": set(),
        "seed_keywords": set(),
        "seed_calls": set(),
        "stream_keywords": set(),
        "reseeders": set(),
        "stream_types": set(),
        "shape_factories": set(),
        "shape_from_values": set(),
        "shape_dimension_factories": set(),
        "raised_together": set(),
        "shape_sequences": set(),
        "shape_sharders": set(),
        "shape_node_split_keywords": set(),
        "shape_node_splitters": set(),
        "shape_decoders": set(),
        "shape_padders": set(),
        "shape_equal_splitters": set(),
        "shape_pad_by": set(),
        "shape_decoders_not_with": set(),
        "shape_row_wise": set(),
        "shape_row_inputs": set(),
        "shape_counts": set(),
        "shape_count_methods": set(),
        "shape_reducers": set(),
        "shape_data_dependent": set(),
        "shape_pieces": set(),
        "shape_selectors": set(),
        "shape_copies": set(),
        "shape_losses": set(),
        "shape_losses_unreduced": {},
        "shape_dtype_methods": {},
        "shape_dtype_aliases": {},
        "shape_default_dtypes": {},
        "shape_dtype_converters": set(),
        "shape_reshapers": set(),
        "shape_keepers": set(),
        "shape_like": set(),
        "shape_like_functions": set(),
        "shape_layout_keywords": set(),
        "shape_size_arguments": {},
        "shape_measures": set(),
        "shape_size_attributes": set(),
        "collate_keywords": set(),
        "iteration_zips": set(),
        "iteration_unordered": set(),
        "iteration_orderers": set(),
        "iteration_key_values": set(),
        "iteration_values": set(),
        "iteration_displays": set(),
        "iteration_counters": set(),
        "seed_sharing_datasets": set(),
        "container_mutators": set(),
        "container_adders": set(),
        "uniform_calls": set(),
        "uniform_attributes": set(),
        "uniform_methods": set(),
        "synchronized_calls": set(),
        "placement_methods": set(),
        "placement_keywords": set(),
        "self_methods": set(),
        "module_bases": set(),
        "module_containers": set(),
        "library_methods": set(),
        "files_writers": {},
        "files_opens": set(),
        "files_writer_methods": {},
        "files_receiver_writers": set(),
        "files_observers": {},
        "files_observer_methods": set(),
        "files_other_paths": set(),
        "forwarding_calls": {},
        "forwarding_methods": {},
        "iteration_wrappers": set(),
        "uneven_ok_contexts": set(),
        "group_membership": {},
        "group_source_ranks": {},
        "groups_within": {},
        "group_ranks_calls": set(),
        "distributed_tests": set(),
        "distributed_flags": set(),
        "world_size_calls": set(),
        "world_size_names": set(),
        "uniform_in_group": {},
        "group_rank_kinds": {},
        "group_names": {},
        "group_name_suffixes": set(),
        "per_rank_exceptions": {},
        "exception_suppressors": set(),
        "rank_names": {},
        "data_names": {},
        "data_name_suffixes": {},
        "optional_inputs": set(),
        "sharded_forward": None,
        "sharding_evidence": set(),
        "staged_sharding_evidence": set(),
        "sharding_stage_key": (),
        "sharding_stage": 0,
        "parameter_free_modules": set(),
        "sharding_tests": set(),
        "backends": {},
        "predicate_names": {},
        "not_rank_words": set(),
        "own_packages": set(),
        "rank_revealing": {},
        "spawners": {},
        "rank_call_names": {},
    }
    digest = hashlib.sha256()
    files = sorted(p for p in Path(directory).glob("*.toml") if p.name not in _NON_CATALOG_FILES)
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _load_file(path, acc)
    for spec in acc["types"].values():
        for method, implicit in spec.methods.items():
            unknown = set(implicit.only_under) - set(acc["backends"])
            if unknown:
                raise CatalogError(f"{directory}: `{spec.qualname}.{method}` names backends no rules file defines: {sorted(unknown)}")
    return Catalog(
        collectives=acc["collectives"],
        rank_calls=acc["rank_calls"],
        rank_environ=acc["rank_environ"],
        rank_attributes=acc["rank_attributes"],
        predicate_attributes=acc["predicate_attributes"],
        predicate_calls=acc["predicate_calls"],
        exit_calls=frozenset(acc["exit_calls"]),
        uncatchable_exits=frozenset(acc["uncatchable_exits"]),
        teardown_calls=frozenset(acc["teardown_calls"]),
        types=acc["types"],
        functions=acc["functions"],
        predicate_methods=acc["predicate_methods"],
        staggered_contexts=acc["staggered_contexts"],
        rank_zero_only=frozenset(d.rsplit(".", 1)[-1] for d in acc["rank_zero_only"]),
        data_calls=frozenset(acc["data_calls"]),
        seed_keywords=frozenset(acc["seed_keywords"]),
        seed_calls=frozenset(acc["seed_calls"]),
        stream_keywords=frozenset(acc["stream_keywords"]),
        reseeders=frozenset(acc["reseeders"]),
        stream_types=frozenset(acc["stream_types"]),
        shape_factories=frozenset(acc["shape_factories"]),
        shape_from_values=frozenset(acc["shape_from_values"]),
        shape_dimension_factories=frozenset(acc["shape_dimension_factories"]),
        raised_together=frozenset(acc["raised_together"]),
        shape_sequences=frozenset(acc["shape_sequences"]),
        shape_sharders=frozenset(acc["shape_sharders"]),
        shape_padders=frozenset(acc["shape_padders"]),
        shape_equal_splitters=frozenset(acc["shape_equal_splitters"]),
        shape_pad_by=frozenset(acc["shape_pad_by"]),
        shape_node_split_keywords=frozenset(acc["shape_node_split_keywords"]),
        shape_node_splitters=frozenset(acc["shape_node_splitters"]),
        shape_decoders=frozenset(acc["shape_decoders"]),
        shape_decoders_not_with=frozenset(acc["shape_decoders_not_with"]),
        shape_row_wise=frozenset(acc["shape_row_wise"]),
        shape_row_inputs=frozenset(acc["shape_row_inputs"]),
        shape_counts=frozenset(acc["shape_counts"]),
        shape_count_methods=frozenset(acc["shape_count_methods"]),
        shape_reducers=frozenset(acc["shape_reducers"]),
        shape_data_dependent=frozenset(acc["shape_data_dependent"]),
        shape_pieces=frozenset(acc["shape_pieces"]),
        shape_selectors=frozenset(acc["shape_selectors"]),
        shape_copies=frozenset(acc["shape_copies"]),
        shape_losses=frozenset(acc["shape_losses"]),
        shape_losses_unreduced=tuple(sorted(acc["shape_losses_unreduced"].items())),
        shape_dtype_methods=acc["shape_dtype_methods"],
        shape_dtype_aliases=acc["shape_dtype_aliases"],
        shape_default_dtypes=acc["shape_default_dtypes"],
        shape_dtype_converters=frozenset(acc["shape_dtype_converters"]),
        shape_reshapers=frozenset(acc["shape_reshapers"]),
        shape_measures=frozenset(acc["shape_measures"]),
        shape_size_attributes=frozenset(acc["shape_size_attributes"]),
        shape_keepers=frozenset(acc["shape_keepers"]),
        shape_like=frozenset(acc["shape_like"]),
        shape_like_functions=frozenset(acc["shape_like_functions"]),
        shape_layout_keywords=frozenset(acc["shape_layout_keywords"]),
        shape_size_arguments=acc["shape_size_arguments"],
        iteration_counters=frozenset(acc["iteration_counters"]),
        seed_sharing_datasets=frozenset(acc["seed_sharing_datasets"]),
        iteration_zips=frozenset(acc["iteration_zips"]),
        iteration_unordered=frozenset(acc["iteration_unordered"]),
        iteration_orderers=frozenset(acc["iteration_orderers"]),
        iteration_key_values=frozenset(acc["iteration_key_values"]),
        iteration_values=frozenset(acc["iteration_values"]),
        iteration_displays=frozenset(acc["iteration_displays"]),
        collate_keywords=frozenset(acc["collate_keywords"]),
        container_mutators=frozenset(acc["container_mutators"]),
        container_adders=frozenset(acc["container_adders"]),
        uniform_calls=frozenset(acc["uniform_calls"]),
        uniform_attributes=frozenset(acc["uniform_attributes"]),
        uniform_methods=frozenset(acc["uniform_methods"]),
        synchronized_calls=frozenset(acc["synchronized_calls"]),
        placement_methods=frozenset(acc["placement_methods"]),
        placement_keywords=frozenset(acc["placement_keywords"]),
        self_methods=frozenset(acc["self_methods"]),
        module_bases=frozenset(acc["module_bases"]),
        module_containers=frozenset(acc["module_containers"]),
        library_methods=frozenset(acc["library_methods"]),
        files_writers=acc["files_writers"],
        files_opens=frozenset(acc["files_opens"]),
        files_writer_methods=acc["files_writer_methods"],
        files_receiver_writers=frozenset(acc["files_receiver_writers"]),
        files_observers=acc["files_observers"],
        files_observer_methods=frozenset(acc["files_observer_methods"]),
        files_other_paths=frozenset(acc["files_other_paths"]),
        forwarding_calls=acc["forwarding_calls"],
        forwarding_methods=acc["forwarding_methods"],
        iteration_wrappers=frozenset(acc["iteration_wrappers"]),
        uneven_ok_contexts=frozenset(acc["uneven_ok_contexts"]),
        group_membership=acc["group_membership"],
        group_source_ranks=acc["group_source_ranks"],
        groups_within=acc["groups_within"],
        group_ranks_calls=frozenset(acc["group_ranks_calls"]),
        distributed_tests=frozenset(acc["distributed_tests"]),
        distributed_flags=frozenset(acc["distributed_flags"]),
        world_size_calls=frozenset(acc["world_size_calls"]),
        world_size_names=frozenset(acc["world_size_names"]),
        uniform_in_group=acc["uniform_in_group"],
        group_rank_kinds=acc["group_rank_kinds"],
        group_names=acc["group_names"],
        group_name_suffixes=tuple(sorted(acc["group_name_suffixes"])),
        per_rank_exceptions=acc["per_rank_exceptions"],
        exception_suppressors=frozenset(acc["exception_suppressors"]),
        rank_names=acc["rank_names"],
        data_names=acc["data_names"],
        data_name_suffixes=acc["data_name_suffixes"],
        optional_inputs=frozenset(acc["optional_inputs"]),
        sharded_forward=acc["sharded_forward"],
        sharding_evidence=frozenset(acc["sharding_evidence"]),
        staged_sharding_evidence=frozenset(acc["staged_sharding_evidence"]),
        sharding_stage_key=acc["sharding_stage_key"],
        sharding_stage=acc["sharding_stage"],
        parameter_free_modules=frozenset(acc["parameter_free_modules"]),
        sharding_tests=frozenset(acc["sharding_tests"]),
        backends=acc["backends"],
        predicate_names=acc["predicate_names"],
        not_rank_words=frozenset(acc["not_rank_words"]),
        own_packages=frozenset(acc["own_packages"]),
        rank_revealing=acc["rank_revealing"],
        spawners=acc["spawners"],
        rank_call_names=acc["rank_call_names"],
        fingerprint=digest.hexdigest(),
    )

