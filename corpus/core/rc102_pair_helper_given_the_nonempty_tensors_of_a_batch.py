"""The same helper given the tensors of this rank's batch that are not empty: a rank whose batch
left none returns early and skips the all-to-all the others wait in."""
import torch
import torch.distributed as dist


def all_to_all_cp2hp(inputs, group):
    if not inputs:
        return []  # expect: RC102
    outputs = [torch.empty_like(x) for x in inputs]
    dist.all_to_all(outputs, inputs, group=group)
    return outputs


def attention(batch, cp_group):
    present = [batch[name] for name in ("k", "v") if batch[name].numel() > 0]
    return all_to_all_cp2hp(present, cp_group)
