"""A batch stream that cycles over this rank's shard and counts what it yields to the step
budget: however many batches one pass over a shard gives, every rank gets exactly `steps` of
them, so the training loop's barrier is reached the same number of times everywhere."""
import torch
import torch.distributed as dist


def batch_stream(samples, steps: int, batch_size: int, rank: int, world_size: int):
    shard = samples[rank::world_size]
    produced = 0
    while produced < steps:
        order = torch.randperm(len(shard)).tolist()
        for start in range(0, len(order) - batch_size + 1, batch_size):
            yield torch.stack([shard[i] for i in order[start:start + batch_size]])
            produced += 1
            if produced >= steps:
                return


def frame_stream(clips, frames_per_rank: int, rank: int, world_size: int):
    """The same count written as `while True:` with the return before the yield."""
    produced = 0
    while True:
        for clip in clips[rank::world_size]:
            for t in range(clip.size(0)):
                if produced == frames_per_rank:
                    return
                yield clip[t]
                produced += 1


def train(model, optimizer, samples, steps: int, check_every: int) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(batch_stream(samples, steps, 32, rank, world_size)):
        model(batch).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % check_every == 0:
            dist.barrier()


def evaluate(model, clips, frames_per_rank: int) -> None:
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for frame in frame_stream(clips, frames_per_rank, rank, world_size):
        dist.all_reduce(model(frame).mean())
