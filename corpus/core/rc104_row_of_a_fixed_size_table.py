"""Per-rank rows of a table built with sizes alike on every rank: Megatron's timers gather
`table[rank, :]`, DeepSpeed-Chat fills `all_tensor[rank]` of a `torch.zeros(world_size)` moved to
the device, a vocab-parallel cross entropy picks logits with rank-shifted indices and views them
as the target, a sequence-parallel sampler keeps `embeds[:, rank]`. Each has the same shape on
every rank. The look-alikes pick from a list of tensors
(`parts[rank]`) and slice with a rank-dependent bound: those shapes differ."""
import torch
import torch.distributed as dist


def timers(names):
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    table = torch.zeros((world_size, len(names)), dtype=torch.float, device=torch.cuda.current_device())
    for i, name in enumerate(names):
        table[rank, i] = 1.0
    dist._all_gather_base(table.view(-1), table[rank, :].view(-1))


def print_all_ranks(value, rank):
    world_size = dist.get_world_size()
    all_tensor = torch.zeros(world_size, dtype=torch.float32).to("cuda")
    all_tensor[rank] = value
    dist.all_reduce(all_tensor)


def ce(logits, target):
    rank = dist.get_rank()
    start = rank * logits.size()[-1]
    adjusted = target.clone() - start
    picked = logits[torch.arange(0, logits.size()[0]), adjusted].clone().contiguous()
    predicted = picked.view_as(target)
    outside = (target < start) | (target >= start + logits.size()[-1])
    predicted[outside] = 0.0
    dist.all_reduce(predicted)


def sequence_parallel_prompt(chunks):
    # Open-Sora-Plan's sampler: the prompt embeddings split into chunks along the sequence
    # (b, sp, x, h), each rank keeping its own (`[:, rank]` drops that dimension whichever it picks).
    rank = dist.get_rank()
    mine = chunks[:, rank, :, :]
    dist.all_reduce(mine)


def lookalikes(parts):
    rank = dist.get_rank()
    mine = parts[rank]
    dist.all_reduce(mine)  # expect: RC104
    t = torch.zeros(8, 4)
    dist.all_reduce(t[: rank + 1])  # expect: RC104
    n = rank + 1
    dist.all_reduce(t[:n])  # expect: RC104
