"""Safe twin of datasets_split_dataset_by_node_streaming_uneven_shards.py: the batch loop follows
the maintainer's recipe from the thread. Each rank loops over `cycle(chain(train_dl, ["end"]))`,
flags itself exhausted when it reaches "end", and every step all-reduces the exhausted flags before
its forward/backward; all ranks break together once every rank's stream has ended (ranks that ran
out early repeat their data until then), so they run the same number of steps.

Thread: https://github.com/huggingface/datasets/issues/6623
"""
import argparse
import os
from itertools import chain, cycle

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
        exhausted = torch.zeros(world_size, dtype=torch.int32, device=device)
        # Loop over the dataset until the data from every rank has been exhausted
        for step, batch in enumerate(cycle(chain(train_dl, ["end"]))):
            if batch == "end":
                exhausted[rank] = 1
                continue
            dist.all_reduce(exhausted, op=dist.ReduceOp.MAX)
            if torch.all(exhausted > 0):
                break
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
