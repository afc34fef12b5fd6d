"""The look-alike of safe_none_test_of_a_loss_accumulated_in_place.py that hangs: the running loss
starts as None and is set only on the steps whose loss is finite, so a rank whose every step
since the last log was NaN still holds None and returns before the all-gather the others enter."""
import torch
import torch.distributed as dist


def nested_gather(tensors):
    if tensors is None:
        return None  # expect: RC102
    out = [torch.zeros_like(tensors) for _ in range(dist.get_world_size())]
    dist.all_gather(out, tensors)
    return torch.stack(out)


def train(model, loader, optimizer, log_every):
    tr_loss = None
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        if not torch.isnan(loss):
            tr_loss = loss.detach() if tr_loss is None else tr_loss + loss.detach()
        if step % log_every == 0:
            gathered = nested_gather(tr_loss)
            print(gathered)
            tr_loss = None
