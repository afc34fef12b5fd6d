"""Only the first data-parallel replica writes the checkpoint, and its tensor-parallel ranks first
agree on the gradient norm over their tensor-parallel group. All members of a tensor-parallel
group share their data-parallel rank: the group calls the all_reduce whole."""
import torch
from megatron.core import parallel_state


def save_shard(model, path: str) -> None:
    if parallel_state.get_data_parallel_rank() == 0:
        norm = torch.zeros(1)
        for p in model.parameters():
            if p.grad is not None:
                norm += p.grad.pow(2).sum()
        torch.distributed.all_reduce(norm, group=parallel_state.get_tensor_model_parallel_group())
        torch.save({"model": model.state_dict(), "grad_norm": norm.sqrt().item()}, path)
