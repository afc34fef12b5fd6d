"""The look-alike of safe_strided_share_of_batches_split_to_a_world_multiple.py without the
rounding: the number of batches is only what the batch size asks for, so when it is not a
multiple of the world size the first ranks take one batch more than the last, and the ranks
that run out stop entering the barrier the others wait in.
"""
import torch
import torch.distributed


def get_rank():
    return torch.distributed.get_rank() if torch.distributed.is_initialized() else 0


def get_world_size():
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def generate(seeds, max_batch_size, net):
    num_batches = (len(seeds) - 1) // max_batch_size + 1
    all_batches = torch.as_tensor(seeds).tensor_split(num_batches)
    rank_batches = all_batches[get_rank() :: get_world_size()]
    for batch_seeds in rank_batches:  # expect: RC103
        torch.distributed.barrier()
        net(batch_seeds)
