"""Mixture-of-experts dispatch: each rank routes the tokens of its own batch that its router sends
away, so how many it sends depends on the batch. Without split sizes `all_to_all_single` cuts
input and output into world-size equal chunks, which only works when every rank passes tensors
of one size."""
import torch
import torch.distributed as dist


def dispatch(router, batch):
    hidden = batch["hidden"]
    routed = hidden[router(hidden) > 0]
    received = torch.empty_like(routed)
    dist.all_to_all_single(received, routed)  # expect: RC104
    return received
