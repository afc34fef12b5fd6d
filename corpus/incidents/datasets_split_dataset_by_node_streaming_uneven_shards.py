"""Multi-node causal-LM pretraining on a streamed Hugging Face dataset with plain DDP: every
process streams the JSONL shards, keeps its part with `datasets.distributed.split_dataset_by_node`,
and runs a hand-written training loop over a DataLoader.

Thread: https://github.com/huggingface/datasets/issues/6623 ("streaming datasets doesn't work
properly with multi-node")
Project: huggingface/datasets
What hung: `split_dataset_by_node` on an IterableDataset assigns whole shards to nodes when
`n_shards % world_size == 0` (and otherwise keeps 1 example out of world_size), so when the shards
hold different numbers of examples the ranks get different numbers of examples, and so of batches.
The rank whose stream ends first leaves `for step, batch in enumerate(train_dl)` (and goes on to
the end-of-epoch all_reduce) while the others are still in DDP's gradient all-reduce; the job sits
until the NCCL watchdog fires.
Fix: the maintainer's recipe in the thread: loop over `cycle(chain(dataloader, ["end"]))`, mark the
rank exhausted when it reaches "end", all_reduce the exhausted flags every step and stop on every
rank once all of them are exhausted (ranks that ran out early repeat data meanwhile).
Expected rankcheck finding: RC103 on the per-rank batch loop.
Inferred: the model, the tokenization, the optimizer/scheduler and the end-of-epoch loss
all_reduce; the thread's example only prints the items. The watchdog timeout is the usual outcome
of this desync, not a log quoted from the thread.
"""
import argparse
import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from datasets.distributed import split_dataset_by_node
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, get_linear_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_files", default="data/shard-*.jsonl.gz")
    p.add_argument("--model", default="gpt2")
    p.add_argument("--seq_len", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--total_steps", type=int, default=20000)
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token

    ds = load_dataset("json", data_files=args.data_files, split="train", streaming=True)
    ds = ds.shuffle(seed=42, buffer_size=10_000)
    ds = split_dataset_by_node(ds, rank=rank, world_size=world_size)
    ds = ds.map(lambda ex: tokenizer(ex["text"], truncation=True, max_length=args.seq_len),
                batched=True, remove_columns=["text", "meta"])
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
    train_dl = DataLoader(ds, batch_size=args.batch_size, collate_fn=collator, num_workers=2)

    model = AutoModelForCausalLM.from_pretrained(args.model).to(device)
    model = DDP(model, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1)
    scheduler = get_linear_schedule_with_warmup(optimizer, 500, args.total_steps)

    for epoch in range(args.epochs):
        ds.set_epoch(epoch)
        model.train()
        running = torch.zeros(2, device=device)
        for step, batch in enumerate(train_dl):  # expect: RC103
            batch = {k: v.to(device) for k, v in batch.items()}
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            running += torch.stack([loss.detach(), torch.ones((), device=device)])
            if rank == 0 and step % 100 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
        dist.all_reduce(running)
        if rank == 0:
            print(f"epoch {epoch} mean loss {(running[0] / running[1]).item():.4f}")

    if rank == 0:
        model.module.save_pretrained("checkpoints/final")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
