"""Each rank takes every world_size-th shard file, so the shares differ by one where the count
does not divide; the list is padded with None up to the longest share, agreed by a MAX
all-reduce. Every rank then loops the same number of rounds and reaches the barrier in each,
whether or not it had a file to process in that round."""
import torch
import torch.distributed as dist


def shares_of_this_rank(files):
    mine = files[dist.get_rank()::dist.get_world_size()]
    longest = torch.tensor([len(mine)])
    dist.all_reduce(longest, op=dist.ReduceOp.MAX)
    return mine + [None] * (int(longest.item()) - len(mine))


def convert(files, out_dir):
    for path in shares_of_this_rank(files):
        if path is not None:
            data = torch.load(path)
            torch.save(data.half(), f"{out_dir}/{path.rsplit('/', 1)[-1]}")
        dist.barrier()
