"""Every rank calls the weight broadcast from the main process; the others receive."""
import torch
import torch.distributed as dist
import torch.nn as nn


def is_main() -> bool:
    return dist.get_rank() == 0


def push_weights(model: nn.Module):
    for p in model.parameters():
        dist.broadcast(p.data, src=0)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(7)
    model = nn.Linear(4, 3)
    lr = 0.1
    for epoch in range(2):
        loss = model(torch.randn(6, 4)).pow(2).mean()
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        push_weights(model)
        if is_main():
            print(f"epoch {epoch} weights pushed")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
