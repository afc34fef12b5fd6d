"""Rank 0 broadcasts the refreshed vocabulary only when `--refresh-vocab` is set; the other ranks
always join the broadcast. Without the flag rank 0 skips it and the others wait in it."""
import torch
import torch.distributed as dist


def sync_vocab(vocab: torch.Tensor, refresh: bool) -> None:
    if dist.get_rank() == 0:
        if refresh:
            dist.broadcast(vocab, src=0)
    else:
        dist.broadcast(vocab, src=0)  # expect: RC101
