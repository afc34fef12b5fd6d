"""The look-alike: the share is padded with None, but up to a length computed from this rank's
own share (a round number of batches of it), not one the ranks agreed on. Ranks whose share is
longer loop more rounds and wait in a barrier the others never reach."""
import torch
import torch.distributed as dist


def shares_of_this_rank(files, batch):
    mine = files[dist.get_rank()::dist.get_world_size()]
    rounded = -(-len(mine) // batch) * batch
    return mine + [None] * (rounded - len(mine))


def convert(files, out_dir):
    for path in shares_of_this_rank(files, 4):  # expect: RC103
        if path is not None:
            data = torch.load(path)
            torch.save(data.half(), f"{out_dir}/{path.rsplit('/', 1)[-1]}")
        dist.barrier()
