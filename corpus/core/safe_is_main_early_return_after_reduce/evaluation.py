"""evaluate(): all ranks reduce the counts first, then non-main ranks return early; no collective follows the return."""
import torch
import torch.distributed as dist

from dist_utils import is_main


def evaluate(model, n_batches: int = 5):
    counts = torch.zeros(2)
    with torch.no_grad():
        for _ in range(n_batches):
            x, y = torch.randn(32, 6), torch.randint(0, 2, (32,))
            counts[0] += (model(x).argmax(1) == y).sum()
            counts[1] += y.numel()
    dist.all_reduce(counts)
    if not is_main():
        return None
    acc = (counts[0] / counts[1]).item()
    print(f"accuracy {acc:.3f}")
    return acc
