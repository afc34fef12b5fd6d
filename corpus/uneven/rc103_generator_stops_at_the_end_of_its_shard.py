"""The same stream with an exit of its own: a pass over the shard that comes up short ends the
stream, so a rank whose shard gives fewer batches stops issuing the barrier before the others."""
import torch
import torch.distributed as dist


def batch_stream(samples, steps: int, batch_size: int, rank: int, world_size: int):
    shard = samples[rank::world_size]
    produced = 0
    while produced < steps:
        order = torch.randperm(len(shard)).tolist()
        if len(order) < batch_size:
            break
        for start in range(0, len(order) - batch_size + 1, batch_size):
            yield torch.stack([shard[i] for i in order[start:start + batch_size]])
            produced += 1
            if produced >= steps:
                return


def train(model, optimizer, samples, steps: int) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for batch in batch_stream(samples, steps, 32, rank, world_size):  # expect: RC103
        model(batch).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        dist.barrier()
