"""The look-alike of a handler that runs collectives: Ctrl-C reaches every rank the launcher
started at once (the whole foreground process group), so `except KeyboardInterrupt:` is entered by
all of them and the checkpoint they write together is safe (the fix of Lightning#6842)."""
import torch
import torch.distributed as dist


def save_checkpoint(model, path):
    state = {k: v.clone() for k, v in model.state_dict().items()}
    flag = torch.ones(1)
    dist.all_reduce(flag)
    if dist.get_rank() == 0:
        torch.save(state, path)
    dist.barrier()


def train(model, loader, optimizer, path):
    try:
        for batch in loader:
            loss = model(batch).sum()
            loss.backward()
            optimizer.step()
    except KeyboardInterrupt:
        save_checkpoint(model, path)
        raise
