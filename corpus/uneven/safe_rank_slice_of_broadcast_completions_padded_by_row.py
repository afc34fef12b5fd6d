"""Rank 0 generates completions for every rank's prompts and broadcasts them; each rank keeps its
own equal-width slice (as many completions as it has prompts) and pads them into a tensor whose
size tuple puts the number of rows first and the longest completion after it. The row count is
the per-device batch on every rank; only the row length is this rank's, and what is gathered
(one length and one flag per completion) and the micro-batch loop count rows only."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def pad(rows, padding_value=0):
    longest = [max(len(row) for row in rows)]
    out = torch.full((len(rows), *longest), padding_value, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def generate_all(llm, prompts):
    if dist.get_rank() == 0:
        payload = [llm.generate(p) for p in prompts]
    else:
        payload = None
    holder = [payload]
    dist.broadcast_object_list(holder, src=0)
    return holder[0]


def score_step(model: DDP, llm, prompts, eos_id: int, args):
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, prompts)
    everyone = [p for part in gathered for p in part]
    completions = generate_all(llm, everyone)
    mine = slice(dist.get_rank() * len(prompts), (dist.get_rank() + 1) * len(prompts))
    local = [torch.tensor(ids) for ids in completions[mine]]
    input_ids = pad(local)
    lengths = torch.tensor([len(ids) for ids in local])
    truncated = torch.tensor([ids[-1] != eos_id for ids in local])
    all_lengths = [torch.zeros_like(lengths) for _ in range(dist.get_world_size())]
    dist.all_gather(all_lengths, lengths)
    all_truncated = [torch.zeros_like(truncated) for _ in range(dist.get_world_size())]
    dist.all_gather(all_truncated, truncated)
    batch_size = args.per_device_batch_size
    for start in range(0, input_ids.size(0), batch_size):
        model(input_ids[start : start + batch_size]).sum().backward()
    return all_lengths, all_truncated
