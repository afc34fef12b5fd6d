"""The Trainer's loss bookkeeping (transformers' `_inner_training_loop` and `_nested_gather`): the
running loss is a tensor made before the loop and updated in place (`tr_loss += step_loss`, or
the running average on a NaN step), and a helper it is handed to returns early on None before its
all-gather. An in-place update never makes None, on any rank, whichever arm ran; the test asks
nothing per rank. The look-alike whose accumulator starts as None is in
rc102_none_test_of_a_loss_kept_only_on_finite_steps.py."""
import torch
import torch.distributed as dist


def nested_gather(tensors):
    if tensors is None:
        return None
    out = [torch.zeros_like(tensors) for _ in range(dist.get_world_size())]
    dist.all_gather(out, tensors)
    return torch.stack(out)


def train(model, loader, optimizer, log_every):
    tr_loss = torch.tensor(0.0)
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        if torch.isnan(loss):
            tr_loss += tr_loss / (step + 1)
        else:
            tr_loss += loss.detach()
        if step % log_every == 0:
            gathered = nested_gather(tr_loss)
            print(gathered.mean().item())
            tr_loss -= tr_loss
