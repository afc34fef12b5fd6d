"""On logging steps rank 0 prints and `continue`s, skipping the loss all_reduce that rank 1 still
issues: the ranks drift apart by one all_reduce per logging step."""
import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    lr = 0.1
    history = []

    for step in range(4):
        x = torch.randn(32, 8)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad

        if rank == 0 and step % 2 == 0:
            print(f"step {step} local loss {loss.item():.4f}")
            continue  # expect: RC102

        reported = loss.detach().clone()
        dist.all_reduce(reported)
        history.append(reported.item())

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
