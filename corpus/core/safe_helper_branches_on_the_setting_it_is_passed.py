"""The look-alike: the helper branches on a setting its caller passes (alike on every rank), and
what it is given of this rank's data only goes into the all-reduce every rank makes."""
import torch.distributed as dist


def report_loss(loss, enabled, threshold):
    if enabled:
        dist.all_reduce(loss)
        if loss.item() / dist.get_world_size() > threshold:
            print("spike", loss.item())


def train(model, loader, optimizer, args):
    for batch in loader:
        loss = model(batch).mean()
        report_loss(loss.detach(), args.log_loss, args.threshold)
        loss.backward()
        optimizer.step()
