"""Pre-training, run as `torchrun pretrain/train.py`: its own directory comes first on sys.path,
so `utils` is pretrain/utils.py, whose all_reduce_metrics() all-reduces. Only rank 0 logs, and
only rank 0 calls it: rank 0 waits for ranks that never do. (finetune/ has a train.py and a
utils.py of its own, whose all_reduce_metrics() issues no collective.)"""
import torch
import torch.distributed as dist
import torch.nn as nn

from utils import all_reduce_metrics, get_batch


def main(steps: int = 100, log_every: int = 10) -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x, y = get_batch(8, 16)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % log_every == 0 and rank == 0:
            metrics = torch.stack([loss.detach()])
            metrics = all_reduce_metrics(metrics)  # expect: RC101
            print(f"step {step}: loss {metrics[0].item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
