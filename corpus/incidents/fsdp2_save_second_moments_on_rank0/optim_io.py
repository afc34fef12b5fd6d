"""Export of Adam's second moments (the preconditioner used for influence scores) from an FSDP2
run: the moments are DTensors sharded across the ranks, gathered here into full tensors."""
import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor


def save_second_moments_as_optimizer_pt(model, optimizer, path: str) -> None:
    moments = {}
    for name, param in model.named_parameters():
        state = optimizer.state.get(param)
        if not state or "exp_avg_sq" not in state:
            continue
        exp_avg_sq = state["exp_avg_sq"]
        if isinstance(exp_avg_sq, DTensor):
            exp_avg_sq = exp_avg_sq.full_tensor()
        moments[name] = exp_avg_sq.cpu()
    if dist.get_rank() == 0:
        torch.save({"exp_avg_sq": moments, "step": optimizer.state_dict()["state"].get(0, {}).get("step")}, path)
