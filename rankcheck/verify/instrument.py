"""Rank side: wrap every collective entry point of torch.distributed with a checkpoint.

Before the real collective runs, the rank sends its fingerprint (op, group, shapes, dtypes, roots)
and its user call stack to the verifier and blocks until every member of the group has arrived
with the same fingerprint ("go"), or the verifier has seen a divergence ("stop"). So a rank never
enters a real collective that could hang, and a divergence is seen the moment it happens.

Runs inside the rank processes only; imports torch.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
from typing import Any, Callable, Optional

import torch
import torch.distributed as dist
import torch.distributed.distributed_c10d as c10d

from rankcheck.verify.frames import user_stack
from rankcheck.verify.wire import Channel

WORLD_KEY = "world"

_DTYPE_SHORT = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
}


def tensor_text(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        dtype = _DTYPE_SHORT.get(value.dtype, str(value.dtype).replace("torch.", ""))
        return f"{dtype}[{', '.join(str(d) for d in value.shape)}]"
    if value is None:
        return "None"
    return type(value).__name__


def tensors_text(values: Any) -> str:
    if values is None:
        return "None"
    items = [tensor_text(v) for v in values]
    if items and len(set(items)) == 1:
        return f"{len(items)} x {items[0]}"
    return "[" + ", ".join(items) + "]"


def dtypes_text(values: Any) -> str:
    if values is None:
        return "None"
    return ",".join(sorted({tensor_text(v).split("[")[0] for v in values}))


def reduce_op_text(op: Any) -> str:
    text = str(op)
    return text.rsplit(".", 1)[-1].rstrip(">").split(":")[0]


# op name -> (argument names that hold what the ranks must agree on) -> text.
# Shapes are part of the fingerprint only where every rank must pass the same shape; all_to_all
# splits and the payload of the object collectives may legitimately differ per rank.
def _describe(op: str, a: dict[str, Any]) -> str:
    if op in ("all_reduce",):
        return f"{tensor_text(a['tensor'])} {reduce_op_text(a.get('op'))}"
    if op in ("all_reduce_coalesced",):
        return f"{tensors_text(a['tensors'])} {reduce_op_text(a.get('op'))}"
    if op == "broadcast":
        return f"{tensor_text(a['tensor'])} src={a.get('src', a.get('group_src'))}"
    if op == "reduce":
        return f"{tensor_text(a['tensor'])} dst={a.get('dst', a.get('group_dst'))} {reduce_op_text(a.get('op'))}"
    if op == "all_gather":
        return f"{tensors_text(a['tensor_list'])} <- {tensor_text(a['tensor'])}"
    if op in ("all_gather_into_tensor", "all_gather_single", "_all_gather_base"):
        out, inp = a.get("output_tensor"), a.get("input_tensor")
        return f"{tensor_text(out)} <- {tensor_text(inp)}"
    if op == "all_gather_coalesced":
        return f"{tensors_text(a.get('input_tensor_list'))}"
    if op == "all_gather_object":
        return f"objects={len(a['object_list'])}"
    if op == "gather":
        return f"{tensor_text(a['tensor'])} dst={a.get('dst', a.get('group_dst'))}"
    if op == "gather_object":
        return f"dst={a.get('dst', a.get('group_dst'))}"
    if op == "scatter":
        return f"{tensor_text(a['tensor'])} src={a.get('src', a.get('group_src'))}"
    if op == "scatter_object_list":
        return (
            f"objects={len(a['scatter_object_output_list'])} src={a.get('src', a.get('group_src'))}"
        )
    if op == "broadcast_object_list":
        return f"objects={len(a['object_list'])} src={a.get('src', a.get('group_src'))}"
    if op == "reduce_scatter":
        return f"{tensor_text(a['output'])} <- {tensors_text(a['input_list'])} {reduce_op_text(a.get('op'))}"
    if op in ("reduce_scatter_tensor", "reduce_scatter_single", "_reduce_scatter_base"):
        return (
            f"{tensor_text(a['output'])} <- {tensor_text(a['input'])} {reduce_op_text(a.get('op'))}"
        )
    if op == "all_to_all":
        return f"dtype={dtypes_text(a.get('input_tensor_list'))} n={len(a.get('input_tensor_list') or ())}"
    if op == "all_to_all_single":
        return f"dtype={dtypes_text([a.get('input')])}"
    if op == "new_group":
        ranks = a.get("ranks")
        return f"ranks={sorted(ranks) if ranks is not None else 'all'}"
    if op == "new_subgroups":
        return f"group_size={a.get('group_size')}"
    if op == "new_subgroups_by_enumeration":
        return f"ranks={a.get('ranks_per_subgroup_list')}"
    if op == "split_group":
        return f"split_ranks={a.get('split_ranks')}"
    return ""


COLLECTIVE_OPS = (
    "all_reduce",
    "all_reduce_coalesced",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "_all_gather_base",
    "all_gather_coalesced",
    "all_gather_object",
    "gather",
    "gather_object",
    "scatter",
    "scatter_object_list",
    "broadcast_object_list",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "monitored_barrier",
)
GROUP_OPS = ("new_group", "new_subgroups", "new_subgroups_by_enumeration", "split_group")


class Instrumentation:
    """What the collective wrappers call: the fingerprint of each call, and what to do with it.

    Shared by the verifier (`Recorder`: every fingerprint goes to the verifier, which answers go
    or stop) and the run-time guard (`rankcheck.runtime`: cheap progress bookkeeping, and in
    consistency mode the same fingerprints cross-checked between ranks through the job's store).
    `checkpoint` runs before the real collective, `returned` after it (also when it raised).
    """

    # False: the wrappers skip binding the arguments and describing them (the run-time guard's
    # hot path only needs the op and the group).
    wants_arguments = True

    def __init__(self, rank: int, world_size: int) -> None:
        self.rank = rank
        self.world_size = world_size
        self.seq = 0
        self.group_counts: dict[str, int] = {}
        self.snapshot_lines: Callable[[], list] = lambda: []
        self._local = threading.local()
        self._lock = threading.Lock()

    # Calls made by torch itself from inside a wrapped collective (all_gather_object calls
    # all_gather, new_group calls barrier) are part of the outer call, not new collectives.
    @property
    def busy(self) -> bool:
        return getattr(self._local, "busy", False)

    @busy.setter
    def busy(self, value: bool) -> None:
        self._local.busy = value

    def enter_message(
        self, op: str, key: str, name: str, members: tuple, args: str, numbered: bool = True
    ) -> dict[str, Any]:
        """Count the call and describe it: the fingerprint every rank of the group must agree on."""
        if numbered:
            self.seq += 1
        group_seq = self.group_counts.get(key, 0) + 1
        self.group_counts[key] = group_seq
        return {
            "t": "enter",
            "rank": self.rank,
            "seq": self.seq if numbered else 0,
            "op": op,
            "group": name,
            "group_key": key,
            "group_seq": group_seq,
            "members": list(members),
            "signature": f"{op} {args}".strip(),
            "args": args,
            "stack": user_stack(sys._getframe(2)),
            "lines": self.snapshot_lines(),
        }

    def checkpoint(
        self, op: str, key: str, name: str, members: tuple, args: str, numbered: bool = True
    ) -> None:
        raise NotImplementedError

    def returned(self) -> None:
        """The wrapped call is over (returned or raised)."""

    def group_identity(self, group: Any) -> tuple[str, str, tuple]:
        if group is None or group is c10d.GroupMember.WORLD:
            return WORLD_KEY, "WORLD", tuple(range(self.world_size))
        ranks = tuple(dist.get_process_group_ranks(group))
        label = getattr(group, "group_name", "") or ""
        return f"{label}:{list(ranks)}", str(list(ranks)), ranks


class Recorder(Instrumentation):
    """This rank's collective sequence and its line to the verifier."""

    def __init__(self, channel: Channel, rank: int, world_size: int, on_stop: Callable) -> None:
        super().__init__(rank, world_size)
        self.channel = channel
        self.on_stop = on_stop
        self.notes: list[str] = []
        self.flight_before_destroy: Optional[tuple] = None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
            self.channel.send({"t": "note", "rank": self.rank, "text": text})

    def checkpoint(
        self, op: str, key: str, name: str, members: tuple, args: str, numbered: bool = True
    ) -> None:
        with self._lock:
            message = self.enter_message(op, key, name, members, args, numbered)
            reply = self.channel.request(message)
        if reply is None or reply.get("t") != "go":
            self.on_stop(reply is None)


def _wrap_collective(recorder: Instrumentation, op: str, original: Callable) -> Callable:
    signature = inspect.signature(original)

    group_position = list(signature.parameters).index("group") if "group" in signature.parameters else -1

    def group_of(args: tuple, kwargs: dict) -> Any:
        if "group" in kwargs:
            return kwargs["group"]
        return args[group_position] if 0 <= group_position < len(args) else None

    @functools.wraps(original)
    def collective(*args, **kwargs):
        if recorder.busy or not dist.is_initialized():
            return original(*args, **kwargs)
        if recorder.wants_arguments:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return original(*args, **kwargs)  # torch reports the bad call itself
            bound.apply_defaults()
            arguments = bound.arguments
            group = arguments.get("group")
        else:
            arguments, group = {}, group_of(args, kwargs)
        if c10d._rank_not_in_group(group):
            return original(*args, **kwargs)  # torch makes this a no-op with a warning
        key, name, members = recorder.group_identity(group)
        recorder.checkpoint(op, key, name, members, _describe(op, arguments) if arguments else "")
        recorder.busy = True
        try:
            return original(*args, **kwargs)
        finally:
            recorder.busy = False
            recorder.returned()

    return collective


def _wrap_group_op(recorder: Recorder, op: str, original: Callable) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def group_op(*args, **kwargs):
        if recorder.busy or not dist.is_initialized():
            return original(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)
        bound.apply_defaults()
        arguments = bound.arguments
        backend = arguments.get("backend")
        if backend is not None and "nccl" in str(backend).lower():
            bound.arguments["backend"] = "gloo"
            recorder.note(f'{op}(backend="{backend}") run with "gloo"')
            if arguments.get("pg_options") is not None:
                bound.arguments["pg_options"] = None
                recorder.note(f"{op}(pg_options=...) dropped (NCCL options)")
        if op == "new_group" and arguments.get("use_local_synchronization"):
            ranks = tuple(sorted(arguments.get("ranks") or range(recorder.world_size)))
            key, name, members = f"local:{list(ranks)}", str(list(ranks)), ranks
        elif op == "split_group":
            key, name, members = recorder.group_identity(arguments.get("parent_pg"))
        else:
            key, name, members = recorder.group_identity(None)
        recorder.checkpoint(op, key, name, members, _describe(op, arguments))
        recorder.busy = True
        try:
            return original(*bound.args, **bound.kwargs)
        finally:
            recorder.busy = False

    return group_op


def _wrap_init(
    recorder: Recorder, original: Callable, timeout_seconds: Optional[float]
) -> Callable:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        arguments = bound.arguments
        backend = arguments.get("backend")
        if backend is not None and "nccl" in str(backend).lower():
            bound.arguments["backend"] = "gloo"
            recorder.note(f'init_process_group(backend="{backend}") run with "gloo" on CPU')
            if arguments.get("pg_options") is not None:
                bound.arguments["pg_options"] = None
                recorder.note("init_process_group(pg_options=...) dropped (NCCL options)")
        device_id = arguments.get("device_id")
        if device_id is not None and "cuda" in str(device_id):
            bound.arguments["device_id"] = None
            recorder.note("init_process_group(device_id=cuda) dropped (CPU replay)")
        if timeout_seconds is not None:
            import datetime

            bound.arguments["timeout"] = datetime.timedelta(seconds=timeout_seconds)
        # Before the rendezvous: a rank that never gets here would otherwise leave the others
        # waiting in the store until the init timeout. After it: no rank runs ahead (and, say,
        # raises and exits) while another is still connecting to it.
        members = tuple(range(recorder.world_size))
        recorder.checkpoint("init_process_group", "init", "WORLD", members, "", numbered=False)
        recorder.busy = True
        try:
            result = original(*bound.args, **bound.kwargs)
        finally:
            recorder.busy = False
        recorder.checkpoint("init_process_group", "init", "WORLD", members, "", numbered=False)
        return result

    return init_process_group


def _wrap_destroy(recorder: Recorder, original: Callable, take_flight: Callable) -> Callable:
    @functools.wraps(original)
    def destroy_process_group(group=None):
        if group is None and recorder.flight_before_destroy is None:
            recorder.flight_before_destroy = take_flight()
        return original(group)

    return destroy_process_group


def _set_everywhere(name: str, value: Callable) -> None:
    setattr(c10d, name, value)
    if hasattr(dist, name):
        setattr(dist, name, value)


def install_collectives(instrumentation: Instrumentation) -> Callable[[], None]:
    """Replace the collectives in torch.distributed (and its c10d module) with checkpointed ones;
    the function returned puts the originals back."""
    originals = {op: getattr(c10d, op) for op in COLLECTIVE_OPS if getattr(c10d, op, None)}
    for op, original in originals.items():
        _set_everywhere(op, _wrap_collective(instrumentation, op, original))

    def uninstall() -> None:
        for op, original in originals.items():
            _set_everywhere(op, original)

    return uninstall


def install(
    recorder: Recorder, take_flight: Callable, init_timeout: Optional[float] = None
) -> None:
    """The verifier's instrumentation: collectives, group creation, init and destroy."""
    install_collectives(recorder)
    for op in GROUP_OPS:
        original = getattr(c10d, op, None)
        if original is not None:
            _set_everywhere(op, _wrap_group_op(recorder, op, original))
    _set_everywhere(
        "init_process_group", _wrap_init(recorder, c10d.init_process_group, init_timeout)
    )
    _set_everywhere(
        "destroy_process_group", _wrap_destroy(recorder, c10d.destroy_process_group, take_flight)
    )


def install_timeout_only(timeout_seconds: float) -> None:
    """The uninstrumented baseline: only the process group timeout is set (torchrun-style run)."""
    import datetime

    original = c10d.init_process_group
    signature = inspect.signature(original)

    @functools.wraps(original)
    def init_process_group(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments["timeout"] = datetime.timedelta(seconds=timeout_seconds)
        return original(*bound.args, **bound.kwargs)

    _set_everywhere("init_process_group", init_process_group)


def world_size_from_env() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))
