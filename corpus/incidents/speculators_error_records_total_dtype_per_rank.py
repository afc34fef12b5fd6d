"""Training an EAGLE-style speculator (draft model) on top of a frozen verifier with the speculators
trainer under torchrun/FSDP2; every log step the per-rank metrics are summed onto rank 0 with
`dist.reduce`.

Thread: https://github.com/vllm-project/speculators/pull/1116 ("fix(train): use float32 for
error_records metrics to support NPU hccl", merged; fixes speculators#1115)
Project: vllm-project/speculators
What failed: PR #1035 added two metrics; `error_records_total` is built as
`torch.tensor(1.0 if self.rank == 0 else 0, device=loss.device)`, so rank 0 holds a float32 tensor
and every other rank an int64 one. On a log step all metrics go through
`dist.reduce(v, dst=0, op=SUM)` in turn, and for that entry the ranks enter the same reduce with
different dtypes. On Ascend NPUs HcclReduce raised a RuntimeError at launch; on NCCL a dtype
mismatch in a collective is not checked and leaves the ranks hanging or reducing garbage
(pytorch#150248, #150433).
Fix (the PR): both new metrics get an explicit `dtype=torch.float32`.
Expected rankcheck finding: RC104 on the `dist.reduce(v, ...)` in `_reduce_metrics` (the dtype of
`error_records_total` depends on the rank).
"""
import argparse
import math
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import AutoConfig, AutoModelForCausalLM


class HiddenStatesDataset(Dataset):
    """Pre-extracted verifier hidden states, one .pt file per sample; a few records are flagged as
    errors by the extraction job and carry `error_records=1`."""

    def __init__(self, data_dir):
        self.files = sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.endswith(".pt"))

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        return torch.load(self.files[idx])


def collate(items):
    max_len = max(it["input_ids"].numel() for it in items)

    def pad(t, value=0):
        return torch.nn.functional.pad(t, (0, 0, 0, max_len - t.size(0)), value=value) if t.dim() == 2 else \
            torch.nn.functional.pad(t, (0, max_len - t.size(0)), value=value)

    return {
        "input_ids": torch.stack([pad(it["input_ids"]) for it in items]),
        "hidden_states": torch.stack([pad(it["hidden_states"]) for it in items]),
        "loss_mask": torch.stack([pad(it["loss_mask"]) for it in items]),
        "error_records": sum(int(it.get("error_records", 0)) for it in items),
    }


class EagleDraft(torch.nn.Module):
    def __init__(self, verifier_config, num_layers=1):
        super().__init__()
        h = verifier_config.hidden_size
        self.fc = torch.nn.Linear(2 * h, h, bias=False)
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(h, verifier_config.num_attention_heads, batch_first=True) for _ in range(num_layers)
        )
        self.embed = torch.nn.Embedding(verifier_config.vocab_size, h)
        self.lm_head = torch.nn.Linear(h, verifier_config.vocab_size, bias=False)

    def forward(self, input_ids, hidden_states):
        x = self.fc(torch.cat([self.embed(input_ids), hidden_states], dim=-1))
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(x)


class Trainer:
    def __init__(self, model, optimizer, loader, args):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.args = args
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.is_distributed = dist.is_initialized() and dist.get_world_size() > 1

    def train_step(self, batch):
        device = torch.device("cuda", torch.cuda.current_device())
        input_ids = batch["input_ids"].to(device)
        hidden = batch["hidden_states"].to(device)
        mask = batch["loss_mask"].to(device)
        logits = self.model(input_ids[:, :-1], hidden[:, :-1])
        targets = input_ids[:, 1:]
        token_loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)).float(), targets.reshape(-1), reduction="none"
        ).view_as(targets)
        loss = (token_loss * mask[:, 1:]).sum() / mask[:, 1:].sum().clamp(min=1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

        metrics = {
            "loss": loss.detach().float(),
            "acc": ((logits.argmax(-1) == targets).float() * mask[:, 1:]).sum() / mask[:, 1:].sum().clamp(min=1),
        }
        metrics["error_records_sum"] = torch.tensor(batch["error_records"], dtype=torch.int32, device=loss.device)
        metrics["error_records_total"] = torch.tensor(1.0 if self.rank == 0 else 0, device=loss.device)
        return metrics

    def _reduce_metrics(self, metrics):
        if self.is_distributed:
            for v in metrics.values():
                dist.reduce(v, dst=0, op=dist.ReduceOp.SUM)  # expect: RC104
        return metrics

    def train(self):
        step = 0
        for epoch in range(self.args.epochs):
            if isinstance(self.loader.sampler, DistributedSampler):
                self.loader.sampler.set_epoch(epoch)
            for batch in self.loader:
                metrics = self.train_step(batch)
                step += 1
                if step % self.args.log_every == 0:
                    metrics = self._reduce_metrics(metrics)
                    if self.rank == 0:
                        world = dist.get_world_size() if self.is_distributed else 1
                        print(
                            f"step {step} loss {metrics['loss'].item() / world:.4f} "
                            f"acc {metrics['acc'].item() / world:.3f} "
                            f"error_records {metrics['error_records_sum'].item()} "
                            f"(logged by {metrics['error_records_total'].item():.0f} rank)"
                        )


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--verifier", default="meta-llama/Llama-3.1-8B-Instruct")
    p.add_argument("--data_dir", required=True)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--grad_clip", type=float, default=1.0)
    p.add_argument("--log_every", type=int, default=10)
    return p.parse_args()


def main():
    args = parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    mesh = init_device_mesh("cuda", (dist.get_world_size(),))

    cfg = AutoConfig.from_pretrained(args.verifier)
    model = EagleDraft(cfg).cuda()
    verifier = AutoModelForCausalLM.from_pretrained(args.verifier, torch_dtype=torch.bfloat16)
    model.embed.weight.data.copy_(verifier.get_input_embeddings().weight.float())
    model.embed.weight.requires_grad_(False)
    del verifier
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, mp_policy=mp)
    fully_shard(model, mesh=mesh, mp_policy=mp)

    ds = HiddenStatesDataset(args.data_dir)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=DistributedSampler(ds), collate_fn=collate, num_workers=4)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr)
    Trainer(model, optimizer, loader, args).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
