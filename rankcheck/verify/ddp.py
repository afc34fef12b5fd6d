"""Rank side: checkpoints for the collectives DistributedDataParallel issues from C++.

DDP's constructor verifies and broadcasts the parameters, and its backward all-reduces gradient
buckets in the C++ reducer: none of that goes through the Python functions instrument.py wraps.
So the constructor gets a checkpoint of its own, and every gradient bucket is reduced through a
communication hook that checkpoints first (the same all-reduce-and-average DDP does by default,
or the user's own hook, wrapped). Without this, one rank skipping a backward would only show at
the time limit.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from rankcheck.verify.instrument import Recorder, tensor_text


def _checkpointed(recorder: Recorder, ddp: Any, hook: Callable) -> Callable:
    @functools.wraps(hook)
    def hook_with_checkpoint(state, bucket):
        key, name, members = recorder.group_identity(ddp.process_group)
        buffer = bucket.buffer()
        recorder.checkpoint(
            "all_reduce", key, name, members, f"{tensor_text(buffer)} (DDP gradient bucket)"
        )
        recorder.busy = True
        try:
            return hook(state, bucket)
        finally:
            recorder.busy = False

    return hook_with_checkpoint


def install(recorder: Recorder) -> None:
    original_init = DistributedDataParallel.__init__
    original_forward = DistributedDataParallel.forward
    original_register = DistributedDataParallel.register_comm_hook

    @functools.wraps(original_init)
    def __init__(self, module, *args, **kwargs):
        group = kwargs.get("process_group")
        key, name, members = recorder.group_identity(group)
        params = [p for p in module.parameters() if p.requires_grad]
        shapes = ",".join("x".join(str(d) for d in p.shape) for p in params)
        recorder.checkpoint(
            "DistributedDataParallel", key, name, members, f"params={len(params)} [{shapes}]"
        )
        recorder.busy = True
        try:
            original_init(self, module, *args, **kwargs)
        finally:
            recorder.busy = False

    @functools.wraps(original_register)
    def register_comm_hook(self, state, hook):
        self._rankcheck_hooked = True
        return original_register(self, state, _checkpointed(recorder, self, hook))

    @functools.wraps(original_forward)
    def forward(self, *inputs, **kwargs):
        if not getattr(self, "_rankcheck_hooked", False) and not self._comm_hooks:
            self._rankcheck_hooked = True
            original_register(
                self,
                self.process_group,
                _checkpointed(recorder, self, default_hooks.allreduce_hook),
            )
        return original_forward(self, *inputs, **kwargs)

    # Replacing the methods is the point (a type checker rightly objects to assigning one).
    setattr(DistributedDataParallel, "__init__", __init__)  # noqa: B010
    setattr(DistributedDataParallel, "register_comm_hook", register_comm_hook)  # noqa: B010
    setattr(DistributedDataParallel, "forward", forward)  # noqa: B010
