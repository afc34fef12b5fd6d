"""Small distributed helpers shared by the training scripts."""
import torch.distributed as dist


def is_main() -> bool:
    return dist.get_rank() == 0


def world() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1
