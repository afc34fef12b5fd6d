"""On logging steps every rank all-reduces the loss; only rank 0 prints it."""
import torch
import torch.distributed as dist
import torch.nn as nn


def global_loss(loss: torch.Tensor) -> float:
    total = loss.detach().reshape(1).clone()
    dist.all_reduce(total)
    return total.item()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(11)
    model = nn.Linear(7, 1)
    lr = 0.01
    for step in range(4):
        loss = model(torch.randn(5, 7)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        should_log = step % 2 == 1
        value = global_loss(loss) if should_log else None
        if value is not None and rank == 0:
            print(f"step {step} global loss {value:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
