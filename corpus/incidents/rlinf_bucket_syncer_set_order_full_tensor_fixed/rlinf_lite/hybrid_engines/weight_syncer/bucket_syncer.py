"""Trimmed rlinf/hybrid_engines/weight_syncer/bucket_syncer.py with the fix of RLinf/RLinf#1355."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import torch
from torch.distributed.tensor import DTensor

from rlinf_lite.utils.utils import dtype_size, materialize_tensor, normalize_device, normalize_dtype

from .base import WeightSyncer

TOTAL_BUCKETS_KEY = "total_buckets"
SYNCER_VERSION_KEY = "syncer_version"


def iter_named_tensor_buckets(items: Iterable[tuple[str, torch.Tensor | DTensor]], version, *,
                              bucket_size: int, bucket_device, transport_dtype=None) -> Iterator[dict]:
    """Plan buckets of at most `bucket_size` bytes in the order `items` come, then materialize
    each bucket's tensors (every DTensor is gathered to its full size) and yield it."""
    bucket_device = normalize_device(bucket_device)
    plan, current, held = [], [], 0
    for key, value in items:
        dtype = transport_dtype if (transport_dtype is not None and value.dtype.is_floating_point) else value.dtype
        current.append((key, value, dtype))
        held += value.numel() * dtype_size(dtype)
        if held >= bucket_size:
            plan.append(current)
            current, held = [], 0
    if current:
        plan.append(current)
    if not plan:
        raise ValueError("No parameters to sync")

    header = {
        TOTAL_BUCKETS_KEY: torch.tensor(len(plan), dtype=torch.int32, device=bucket_device),
        SYNCER_VERSION_KEY: torch.as_tensor(version, dtype=torch.int32, device=bucket_device),
    }
    for i, bucket_items in enumerate(plan):
        bucket = dict(header) if i == 0 else {}
        for key, value, dtype in bucket_items:
            tensor = materialize_tensor(value)
            bucket[key] = tensor.to(device=bucket_device, dtype=dtype, non_blocking=False)
        yield bucket


class BucketWeightSyncer(WeightSyncer):
    def __init__(self, bucket_size: int, bucket_dtype, bucket_device):
        super().__init__()
        self.bucket_size = bucket_size
        self.bucket_dtype = normalize_dtype(bucket_dtype)
        self.bucket_device = normalize_device(bucket_device)
        self.param_names_need_sync = None

    def iter_buckets(self, state_dict, version) -> Iterator[dict]:
        def named_items():
            for key in self.param_names_need_sync:
                value = state_dict.get(key)
                if value is None or "_extra_state" in key:
                    continue
                yield key, value

        yield from iter_named_tensor_buckets(
            named_items(), version, bucket_size=self.bucket_size,
            bucket_device=self.bucket_device, transport_dtype=self.bucket_dtype,
        )

    async def init_sender(self, state_dict, param_names_need_sync: list[str], send, recv=None) -> None:
        del state_dict, send, recv
        # a deterministic order: every rank gathers the same parameter at the same step
        self.param_names_need_sync = sorted(set(param_names_need_sync))
        if not self.param_names_need_sync:
            raise ValueError("param_names_need_sync must not be empty")
        self._sender_initialized = True

    async def sync(self, state_dict, send, version) -> None:
        # every actor rank materializes every bucket (the DTensor gathers need the whole FSDP
        # group); only the sender rank actually ships them
        for bucket in self.iter_buckets(state_dict, version):
            await send(bucket)
            del bucket

    async def apply(self, model: torch.nn.Module, recv) -> int:
        bucket = await recv()
        total = int(bucket.pop(TOTAL_BUCKETS_KEY).item())
        version = int(bucket.pop(SYNCER_VERSION_KEY).item())
        model.load_state_dict(bucket, strict=False)
        for _ in range(total - 1):
            model.load_state_dict(await recv(), strict=False)
        return version
