"""Its look-alike with one more exception caught: a RuntimeError (an out-of-memory, a bad batch) is
raised on one rank only, and that rank alone enters the handler's collectives."""
import torch
import torch.distributed as dist


def save_checkpoint(model, path):
    flag = torch.ones(1)
    dist.all_reduce(flag)
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)


def train(model, loader, optimizer, path):
    try:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
    except (KeyboardInterrupt, RuntimeError):
        save_checkpoint(model, path)  # expect: RC105
        raise
