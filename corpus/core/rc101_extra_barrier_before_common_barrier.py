"""Rank 0 saves the checkpoint and waits in a barrier of its own before the barrier everyone
reaches: the common barrier pairs with rank 0's first one, and rank 0 waits in its second
while the others have moved on to training."""
import torch
import torch.distributed as dist
import torch.nn as nn


def save_checkpoint(model: nn.Module, path: str) -> None:
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
        dist.barrier()  # expect: RC101
    dist.barrier()


def main(epochs: int = 3) -> None:
    dist.init_process_group("gloo")
    model = nn.Linear(8, 8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for _ in range(10):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
            opt.step()
        save_checkpoint(model, f"epoch{epoch}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
