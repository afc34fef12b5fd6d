"""The look-alike: a context-parallel helper returns early on an empty list of tensors, but every
call passes a list display of two (`[k, v]`), never empty, so no rank takes the early return and
every rank reaches the all-to-all (OLMo-core's all_to_all_cp2hp)."""
import torch
import torch.distributed as dist


def all_to_all_cp2hp(inputs, group):
    if not inputs:
        return []
    if inputs[0].dim() == 3:
        inputs = [x.unsqueeze(-1) for x in inputs]  # bound again only after the test
    outputs = [torch.empty_like(x) for x in inputs]
    dist.all_to_all(outputs, inputs, group=group)
    return outputs


def attention(batch, cp_group):
    q, k, v = batch["q"], batch["k"], batch["v"]
    k, v = all_to_all_cp2hp([k, v], cp_group)
    return torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
