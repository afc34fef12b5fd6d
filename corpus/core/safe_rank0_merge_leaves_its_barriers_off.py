"""The same merge helper called by rank 0 the way torchtune's checkpointer calls it: the flag
that switches its barriers on is left at its default (False) and no adapter config is passed, so
nothing inside is collective; every rank meets at the barrier after the guard."""
import torch
import torch.distributed as dist


def merge_adapter_weights(state_dict, use_distributed_barriers=False, adapter_config=None):
    merged = {}
    for name, weight in state_dict.items():
        if use_distributed_barriers:
            dist.barrier()
        merged[name] = weight.clone()
    if adapter_config is not None:
        dist.barrier()
        merged["adapter"] = torch.tensor(adapter_config["rank"])
    return merged


def save_checkpoint(model, path):
    state_dict = model.state_dict()
    if dist.get_rank() == 0:
        merged = merge_adapter_weights(state_dict)
        torch.save(merged, path)
    dist.barrier()


def save_plain(model, path):
    state_dict = model.state_dict()
    if dist.get_rank() == 0:
        torch.save(merge_adapter_weights(state_dict, use_distributed_barriers=False, adapter_config=None), path)
    dist.barrier()
