"""SFT trainer (FSDP2, fully_shard) whose validation loop packs each rank's variable-length samples
into fixed-size micro-batches and iterates them to exhaustion.

Thread: https://github.com/PrimeIntellect-ai/prime-rl/issues/2515 ("Validation loop deadlocks with FSDP due to unsynchronized iteration")
Project: PrimeIntellect-ai/prime-rl
What hung: "run_eval_loop iterates a finite validation set to exhaustion. With FSDP, each forward
pass is a collective (all-gather to unshard parameters). Ranks get different batch counts because
variable-length samples produce different numbers of fixed-size tensors per rank. When any rank
exits the loop first, the rest deadlock on the next all-gather. Training is immune, it pulls a
fixed `grad_accum_steps` from an infinite iterator."
Fix (prime-rl#2516): make every rank run the same number of validation forwards; the twin agrees on
the count with an all-reduce (MIN) before the loop and runs exactly that many.
Expected rankcheck finding: RC103 on the validation loop over per-rank packed batches, whose body
is an FSDP forward and a loss all-reduce.
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
    for batch in local_batches:  # expect: RC103
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
