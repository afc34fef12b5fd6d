"""Safe twin of fsdp2_eval_loop_uneven_packed_batches.py: before the loop the ranks agree on the
number of packed batches (all-reduce MIN) and every rank runs exactly that many FSDP forwards.

Thread: https://github.com/PrimeIntellect-ai/prime-rl/issues/2515
"""
import torch
import torch.distributed as dist


def pack_samples(samples, seq_len: int, pad_id: int):
    packed, current = [], []
    for sample in samples:
        if sum(len(s) for s in current) + len(sample) > seq_len and current:
            packed.append(current)
            current = []
        current.append(sample[:seq_len])
    if current:
        packed.append(current)
    batches = []
    for group in packed:
        ids = torch.full((seq_len,), pad_id, dtype=torch.long)
        flat = torch.cat(group)
        ids[: len(flat)] = flat
        batches.append({"input_ids": ids[None], "labels": torch.where(ids == pad_id, -100, ids)[None]})
    return batches


@torch.no_grad()
def run_eval_loop(model, val_samples, seq_len: int, pad_id: int, device):
    model.eval()
    local_batches = pack_samples(val_samples, seq_len, pad_id)
    total_loss = torch.zeros(1, device=device)
    total_tokens = torch.zeros(1, device=device)
    num_steps = torch.tensor([len(local_batches)], device=device)
    dist.all_reduce(num_steps, op=dist.ReduceOp.MIN)
    for step in range(int(num_steps.item())):
        batch = local_batches[step]
        input_ids = batch["input_ids"].to(device)
        labels = batch["labels"].to(device)
        loss = model(input_ids=input_ids, labels=labels).loss
        n_tokens = (labels != -100).sum()
        total_loss += loss * n_tokens
        total_tokens += n_tokens
    dist.all_reduce(total_loss)
    dist.all_reduce(total_tokens)
    model.train()
    return (total_loss / total_tokens.clamp(min=1)).item()
