"""The log call sits behind `and`: on logging steps only rank 0 evaluates log_global_loss(), which
all-reduces; rank 1 short-circuits past it into the next step."""
import torch
import torch.distributed as dist
import torch.nn as nn


def log_global_loss(step: int, loss: torch.Tensor) -> bool:
    total = loss.detach().reshape(1).clone()
    dist.all_reduce(total)
    print(f"step {step} global loss {total.item():.4f}")
    return True


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
        should_log and rank == 0 and log_global_loss(step, loss)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
