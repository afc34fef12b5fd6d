"""Every rank calls the averaging helper (it all-reduces inside); only rank 0 prints the result."""
import torch
import torch.distributed as dist
import torch.nn as nn


def global_mean(value: torch.Tensor) -> torch.Tensor:
    total = value.detach().clone()
    dist.all_reduce(total)
    return total / dist.get_world_size()


def train(model, lr, steps, rank):
    for step in range(steps):
        x = torch.randn(16, 4)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        mean_loss = global_mean(loss)
        if rank == 0:
            print(f"step {step} loss {mean_loss.item():.4f}")


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    lr = 0.05
    train(model, lr, steps=3, rank=dist.get_rank())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
