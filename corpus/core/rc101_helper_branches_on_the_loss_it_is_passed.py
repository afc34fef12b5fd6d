"""A logging helper that all-reduces the loss only when it is large: the loss is this rank's own,
so the ranks whose loss crossed the threshold wait in the all-reduce the others skip. The test is
in the helper, on data its caller passed in: reported there, at the guarded all-reduce, which is
what a fix changes."""
import torch.distributed as dist


def report_spike(loss, threshold):
    if loss.item() > threshold:
        dist.all_reduce(loss)  # expect: RC101
        print("spike", loss.item())


def train(model, loader, optimizer, threshold):
    for batch in loader:
        loss = model(batch).mean()
        report_spike(loss.detach(), threshold)
        loss.backward()
        optimizer.step()
