"""The look-alike of safe_broadcast_helper_given_tensors_only.py: the helper broadcasts its
argument when it is not None, and the caller passes the tensor on the first rank only, None on the
others: only the first rank enters the broadcast."""
import torch
import torch.distributed as dist


def schedule(samples, is_first_tp_rank: bool):
    def _broadcast(item):
        if item is not None:
            dist.broadcast(item, 0)  # expect: RC101

    n = torch.tensor([int(samples.numel())], dtype=torch.int64) if is_first_tp_rank else None
    _broadcast(n)


def main(samples):
    dist.init_process_group("gloo", timeout=__import__("datetime").timedelta(minutes=5))
    schedule(samples, dist.get_rank() == 0)
