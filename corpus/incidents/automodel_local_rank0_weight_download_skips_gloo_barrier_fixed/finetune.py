"""SFT recipe: torchrun --nproc-per-node 8 finetune.py --model Qwen/Qwen3-30B-A3B

Builds the model through NeMoAutoModelForCausalLM (custom MoE implementation), shards it
with FSDP2 and runs a short next-token training loop on a jsonl file of token ids.
"""

import argparse
import json
import logging
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from nemo_lite.distributed.init_utils import initialize_distributed
from nemo_lite.distributed.utils import barrier_and_log
from nemo_lite.models.auto_model import NeMoAutoModelForCausalLM

logger = logging.getLogger("finetune")


@dataclass
class RecipeConfig:
    model: str
    data: str
    seq_len: int = 512
    micro_batch: int = 2
    lr: float = 1e-5
    max_steps: int = 200
    log_every: int = 10
    output_dir: str = "checkpoints"


class TokenFile(Dataset):
    def __init__(self, path: str, seq_len: int):
        self.rows = []
        with open(path) as fh:
            for line in fh:
                ids = json.loads(line)["input_ids"][:seq_len]
                ids += [0] * (seq_len - len(ids))
                self.rows.append(torch.tensor(ids, dtype=torch.long))

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        return self.rows[idx]


def parse_args() -> RecipeConfig:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", default="data/train.jsonl")
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--micro-batch", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--max-steps", type=int, default=200)
    parser.add_argument("--output-dir", default="checkpoints")
    a = parser.parse_args()
    return RecipeConfig(a.model, a.data, a.seq_len, a.micro_batch, a.lr, a.max_steps, output_dir=a.output_dir)


def shard_model(model: torch.nn.Module) -> torch.nn.Module:
    for block in model.layers:
        fully_shard(block)
    fully_shard(model)
    return model


def main() -> None:
    cfg = parse_args()
    logging.basicConfig(level=logging.INFO)
    info = initialize_distributed()

    model = NeMoAutoModelForCausalLM.from_pretrained(cfg.model, torch_dtype=torch.bfloat16)
    model = shard_model(model.to(info.device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)

    dataset = TokenFile(cfg.data, cfg.seq_len)
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True) if info.world_size > 1 else None
    loader = DataLoader(dataset, batch_size=cfg.micro_batch, sampler=sampler, shuffle=sampler is None, drop_last=True)

    step = 0
    model.train()
    while step < cfg.max_steps:
        if sampler is not None:
            sampler.set_epoch(step)
        for batch in loader:
            batch = batch.to(info.device)
            loss = model(batch, labels=batch)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % cfg.log_every == 0:
                reported = loss.detach().float()
                if dist.is_initialized():
                    dist.all_reduce(reported)
                    reported /= info.world_size
                if info.is_main:
                    logger.info("step %d loss %.4f", step, reported.item())
            if step >= cfg.max_steps:
                break

    barrier_and_log("training finished")
    if info.is_main:
        os.makedirs(cfg.output_dir, exist_ok=True)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
