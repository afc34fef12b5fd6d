"""The checkpoint helper returns early on every rank but 0, so only rank 0 reaches the barrier that
was meant to hold everybody until the checkpoint is written."""
import io

import torch
import torch.distributed as dist
import torch.nn as nn


def save_checkpoint(model: nn.Module, epoch: int) -> bytes:
    if dist.get_rank() != 0:
        return b""  # expect: RC102
    buffer = io.BytesIO()
    torch.save({"epoch": epoch, "model": model.state_dict()}, buffer)
    dist.barrier()
    return buffer.getvalue()


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(2)
    model = nn.Linear(8, 2)
    lr = 0.1
    for epoch in range(2):
        loss = model(torch.randn(4, 8)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        blob = save_checkpoint(model, epoch)
        if blob:
            print(f"epoch {epoch}: checkpoint of {len(blob)} bytes")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
