"""Entry point: expert-parallel SFT of a small MoE language model, saved as HF safetensors.

Launched with torchrun; every rank builds the dense part (kept in sync by an all-reduce of its
gradients) and owns `num_experts // world_size` experts. At every `save_interval` and at the end,
all ranks call `bridge.save_weights(...)`.
"""
import argparse
import math
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, DistributedSampler
from transformers import AutoConfig, AutoTokenizer

from swiftlite.bridge import GPTBridge
from swiftlite.dist_utils import get_dist_setting, is_master


class JsonlTokens(Dataset):
    def __init__(self, path, tokenizer, max_length):
        import json

        self.samples = []
        with open(path, "r", encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)["text"]
                ids = tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
                ids = ids + [tokenizer.pad_token_id or 0] * (max_length - len(ids))
                self.samples.append(torch.tensor(ids))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        return self.samples[idx]


class Expert(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.down(F.silu(self.up(x)))


class LocalMoELM(nn.Module):
    """Dense embedding/attention-free mixer + the experts this rank owns (top-1 routing)."""

    def __init__(self, vocab, hidden, ffn, num_local_experts):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.mixer = nn.Linear(hidden, hidden)
        self.router = nn.Linear(hidden, num_local_experts)
        self.experts = nn.ModuleList(Expert(hidden, ffn) for _ in range(num_local_experts))
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def dense_parameters(self):
        for name, p in self.named_parameters():
            if not name.startswith("experts."):
                yield p

    def forward(self, input_ids):
        h = self.embed(input_ids)
        h = h + torch.tanh(self.mixer(h))
        choice = self.router(h).argmax(-1)
        out = torch.zeros_like(h)
        for idx, expert in enumerate(self.experts):
            mask = choice == idx
            out = out + expert(h) * mask.unsqueeze(-1)
        return self.lm_head(self.norm(h + out))


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", dest="model_dir", required=True)
    p.add_argument("--model_type", default=None)
    p.add_argument("--dataset", required=True)
    p.add_argument("--save", required=True)
    p.add_argument("--num_experts", type=int, default=8)
    p.add_argument("--hidden_size", type=int, default=256)
    p.add_argument("--ffn_hidden_size", type=int, default=512)
    p.add_argument("--max_length", type=int, default=512)
    p.add_argument("--micro_batch_size", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--train_iters", type=int, default=1000)
    p.add_argument("--save_interval", type=int, default=500)
    p.add_argument("--torch_dtype", default="bfloat16")
    return p.parse_args()


def main():
    args = parse_args()
    rank, local_rank, world_size, _ = get_dist_setting()
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")

    tokenizer = AutoTokenizer.from_pretrained(args.model_dir, trust_remote_code=True)
    hf_config = AutoConfig.from_pretrained(args.model_dir, trust_remote_code=True)
    vocab = getattr(hf_config, "vocab_size", len(tokenizer))
    model = LocalMoELM(vocab, args.hidden_size, args.ffn_hidden_size, args.num_experts // world_size).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    bridge = GPTBridge(hf_config)

    dataset = JsonlTokens(args.dataset, tokenizer, args.max_length)
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=args.micro_batch_size, sampler=sampler, drop_last=True)

    step, epoch = 0, 0
    while step < args.train_iters:
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = batch.cuda(non_blocking=True)
            logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            for p in model.dense_parameters():
                if p.grad is not None:
                    dist.all_reduce(p.grad)
                    p.grad.div_(world_size)
            optimizer.step()
            step += 1
            if is_master() and step % 10 == 0:
                print(f"iter {step}: loss {loss.item():.4f} ppl {math.exp(min(loss.item(), 20)):.2f}")
            if step % args.save_interval == 0 or step == args.train_iters:
                out = os.path.join(args.save, f"checkpoint-{step}")
                bridge.save_weights([model], out, args=args, processor=tokenizer)
            if step >= args.train_iters:
                break
        epoch += 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
