"""The look-alike: `args.lora.rank` is the adapter's rank from the config, alike on every process;
merging above rank 8 all-reduces on every rank together."""
import torch
import torch.distributed as dist


def maybe_merge(args, adapter_weights: torch.Tensor) -> torch.Tensor:
    if args.lora.rank > 8:
        dist.all_reduce(adapter_weights)
        adapter_weights /= dist.get_world_size()
    return adapter_weights
