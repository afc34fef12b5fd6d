"""The same padding recipe on a buffer whose row length is this rank's own (its batch's longest
sequence): padding the row count does not pad the rows, so the gathered tensors still differ."""
import torch
import torch.distributed as dist


def gather_token_scores(batch):
    lengths = batch["lengths"]
    local_len = int(lengths.max())
    scores = torch.zeros(8, local_len)
    scores[:, :local_len] = batch["scores"][:, :local_len]
    count = torch.tensor([scores.shape[0]])
    counts = [torch.zeros_like(count) for _ in range(dist.get_world_size())]
    dist.all_gather(counts, count)
    longest = int(torch.stack(counts).max())
    padded = torch.zeros((longest,) + tuple(scores.shape[1:]))
    padded[: scores.shape[0]] = scores
    out = [torch.zeros_like(padded) for _ in range(dist.get_world_size())]
    dist.all_gather(out, padded)  # expect: RC104
    return out
