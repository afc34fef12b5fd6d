"""A checkpoint merge helper whose barriers are behind a flag: rank 0 alone calls it *with*
use_distributed_barriers=True, so it waits in a barrier the other ranks never reach."""
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
        merged = merge_adapter_weights(state_dict, use_distributed_barriers=True)  # expect: RC101
        torch.save(merged, path)
    dist.barrier()


def save_adapter(model, path, config):
    state_dict = model.state_dict()
    if dist.get_rank() == 0:
        merged = merge_adapter_weights(state_dict, adapter_config=config)  # expect: RC101
        torch.save(merged, path)
    dist.barrier()
