"""The same loop, but evaluation is decided by what this rank's batch holds (a batch with no
annotation triggers a check): `data` is this rank's own item of the zip, so some ranks reach the
barrier and the others do not."""
import torch
import torch.distributed as dist


def do_train(model, optimizer, data_loader, start_iter, max_iter):
    for data, iteration in zip(data_loader, range(start_iter, max_iter)):
        loss = model(data).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if data["num_annotations"] == 0:
            dist.barrier()  # expect: RC101
