"""The look-alike of the equal split that is not one: the piece size comes from this rank's batch
(how many of its tokens are valid), so `torch.split(x, n)[rank]` is n long on each rank, a
different n on each, and the all-reduce of the piece mismatches."""
import torch
import torch.distributed as dist


def train(model, buffer, loader):
    for batch in loader:
        valid = int(batch["attention_mask"].sum())
        piece = torch.split(buffer, valid)[dist.get_rank()]
        dist.all_reduce(piece)  # expect: RC104
        model(batch["input_ids"]).mean().backward()
