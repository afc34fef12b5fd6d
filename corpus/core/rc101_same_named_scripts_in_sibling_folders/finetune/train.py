"""Fine-tuning, run as `torchrun finetune/train.py`: `utils` is finetune/utils.py, whose
all_reduce_metrics() issues no collective, so rank 0 may call it alone."""
import torch
import torch.distributed as dist
import torch.nn as nn

from utils import all_reduce_metrics, get_batch


def main(steps: int = 100, log_every: int = 10) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        x, y = get_batch(8, 16)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % log_every == 0 and rank == 0:
            metrics = all_reduce_metrics(torch.stack([loss.detach()]))
            print(f"step {step}: loss {metrics[0].item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
