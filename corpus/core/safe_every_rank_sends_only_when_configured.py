"""The look-alike of rc101_rank_zero_sends_only_when_configured.py: both arms test the same flag,
the same on every rank, so with it every rank joins the broadcast and without it none does."""
import torch
import torch.distributed as dist


def sync_vocab(vocab: torch.Tensor, refresh: bool) -> None:
    if dist.get_rank() == 0:
        if refresh:
            dist.broadcast(vocab, src=0)
    else:
        if refresh:
            dist.broadcast(vocab, src=0)
