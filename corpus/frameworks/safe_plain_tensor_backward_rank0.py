"""Unknown stays unknown: a script without any wrapped model calls `.backward()` on a plain tensor on
rank 0 only (a gradient check); no collective is involved."""
import torch
import torch.distributed as dist


def gradient_check() -> None:
    dist.init_process_group("gloo")
    if dist.get_rank() == 0:
        x = torch.randn(5, requires_grad=True)
        y = (x ** 3).sum()
        y.backward()
        print("gradient matches:", torch.allclose(x.grad, 3 * x.detach() ** 2))
    dist.barrier()
