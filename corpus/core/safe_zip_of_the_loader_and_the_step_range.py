"""detectron2's plain training loop: `for data, iteration in zip(data_loader, range(start, max))`
unpacks this rank's batch into `data` and the shared step counter into `iteration`. The periodic
evaluation and its barrier are decided by the counter alone, alike on every rank."""
import torch
import torch.distributed as dist


def do_test(model):
    dist.barrier()


def do_train(model, optimizer, data_loader, start_iter, max_iter, eval_period):
    for data, iteration in zip(data_loader, range(start_iter, max_iter)):
        loss = model(data).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if eval_period > 0 and (iteration + 1) % eval_period == 0 and iteration != max_iter - 1:
            do_test(model)
            dist.barrier()
