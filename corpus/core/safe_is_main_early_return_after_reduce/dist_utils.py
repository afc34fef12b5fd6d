"""is_main(): true on global rank 0."""
import torch.distributed as dist


def is_main() -> bool:
    return dist.get_rank() == 0
