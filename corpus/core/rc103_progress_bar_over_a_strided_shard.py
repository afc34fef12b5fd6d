"""Each rank takes every world_size-th file (the last ranks get one file fewer when the count does
not divide) and rank 0 shows a progress bar over its share: the bar changes nothing, the shares
still differ in length, and the ranks with fewer files stop all-reducing first."""
import torch
import torch.distributed as dist
from tqdm import tqdm


def embed_files(model, files):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    shard = files[rank::world_size]
    if rank == 0:
        shard = tqdm(shard, desc="embedding")
    total = torch.zeros(1)
    for path in shard:  # expect: RC103
        emb = model(torch.load(path)).mean().detach()
        dist.all_reduce(emb)
        total += emb
    return total
