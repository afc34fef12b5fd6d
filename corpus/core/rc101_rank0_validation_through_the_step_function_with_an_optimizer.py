"""Rank 0 validates through the training step function and hands it a fresh optimizer for a probe
head (a linear-probe evaluation): the step function then takes its training arm, whose gradient
all-reduce the other ranks never join."""
import torch
import torch.distributed as dist


def step(model, batch, optimizer):
    training = optimizer is not None
    loss = model(batch).mean()
    if training:
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)
        optimizer.step()
    return loss.item()


def validation_run(model, batch):
    probe_optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    return step(model, batch, probe_optimizer)


def main(model, batches, optimizer):
    for batch in batches:
        step(model, batch, optimizer)
    if dist.get_rank() == 0:
        print(validation_run(model, batches[0]))  # expect: RC101
