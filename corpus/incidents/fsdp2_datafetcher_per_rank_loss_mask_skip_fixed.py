"""Safe twin of fsdp2_datafetcher_per_rank_loss_mask_skip: a sub-threshold loss mask is zeroed in place
and the sample kept (PR #138), so every rank runs one micro-batch per dispatched sample.

Thread: https://github.com/lightseekorg/TorchSpec/issues/126
"""
import argparse

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard


class DataFetcher:
    def __init__(self, step_source, min_loss_tokens: int, device: torch.device):
        self.step_source = step_source
        self.min_loss_tokens = min_loss_tokens
        self.device = device
        self.dp_rank = dist.get_rank()
        self.dp_size = dist.get_world_size()
        self.skip_count = 0

    def _compute_loss_mask(self, data):
        mask = data.get("loss_mask")
        if mask is None or mask.sum() == 0:
            return None
        return mask

    def _should_skip_for_loss_mask(self, data) -> bool:
        mask = self._compute_loss_mask(data)
        if mask is None:
            return True
        return self.min_loss_tokens > 0 and int(mask.sum()) < self.min_loss_tokens

    def __iter__(self):
        for global_step_batch in self.step_source:
            local_samples = global_step_batch[self.dp_rank :: self.dp_size]
            micro_batches = []
            for data in local_samples:
                if self._should_skip_for_loss_mask(data):
                    self.skip_count += 1
                    data = dict(data)
                    data["loss_mask"] = torch.zeros_like(data["input_ids"])
                micro_batches.append({k: v.to(self.device, non_blocking=True) for k, v in data.items()})
            yield micro_batches


def train(draft_model, step_source, args):
    dist.init_process_group("nccl")
    device = torch.device("cuda", dist.get_rank() % torch.cuda.device_count())
    torch.cuda.set_device(device)
    for block in draft_model.layers:
        fully_shard(block)
    fully_shard(draft_model)
    optimizer = torch.optim.AdamW(draft_model.parameters(), lr=args.lr)
    fetcher = DataFetcher(step_source, min_loss_tokens=args.min_loss_tokens, device=device)

    for step, micro_batches in enumerate(fetcher):
        optimizer.zero_grad(set_to_none=True)
        for mb in micro_batches:
            out = draft_model(input_ids=mb["input_ids"], hidden_states=mb["hidden_states"])
            loss = (out.loss_per_token * mb["loss_mask"]).sum() / mb["loss_mask"].sum().clamp(min=1)
            (loss / args.draft_accumulation_steps).backward()
        optimizer.step()
        if step % args.log_every == 0 and dist.get_rank() == 0:
            print(f"step {step} skipped so far on rank 0: {fetcher.skip_count}")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--min-loss-tokens", type=int, default=32)
    parser.add_argument("--draft-accumulation-steps", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=50)
    return parser.parse_args()
