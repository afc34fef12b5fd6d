"""Look-alike of a branch whose arms issue the same collective: before it, an `assert` on this
rank's own state fails on some ranks only. A rank that fails it dies, and the launcher tears the
job down (RC108's ground, off by default); the arms themselves pair up on every rank that lives,
so nothing here hangs."""
import torch
import torch.distributed as dist


def share_name(pg, name: str, batch: torch.Tensor) -> str:
    rank = dist.get_rank(group=pg)
    assert batch.numel() > 0, "an empty batch on this rank"
    box = [name if rank == 0 else None]
    if rank == 0:
        dist.broadcast_object_list(box, src=0, group=pg)
    else:
        dist.broadcast_object_list(box, src=0, group=pg)
    dist.barrier(group=pg)
    return box[0]
