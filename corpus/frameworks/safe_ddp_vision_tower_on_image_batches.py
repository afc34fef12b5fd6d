"""The same image-text model under plain DDP (find_unused_parameters=True): parameters are
replicated, so a rank whose batch is text-only skips the vision encoder's forward without
communicating, and DDP's reducer marks the unused parameters ready itself. No project file names
ZeRO-3 or FSDP: a submodule's forward is local computation."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class CaptionModel(nn.Module):
    def __init__(self, vision: nn.Module, text: nn.Module, dim: int):
        super().__init__()
        self.vision = vision
        self.text = text
        self.proj = nn.Linear(dim, dim)

    def forward(self, input_ids, images=None):
        hidden = self.text(input_ids)
        if images is not None:
            hidden = hidden + self.proj(self.vision(images)).mean(dim=1, keepdim=True)
        return hidden.float().pow(2).mean()


def main(vision, text, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    model = DDP(CaptionModel(vision, text, 768).cuda(), device_ids=[torch.cuda.current_device()], find_unused_parameters=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for batch in loader:
        loss = model(batch["input_ids"].cuda(), images=batch.get("images"))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
