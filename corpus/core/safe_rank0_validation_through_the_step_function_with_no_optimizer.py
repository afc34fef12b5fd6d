"""Safe look-alike of rc101_rank0_validation_through_the_step_function_with_an_optimizer.py: rank
0 validates through the training step function with an optimizer variable bound once, to None
(jpata/particleflow's `optimizer = None; train(...)`), so the step function never takes its
training arm there and validation issues no collective."""
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
    with torch.no_grad():
        optimizer = None
        return step(model, batch, optimizer)


def main(model, batches, optimizer):
    for batch in batches:
        step(model, batch, optimizer)
    if dist.get_rank() == 0:
        print(validation_run(model, batches[0]))
