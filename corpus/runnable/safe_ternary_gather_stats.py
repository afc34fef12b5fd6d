"""Every rank gathers the activation statistics; only rank 0 prints them."""
import torch
import torch.distributed as dist
import torch.nn as nn


def gather_stats(local: torch.Tensor) -> torch.Tensor:
    out = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(out, local)
    return torch.stack(out)


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(5)
    model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
    lr = 0.05
    for step in range(3):
        hidden = model[1](model[0](torch.randn(8, 5)))
        local = torch.stack([hidden.mean(), hidden.std()]).detach()
        stats = gather_stats(local)
        if rank == 0:
            print(f"step {step} activation mean per rank {stats[:, 0].tolist()}")
        loss = model[2](hidden).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
