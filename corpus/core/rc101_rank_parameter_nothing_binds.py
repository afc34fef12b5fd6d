"""The field's first example of a hang: a train step takes the rank as a parameter (nothing in the
file passes it: the script's launcher does), and only rank 0 computes the metrics, whose helper
all-reduces; the other ranks go on to backward and wait in DDP's gradient all_reduce."""
import torch
import torch.distributed as dist


def compute_something(loss: torch.Tensor) -> dict:
    total = loss.clone()
    dist.all_reduce(total)
    return {"loss": total.item() / dist.get_world_size()}


def log(metrics: dict) -> None:
    print(metrics)


def train_step(model, batch, optimizer, rank):
    loss = model(batch).sum()
    if rank == 0:
        metrics = compute_something(loss.detach())  # expect: RC101
        log(metrics)
    loss.backward()
    optimizer.step()
