"""Reconstruction of https://github.com/NVIDIA/recsys-examples/issues/361

Project: NVIDIA/recsys-examples (commons/distributed/batch_allgather.py).
What hung: `pad_and_allgather_batch` gathers every dense field of a batch with
all_gather_into_tensor. For an incomplete batch (actual_batch_size <
batch_size, e.g. the last batch of an epoch on one rank) it pads dense tensors
to batch_size, computing the per-sample element count as
`numel // actual_batch_size`. `HSTUBatch.num_candidates` is already padded to
batch_size by the dataloader, so with batch_size=128 and actual_batch_size=11
the helper computes eps = 128 // 11 = 11 and produces a [1408] tensor while the
ranks holding full batches send [128]. all_gather_into_tensor then has
mismatched sizes across ranks and the NCCL AllGather deadlocks (issue text and
PR #362 root-cause section, same author).
Fix (PR #362): every dense field has dim-0 == batch_size (the dataloader pads
labels too); `_elems_per_sample` and the padding in allgather_field are
removed, dense tensors are gathered directly.
The collective helper lives in commons/ops/collective_ops.py.
Fixed twin (PR #362): dense fields always have dim-0 == batch_size, so every
rank contributes identically sized tensors and no padding arithmetic is done
here. No finding expected.
"""
from dataclasses import fields
from typing import Dict, List, Tuple, Union

import torch
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

from commons.ops.collective_ops import gather_along_first_dim, keyed_jagged_tensor_list_allgather
from commons.sequence_batch.batch import BaseBatch


def pad_and_allgather_batch(
    batch: BaseBatch,
    pg_group: torch.distributed.ProcessGroup = torch.distributed.group.WORLD,
    return_padding_flag: bool = False,
) -> Union[BaseBatch, Tuple[BaseBatch, torch.Tensor]]:
    world_size = torch.distributed.get_world_size(pg_group)
    device = batch.features.values().device
    global_batch_size = batch.batch_size * world_size

    kjt_field_names: List[str] = []
    kjt_inputs: List[KeyedJaggedTensor] = []
    for f in fields(batch):
        val = getattr(batch, f.name)
        if isinstance(val, KeyedJaggedTensor):
            kjt_field_names.append(f.name)
            kjt_inputs.append(val)
    kjt_outputs = keyed_jagged_tensor_list_allgather(kjt_inputs, pg_group)
    kjt_result_map: Dict[str, KeyedJaggedTensor] = dict(zip(kjt_field_names, kjt_outputs))

    def allgather_field(tensor_or_kjt):
        if isinstance(tensor_or_kjt, KeyedJaggedTensor):
            return tensor_or_kjt
        assert tensor_or_kjt.size(0) == batch.batch_size, "dense fields must be padded to batch_size"
        return gather_along_first_dim(tensor_or_kjt, pg_group)

    new_batch = batch._apply_to_tensors_or_kjt(allgather_field, inplace=False)
    for name, kjt_out in kjt_result_map.items():
        setattr(new_batch, name, kjt_out)
    new_batch.batch_size = global_batch_size
    new_batch.actual_batch_size = global_batch_size

    if not return_padding_flag:
        return new_batch
    local_is_padding = torch.arange(batch.batch_size, device=device) >= batch.actual_batch_size
    global_is_padding = torch.empty(global_batch_size, dtype=torch.bool, device=device)
    torch.distributed.all_gather_into_tensor(global_is_padding, local_is_padding, group=pg_group)
    return new_batch, global_is_padding
