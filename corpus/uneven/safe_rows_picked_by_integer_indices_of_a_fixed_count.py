"""A negative bank filled from each rank's kept embeddings (how many a rank keeps is its own): the
rank draws a fixed number of row indices (`torch.randint(0, n, (k,))`) and all-gathers the rows
they pick. An integer index array picks as many rows as it has items, whichever rows its values
name, so every rank gathers k rows. (A rank that kept no embedding fails the draw loudly.)"""
import torch
import torch.distributed as dist


def fill_bank(embeddings, k):
    idx = torch.randint(0, embeddings.shape[0], (k,))
    picked = embeddings[idx]
    bank = [torch.zeros_like(picked) for _ in range(dist.get_world_size())]
    dist.all_gather(bank, picked)
    return torch.cat(bank)


def train(model, loader, optimizer, k=64):
    for x, keep in loader:
        z = model(x)
        kept = z[keep]
        bank = fill_bank(kept.detach(), k)
        loss = (z @ bank.t()).logsumexp(dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
